//! What an operator sees of each request: its id, returned on the answer (`X-Request-Id`),
//! a field of the span every log line of the request is written in, and a member of its
//! problem body (`request_id`), so that a caller's report can be found in the log; and,
//! where `<SERVICE>_METRICS_BIND` asks for them, the [`crate::metrics`] it counts in, and
//! their listener.
//!
//! The outermost service of an application: an answer from any layer within (a CORS
//! preflight, a refused version, a request shed under load) carries the id and is counted.

mod id;

pub(crate) use id::Ids;

use crate::current::{Facts, REQUEST, Request as Current};
use crate::metrics::Metrics;
use crate::store::Store;
use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::task::futures::TaskLocalFuture;
use tower::Service;
use tracing::Instrument;
use tracing::instrument::Instrumented;

/// `inner` with each request's id made or taken, known while it is answered, and returned;
/// each request counted where there are metrics.
#[derive(Clone)]
pub(crate) struct Observed<S> {
    pub inner: S,
    pub ids: Arc<Ids>,
    pub metrics: Option<Arc<Metrics>>,
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
        // At the error level, so that it is there whenever a line can be: a filter of
        // `warn` would leave an `info` span out, and the request's warnings without its id.
        let request_id = id.to_str().unwrap_or_default();
        // The span a trace shows (only the exporter takes it), continuing the caller's trace.
        let traced = crate::traces::server(request.method(), request_id);
        crate::traces::continue_from(&traced, request.headers());
        let span = tracing::error_span!(parent: &traced, "request", request_id = %request_id);
        let counted = self.metrics.clone().map(|metrics| {
            metrics.started();
            Counted { metrics, started: Instant::now() }
        });
        // Within the id and the span already: a layer may answer in `call` (a body too
        // large, a panic caught).
        let (inner, facts) = REQUEST.sync_scope(Current::new(id.clone()), || {
            let inner = traced.in_scope(|| span.in_scope(|| self.inner.call(request)));
            (inner, REQUEST.with(|current| current.facts.get()))
        });
        let current = Current { id, facts: std::cell::Cell::new(facts) };
        // Both entered: a span the trace shows within finds its parent among those entered.
        Answer { inner: REQUEST.scope(current, inner).instrument(span).instrument(traced.clone()), counted, traced }
    }
}

/// A request counted in the metrics, from when it began.
struct Counted {
    metrics: Arc<Metrics>,
    started: Instant,
}

pin_project_lite::pin_project! {
    /// A request's answer, given its id, and counted.
    pub(crate) struct Answer<F> {
        #[pin]
        inner: Instrumented<Instrumented<TaskLocalFuture<Current, F>>>,
        counted: Option<Counted>,
        traced: tracing::Span,
    }

    impl<F> PinnedDrop for Answer<F> {
        fn drop(this: Pin<&mut Self>) {
            // Given up before its answer: its client went away.
            if let Some(counted) = this.project().counted.take() {
                counted.metrics.ended(Facts::default(), None);
            }
        }
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for Answer<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut inner = this.inner;
        let Ok(mut response) = std::task::ready!(inner.as_mut().poll(cx));
        if let Some(current) = inner.inner_pin_mut().inner_pin_mut().take_value() {
            let facts = current.facts.get();
            crate::traces::answered(this.traced, facts.resource, facts.operation, response.status());
            if let Some(counted) = this.counted.take() {
                let took = counted.started.elapsed();
                counted.metrics.ended(facts, Some((response.status(), took)));
            }
            response.headers_mut().insert(restgen_wire::http::REQUEST_ID.lowercase, current.id);
        }
        Poll::Ready(Ok(response))
    }
}

/// Serves `GET /metrics` on `listener` until `signal` completes: the listener an operator
/// set apart for it (`<SERVICE>_METRICS_BIND`), so that the public port never shows it.
/// With `outbox`, the service publishes events, and the scrape reads how its outbox stands.
pub(crate) async fn serve_metrics(
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
    (store, clock): (Store, crate::clock::Clock),
    outbox: bool,
    signal: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::http::header;
    let scrape = move || async move {
        let text = metrics.render(&store, outbox, clock.now()).await;
        ([(header::CONTENT_TYPE, prometheus::TEXT_FORMAT)], text)
    };
    let app = axum::Router::new()
        .route(restgen_model::bounds::METRICS_PATH, axum::routing::get(scrape))
        .fallback(|| async { crate::problem::Problem::not_found("no such route; metrics are at /metrics") });
    crate::connections::serve(listener, app, crate::connections::HttpLimits::default(), signal).await
}
