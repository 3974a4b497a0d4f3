//! Every request's time limit (`limits.request_timeout`), kept without a tokio timer for
//! each request.
//!
//! A tokio timer per request is work a hand-written service does not do: the timer made,
//! entered into tokio's timer wheel when the request first waits, and taken out again when
//! the request ends, which is nearly always long before its limit. Here a request that waits is written into a table, under its lock, as a clone
//! of its waker and the tick at which it must be woken, and taken out when it ends. A task
//! ticks every half limit, and wakes the requests whose limit falls before their next tick.
//! Only those set tokio's timer, for the exact instant: a request is stopped at its limit,
//! not a tick after it. The table is in shards, one to a thread of the runtime (as tokio's
//! timer wheel is), so that the threads serving requests do not contend for one lock.
//!
//! The ticker is also the timer that is always due sooner than any other a request sets (a
//! pool's wait for a connection): tokio wakes the thread that waits on its timers and sockets
//! (a write to an eventfd, and one more `epoll_wait`) whenever a timer is set to fall due
//! before the earliest it already has.

use slab::Slab;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Waker;
use std::time::Duration;
use tokio::time::Instant;

/// Shards of the table: more than a runtime's threads on most machines; threads beyond
/// them share.
const SHARDS: usize = 16;

/// Far enough to be never, and within any clock's range (as tokio's own far future).
const FOREVER: Duration = Duration::from_secs(86_400 * 365 * 30);

/// One shard of the table, on a cache line (two, where the hardware fetches pairs) of its
/// own.
#[repr(align(128))]
#[derive(Default)]
struct Shard(Mutex<Slab<(u64, Waker)>>);

std::thread_local! {
    /// The shard of the thread's requests: the threads take them in turn.
    static SHARD: usize = {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS
    };
}

/// Where a waiting request is kept: its shard, and its place in it (it may be polled on
/// another thread later, and is found where it was put).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    shard: usize,
    key: usize,
}

/// The requests of one service waiting within their limit.
pub(crate) struct Deadlines {
    /// The longest a request runs.
    limit: Duration,
    /// When tick 0 fell.
    epoch: Instant,
    /// Nanoseconds between ticks, half the limit (at least one).
    every: u64,
    /// Whether a ticker wakes the requests: outside a runtime there is none, and each
    /// request sets tokio's timer at once.
    ticking: bool,
    /// The ticks so far.
    ticks: AtomicU64,
    /// The requests waiting: the tick at which each is woken, and its waker.
    shards: [Shard; SHARDS],
}

/// One request's limit: when it falls, and the tick that wakes the request before it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    pub at: Instant,
    wake_at: u64,
}

impl Deadlines {
    /// The limits of requests that run at most `limit`, with their ticker started on the
    /// current runtime; without one, untimed (`Ticker` is `None`: each request's limit
    /// then sets tokio's timer).
    pub(crate) fn start(limit: Duration) -> (Arc<Deadlines>, Option<Ticker>) {
        let runtime = tokio::runtime::Handle::try_current().ok();
        let every = u64::try_from((limit / 2).as_nanos()).unwrap_or(u64::MAX).max(1);
        let deadlines = Arc::new(Deadlines {
            limit,
            epoch: Instant::now(),
            every,
            ticking: runtime.is_some(),
            ticks: AtomicU64::new(0),
            shards: Default::default(),
        });
        let ticker = runtime.map(|runtime| {
            let ticked = deadlines.clone();
            Ticker(crate::outlined::spawn_on(&runtime, async move { ticked.tick().await }).abort_handle())
        });
        (deadlines, ticker)
    }

    /// The limit of a request starting now.
    pub(crate) fn deadline(&self) -> Deadline {
        let now = Instant::now();
        // A limit beyond the clock's range (the schema takes any duration) is never reached.
        let at = now.checked_add(self.limit).unwrap_or_else(|| now + FOREVER);
        let since = u64::try_from(at.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX);
        // The last tick at or before the limit: the request is woken at most half a limit
        // before it, and sets the exact timer then.
        let wake_at = if self.ticking { since / self.every } else { 0 };
        Deadline { at, wake_at }
    }

    /// Keeps the request at `slot` (none yet: a new slot) waiting for `deadline`, to be
    /// woken through `waker`; `true`, and the request no longer kept, when its tick has come
    /// and it must set the exact timer itself.
    pub(crate) fn wait(&self, slot: &mut Option<Slot>, deadline: Deadline, waker: &Waker) -> bool {
        if !self.ticking {
            return true;
        }
        let shard = slot.map_or_else(|| SHARD.with(|s| *s), |s| s.shard);
        let mut waiting = self.shard(shard);
        if self.ticks.load(Ordering::Relaxed) >= deadline.wake_at {
            if let Some(slot) = slot.take() {
                waiting.remove(slot.key);
            }
            return true;
        }
        match *slot {
            Some(Slot { key, .. }) => {
                let kept = &mut waiting[key].1;
                if !kept.will_wake(waker) {
                    kept.clone_from(waker);
                }
            }
            None => *slot = Some(Slot { shard, key: waiting.insert((deadline.wake_at, waker.clone())) }),
        }
        false
    }

    /// The request at `slot` is no longer waiting (it ended).
    pub(crate) fn leave(&self, slot: Slot) {
        self.shard(slot.shard).remove(slot.key);
    }

    /// How many requests are waiting.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        (0..SHARDS).map(|shard| self.shard(shard).len()).sum()
    }

    /// A waker's wake never panics in tokio, but a poisoned shard is still whole.
    fn shard(&self, shard: usize) -> MutexGuard<'_, Slab<(u64, Waker)>> {
        self.shards[shard].0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ticks for good, every half limit, waking the requests whose tick has come.
    async fn tick(&self) {
        let mut ticks = 0u64;
        loop {
            let next = ticks.saturating_add(1).saturating_mul(self.every);
            tokio::time::sleep_until(self.epoch + Duration::from_nanos(next)).await;
            // A tick late (a busy runtime) counts the ticks that fell meanwhile.
            let since = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
            ticks = (since / self.every).max(ticks + 1);
            // Stored before any shard is searched, each under its lock: a request that found
            // its tick not come yet was put in its shard before the search there, and is
            // woken; one that locks its shard after the search finds the tick stored.
            self.ticks.store(ticks, Ordering::Relaxed);
            for shard in 0..SHARDS {
                let waiting = self.shard(shard);
                for (_, (wake_at, waker)) in waiting.iter() {
                    if *wake_at <= ticks {
                        waker.wake_by_ref();
                    }
                }
            }
        }
    }
}

/// The task that ticks, stopped when dropped (with the service).
pub(crate) struct Ticker(tokio::task::AbortHandle);

impl Drop for Ticker {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::Deadlines;
    use std::time::Duration;

    #[tokio::test]
    async fn the_ticker_runs_until_it_is_dropped() {
        let (_, ticker) = Deadlines::start(Duration::from_secs(30));
        let ticker = ticker.expect("a runtime to tick on");
        let task = ticker.0.clone();
        tokio::task::yield_now().await;
        assert!(!task.is_finished(), "the ticker is held");
        drop(ticker);
        // An aborted task ends when the runtime next turns to it.
        for _ in 0..100 {
            if task.is_finished() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the ticker outlived the service");
    }

    #[tokio::test]
    async fn a_limit_beyond_the_clock_s_range_is_never_reached() {
        let (deadlines, _ticker) = Deadlines::start(Duration::MAX);
        assert!(deadlines.deadline().at > tokio::time::Instant::now() + Duration::from_secs(86_400 * 365));
    }

    #[test]
    fn outside_a_runtime_nothing_ticks_and_every_wait_sets_the_timer() {
        let (deadlines, ticker) = Deadlines::start(Duration::from_secs(30));
        assert!(ticker.is_none());
        let mut slot = None;
        assert!(deadlines.wait(&mut slot, deadlines.deadline(), futures_util::task::noop_waker_ref()));
        assert_eq!((slot, deadlines.waiting()), (None, 0));
    }
}
