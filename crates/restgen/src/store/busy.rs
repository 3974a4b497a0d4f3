//! How a SQLite connection waits for the write lock another connection holds.
//!
//! SQLite lets one connection write at a time; another that wants to write calls its busy
//! handler until the lock is free or the handler gives up. The handler `busy_timeout`
//! installs sleeps 1, 2, 5, 10, 15, 20, 25 ms and then up to 100 ms between tries: a
//! writer that has waited longest waits longest again, while one arriving now takes the
//! lock at its first try. Under steady writes that is the tail of every write's latency
//! (the service bench saw a create's p99 at 5.5 ms in one run and 9.8 ms in the next, as
//! the waits fell on the second sleep or the third).
//!
//! Here a waiting writer is handed the lock: every commit of this process wakes one
//! waiter (SQLite calls the WAL hook once the commit is done and the lock released), which
//! tries again at once, and no waiter sleeps longer than a millisecond between tries (the
//! sqlite3 gem's fixed step for Rails) for a lock that is freed without a commit (a
//! rollback, a write transaction that wrote nothing) or held by another process. So the
//! lock, held well under a millisecond a statement, passes from writer to writer with no
//! idle gap and no polling: one wake-up a commit, where a fixed step costs one a waiter
//! every millisecond.

use libsqlite3_sys::sqlite3;
use sqlx::sqlite::SqliteConnection;
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a statement waits for the lock before it fails as busy: the 5 s that
/// `busy_timeout` had.
const LIMIT: Duration = Duration::from_secs(5);

/// The longest wait between tries, when no commit of this process wakes the waiter first.
const STEP: Duration = Duration::from_millis(1);

/// Commits of this process and the writers waiting for one. One for every database the
/// process opens: a commit in one may wake a waiter of another, which tries in vain and
/// waits again, and a service opens one.
static TURN: Turn = Turn { commits: Mutex::new(0), next: Condvar::new() };

struct Turn {
    /// How many commits there have been, so a waiter knows whether one came since its
    /// last try.
    commits: Mutex<u64>,
    next: Condvar,
}

/// Makes `connection` wait for the write lock as this module says.
pub(super) async fn install(connection: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    // The WAL hook replaces SQLite's automatic checkpoint, which is itself a WAL hook:
    // the one installed here checkpoints at the same size (the connection's
    // `wal_autocheckpoint`, read before the hook replaces it; 0 turns it off).
    let checkpoint_at: i64 = sqlx::query_scalar("PRAGMA wal_autocheckpoint").fetch_one(&mut *connection).await?;
    let mut handle = connection.lock_handle().await?;
    let db = handle.as_raw_handle().as_ptr();
    // SAFETY: the pointer is the connection's open database, held by `handle`'s lock for
    // the calls, as sqlx's own configuration calls hold it; the handlers are plain
    // functions that live as long as the program, and their context is a number, not a
    // pointer to anything.
    let code = unsafe {
        libsqlite3_sys::sqlite3_wal_hook(
            db,
            Some(committed),
            std::ptr::without_provenance_mut(checkpoint_at.max(0) as usize),
        );
        libsqlite3_sys::sqlite3_busy_handler(db, Some(wait_turn), std::ptr::null_mut())
    };
    match code {
        libsqlite3_sys::SQLITE_OK => Ok(()),
        code => Err(sqlx::Error::Configuration(format!("SQLite refused the busy handler (code {code})").into())),
    }
}

/// SQLite's WAL hook, called on the committing connection's thread after a commit, the
/// write lock released; `frames` is the size of the log. Wakes one waiting writer, then
/// checkpoints as SQLite's automatic checkpoint would (passive: it neither waits for nor
/// holds up the writer it woke).
extern "C" fn committed(checkpoint_at: *mut c_void, db: *mut sqlite3, name: *const c_char, frames: c_int) -> c_int {
    *TURN.commits.lock().unwrap_or_else(PoisonError::into_inner) += 1;
    TURN.next.notify_one();
    let checkpoint_at = checkpoint_at.addr();
    if checkpoint_at > 0 && frames as usize >= checkpoint_at {
        // SAFETY: SQLite passes its own open database and the name of the one committed
        // to, valid for the call; a checkpoint from the WAL hook is what SQLite's own
        // automatic checkpoint does. Its result is SQLite's to report, as there: a
        // checkpoint that could not run now runs after a later commit.
        unsafe { libsqlite3_sys::sqlite3_wal_checkpoint(db, name) };
    }
    libsqlite3_sys::SQLITE_OK
}

/// SQLite's busy handler: `tries` is how many times it was called for this wait, so 0
/// begins a wait. It runs on the thread that runs the connection's statements (sqlx's
/// worker for this connection), which the wait blocks, as SQLite's own handler's sleep
/// does.
extern "C" fn wait_turn(_: *mut c_void, tries: c_int) -> c_int {
    thread_local! {
        /// When this wait began.
        static SINCE: Cell<Instant> = Cell::new(Instant::now());
        /// The commits counted at this wait's last try.
        static SEEN: Cell<u64> = const { Cell::new(0) };
    }
    if !SINCE.with(|since| again(tries, Instant::now(), since)) {
        return 0;
    }
    let mut commits = TURN.commits.lock().unwrap_or_else(PoisonError::into_inner);
    // A commit since the last try freed the lock: try again now. Otherwise wait for the
    // next commit, or a step. (The first try of a wait counts no commits: it waits.)
    if tries == 0 || *commits == SEEN.get() {
        commits = TURN.next.wait_timeout(commits, STEP).unwrap_or_else(PoisonError::into_inner).0;
    }
    SEEN.set(*commits);
    1
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
