//! The service's bound on request bodies (`limits.max_body_bytes`): a body declared larger
//! is refused (413) before it is read, one sent without a declared length is cut off
//! where it passes the bound (and its reader answers 413).
//!
//! One plain service rather than tower-http's body limit and axum's `DefaultBodyLimit`:
//! those wrap every request's body (a `GET` has none) and box every answer's body again,
//! and insert an extension into every request; here a request whose body cannot pass the
//! bound goes straight on, and only a body of unknown length is wrapped.

use crate::problem::Problem;
use axum::body::{Body, HttpBody};
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use futures_util::future::{Either, Ready, ready};
use std::task::{Context, Poll};
use tower::{Layer, Service};

/// Bounds bodies at `limit` bytes.
#[derive(Clone, Copy)]
pub(crate) struct LimitLayer {
    pub limit: usize,
}

impl<S> Layer<S> for LimitLayer {
    type Service = Limit<S>;

    fn layer(&self, inner: S) -> Limit<S> {
        Limit { inner, limit: self.limit }
    }
}

#[derive(Clone)]
pub(crate) struct Limit<S> {
    inner: S,
    limit: usize,
}

impl<S> Service<Request> for Limit<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<S::Future, Ready<Result<Response, S::Error>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        match refusal(&mut request, self.limit) {
            None => Either::Left(self.inner.call(request)),
            Some(refusal) => Either::Right(ready(Ok(refusal))),
        }
    }
}

/// The refusal (413) of a request whose body is declared larger than `limit` bytes; any
/// other is readied to go on, its body bounded at `limit`.
pub(crate) fn refusal(request: &mut Request, limit: usize) -> Option<Response> {
    // By the header, not the body: a body declared too large reaches here without
    // itself (`linger` reads it away), and is refused all the same.
    if declared_length(request.headers()).is_some_and(|n| n > limit as u64) {
        return Some(Problem::too_large().into_response());
    }
    // hyper reads no more of a body than its declared length: one whose length is
    // known to be within the bound needs no counting.
    let within = request.body().size_hint().upper().is_some_and(|n| n <= limit as u64);
    if !within {
        let body = std::mem::take(request.body_mut());
        *request.body_mut() = Body::new(http_body_util::Limited::new(body, limit));
    }
    // The bound is this one, not axum's default one for its extractors, which need not
    // be told where there is nothing to read, nor where the bound is within axum's (the
    // telling is an extension inserted, the request's fourth, which grows its map).
    if limit > AXUM_DEFAULT_LIMIT && !request.body().is_end_stream() {
        DefaultBodyLimit::disable().apply(request);
    }
    None
}

/// The bound axum's extractors put on a body unless told otherwise (axum-core's
/// `DEFAULT_LIMIT`, not exported; a test holds it to this).
const AXUM_DEFAULT_LIMIT: usize = 2 * 1024 * 1024;

/// A request's `Content-Length`, where it has a readable one.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok())
}

#[cfg(test)]
mod tests {
    use super::LimitLayer;
    use axum::Router;
    use axum::body::{Body, Bytes};
    use axum::extract::rejection::BytesRejection;
    use axum::http::{Request, StatusCode, header};
    use axum::routing::post;
    use tower::ServiceExt;

    const MIB: usize = 1024 * 1024;
    /// Bounds above axum's own default bound (2 MiB), which must not apply instead, at it
    /// and below it, where axum's applies too and must not refuse first or otherwise.
    const LIMITS: [usize; 3] = [3 * MIB, 2 * MIB, MIB / 2];

    /// The status and, for a body read, its length, from a service bounding bodies at
    /// `limit`.
    async fn send(limit: usize, request: Request<Body>) -> (StatusCode, String) {
        let app = Router::new()
            .route(
                "/",
                post(|body: Result<Bytes, BytesRejection>| async move {
                    match body {
                        Ok(bytes) => (StatusCode::OK, bytes.len().to_string()),
                        Err(e) => (e.status(), String::new()),
                    }
                }),
            )
            .layer(LimitLayer { limit });
        let response = app.oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    fn declared(bytes: usize) -> Request<Body> {
        Request::post("/").header(header::CONTENT_LENGTH, bytes).body(Body::from(vec![b'x'; bytes])).unwrap()
    }

    /// A body of unknown length (sent chunked), `bytes` long in chunks of 64 KiB.
    fn unknown(bytes: usize) -> Request<Body> {
        let chunks = (0..bytes.div_ceil(64 * 1024))
            .map(move |i| Ok::<_, std::io::Error>(Bytes::from(vec![b'x'; (bytes - i * 64 * 1024).min(64 * 1024)])));
        Request::post("/").body(Body::from_stream(futures_util::stream::iter(chunks))).unwrap()
    }

    #[tokio::test]
    async fn bodies_within_the_bound_are_read_whole_whatever_axum_s_own_default() {
        for limit in LIMITS {
            assert_eq!(send(limit, declared(limit)).await, (StatusCode::OK, limit.to_string()));
            assert_eq!(send(limit, unknown(limit)).await, (StatusCode::OK, limit.to_string()));
            let empty = Request::post("/").body(Body::empty()).unwrap();
            assert_eq!(send(limit, empty).await, (StatusCode::OK, "0".to_owned()));
        }
    }

    #[tokio::test]
    async fn bodies_past_the_bound_are_413_declared_or_not() {
        for limit in LIMITS {
            let (status, body) = send(limit, declared(limit + 1)).await;
            assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
            assert!(body.contains("larger than this service accepts"), "a problem, before the handler: {body}");
            assert_eq!(send(limit, unknown(limit + 1)).await.0, StatusCode::PAYLOAD_TOO_LARGE, "{limit}");
            // Declared too large, whatever came of it (`linger` takes the body away first).
            let header_only = Request::post("/").header(header::CONTENT_LENGTH, limit + 1).body(Body::empty()).unwrap();
            assert_eq!(send(limit, header_only).await.0, StatusCode::PAYLOAD_TOO_LARGE);
        }
    }

    /// Past axum's own default a body is refused unless axum is told the bound is ours:
    /// the constant the layer judges by is axum's.
    #[tokio::test]
    async fn axum_s_own_default_is_the_one_the_layer_knows() {
        let app = Router::new().route(
            "/",
            post(|body: Result<Bytes, BytesRejection>| async move { if body.is_ok() { "read" } else { "refused" } }),
        );
        for (bytes, read) in [(super::AXUM_DEFAULT_LIMIT, true), (super::AXUM_DEFAULT_LIMIT + 1, false)] {
            let answer = app.clone().oneshot(declared(bytes)).await.unwrap();
            let body = axum::body::to_bytes(answer.into_body(), usize::MAX).await.unwrap();
            assert_eq!(body, if read { "read" } else { "refused" }, "{bytes} bytes");
        }
    }
}
