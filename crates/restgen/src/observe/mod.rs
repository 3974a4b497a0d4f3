//! What an operator sees of each request: its id, returned on the answer (`X-Request-Id`),
//! a field of the span every log line of the request is written in, and a member of its
//! problem body (`request_id`), so that a caller's report can be found in the log.
//!
//! The outermost service of an application: an answer from any layer within (a CORS
//! preflight, a refused version, a request shed under load) carries the id too.

mod id;

pub(crate) use id::Ids;

use crate::current::REQUEST_ID;
use axum::extract::{ConnectInfo, Request};
use axum::http::HeaderValue;
use axum::response::Response;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::task::futures::TaskLocalFuture;
use tower::Service;
use tracing::Instrument;
use tracing::instrument::Instrumented;

/// `inner` with each request's id made or taken, known while it is answered, and returned.
#[derive(Clone)]
pub(crate) struct Observed<S> {
    pub inner: S,
    pub ids: Arc<Ids>,
}

impl<S> Service<Request> for Observed<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Answer<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let id = self.ids.of(request.headers(), request.extensions().get::<ConnectInfo<SocketAddr>>());
        let span = tracing::info_span!("request", request_id = %id.to_str().unwrap_or_default());
        // Within the id and the span already: a layer may answer in `call` (a body too
        // large, a panic caught).
        let inner = REQUEST_ID.sync_scope(id.clone(), || span.in_scope(|| self.inner.call(request)));
        Answer { inner: REQUEST_ID.scope(id, inner).instrument(span) }
    }
}

pin_project_lite::pin_project! {
    /// A request's answer, given its id.
    pub(crate) struct Answer<F> {
        #[pin]
        inner: Instrumented<TaskLocalFuture<HeaderValue, F>>,
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for Answer<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut inner = self.project().inner;
        let Ok(mut response) = std::task::ready!(inner.as_mut().poll(cx));
        if let Some(id) = inner.inner_pin_mut().take_value() {
            response.headers_mut().insert(restgen_wire::http::REQUEST_ID.lowercase, id);
        }
        Poll::Ready(Ok(response))
    }
}
