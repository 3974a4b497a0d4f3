//! A body larger than the service takes is refused (413) before it is read. A client that
//! writes the whole body before it reads the answer (Python's `http.client`, say) would
//! then meet a closed connection mid-write and never see the 413. So, as nginx's lingering
//! close does, the refused body is read and thrown away — up to a bound of size and time —
//! before the answer goes, and the connection is closed after it.

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use futures_util::StreamExt;
use futures_util::future::{BoxFuture, Either};
use std::convert::Infallible;
use std::future::Future;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::{Layer, Service};

/// The most of a refused body read and thrown away.
const MAX_BYTES: usize = 64 * 1024 * 1024;
/// The longest a refused body is read for.
const MAX_TIME: Duration = Duration::from_secs(10);

/// Lingers over bodies declared larger than `limit` bytes.
#[derive(Clone, Copy)]
pub(crate) struct LingerLayer {
    pub limit: usize,
}

impl<S> Layer<S> for LingerLayer {
    type Service = Linger<S>;

    fn layer(&self, inner: S) -> Linger<S> {
        Linger { inner, limit: self.limit }
    }
}

/// A plain service rather than `axum::middleware::from_fn`: every request passes through
/// it and nearly all go straight on, so they cost a branch, where `from_fn` boxes a copy
/// of the services within and the request's future.
#[derive(Clone)]
pub(crate) struct Linger<S> {
    inner: S,
    limit: usize,
}

impl<S> Service<Request> for Linger<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<S::Future, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    /// Runs the request; one whose `Content-Length` is over the limit reaches the service
    /// without its body (the body limit refuses it by its declared length), and the body
    /// is drained before the refusal is answered.
    fn call(&mut self, mut request: Request) -> Self::Future {
        match take_oversized(&mut request, self.limit) {
            None => Either::Left(self.inner.call(request)),
            Some(body) => Either::Right(Box::pin(drained(self.inner.call(request), body))),
        }
    }
}

/// The body of a request declared larger than `limit` bytes, taken out of it (the request
/// goes on with an empty one); `None`, and the request untouched, for every other.
pub(crate) fn take_oversized(request: &mut Request, limit: usize) -> Option<Body> {
    // The body knows its declared length (hyper reads `Content-Length` into it), where
    // the header would be looked up and parsed again for every request.
    if request.body().size_hint().lower() <= limit as u64 {
        return None;
    }
    Some(std::mem::replace(request.body_mut(), Body::empty()))
}

/// `answer`, given once `body` (taken by [`take_oversized`]) is read and thrown away, up to
/// a bound of size and time, and with the connection closed after it.
pub(crate) async fn drained(
    answer: impl Future<Output = Result<Response, Infallible>>,
    body: Body,
) -> Result<Response, Infallible> {
    let Ok(mut response) = answer.await;
    let drain = async {
        let mut stream = body.into_data_stream();
        let mut read = 0;
        while let Some(Ok(chunk)) = stream.next().await {
            read += chunk.len();
            if read > MAX_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(MAX_TIME, drain).await;
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    Ok(response)
}
