//! The time the runtime measures budgets and stored answers in: the system's, or a
//! manual one that tests move by hand, so that no test waits for time to pass.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Clone, Debug, Default)]
pub enum Clock {
    #[default]
    System,
    /// Moves only when told to.
    Manual(Arc<AtomicI64>),
}

impl Clock {
    /// A manual clock at 2027-01-15T08:00:00Z, a whole hour, so windows of a minute or
    /// an hour start there.
    pub fn manual() -> Clock {
        Clock::Manual(Arc::new(AtomicI64::new(1_800_000_000_000_000)))
    }

    /// Moves a manual clock on; a system clock moves by itself.
    pub fn advance(&self, by: Duration) {
        if let Clock::Manual(now) = self {
            now.fetch_add(i64::try_from(by.as_micros()).unwrap_or(i64::MAX), Ordering::SeqCst);
        }
    }

    /// Microseconds since the Unix epoch.
    pub(crate) fn now(&self) -> i64 {
        match self {
            Clock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX)),
            Clock::Manual(now) => now.load(Ordering::SeqCst),
        }
    }
}
