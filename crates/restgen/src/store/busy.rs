//! How a SQLite connection waits for the write lock another connection holds.
//!
//! SQLite lets one connection write at a time; another that wants to write calls its busy
//! handler until the lock is free or the handler gives up. The handler `busy_timeout`
//! installs sleeps 1, 2, 5, 10, 15, 20, 25 ms and then up to 100 ms between tries: a
//! writer that has waited longest waits longest again, while one arriving now takes the
//! lock at its first try. Under steady writes that is the tail of every write's latency,
//! and it moves from run to run with the sleep a wait happens to fall on.
//!
//! Here a waiter tries again as soon as a connection of this process commits (SQLite tells
//! each connection's WAL hook, after the lock is released), or after a millisecond, for a
//! lock held by another process, which tells nothing. The store lets only two of its
//! connections write at once ([`super::Store::write_permit`]), so the one that waits is woken
//! right as the other's commit frees the lock, and wakes to take it, where waking at
//! every commit among many waiters would spend more on failed tries than sleeping does.

use sqlx::sqlite::SqliteConnection;
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a statement waits for the lock before it fails as busy: the 5 s that
/// `busy_timeout` had.
const LIMIT: Duration = Duration::from_secs(5);

/// The longest wait between tries: the one for a lock another process holds.
const STEP: Duration = Duration::from_millis(1);

/// Rung when a connection of this process lets the write lock go, for the waiters to try
/// again.
static FREED: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());

/// How many wait on [`FREED`]: a ring with nobody waiting costs nothing (a notify is a
/// system call otherwise, at every commit).
static WAITING: AtomicUsize = AtomicUsize::new(0);

/// The log's size, in pages, at which a commit copies it into the database file: SQLite's
/// `wal_autocheckpoint` default, which a connection's own WAL hook replaces, so the hook
/// checkpoints as SQLite's would.
const CHECKPOINT_AT: c_int = 1000;

/// Makes `connection` wait for the write lock as this module says, and ring the waiters at
/// each of its commits.
pub(super) async fn install(connection: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    let mut handle = connection.lock_handle().await?;
    let db = handle.as_raw_handle().as_ptr();
    // SAFETY: the pointer is the connection's open database, held by `handle`'s lock for
    // the calls, as sqlx's own configuration calls hold it; the handler and the hook are
    // plain functions that live as long as the program and are given no context to outlive.
    let code = unsafe {
        libsqlite3_sys::sqlite3_wal_hook(db, Some(committed), std::ptr::null_mut());
        libsqlite3_sys::sqlite3_busy_handler(db, Some(wait_for_the_lock), std::ptr::null_mut())
    };
    match code {
        libsqlite3_sys::SQLITE_OK => Ok(()),
        code => Err(sqlx::Error::Configuration(format!("SQLite refused the busy handler (code {code})").into())),
    }
}

/// SQLite's busy handler: `tries` is how many times it was called for this wait, so 0
/// begins a wait. It runs on the thread that runs the connection's statements (sqlx's
/// worker for this connection), which the wait blocks, as SQLite's own handler's sleep does.
extern "C" fn wait_for_the_lock(_: *mut c_void, tries: c_int) -> c_int {
    thread_local! {
        static SINCE: Cell<Instant> = Cell::new(Instant::now());
    }
    let again = SINCE.with(|since| again(tries, Instant::now(), since));
    if again {
        // Woken when the lock is next let go here, or by none within the step: a lock let
        // go between the failed try and the count goes unheard, and costs the step.
        let (lock, freed) = &FREED;
        WAITING.fetch_add(1, Ordering::SeqCst);
        let held = lock.lock().unwrap_or_else(PoisonError::into_inner);
        drop(freed.wait_timeout(held, STEP));
        WAITING.fetch_sub(1, Ordering::SeqCst);
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

/// SQLite's WAL hook, called after each commit of the connection, its write lock released,
/// with the log's size in pages: checkpoints as SQLite's own hook would, then rings.
extern "C" fn committed(_: *mut c_void, db: *mut libsqlite3_sys::sqlite3, name: *const c_char, pages: c_int) -> c_int {
    if pages >= CHECKPOINT_AT {
        // SAFETY: SQLite passes its open connection and the committed database's name, on
        // the thread running the commit, where its own hook makes this same call. A
        // checkpoint that cannot run now (a reader holds the log) runs at a later commit.
        unsafe { libsqlite3_sys::sqlite3_wal_checkpoint(db, name) };
    }
    ring();
    libsqlite3_sys::SQLITE_OK
}

/// Wakes the waiters for the write lock, which a connection of this process has let go:
/// at a commit (the WAL hook), and at the end of a turn (`Store::write_permit`), for a write that
/// failed or rolled back, which commits nothing. Every waiter, not one: waiters of other
/// databases in this process are rung here too, and the store's turns leave few to wake.
pub(super) fn ring() {
    if WAITING.load(Ordering::SeqCst) > 0 {
        // Taken, so that a waiter between its count and its wait is not passed over.
        drop(FREED.0.lock().unwrap_or_else(PoisonError::into_inner));
        FREED.1.notify_all();
    }
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
