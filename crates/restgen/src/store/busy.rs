//! How a SQLite connection waits for the write lock another connection holds.
//!
//! SQLite lets one connection write at a time; another that wants to write calls its busy
//! handler until the lock is free or the handler gives up. The handler `busy_timeout`
//! installs sleeps 1, 2, 5, 10, 15, 20, 25 ms and then up to 100 ms between tries: a
//! writer that has waited longest waits longest again, while one arriving now takes the
//! lock at its first try. Under steady writes that is the tail of every write's latency
//! (the service bench saw a create's p99 at 5.5 ms in one run and 9.8 ms in the next, as
//! the waits fell on the second sleep or the third). Here every try waits the same
//! millisecond, as the sqlite3 gem's handler does for Rails: no waiter falls behind the
//! newcomers, and the write lock, held for well under a millisecond a statement, is
//! tried again soon after it is free.

use sqlx::sqlite::SqliteConnection;
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant};

/// How long a statement waits for the lock before it fails as busy: the 5 s that
/// `busy_timeout` had.
const LIMIT: Duration = Duration::from_secs(5);

/// The wait between tries.
const STEP: Duration = Duration::from_millis(1);

/// Makes `connection` wait for the write lock as this module says.
pub(super) async fn install(connection: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    let mut handle = connection.lock_handle().await?;
    // SAFETY: the pointer is the connection's open database, held by `handle`'s lock for
    // the call, as sqlx's own configuration calls hold it; the handler is a plain function
    // that lives as long as the program and is given no context to outlive.
    let code = unsafe {
        libsqlite3_sys::sqlite3_busy_handler(
            handle.as_raw_handle().as_ptr(),
            Some(wait_for_the_lock),
            std::ptr::null_mut(),
        )
    };
    match code {
        libsqlite3_sys::SQLITE_OK => Ok(()),
        code => Err(sqlx::Error::Configuration(format!("SQLite refused the busy handler (code {code})").into())),
    }
}

/// SQLite's busy handler: `tries` is how many times it was called for this wait, so 0
/// begins a wait. It runs on the thread that runs the connection's statements (sqlx's
/// worker for this connection), which the sleep blocks, as SQLite's own handler does.
extern "C" fn wait_for_the_lock(_: *mut c_void, tries: c_int) -> c_int {
    thread_local! {
        static SINCE: Cell<Instant> = Cell::new(Instant::now());
    }
    let again = SINCE.with(|since| again(tries, Instant::now(), since));
    if again {
        std::thread::sleep(STEP);
    }
    c_int::from(again)
}

/// Whether to try again at `now`, the wait having begun at `since` (set when `tries` is 0).
fn again(tries: c_int, now: Instant, since: &Cell<Instant>) -> bool {
    if tries == 0 {
        since.set(now);
    }
    now.duration_since(since.get()) < LIMIT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_lasts_the_limit_from_its_first_try() {
        let start = Instant::now();
        let since = Cell::new(start - Duration::from_secs(60));
        assert!(again(0, start, &since), "a new wait begins now, whatever an earlier one left");
        assert!(again(3, start + LIMIT - STEP, &since));
        assert!(!again(4, start + LIMIT, &since), "given up at the limit");
        assert!(again(0, start + LIMIT * 2, &since), "the next wait begins afresh");
    }
}
