//! What every request meets between the outer layers (CORS, versions, load shedding) and
//! the ones that need a caller (authentication, rate limits): the request's time limit, a
//! panic caught, the load balancer's probes answered, how idempotency keys are kept given
//! to a request that carries one, and a problem body for the bare errors of the layers
//! within (405 from routing, 413 from axum's own extractors in a service's own routes).
//! Where no layer wraps it, it is also the body limit ([`crate::body::limit`]) and what
//! reads a refused body away ([`crate::linger`]): a service without CORS, versions, load
//! shedding, authentication or rate limits has nothing else between hyper and its routes.
//!
//! One plain service rather than a router of its own and a layer for each: a layer boxes
//! the response body again or the request's route, a router matches the path again, an
//! `Extension` inserts again; each is a few hundred instructions a request, where this is
//! one comparison of the path, one header looked up, and the timer.

use crate::idempotency::Keeper;
use crate::problem::Problem;
use crate::store::Store;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::future::{BoxFuture, Either};
use restgen_model::bounds;
use std::any::Any;
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::Service;

/// The probes, then `inner` within the time limit, with the [`Keeper`] on a request that
/// carries an idempotency key.
///
/// hyper clones the whole service for each request and drops the clone after it: what the
/// frame holds beside `inner` is one `Arc`, a count to raise and lower, where its fields
/// each cloned were several (the store alone up to three).
#[derive(Clone)]
pub(crate) struct Frame<S> {
    pub inner: S,
    pub shared: Arc<Framing>,
}

/// What every request's frame reads, and what lives as long as the service.
pub(crate) struct Framing {
    /// How idempotency keys are kept, for the requests that carry one (the extension is
    /// inserted for them alone: most requests have none, and an insertion costs each).
    pub keeper: Keeper,
    pub store: Store,
    /// The longest a request runs (`request_timeout`): then it is stopped and answered 503.
    pub timeout: Duration,
    /// `limits.max_body_bytes`.
    pub max_body_bytes: usize,
    /// Whether the frame is the outermost service, so that it drains a body declared
    /// larger than the bound before the refusal goes ([`crate::linger`]). Where CORS,
    /// versions or load shedding wrap it, a `Linger` outside them does, as they may
    /// answer first.
    pub linger: bool,
    /// Whether the frame bounds bodies itself ([`crate::body::limit`]). Where
    /// authentication or rate limits wrap each route, the bound is within them, route by
    /// route: a body too large is then a request like any other, counted and answered
    /// with the budget's fields.
    pub bound_bodies: bool,
    /// Held, not read: keeps the limit's timers from waking the runtime, stopped with the
    /// service.
    pub _pacer: Option<Pacer>,
    /// Held, not read: the webhook worker of an application whose caller does not stop it
    /// itself ([`crate::serve::app`]), stopped with the service.
    pub _background: Option<crate::webhooks::Background>,
}

/// A timer always due sooner than any request's time limit, so that setting a request's
/// limit never wakes the runtime's driver.
///
/// tokio wakes the thread that waits on its timers and sockets (a write to an eventfd, and
/// one more `epoll_wait` for it) whenever a timer is set to fall due before the earliest
/// it already has. With no other timer pending, each request's limit was that timer: two
/// system calls a request, which the instruction count does not see and CPU time does. A
/// timer that falls due every half limit is always the earlier one, for one wake-up per
/// half limit.
pub(crate) struct Pacer(tokio::task::AbortHandle);

impl Pacer {
    /// The pacer for requests limited to `limit`, on the current runtime; `None` outside
    /// one (the limits then work as well, at the cost above).
    pub(crate) fn start(limit: Duration) -> Option<Pacer> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let every = (limit / 2).max(Duration::from_millis(1));
        let task = runtime.spawn(async move {
            loop {
                tokio::time::sleep(every).await;
            }
        });
        Some(Pacer(task.abort_handle()))
    }
}

impl Drop for Pacer {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pin_project_lite::pin_project! {
    /// The inner service's future within the time limit, a panic in it caught, a bare
    /// error given its problem body: one future, polled once a wake-up, where tokio's
    /// `Timeout` around futures' `CatchUnwind` under a `Map` were three, each polling the
    /// next through a function of its own (distinct code a request runs, which costs in
    /// the instruction cache beyond its instructions).
    pub(crate) struct Guarded<F> {
        #[pin]
        inner: F,
        #[pin]
        limit: tokio::time::Sleep,
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for Guarded<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let inner = this.inner;
        // The answer first: one that is ready when the limit falls due is still given.
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(Ok(response))) => return Poll::Ready(Ok(problem_for_bare_errors(response))),
            Ok(Poll::Pending) => {}
            Err(panic) => return Poll::Ready(Ok(panicked(panic.as_ref()))),
        }
        match this.limit.poll(cx) {
            Poll::Ready(()) => {
                tracing::warn!("a request ran out of time and was stopped");
                let problem =
                    Problem::new(StatusCode::SERVICE_UNAVAILABLE, "the request took too long and was stopped");
                Poll::Ready(Ok(problem.into_response()))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S> Service<Request> for Frame<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Guarded<S::Future>, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let taken = match self.shared.linger {
            true => crate::linger::take_oversized(&mut request, self.shared.max_body_bytes),
            false => None,
        };
        let answer = self.answer(request);
        match taken {
            None => answer,
            Some(body) => Either::Right(Box::pin(crate::linger::drained(answer, body))),
        }
    }
}

impl<S> Frame<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    /// The request's answer, its body (if it was too large) already taken away.
    #[inline]
    fn answer(&mut self, mut request: Request) -> <Self as Service<Request>>::Future {
        // Outside authentication and rate limits: a load balancer's probe needs no
        // credentials, ignores any, and is never throttled by somebody else's traffic.
        let probe = match request.uri().path() {
            bounds::LIVENESS_PATH => Some(Probe::Live),
            bounds::READINESS_PATH => Some(Probe::Ready),
            _ => None,
        };
        if let Some(probe) = probe {
            let (method, shared) = (request.method().clone(), self.shared.clone());
            return Either::Right(Box::pin(async move { Ok(probe.answer(&method, &shared.store).await) }));
        }
        if self.shared.bound_bodies
            && let Some(refusal) = crate::body::limit::refusal(&mut request, self.shared.max_body_bytes)
        {
            return Either::Right(Box::pin(std::future::ready(Ok(refusal))));
        }
        if request.headers().contains_key(crate::idempotency::IDEMPOTENCY_KEY) {
            request.extensions_mut().insert(self.shared.keeper.clone());
        }
        let called = std::panic::catch_unwind(AssertUnwindSafe(|| self.inner.call(request)));
        match called {
            Ok(inner) => Either::Left(Guarded { inner, limit: tokio::time::sleep(self.shared.timeout) }),
            Err(panic) => Either::Right(Box::pin(std::future::ready(Ok(panicked(panic.as_ref()))))),
        }
    }
}

/// 500 for a request whose handling panicked; the panic's message is logged, never sent.
fn panicked(panic: &(dyn Any + Send)) -> Response {
    let message = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(not text)");
    tracing::error!(panic = message, "a request's handling panicked");
    Problem::internal().into_response()
}

/// Errors produced below the handlers (405 from routing, 413 from axum's extractors) carry
/// no body; every error answer is problem+json, so they get one. Their headers (`Allow`
/// above all) are kept.
pub(crate) fn problem_for_bare_errors(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if is_problem {
        return response;
    }
    let detail = match status {
        StatusCode::METHOD_NOT_ALLOWED => "this method is not allowed here; see the Allow header",
        StatusCode::PAYLOAD_TOO_LARGE => crate::problem::TOO_LARGE,
        StatusCode::NOT_FOUND => "no such route",
        _ => "the request failed",
    };
    let (parts, _) = response.into_parts();
    let mut problem = Problem::new(status, detail).into_response();
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            problem.headers_mut().insert(name.clone(), value.clone());
        }
    }
    problem
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
            return problem_for_bare_errors(refused);
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

#[cfg(test)]
mod tests {
    use super::{Guarded, Pacer};
    use axum::http::StatusCode;
    use axum::response::{IntoResponse, Response};
    use std::convert::Infallible;
    use std::time::Duration;

    /// A limit already past when the request is first polled.
    fn past() -> tokio::time::Sleep {
        tokio::time::sleep_until(tokio::time::Instant::now() - Duration::from_secs(1))
    }

    #[tokio::test]
    async fn an_answer_ready_when_the_limit_falls_due_is_given() {
        let ready = std::future::ready(Ok::<Response, Infallible>(StatusCode::CREATED.into_response()));
        let answer = Guarded { inner: ready, limit: past() }.await.unwrap();
        assert_eq!(answer.status(), StatusCode::CREATED);
    }

    #[tokio::test]
    async fn a_request_still_running_when_the_limit_falls_due_is_answered_503() {
        let stuck = std::future::pending::<Result<Response, Infallible>>();
        let answer = Guarded { inner: stuck, limit: past() }.await.unwrap();
        assert_eq!(answer.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(answer.headers()["content-type"], "application/problem+json");
    }

    #[tokio::test]
    async fn a_bare_error_is_given_a_problem_body_and_keeps_its_headers() {
        let mut refused = StatusCode::METHOD_NOT_ALLOWED.into_response();
        refused.headers_mut().insert("allow", "GET".parse().unwrap());
        let limit = tokio::time::sleep(Duration::from_secs(30));
        let answer = Guarded { inner: std::future::ready(Ok::<_, Infallible>(refused)), limit }.await.unwrap();
        assert_eq!(answer.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(answer.headers()["content-type"], "application/problem+json");
        assert_eq!(answer.headers()["allow"], "GET");
    }

    #[tokio::test]
    async fn the_pacer_runs_until_it_is_dropped() {
        let pacer = Pacer::start(Duration::from_secs(30)).expect("a runtime to run on");
        let task = pacer.0.clone();
        tokio::task::yield_now().await;
        assert!(!task.is_finished(), "the pacer is held");
        drop(pacer);
        // An aborted task ends when the runtime next turns to it.
        for _ in 0..100 {
            if task.is_finished() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the pacer outlived the service");
    }

    #[test]
    fn outside_a_runtime_there_is_no_pacer() {
        assert!(Pacer::start(Duration::from_secs(30)).is_none());
    }
}
