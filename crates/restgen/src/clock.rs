//! The time the runtime measures budgets and stored answers in: the system's, or a
//! manual one that tests move by hand, so that no test waits for time to pass.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::Notify;

#[derive(Clone, Debug, Default)]
pub enum Clock {
    #[default]
    System,
    /// Moves only when told to.
    Manual(Arc<Manual>),
}

/// A clock that moves only when told to, and wakes whatever waits on it when it does.
#[derive(Debug)]
pub struct Manual {
    now: AtomicI64,
    /// Sleepers waiting for a time not yet reached.
    waiting: AtomicUsize,
    /// Told whenever the time moves or a sleeper starts or stops waiting.
    changed: Notify,
}

impl Manual {
    /// Waits until `ready` holds, checked now and after every change.
    async fn until(&self, ready: impl Fn(&Manual) -> bool) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Registered before the check, so a change between the two is not missed.
            changed.as_mut().enable();
            if ready(self) {
                return;
            }
            changed.await;
        }
    }
}

impl Clock {
    /// A manual clock at 2027-01-15T08:00:00Z, a whole hour, so windows of a minute or
    /// an hour start there.
    pub fn manual() -> Clock {
        Clock::Manual(Arc::new(Manual {
            now: AtomicI64::new(1_800_000_000_000_000),
            waiting: AtomicUsize::new(0),
            changed: Notify::new(),
        }))
    }

    /// Moves a manual clock on, waking the sleepers whose time has come; a system clock
    /// moves by itself.
    pub fn advance(&self, by: Duration) {
        if let Clock::Manual(m) = self {
            m.now.fetch_add(i64::try_from(by.as_micros()).unwrap_or(i64::MAX), Ordering::SeqCst);
            m.changed.notify_waiters();
        }
    }

    /// Microseconds since the Unix epoch.
    pub fn now(&self) -> i64 {
        match self {
            Clock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX)),
            Clock::Manual(m) => m.now.load(Ordering::SeqCst),
        }
    }

    /// Waits `micros` microseconds of this clock's time: real time on the system clock;
    /// on a manual one, until the clock has been moved that far.
    pub(crate) async fn sleep(&self, micros: i64) {
        if micros <= 0 {
            return;
        }
        match self {
            Clock::System => tokio::time::sleep(Duration::from_micros(micros.unsigned_abs())).await,
            Clock::Manual(m) => {
                let until = self.now().saturating_add(micros);
                m.waiting.fetch_add(1, Ordering::SeqCst);
                m.changed.notify_waiters();
                m.until(|m| m.now.load(Ordering::SeqCst) >= until).await;
                m.waiting.fetch_sub(1, Ordering::SeqCst);
                m.changed.notify_waiters();
            }
        }
    }

    /// This clock's time as the runtime writes times: RFC 3339 in UTC, to the microsecond.
    pub fn timestamp(&self) -> String {
        format_micros(self.now())
    }

    /// Waits until `n` requests sleep on a manual clock (a test's way to know that
    /// requests it sent are held, without waiting for time); at once on the system clock.
    pub async fn sleepers(&self, n: usize) {
        if let Clock::Manual(m) = self {
            m.until(|m| m.waiting.load(Ordering::SeqCst) >= n).await;
        }
    }
}

/// A time as the runtime writes it, in records, events and answers: RFC 3339 in UTC, to
/// the microsecond, so that times written in order also sort in order as text.
pub fn format_time(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// [`format_time`] of a time in microseconds since the Unix epoch, as clocks give it
/// (empty beyond the years chrono can write, which no clock reaches).
pub fn format_micros(micros: i64) -> String {
    chrono::DateTime::from_timestamp_micros(micros).map_or_else(String::new, format_time)
}
