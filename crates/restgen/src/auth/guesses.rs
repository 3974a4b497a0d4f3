//! Password guessing against one account. A budget per client address (the rate limit)
//! does not stop an attacker with many addresses, so failed logins are also counted per
//! identifier, in the store, shared by every instance: the first few cost nothing, then
//! each further failure makes the next check of that identifier wait twice as long, up to
//! a quarter of an hour, answered 429 with `Retry-After` meanwhile (and no password is
//! checked then, not even the right one). A success clears the count, and so does an hour
//! without failures: the owner is never locked out for good.

use crate::clock::Clock;
use crate::problem::Problem;
use crate::store::Store;
use axum::http::{HeaderValue, StatusCode, header};
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// Failures in a row that cost nothing: a person mistyping is not slowed.
pub const FREE_FAILURES: i64 = 5;
/// The longest an identifier waits after a failure.
pub const MAX_BLOCK: Duration = Duration::from_secs(15 * 60);
/// Failures older than this are forgotten.
pub const FORGET_AFTER: Duration = Duration::from_secs(3600);

/// The failed logins of a service, by identifier.
pub(crate) struct Guesses {
    store: Store,
    clock: Clock,
    last_sweep: AtomicI64,
}

/// What a check of one identifier was admitted with.
pub(crate) struct Admitted {
    key: String,
    /// Whether failures were counted for it, to clear once it succeeds.
    failed_before: bool,
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

impl Guesses {
    pub(crate) fn new(store: Store, clock: Clock) -> Guesses {
        let last_sweep = AtomicI64::new(clock.now());
        Guesses { store, clock, last_sweep }
    }

    /// The row's key of `identifier` (as the account's own field compares it): a hash,
    /// so the table holds no address.
    fn key(identifier: &str) -> String {
        let digest = Sha256::digest(identifier.as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Whether a password for `identifier` may be checked now: a 429 with `Retry-After`
    /// while the identifier waits after its failures.
    pub(crate) async fn admit(&self, identifier: &str) -> Result<Admitted, Problem> {
        let key = Guesses::key(identifier);
        let now = self.clock.now();
        let failures = self.store.login_failures(&key).await?;
        if let Some(f) = failures
            && f.blocked_until > now
        {
            let wait = (f.blocked_until - now + 999_999) / 1_000_000;
            let plural = if wait == 1 { "" } else { "s" };
            let detail = format!(
                "too many failed logins for this identifier; no password is checked for it for {wait} second{plural}"
            );
            return Err(Problem::new(StatusCode::TOO_MANY_REQUESTS, detail)
                .with_header(header::RETRY_AFTER, HeaderValue::from(wait.max(1))));
        }
        Ok(Admitted { key, failed_before: failures.is_some() })
    }

    /// Counts a failure: past the free ones, the identifier waits `2^(n - free)` seconds
    /// before its next check, at most [`MAX_BLOCK`].
    pub(crate) async fn failed(&self, admitted: Admitted) -> Result<(), Problem> {
        let now = self.clock.now();
        let count = self.store.count_login_failure(&admitted.key, now, now - micros(FORGET_AFTER)).await?;
        if count > FREE_FAILURES {
            let exponent = u32::try_from(count - FREE_FAILURES).unwrap_or(u32::MAX).min(20);
            let wait = Duration::from_secs(1u64 << exponent).min(MAX_BLOCK);
            self.store.block_login(&admitted.key, now + micros(wait)).await?;
        }
        self.sweep(now);
        Ok(())
    }

    /// A success forgets the identifier's failures.
    pub(crate) async fn succeeded(&self, admitted: Admitted) -> Result<(), Problem> {
        if admitted.failed_before {
            self.store.clear_login_failures(&admitted.key).await?;
        }
        Ok(())
    }

    /// Drops the rows of identifiers quiet for [`FORGET_AFTER`], once an hour at most.
    fn sweep(&self, now: i64) {
        let last = self.last_sweep.load(Ordering::Relaxed);
        let every = micros(FORGET_AFTER);
        if now - last < every
            || self.last_sweep.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err()
        {
            return;
        }
        let store = self.store.clone();
        let before = now - every;
        crate::store::sweep("failed logins: cannot drop old rows", Duration::from_secs(60), async move {
            store.sweep_login_failures(before).await
        });
    }
}
