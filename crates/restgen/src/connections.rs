//! Client connections: accepted up to a cap, served by hyper (HTTP/1.1), and closed when a
//! client holds one without making progress.
//!
//! A server that waits for a client for ever can be held by anybody: a client that sends
//! half a header block and waits, or opens connections and sends nothing, or trickles a
//! body, keeps a connection (a file descriptor, its buffers, a task) for each try, and a
//! few thousand such clients exhaust the process. So each connection is in one of four
//! phases, each with its own limit ([`HttpLimits`]):
//!
//! - reading a request's head: from its first byte (or the connection's accept) to its last
//!   header line, at most `header_timeout`, however slowly the bytes come;
//! - reading a request's body: from its head to its last byte, at most `body_timeout`;
//! - between requests (keep-alive): at most `keep_alive_timeout` without a byte either way;
//! - answering: bounded by the schema's `limits.request_timeout` ([`crate::router_service`]), not here.
//!
//! Timing a phase takes no timer and no clock read per request: the reader and the service
//! record each change of phase as a count, and a watchdog per connection looks at the count
//! every half of the shortest limit. A connection whose count has not moved for a whole
//! limit of its phase is closed: between one limit and one and a half after it stalled.
//! A tokio timer per request cost a request more than the rest of its framing
//! ([`crate::deadlines`] says why); a watchdog costs a connection one wake-up per period.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

/// What `serve::app` builds: the service as hyper serves it, one clone per request (clones
/// share everything but a few reference counts).
pub trait Application:
    tower::Service<Request, Response = Response, Error = Infallible, Future: Send + 'static> + Clone + Send + Sync + 'static
{
}

impl<T> Application for T where
    T: tower::Service<Request, Response = Response, Error = Infallible, Future: Send + 'static>
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// How long a client may take, and how many connections are open at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpLimits {
    /// `HTTP_HEADER_TIMEOUT`: a request's head, from its first byte (a new connection's
    /// accept) to its last header line.
    pub header_timeout: Duration,
    /// `HTTP_BODY_TIMEOUT`: a request's body, from its head to its last byte.
    pub body_timeout: Duration,
    /// `HTTP_KEEP_ALIVE_TIMEOUT`: an idle connection between two requests.
    pub keep_alive_timeout: Duration,
    /// `HTTP_MAX_CONNECTIONS`: connections open at once; more wait to be accepted.
    pub max_connections: usize,
}

impl Default for HttpLimits {
    /// nginx's and Go's habits: 10 s for a head (Go's `ReadHeaderTimeout` as commonly set,
    /// nginx waits 60), 30 s for a body, 75 s between requests (nginx's `keepalive_timeout`:
    /// longer than the 60 s a load balancer keeps an idle connection, so the balancer, not
    /// the service, closes it and never sends on one being closed), 10,000 connections.
    fn default() -> Self {
        HttpLimits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            keep_alive_timeout: Duration::from_secs(75),
            max_connections: 10_000,
        }
    }
}

impl HttpLimits {
    /// The limits from `HTTP_HEADER_TIMEOUT`, `HTTP_BODY_TIMEOUT`,
    /// `HTTP_KEEP_ALIVE_TIMEOUT` (seconds, fractions allowed) and `HTTP_MAX_CONNECTIONS`,
    /// looked up by `var`; each unset one has its default, a value that is not a positive
    /// number is an error naming it.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<HttpLimits, String> {
        let defaults = HttpLimits::default();
        let seconds = |name: &str, default: Duration| -> Result<Duration, String> {
            let positive = |s: &f64| s.is_finite() && *s > 0.0 && *s < 1e9;
            Ok(crate::settings::positive_var(name, &var, positive)?.map_or(default, Duration::from_secs_f64))
        };
        Ok(HttpLimits {
            header_timeout: seconds("HTTP_HEADER_TIMEOUT", defaults.header_timeout)?,
            body_timeout: seconds("HTTP_BODY_TIMEOUT", defaults.body_timeout)?,
            keep_alive_timeout: seconds("HTTP_KEEP_ALIVE_TIMEOUT", defaults.keep_alive_timeout)?,
            max_connections: crate::settings::positive_var("HTTP_MAX_CONNECTIONS", &var, |n: &usize| *n > 0)?
                .unwrap_or(defaults.max_connections),
        })
    }

    /// How often a connection's watchdog looks: half the shortest limit.
    fn period(&self) -> Duration {
        (self.header_timeout.min(self.body_timeout).min(self.keep_alive_timeout) / 2).max(Duration::from_millis(1))
    }

    fn limit(&self, phase: Phase) -> Option<Duration> {
        match phase {
            Phase::Head => Some(self.header_timeout),
            Phase::Body => Some(self.body_timeout),
            Phase::Idle => Some(self.keep_alive_timeout),
            Phase::Answering => None,
        }
    }
}

/// What a connection is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Reading a request's head (or waiting for a new connection's first request).
    Head,
    /// Reading a request's body.
    Body,
    /// Answering: the service has the request.
    Answering,
    /// Between requests.
    Idle,
}

/// A connection's phase and a count of its changes (and of bytes written while idle), in
/// one word: the low two bits the phase, the rest the count. Only the connection's own
/// task writes it (its reader, its service and its body are all polled there), so a load
/// and a store suffice where an atomic read-modify-write would cost a locked instruction.
#[derive(Debug)]
struct Activity(AtomicU64);

impl Activity {
    fn new(phase: Phase) -> Activity {
        Activity(AtomicU64::new(phase as u64))
    }

    fn load(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn phase(word: u64) -> Phase {
        match word & 3 {
            0 => Phase::Head,
            1 => Phase::Body,
            2 => Phase::Answering,
            _ => Phase::Idle,
        }
    }

    /// Enters `phase` (counted as a change even where it is the same phase again).
    fn enter(&self, phase: Phase) {
        let count = (self.load() >> 2).wrapping_add(1);
        self.0.store((count << 2) | phase as u64, Ordering::Relaxed);
    }

    /// A byte read: a new request's head begins if the connection was idle.
    fn read(&self) {
        if Activity::phase(self.load()) == Phase::Idle {
            self.enter(Phase::Head);
        }
    }

    /// A byte written: an idle connection still sending an answer's body is not idle.
    fn wrote(&self) {
        if Activity::phase(self.load()) == Phase::Idle {
            self.enter(Phase::Idle);
        }
    }
}

/// The connection's socket, recording what it reads and writes.
struct Watched {
    stream: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, data);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.wrote();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.wrote();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

pin_project_lite::pin_project! {
    /// A request's body, recording when its last byte has come.
    struct WatchedBody {
        #[pin]
        incoming: Incoming,
        activity: Arc<Activity>,
        done: bool,
    }
}

impl HttpBody for WatchedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, hyper::Error>>> {
        let this = self.project();
        let polled = this.incoming.poll_frame(cx);
        if !*this.done && matches!(polled, Poll::Ready(None) | Poll::Ready(Some(Err(_)))) {
            *this.done = true;
            this.activity.enter(Phase::Answering);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.incoming.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.incoming.size_hint()
    }
}

/// The application as hyper calls it for one connection: each request knows its peer
/// (`ConnectInfo`), and the connection's phase follows the request.
struct PerConnection<A> {
    app: A,
    peer: SocketAddr,
    activity: Arc<Activity>,
}

impl<A: Application> hyper::service::Service<hyper::Request<Incoming>> for PerConnection<A> {
    type Response = Response;
    type Error = Infallible;
    type Future = Answered<tower::util::Oneshot<A, Request>>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        let activity = self.activity.clone();
        let (mut parts, incoming) = request.into_parts();
        parts.extensions.insert(ConnectInfo(self.peer));
        let body = if incoming.is_end_stream() {
            activity.enter(Phase::Answering);
            Body::new(incoming)
        } else {
            activity.enter(Phase::Body);
            Body::new(WatchedBody { incoming, activity: activity.clone(), done: false })
        };
        // Made ready, then called, as axum's own server does: load shedding is decided
        // in `poll_ready`.
        let inner = tower::ServiceExt::oneshot(self.app.clone(), Request::from_parts(parts, body));
        Answered { inner, activity }
    }
}

pin_project_lite::pin_project! {
    /// A request's answer; once it is given, the connection is between requests.
    struct Answered<F> {
        #[pin]
        inner: F,
        activity: Arc<Activity>,
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for Answered<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let answered = this.inner.poll(cx);
        if answered.is_ready() {
            this.activity.enter(Phase::Idle);
        }
        answered
    }
}

/// Serves `app` on `listener` until `signal` completes: at most `limits.max_connections`
/// open at once, each closed when its client stalls beyond a limit; then stops accepting,
/// lets each connection finish the request it is answering, and returns once all are closed.
pub async fn serve(
    listener: TcpListener,
    app: impl Application,
    limits: HttpLimits,
    signal: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let cap = limits.max_connections.min(u32::MAX as usize).min(Semaphore::MAX_PERMITS);
    let open = Arc::new(Semaphore::new(cap));
    let (stop, stopping) = watch::channel(false);
    let mut signal = pin!(signal);
    loop {
        // At the cap, the next connection waits in the listen queue until one closes.
        let permit = tokio::select! {
            permit = open.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut signal => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            () = &mut signal => break,
        };
        let (app, stopping) = (app.clone(), stopping.clone());
        crate::outlined::spawn(crate::feed::STOPPING.scope(stopping.clone(), async move {
            connection(stream, peer, app, limits, stopping).await;
            drop(permit);
        }));
    }
    let _ = stop.send(true);
    drop(listener);
    // Every connection holds a permit until it closes.
    let _ = open.acquire_many(u32::try_from(cap).unwrap_or(u32::MAX)).await;
    Ok(())
}

/// One connection, until its client closes it, stalls beyond a limit, or the server stops.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: impl Application,
    limits: HttpLimits,
    mut stopping: watch::Receiver<bool>,
) {
    let activity = Arc::new(Activity::new(Phase::Head));
    let io = TokioIo::new(Watched { stream, activity: activity.clone() });
    let service = PerConnection { app, peer, activity: activity.clone() };
    let mut served = pin!(hyper::server::conn::http1::Builder::new().serve_connection(io, service));
    let period = limits.period();
    let mut watchdog = pin!(tokio::time::sleep(period));
    let (mut seen, mut still) = (activity.load(), Duration::ZERO);
    let mut stopped = *stopping.borrow();
    if stopped {
        served.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            done = served.as_mut() => {
                if let Err(e) = done {
                    tracing::debug!(%peer, error = %e, "connection ended");
                }
                return;
            }
            () = watchdog.as_mut() => {
                let now = activity.load();
                still = if now == seen { still + period } else { Duration::ZERO };
                seen = now;
                let phase = Activity::phase(now);
                if limits.limit(phase).is_some_and(|limit| still >= limit) {
                    tracing::debug!(%peer, ?phase, "connection closed: the client made no progress within its limit");
                    return;
                }
                watchdog.as_mut().reset(tokio::time::Instant::now() + period);
            }
            changed = stopping.changed(), if !stopped => {
                stopped = true;
                if changed.is_err() || *stopping.borrow() {
                    // Finishes the request being answered; an idle connection closes now.
                    served.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// An accept that failed: a connection reset before it was taken is nothing; running out
/// of file descriptors (or another resource) is waited out, or the loop would spin.
async fn accept_failed(e: io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed; trying again in a second");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_come_from_the_environment_and_a_bad_value_names_its_variable() {
        let none = HttpLimits::from_lookup(|_| None).unwrap();
        assert_eq!(none, HttpLimits::default());
        let set = HttpLimits::from_lookup(|name| match name {
            "HTTP_HEADER_TIMEOUT" => Some("2.5".into()),
            "HTTP_MAX_CONNECTIONS" => Some("64".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(set.header_timeout, Duration::from_millis(2500));
        assert_eq!(set.max_connections, 64);
        assert_eq!(set.keep_alive_timeout, HttpLimits::default().keep_alive_timeout);
        for (name, value) in
            [("HTTP_BODY_TIMEOUT", "0"), ("HTTP_KEEP_ALIVE_TIMEOUT", "soon"), ("HTTP_MAX_CONNECTIONS", "-1")]
        {
            let e = HttpLimits::from_lookup(|n| (n == name).then(|| value.to_owned())).unwrap_err();
            assert!(e.starts_with(name), "{e}");
        }
    }

    #[test]
    fn a_phase_change_is_counted_even_into_the_same_phase() {
        let a = Activity::new(Phase::Head);
        let first = a.load();
        a.enter(Phase::Answering);
        a.enter(Phase::Idle);
        let idle = a.load();
        assert_eq!(Activity::phase(idle), Phase::Idle);
        a.wrote();
        assert_ne!(a.load(), idle, "writing while idle is progress");
        a.read();
        assert_eq!(Activity::phase(a.load()), Phase::Head, "a byte read starts a head");
        let head = a.load();
        a.read();
        assert_eq!(a.load(), head, "more bytes of a head are not progress: the head's whole time is limited");
        assert_ne!(first, head);
    }
}
