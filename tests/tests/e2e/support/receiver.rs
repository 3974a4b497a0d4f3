//! A webhook receiver on loopback: it keeps every delivery as it arrived and answers with
//! the statuses a test scripts (204 once the script runs out).

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use restgen::__private::axum;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// One delivery as it arrived.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub headers: HeaderMap,
    pub body: Bytes,
    /// When it arrived, in Unix seconds of the receiver's clock (the service's clock in
    /// tests that move it by hand), as a receiver checks the timestamp against.
    pub at: i64,
}

impl Delivery {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    pub fn id(&self) -> &str {
        self.headers.get("webhook-id").and_then(|v| v.to_str().ok()).expect("a webhook-id")
    }
}

#[derive(Default)]
struct Inner {
    seen: Mutex<Vec<Delivery>>,
    script: Mutex<VecDeque<u16>>,
    arrived: Notify,
    /// Answers wait for [`Receiver::release`] while this is set.
    hold: std::sync::atomic::AtomicBool,
    released: Notify,
}

pub struct Receiver {
    pub url: String,
    inner: Arc<Inner>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The longest a test waits for deliveries it expects: far beyond what they take, so
/// only a delivery that never comes reaches it.
const PATIENCE: Duration = Duration::from_secs(20);

impl Receiver {
    /// Listens on 127.0.0.1; the first answers are `script`'s statuses.
    pub async fn start(script: &[u16]) -> Receiver {
        Receiver::with_clock(script, restgen::clock::Clock::System).await
    }

    /// A receiver that answers nothing until [`Receiver::release`].
    pub async fn holding() -> Receiver {
        let r = Receiver::start(&[]).await;
        r.inner.hold.store(true, std::sync::atomic::Ordering::SeqCst);
        r
    }

    /// Lets held answers go, and answers at once from now on.
    pub fn release(&self) {
        self.inner.hold.store(false, std::sync::atomic::Ordering::SeqCst);
        self.inner.released.notify_waiters();
    }

    /// [`Receiver::start`] keeping time by `clock`.
    pub async fn with_clock(script: &[u16], clock: restgen::clock::Clock) -> Receiver {
        let inner = Arc::new(Inner::default());
        inner.script.lock().unwrap().extend(script);
        let state = inner.clone();
        let app = axum::Router::new().fallback(move |headers: HeaderMap, body: Bytes| {
            let (state, clock) = (state.clone(), clock.clone());
            async move {
                let status = state.script.lock().unwrap().pop_front().unwrap_or(204);
                let at = clock.now() / 1_000_000;
                state.seen.lock().unwrap().push(Delivery { headers, body, at });
                state.arrived.notify_waiters();
                loop {
                    let released = state.released.notified();
                    tokio::pin!(released);
                    released.as_mut().enable();
                    if !state.hold.load(std::sync::atomic::Ordering::SeqCst) {
                        break;
                    }
                    released.await;
                }
                StatusCode::from_u16(status).unwrap()
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hooks", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Receiver { url, inner, task }
    }

    /// Every delivery so far.
    pub fn seen(&self) -> Vec<Delivery> {
        self.inner.seen.lock().unwrap().clone()
    }

    /// Waits until at least `n` deliveries arrived; panics after a long while.
    pub async fn wait_for(&self, n: usize) -> Vec<Delivery> {
        let wait = async {
            loop {
                let arrived = self.inner.arrived.notified();
                tokio::pin!(arrived);
                arrived.as_mut().enable();
                if self.inner.seen.lock().unwrap().len() >= n {
                    return;
                }
                arrived.await;
            }
        };
        if tokio::time::timeout(PATIENCE, wait).await.is_err() {
            panic!("{} deliveries arrived, not {n}", self.seen().len());
        }
        self.seen()
    }
}
