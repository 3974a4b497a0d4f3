//! The change feed of `feed` resources: `GET {collection}/changes` as Server-Sent Events.
//!
//! Every write of such a resource logs its change in its own transaction
//! ([`crate::store::changes`]); each instance runs one poller that numbers what has
//! committed and hands each numbered change to its open streams through one broadcast
//! channel. A stream shows its caller what their list would show, field by field, and
//! catches up from the log itself when it resumes (`Last-Event-ID`) or falls behind the
//! channel, so every instance serves every change, in the log's order, and a client that
//! resumes after a cut or a restart misses none and sees none twice.
//!
//! Streams are bounded: open ones are capped per caller and per instance (429 beyond),
//! each has a buffer of events a slow reader may leave unread (beyond it the stream ends,
//! and the client resumes where it stopped), a bearer token's expiry ends its stream, and
//! the caller's account is looked at again as the stream goes on, so a revoked key, a
//! deleted account or a role taken away ends or narrows it.

mod stream;

pub(crate) use stream::changes;

use crate::problem::Problem;
use crate::rate::address::Proxies;
use crate::store::Store;
use crate::store::changes::Change;
use axum::http::{HeaderValue, header};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, watch};

tokio::task_local! {
    /// Whether the server is stopping, set by `connections` in each connection's task: a
    /// stream ends when it is, rather than hold the shutdown up for good.
    pub(crate) static STOPPING: watch::Receiver<bool>;
}

/// Whether the server serving this request is stopping, where one of `connections`'
/// connections serves it (a service driven another way has no such signal).
fn stopping() -> Option<watch::Receiver<bool>> {
    STOPPING.try_with(watch::Receiver::clone).ok()
}

/// How this instance serves its feeds (`<SERVICE>_FEED_*`).
#[derive(Clone, Debug)]
pub struct FeedSettings {
    /// `_FEED_POLL`: how often the log is looked at for what other instances wrote (this
    /// instance's own writes wake it at once).
    pub poll: Duration,
    /// `_FEED_HEARTBEAT`: how long a stream stays silent before a comment keeps proxies
    /// from taking it for dead.
    pub heartbeat: Duration,
    /// `_FEED_RECHECK`: how often a stream looks again at its caller's account and key.
    pub recheck: Duration,
    /// `_FEED_RETENTION`: how long the log keeps a change for clients to resume from.
    pub retention: Duration,
    /// `_FEED_MAX_STREAMS`: streams open at once on this instance.
    pub max_streams: usize,
    /// `_FEED_STREAMS_PER_CALLER`: streams open at once for one account (or, unsigned,
    /// one client address).
    pub streams_per_caller: usize,
    /// `_FEED_BUFFER`: events a stream holds for a reader that does not take them.
    pub buffer: usize,
}

impl Default for FeedSettings {
    fn default() -> Self {
        FeedSettings {
            poll: Duration::from_millis(500),
            heartbeat: Duration::from_secs(15),
            recheck: Duration::from_secs(30),
            retention: Duration::from_secs(24 * 60 * 60),
            max_streams: 1000,
            streams_per_caller: 8,
            buffer: 256,
        }
    }
}

impl FeedSettings {
    /// The settings from `<SERVICE>_FEED_POLL`, `_HEARTBEAT`, `_RECHECK`, `_RETENTION`
    /// (seconds, fractions allowed), `_MAX_STREAMS`, `_STREAMS_PER_CALLER` and `_BUFFER`,
    /// looked up by `var`; a value that is not a positive number is an error naming it.
    pub fn from_lookup(service: &str, var: impl Fn(&str) -> Option<String>) -> Result<FeedSettings, String> {
        let prefix = crate::settings::env_prefix(service);
        let defaults = FeedSettings::default();
        let seconds = |name: &str, default: Duration| -> Result<Duration, String> {
            let positive = |s: &f64| s.is_finite() && *s > 0.0 && *s < 1e9;
            let name = format!("{prefix}_FEED_{name}");
            Ok(crate::settings::positive_var(&name, &var, positive)?.map_or(default, Duration::from_secs_f64))
        };
        let count = |name: &str, default: usize| -> Result<usize, String> {
            let name = format!("{prefix}_FEED_{name}");
            Ok(crate::settings::positive_var(&name, &var, |n: &usize| *n > 0)?.unwrap_or(default))
        };
        Ok(FeedSettings {
            poll: seconds("POLL", defaults.poll)?,
            heartbeat: seconds("HEARTBEAT", defaults.heartbeat)?,
            recheck: seconds("RECHECK", defaults.recheck)?,
            retention: seconds("RETENTION", defaults.retention)?,
            max_streams: count("MAX_STREAMS", defaults.max_streams)?,
            streams_per_caller: count("STREAMS_PER_CALLER", defaults.streams_per_caller)?,
            buffer: count("BUFFER", defaults.buffer)?,
        })
    }
}

/// This instance's feeds: the settings, the channel numbered changes go out on, and
/// the streams open.
pub(crate) struct Hub {
    settings: FeedSettings,
    /// Made when the first stream opens here ([`Hub::changes`]).
    changes: OnceLock<broadcast::Sender<Arc<Change>>>,
    open: Mutex<Open>,
    /// Who an unsigned caller is: their address, through the proxies the schema trusts.
    proxies: Proxies,
}

/// The streams open: how many, and how many each caller holds.
#[derive(Default)]
struct Open {
    total: usize,
    by_caller: HashMap<String, usize>,
}

/// A stream's place among those open, given back when the stream ends.
pub(crate) struct Seat {
    hub: Arc<Hub>,
    caller: String,
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut open = self.hub.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.by_caller.get_mut(&self.caller) {
            *n -= 1;
            if *n == 0 {
                open.by_caller.remove(&self.caller);
            }
        }
    }
}

impl Hub {
    /// The channel numbered changes go out on, made when the first stream opens: a channel
    /// makes all its [`LAG`] slots at once, and an instance nobody streams from needs none.
    fn changes(&self) -> &broadcast::Sender<Arc<Change>> {
        self.changes.get_or_init(|| broadcast::channel(LAG).0)
    }

    /// Whether a stream here listens for changes.
    fn listened(&self) -> bool {
        self.changes.get().is_some_and(|c| c.receiver_count() > 0)
    }

    /// A seat for `caller`'s new stream; 429 with `Retry-After` when the caller or the
    /// instance holds as many as it may.
    fn seat(self: &Arc<Self>, caller: String) -> Result<Seat, Problem> {
        let mut open = self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let theirs = open.by_caller.get(&caller).copied().unwrap_or(0);
        let detail = if theirs >= self.settings.streams_per_caller {
            Some(format!(
                "you have {theirs} change streams open, the most one caller may: close one before opening another"
            ))
        } else if open.total >= self.settings.max_streams {
            Some("this instance serves as many change streams as it may: try again shortly".to_owned())
        } else {
            None
        };
        if let Some(detail) = detail {
            return Err(Problem::new(axum::http::StatusCode::TOO_MANY_REQUESTS, detail)
                .with_header(header::RETRY_AFTER, HeaderValue::from_static("5")));
        }
        open.total += 1;
        *open.by_caller.entry(caller.clone()).or_insert(0) += 1;
        Ok(Seat { hub: self.clone(), caller })
    }
}

/// The poller of one instance, stopped when dropped (with the application that holds it).
/// Told, not aborted: one stopped in the middle of numbering would leave its transaction
/// (and SQLite's write lock) with a connection until the pool next took it.
pub(crate) struct Running {
    stop: watch::Sender<bool>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// Starts this instance's poller over `store`'s log and makes its feeds servable.
pub(crate) fn start(store: &Store, settings: FeedSettings, proxies: Proxies) -> Running {
    let hub = Arc::new(Hub { settings, changes: OnceLock::new(), open: Mutex::new(Open::default()), proxies });
    // One application per store: a second one's streams would be served by the first's
    // poller, which lives as long as the first does.
    if store.signals.feed.set(hub.clone()).is_err() {
        tracing::warn!("a second application on one store: its change feeds are the first's");
    }
    let (stop, stopped) = watch::channel(false);
    crate::outlined::spawn(poll(hub, store.clone(), stopped));
    Running { stop }
}

/// The hub of the application serving `store`, where it has feeds.
fn hub(store: &Store) -> Option<Arc<Hub>> {
    store.signals.feed.get()?.clone().downcast().ok()
}

/// How far a stream's reader may trail the poller before it reads the log itself: the
/// channel's length, one pointer a change.
const LAG: usize = 4096;

/// How many numbered changes one read of the log takes.
const PAGE: u32 = 500;
/// How often the log forgets what is older than its retention.
const PRUNE_EVERY: Duration = Duration::from_secs(60 * 60);

/// Numbers what has committed and sends what is numbered, in order, to this instance's
/// streams; forgets what the log need no longer keep.
///
/// With no stream open here, nothing is numbered or read but where the log ends: a write
/// costs its row in the log and no more. What waits is numbered when a stream opens here
/// (it reads it as changes after its `ready` id, which they are), by another instance's
/// poller that has streams, or before the log is cut.
async fn poll(hub: Arc<Hub>, store: Store, mut stopped: watch::Receiver<bool>) {
    let mut at: Option<i64> = None;
    let mut pruned: Option<Instant> = None;
    loop {
        if *stopped.borrow() {
            return;
        }
        if let Err(e) = round(&hub, &store, &mut at).await {
            tracing::warn!(error = %e, "reading the change log");
        }
        if pruned.is_none_or(|t| t.elapsed() >= PRUNE_EVERY) {
            pruned = Some(Instant::now());
            let before = store.clock().now() - i64::try_from(hub.settings.retention.as_micros()).unwrap_or(i64::MAX);
            // The cut is at a position: what no stream has had numbered yet is numbered
            // first, or it would be kept for good.
            let pruning = async { store.sequence_all_changes().await.and(store.prune_changes(before).await) };
            if let Err(e) = pruning.await {
                tracing::warn!(error = %e, "forgetting old changes");
            }
        }
        let listened = hub.listened();
        tokio::select! {
            _ = store.signals.changes.notified(), if listened => {}
            _ = tokio::time::sleep(hub.settings.poll) => {}
            _ = stopped.changed() => {}
        }
    }
}

/// One look at the log: what has committed numbered, then each change after `at` sent.
/// With no stream open, only where the log ends is read.
async fn round(hub: &Hub, store: &Store, at: &mut Option<i64>) -> Result<(), crate::store::StoreError> {
    let from = match *at {
        Some(from) if hub.listened() => from,
        _ => {
            *at = Some(store.change_bounds().await?.last);
            return Ok(());
        }
    };
    // A batch numbered is a batch sent before the next is numbered: a backlog (what waited
    // while no stream was open) reaches the streams as it is numbered, not after all of it.
    let mut from = from;
    loop {
        let numbered = store.sequence_changes().await?;
        loop {
            let page = store.changes_after(from, PAGE).await?;
            let full = page.len() == PAGE as usize;
            for change in page {
                from = change.seq;
                let _ = hub.changes().send(Arc::new(change));
            }
            *at = Some(from);
            if !full {
                break;
            }
        }
        if numbered < crate::store::changes::BATCH as u64 {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_channel_is_made_by_the_first_stream() {
        let hub = Hub {
            settings: FeedSettings::default(),
            changes: OnceLock::new(),
            open: Mutex::default(),
            proxies: Proxies::default(),
        };
        assert!(!hub.listened());
        assert!(hub.changes.get().is_none(), "no stream has opened: no channel");
        let live = hub.changes().subscribe();
        assert!(hub.listened());
        drop(live);
        assert!(!hub.listened(), "the stream closed");
    }
}
