//! What every request meets between the outer layers (trace, timeout, CORS, versions) and
//! the ones that need a caller (authentication, rate limits): the load balancer's probes,
//! answered here, and the service's own settings, given to the request as one extension.
//!
//! One plain service rather than a router of its own and two `Extension` layers: each of
//! those cost every request a boxed clone and a map insertion, where this costs a
//! comparison of the path and one insertion.

use crate::idempotency::Keeper;
use crate::problem::Problem;
use crate::store::Store;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::future::{BoxFuture, Either};
use restgen_model::bounds;
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::Service;

/// What the service's settings tell each request's operations: where its links are and
/// how idempotency keys are kept. Read by the extractors (`operations::Context`, `Keeper`).
#[derive(Clone, Debug)]
pub(crate) struct Shared(Arc<Settings>);

#[derive(Debug)]
struct Settings {
    base: &'static str,
    keeper: Keeper,
}

impl Shared {
    pub(crate) fn new(base: &'static str, keeper: Keeper) -> Shared {
        Shared(Arc::new(Settings { base, keeper }))
    }

    /// The service's `base_path`.
    pub(crate) fn base(&self) -> &'static str {
        self.0.base
    }

    pub(crate) fn keeper(&self) -> &Keeper {
        &self.0.keeper
    }
}

/// The probes, then `inner` with [`Shared`] on the request.
#[derive(Clone)]
pub(crate) struct Frame<S> {
    pub inner: S,
    pub shared: Shared,
    pub store: Store,
}

impl<S> Service<Request> for Frame<S>
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

    fn call(&mut self, mut request: Request) -> Self::Future {
        // Outside authentication and rate limits: a load balancer's probe needs no
        // credentials, ignores any, and is never throttled by somebody else's traffic.
        let probe = match request.uri().path() {
            bounds::LIVENESS_PATH => Some(Probe::Live),
            bounds::READINESS_PATH => Some(Probe::Ready),
            _ => None,
        };
        if let Some(probe) = probe {
            let (method, store) = (request.method().clone(), self.store.clone());
            return Either::Right(Box::pin(async move { Ok(probe.answer(&method, &store).await) }));
        }
        request.extensions_mut().insert(self.shared.clone());
        Either::Left(self.inner.call(request))
    }
}

#[derive(Clone, Copy)]
enum Probe {
    Live,
    Ready,
}

impl Probe {
    async fn answer(self, method: &Method, store: &Store) -> Response {
        if method != Method::GET && method != Method::HEAD {
            let mut refused = StatusCode::METHOD_NOT_ALLOWED.into_response();
            refused.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET,HEAD"));
            return refused;
        }
        match self {
            Probe::Live => healthz(),
            Probe::Ready => readyz(store).await,
        }
    }
}

/// Liveness: the process serves requests. It asks nothing of the database, so an
/// orchestrator does not restart every instance because the database is down (which a
/// restart would not mend); readiness is [`readyz`]'s.
fn healthz() -> Response {
    (StatusCode::OK, axum::Json(serde_json::json!({ "status": "ok" }))).into_response()
}

/// Readiness: the database answers, so the instance can serve what it is sent. A load
/// balancer takes an instance that fails it out of rotation until it passes again.
/// A database that does not answer within [`bounds::READY_WITHIN_SECONDS`] counts as
/// down: a probe must answer sooner than a pool waiting for a connection would.
async fn readyz(store: &Store) -> Response {
    let within = Duration::from_secs(bounds::READY_WITHIN_SECONDS);
    if tokio::time::timeout(within, store.ping()).await.unwrap_or(false) {
        (StatusCode::OK, axum::Json(serde_json::json!({ "status": "ready" }))).into_response()
    } else {
        Problem::new(StatusCode::SERVICE_UNAVAILABLE, "the database does not answer").into_response()
    }
}
