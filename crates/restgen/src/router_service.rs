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
//! `Extension` inserts again; each costs every request work, where this is
//! one comparison of the path, a header or two looked up, and the request's place among
//! the [`crate::deadlines`].

use crate::deadlines::{Deadline, Deadlines, Slot, Ticker};
use crate::idempotency::IdempotencySettings;
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

/// The probes, then `inner` within the time limit, with the [`IdempotencySettings`] on a request that
/// carries an idempotency key.
///
/// hyper clones the whole service for each request and drops the clone after it: what the
/// router service holds beside `inner` is one `Arc`, a count to raise and lower, where its fields
/// each cloned were several (the store alone up to three).
#[derive(Clone)]
pub(crate) struct RouterService<S> {
    pub inner: S,
    pub shared: Arc<SharedState>,
}

/// What every request's router service reads, and what lives as long as the service.
pub(crate) struct SharedState {
    /// How idempotency keys are kept, for the requests that carry one (the extension is
    /// inserted for them alone: most requests have none, and an insertion costs each).
    pub idempotency_settings: IdempotencySettings,
    pub store: Store,
    /// `/readyz`'s last answer, asked of the database at most once a second.
    pub readiness: Readiness,
    /// Every request's time limit (`request_timeout`): then it is stopped and answered 503.
    pub deadlines: Arc<Deadlines>,
    /// `limits.max_body_bytes`.
    pub max_body_bytes: usize,
    /// Whether the router service is the outermost service, so that it drains a body declared
    /// larger than the bound before the refusal goes ([`crate::linger`]). Where CORS,
    /// versions or load shedding wrap it, a `Linger` outside them does, as they may
    /// answer first.
    pub linger: bool,
    /// Whether the router service bounds bodies itself ([`crate::body::limit`]). Where
    /// authentication or rate limits wrap each route, the bound is within them, route by
    /// route: a body too large is then a request like any other, counted and answered
    /// with the budget's fields.
    pub bound_bodies: bool,
    /// Held, not read: wakes requests whose limit nears, stopped with the service.
    pub _ticker: Option<Ticker>,
    /// Held, not read: the webhook worker of an application whose caller does not stop it
    /// itself ([`crate::serve::app`]), stopped with the service.
    pub _background: Option<crate::webhooks::Background>,
    /// Held, not read: this instance's feed poller, stopped with the service.
    pub _feed: Option<crate::feed::Running>,
}

pin_project_lite::pin_project! {
    /// The inner service's future within the time limit, a panic in it caught, a bare
    /// error given its problem body: one future, polled once a wake-up, where tokio's
    /// `Timeout` around futures' `CatchUnwind` under a `Map` were three, each polling the
    /// next through a function of its own (distinct code a request runs, which costs in
    /// the instruction cache beyond its instructions).
    ///
    /// `slot` is where the request waits in `deadlines`, once it has waited; `exact`,
    /// tokio's timer, set for the deadline once the request is woken for it.
    pub(crate) struct RequestFuture<F> {
        #[pin]
        inner: F,
        deadlines: Arc<Deadlines>,
        deadline: Deadline,
        slot: Option<Slot>,
        exact: Option<Pin<Box<tokio::time::Sleep>>>,
    }

    impl<F> PinnedDrop for RequestFuture<F> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let Some(slot) = this.slot.take() {
                this.deadlines.leave(slot);
            }
        }
    }
}

impl<F> RequestFuture<F> {
    pub(crate) fn new(inner: F, deadlines: Arc<Deadlines>) -> RequestFuture<F> {
        let deadline = deadlines.deadline();
        RequestFuture { inner, deadlines, deadline, slot: None, exact: None }
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for RequestFuture<F> {
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
        if this.exact.is_none() && this.deadlines.wait(this.slot, *this.deadline, cx.waker()) {
            *this.exact = Some(Box::pin(tokio::time::sleep_until(this.deadline.at)));
        }
        match this.exact.as_mut().map(|exact| exact.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => {
                tracing::warn!("a request ran out of time and was stopped");
                let problem =
                    Problem::new(StatusCode::SERVICE_UNAVAILABLE, "the request took too long and was stopped");
                Poll::Ready(Ok(problem.into_response()))
            }
            _ => Poll::Pending,
        }
    }
}

impl<S> Service<Request> for RouterService<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<RequestFuture<S::Future>, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let taken = if self.shared.linger {
            crate::linger::take_oversized(&mut request, self.shared.max_body_bytes)
        } else {
            None
        };
        let answer = self.answer(request);
        match taken {
            None => answer,
            Some(body) => Either::Right(Box::pin(crate::linger::drained(answer, body))),
        }
    }
}

impl<S> RouterService<S>
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
            return Either::Right(Box::pin(async move {
                crate::current::operation("", probe.name());
                Ok(probe.answer(&method, &shared.readiness, &shared.store).await)
            }));
        }
        if self.shared.bound_bodies
            && let Some(refusal) = crate::body::limit::refusal(&mut request, self.shared.max_body_bytes)
        {
            return Either::Right(Box::pin(std::future::ready(Ok(refusal))));
        }
        if request.headers().contains_key(crate::idempotency::IDEMPOTENCY_KEY) {
            request.extensions_mut().insert(self.shared.idempotency_settings.clone());
        }
        let called = std::panic::catch_unwind(AssertUnwindSafe(|| self.inner.call(request)));
        match called {
            Ok(inner) => Either::Left(RequestFuture::new(inner, self.shared.deadlines.clone())),
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
        .is_some_and(|v| v.as_bytes().starts_with(restgen_wire::http::media::PROBLEM.as_bytes()));
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
    /// The probe's name in the metrics, as an operation's.
    fn name(self) -> &'static str {
        match self {
            Probe::Live => "healthz",
            Probe::Ready => "readyz",
        }
    }

    async fn answer(self, method: &Method, readiness: &Readiness, store: &Store) -> Response {
        if method != Method::GET && method != Method::HEAD {
            let mut refused = StatusCode::METHOD_NOT_ALLOWED.into_response();
            refused.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET,HEAD"));
            return problem_for_bare_errors(refused);
        }
        match self {
            Probe::Live => healthz(),
            Probe::Ready => readyz(readiness, store).await,
        }
    }
}

/// The database's last answer to a readiness check, and when it was asked: every probe
/// within a second of it gets the same answer. `/readyz` needs no credentials, so without
/// this anybody could make each of a flood of requests take a pooled connection from the
/// requests that need one.
#[derive(Default)]
pub(crate) struct Readiness(tokio::sync::Mutex<Option<(tokio::time::Instant, bool)>>);

/// How old an answer a probe may get.
const READINESS_FRESH: Duration = Duration::from_secs(1);

impl Readiness {
    /// The answer at most [`READINESS_FRESH`] old: the last one, or `check`'s now. Probes
    /// that come while a check runs wait for its answer rather than check again.
    async fn ready(&self, check: impl Future<Output = bool>) -> bool {
        let mut last = self.0.lock().await;
        match *last {
            Some((at, ready)) if at.elapsed() < READINESS_FRESH => ready,
            _ => {
                let ready = check.await;
                *last = Some((tokio::time::Instant::now(), ready));
                ready
            }
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
/// down: a probe must answer sooner than a pool waiting for a connection would. The
/// answer is at most a second old ([`Readiness`]).
async fn readyz(readiness: &Readiness, store: &Store) -> Response {
    let within = Duration::from_secs(bounds::READY_WITHIN_SECONDS);
    let check = async { tokio::time::timeout(within, store.ping()).await.unwrap_or(false) };
    if readiness.ready(check).await {
        (StatusCode::OK, axum::Json(serde_json::json!({ "status": "ready" }))).into_response()
    } else {
        Problem::new(StatusCode::SERVICE_UNAVAILABLE, "the database does not answer").into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::RequestFuture;
    use crate::deadlines::Deadlines;
    use axum::http::StatusCode;
    use axum::response::{IntoResponse, Response};
    use std::convert::Infallible;
    use std::sync::Arc;
    use std::time::Duration;

    /// Limits of `limit`, ticking on the test's runtime until it ends.
    fn limits(limit: Duration) -> Arc<Deadlines> {
        let (deadlines, ticker) = Deadlines::start(limit);
        std::mem::forget(ticker.expect("a runtime to tick on"));
        deadlines
    }

    fn stuck() -> std::future::Pending<Result<Response, Infallible>> {
        std::future::pending()
    }

    #[tokio::test]
    async fn an_answer_ready_when_the_limit_falls_due_is_given() {
        let ready = std::future::ready(Ok::<Response, Infallible>(StatusCode::CREATED.into_response()));
        let answer = RequestFuture::new(ready, limits(Duration::ZERO)).await.unwrap();
        assert_eq!(answer.status(), StatusCode::CREATED);
    }

    /// Each request is stopped at its limit, not before, and is woken for it though
    /// nothing else would ever wake it; none is left waiting after.
    #[tokio::test]
    async fn requests_still_running_at_their_limit_are_answered_503_and_not_before() {
        let limit = Duration::from_millis(200);
        let deadlines = limits(limit);
        let started = tokio::time::Instant::now();
        let requests = (0..50).map(|_| RequestFuture::new(stuck(), deadlines.clone()));
        // Bounded only so that a request never woken fails rather than hangs.
        let answers = tokio::time::timeout(limit * 50, futures_util::future::join_all(requests)).await;
        let answers = answers.expect("every request is woken at its limit");
        assert!(started.elapsed() >= limit, "stopped after {:?}, before the limit", started.elapsed());
        for answer in answers {
            let answer = answer.unwrap();
            assert_eq!(answer.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(answer.headers()["content-type"], "application/problem+json");
        }
        assert_eq!(deadlines.waiting(), 0);
    }

    /// A request waits in the table while it waits, and leaves it when it is answered or
    /// given up (its client gone).
    #[tokio::test]
    async fn a_request_leaves_the_table_when_it_ends_however_it_ends() {
        let deadlines = limits(Duration::from_secs(30));
        let (send, answer) = tokio::sync::oneshot::channel::<Response>();
        let answered = RequestFuture::new(async move { Ok(answer.await.unwrap()) }, deadlines.clone());
        let task = tokio::spawn(answered);
        while deadlines.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        send.send(StatusCode::OK.into_response()).unwrap();
        assert_eq!(task.await.unwrap().unwrap().status(), StatusCode::OK);
        assert_eq!(deadlines.waiting(), 0, "answered");

        let mut given_up = Box::pin(RequestFuture::new(stuck(), deadlines.clone()));
        assert!(futures_util::FutureExt::now_or_never(&mut given_up).is_none(), "still running");
        assert_eq!(deadlines.waiting(), 1);
        drop(given_up);
        assert_eq!(deadlines.waiting(), 0, "given up");
    }

    /// A flood of probes asks the database once a second, not once a probe; each gets
    /// the answer of the check it waited for or of one less than a second old.
    #[tokio::test]
    async fn readiness_is_asked_of_the_database_at_most_once_a_second() {
        let readiness = super::Readiness::default();
        let checks = std::sync::atomic::AtomicUsize::new(0);
        let check = || async {
            checks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::task::yield_now().await;
            true
        };
        let answers = futures_util::future::join_all((0..64).map(|_| readiness.ready(check()))).await;
        assert!(answers.iter().all(|ready| *ready));
        assert_eq!(checks.load(std::sync::atomic::Ordering::SeqCst), 1, "one check for 64 probes");
        // An answer older than a second is asked again.
        *readiness.0.lock().await = Some((tokio::time::Instant::now() - super::READINESS_FRESH, false));
        assert!(readiness.ready(check()).await);
        assert_eq!(checks.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_bare_error_is_given_a_problem_body_and_keeps_its_headers() {
        let mut refused = StatusCode::METHOD_NOT_ALLOWED.into_response();
        refused.headers_mut().insert("allow", "GET".parse().unwrap());
        let inner = std::future::ready(Ok::<_, Infallible>(refused));
        let answer = RequestFuture::new(inner, limits(Duration::from_secs(30))).await.unwrap();
        assert_eq!(answer.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(answer.headers()["content-type"], "application/problem+json");
        assert_eq!(answer.headers()["allow"], "GET");
    }
}
