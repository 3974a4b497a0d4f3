//! Storage through sqlx's native drivers: SQLite by default, PostgreSQL when
//! `DATABASE_URL` says so, with the same generated code on both. Records travel as JSON
//! objects; columns are typed
//! uniformly (text for uuids, dates, decimals and JSON; 64-bit integers; doubles;
//! booleans), so one query builder serves both dialects. Every value is a bound
//! parameter; identifiers come from the validated schema and are always quoted.

#[cfg(not(any(feature = "sqlite", feature = "postgres")))]
compile_error!(
    "restgen needs a database to store records in: turn on its `sqlite` feature, its `postgres` feature, or both"
);

#[macro_use]
mod macros;

mod api_keys;
mod budgets;
#[cfg(feature = "sqlite")]
mod busy;
pub mod changes;
mod connect;
mod error;
mod idempotency;
mod lease;
mod lists;
mod logins;
mod migrate;
mod options;
pub mod outbox;
mod pool;
mod record;
mod records;
mod rows;
mod sql;
#[cfg(test)]
pub(crate) mod test_database;
mod typed;
mod value;

pub use api_keys::ApiKeyRow;
pub(crate) use budgets::Budget;
pub use error::{MigrateError, StoreError};
pub use migrate::MigrationSpec;
pub use options::{StoreOptions, Synchronous};
pub(crate) use pool::PoolStatus;
pub use pool::{Connections, Lease};
#[cfg(feature = "postgres")]
pub use pool::{PgConnections, PgLease};
#[cfg(feature = "sqlite")]
pub use pool::{SqliteConnections, SqliteLease};
pub use record::Record;
pub(crate) use rows::Rows;
pub use sql::{Filter, ListQuery, Page, SortKey};
pub use value::SqlValue;

use crate::clock::Clock;
use lease::{begin, leased};
use sqlx::encode::Encode;
use sqlx::query::Query;
use sqlx::{AssertSqlSafe, Database, SqlSafeStr, SqlStr, Type};
use std::time::Duration;

/// Which database a store speaks: the model's own, which its migrations are planned for.
pub use restgen_model::evolution::ddl::Dialect;

/// The condition of a conditional write: whether it may go ahead on the record as it
/// stands (held while the condition is judged).
pub type WriteCondition<'a> = &'a (dyn Fn(&Record) -> bool + Send + Sync);

/// The database of one service.
#[derive(Clone, Debug)]
pub struct Store {
    pool: Pool,
    dialect: Dialect,
    /// What this instance's background work and the requests share.
    pub(crate) signals: std::sync::Arc<Signals>,
    /// SQLite only: whose turn it is to write (see [`Store::write_permit`]).
    writers: Option<std::sync::Arc<tokio::sync::Semaphore>>,
    /// What records are stamped with (`created_at`, `updated_at`): the service's clock, so
    /// a test that moves its clock sees the times it set.
    clock: Clock,
}

/// What this instance's background work shares with its requests: what wakes the work
/// besides its timer (a write that put an event in the outbox or a change in the log,
/// so the webhook worker and the feed go to it at once), and the feed's streams.
#[derive(Default)]
pub(crate) struct Signals {
    /// An event was written.
    pub outbox: tokio::sync::Notify,
    /// A change was logged.
    pub changes: tokio::sync::Notify,
    /// The feed's hub, where the service has one. Held as `Any`: the feed stands on the
    /// store, so the store cannot name its type.
    pub feed: std::sync::OnceLock<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
    /// Migrations this instance applied (at start), for the metrics.
    pub migrations_applied: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Signals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signals").field("feed", &self.feed.get().is_some()).finish_non_exhaustive()
    }
}

/// The native pool of each database: one query builder, two drivers, no conversion layer
/// between them and the rows.
#[derive(Clone, Debug)]
enum Pool {
    #[cfg(feature = "sqlite")]
    Sqlite(SqliteConnections),
    #[cfg(feature = "postgres")]
    Postgres(PgConnections),
}

pub(crate) use idempotency::KeyRecord;

/// Runs `work`, one of the runtime's sweeps of what has expired, in a task of its own off
/// the request's path and for at most `within`, warning with `what` when it fails. Bounded
/// because a query on a connection gone silent would wait for good, and hold its
/// connection's place in the pool while it waits; given up, the connection is closed as
/// it is given back ([`lease`]).
pub(crate) fn sweep(
    what: &'static str,
    within: Duration,
    work: impl std::future::Future<Output = Result<u64, StoreError>> + Send + 'static,
) {
    sweep_boxed(what, within, Box::pin(work));
}

/// [`sweep`], compiled once for every sweep's work.
fn sweep_boxed(what: &'static str, within: Duration, work: crate::outlined::Boxed<'static, Result<u64, StoreError>>) {
    crate::outlined::spawn(async move {
        match tokio::time::timeout(within, work).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "{what}"),
            Err(_) => {
                tracing::warn!("{what}: no answer from the database within {within:?}, given up until the next sweep")
            }
        }
    });
}

impl Store {
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The SQLite connections, for a hand-written route beside the generated ones, taken
    /// and settled as [`Store::postgres`]'s are.
    #[cfg(feature = "sqlite")]
    pub fn sqlite(&self) -> Option<&SqliteConnections> {
        match &self.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => Some(pool),
            #[cfg(feature = "postgres")]
            Pool::Postgres(_) => None,
        }
    }

    /// The PostgreSQL connections, for a hand-written route beside the generated ones:
    /// [`PgConnections::acquire`] takes one, which a route settles ([`PgLease::settle`])
    /// when its work on it has finished, so that it goes back without a check.
    #[cfg(feature = "postgres")]
    pub fn postgres(&self) -> Option<&PgConnections> {
        match &self.pool {
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => Some(pool),
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => None,
        }
    }

    /// The pool's connections as they are now.
    pub(crate) fn pool_status(&self) -> pool::PoolStatus {
        on_pool!(self, pool => pool.status())
    }

    /// Whether the database answers. A connection that did not answer is closed, never
    /// given back to be handed to a request.
    pub async fn ping(&self) -> bool {
        on_pool!(self, pool => match pool.acquire().await {
            Ok(mut lease) => {
                let answered = sqlx::query("SELECT 1").execute(&mut *lease).await.is_ok();
                if answered {
                    lease.settle();
                } else {
                    lease.close_broken();
                }
                answered
            }
            Err(_) => false,
        })
    }

    /// Closes every connection once the queries running on them finish (PostgreSQL ends
    /// its sessions at once instead of when it notices they are gone); every clone of the
    /// store fails from then on.
    pub async fn close(&self) {
        on_pool!(self, pool => pool.close().await)
    }
}

/// A statement's text as sqlx takes it, neither copied: a literal (or a text the spec
/// keeps, `sql::Statements`), or one built for the request.
trait Statement: Send {
    fn text(self) -> SqlStr;
}

impl Statement for &'static str {
    fn text(self) -> SqlStr {
        SqlStr::from_static(self)
    }
}

impl Statement for String {
    fn text(self) -> SqlStr {
        AssertSqlSafe(self).into_sql_str()
    }
}

impl Statement for SqlStr {
    fn text(self) -> SqlStr {
        self
    }
}

impl Statement for std::borrow::Cow<'static, str> {
    fn text(self) -> SqlStr {
        AssertSqlSafe(self).into_sql_str()
    }
}

/// A text parameter.
pub(super) fn text(s: &str) -> SqlValue {
    SqlValue::Text(Some(s.to_owned()))
}

/// An integer parameter.
pub(super) fn int(n: i64) -> SqlValue {
    SqlValue::Int(Some(n))
}

/// A query with its parameters bound, for either driver.
fn bind<'q, DB: Database>(sql: impl Statement, args: Vec<SqlValue>) -> Query<'q, DB, <DB as Database>::Arguments>
where
    Option<String>: for<'t> Encode<'t, DB> + Type<DB>,
    Option<i64>: for<'t> Encode<'t, DB> + Type<DB>,
    Option<f64>: for<'t> Encode<'t, DB> + Type<DB>,
    Option<bool>: for<'t> Encode<'t, DB> + Type<DB>,
{
    let mut q = sqlx::query::<DB>(sql.text());
    for a in args {
        q = match a {
            SqlValue::Text(v) => q.bind(v),
            SqlValue::Int(v) => q.bind(v),
            SqlValue::Float(v) => q.bind(v),
            SqlValue::Bool(v) => q.bind(v),
        };
    }
    q
}

#[cfg(test)]
mod tests {

    //! A page written straight from its rows is the page its records make, byte for byte.

    use super::test_database::{KINDS, kinds_table, text};
    use super::*;

    use sqlx::sqlite::SqliteConnectOptions;
    use std::str::FromStr;
    use std::time::Instant;

    /// Asserts `e` is a transient refusal, answered 503 with `Retry-After: 1`.
    fn answered_503(e: StoreError) {
        assert!(e.is_transient(), "{e}");
        let response = axum::response::IntoResponse::into_response(crate::problem::Problem::from(e));
        assert_eq!(response.status(), axum::http::StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()["retry-after"], "1");
    }

    /// An idle connection is taken at once; where none is, a query waits for one. A
    /// transaction begins on the connection it is given.
    #[tokio::test]
    async fn a_query_waits_for_a_connection_where_none_is_idle() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("w.db").display());
        let store = Store::connect_with(&url, StoreOptions { max_connections: Some(1), ..StoreOptions::default() })
            .await
            .unwrap();
        let Pool::Sqlite(pool) = &store.pool else { unreachable!("a SQLite store") };
        let held = pool.acquire().await.unwrap();
        let mut waiting = Box::pin(pool.acquire());
        let pending = std::future::poll_fn(|cx| std::task::Poll::Ready(waiting.as_mut().poll(cx).is_pending())).await;
        assert!(pending, "the only connection is held");
        drop(held);
        let mut given = waiting.await.expect("the connection once it is returned");
        let one: i64 = sqlx::query_scalar("SELECT 1").fetch_one(&mut *given).await.unwrap();
        assert_eq!(one, 1);
        // A transaction on it begins with its own statement.
        let mut tx = begin(&mut given, Some("BEGIN IMMEDIATE")).await.unwrap();
        sqlx::query("CREATE TABLE t (n INTEGER)").execute(&mut *tx).await.unwrap();
        tx.commit().await.unwrap();
        drop(given);
        let mut again = pool.acquire().await.expect("an idle connection, taken at once");
        assert!(begin(&mut again, None).await.is_ok());
    }

    /// A query that finds no connection free within `pool_timeout` is refused as transient
    /// (503 with `Retry-After`), not left waiting as long as a request may run; one that
    /// finds it free again in time is served.
    #[tokio::test]
    async fn a_query_given_no_connection_in_time_is_a_transient_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("p.db").display());
        let pool_timeout = Duration::from_millis(50);
        let options = StoreOptions { max_connections: Some(1), pool_timeout, ..StoreOptions::default() };
        let store = Store::connect_with(&url, options).await.unwrap();
        let Pool::Sqlite(pool) = &store.pool else { unreachable!("a SQLite store") };
        sqlx::query("CREATE TABLE t (id INTEGER PRIMARY KEY)")
            .execute(&mut *pool.acquire().await.unwrap())
            .await
            .unwrap();
        let held = pool.acquire().await.unwrap();
        let started = Instant::now();
        // Bounded from above only so that a regression fails rather than hangs.
        let refused = tokio::time::timeout(Duration::from_secs(20), store.exists("t", &SqlValue::Int(Some(1))))
            .await
            .expect("refused before the guard's 20 s")
            .unwrap_err();
        assert!(started.elapsed() >= pool_timeout, "waited its pool_timeout first");
        assert!(matches!(refused, StoreError::Database(sqlx::Error::PoolTimedOut)), "{refused}");
        answered_503(refused);
        drop(held);
        assert!(!store.exists("t", &SqlValue::Int(Some(1))).await.unwrap(), "served once the connection is free");
    }

    /// By default a query waits for a connection well within the time a request may run
    /// (the schema's default `request_timeout`), so the answer names the database.
    #[test]
    fn a_query_waits_for_a_connection_less_than_a_request_runs() {
        let waits = StoreOptions::default().pool_timeout;
        let runs = restgen_model::model::Limits::REQUEST_TIMEOUT;
        assert!(waits <= runs / 2, "{waits:?} against {runs:?}");
    }

    /// A write waits for the write lock another connection holds and goes on once it is
    /// free (the busy handler of `busy`); without one it would fail at once as locked.
    #[tokio::test]
    async fn a_sqlite_write_waits_for_the_write_lock() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::connect(&format!("sqlite://{}", dir.path().join("b.db").display())).await.unwrap();
        let Pool::Sqlite(pool) = &store.pool else { unreachable!("a SQLite store") };
        sqlx::query("CREATE TABLE t (n INTEGER)").execute(&mut *pool.acquire().await.unwrap()).await.unwrap();
        let mut lease = pool.acquire().await.unwrap();
        let mut holder = begin(&mut lease, Some("BEGIN IMMEDIATE")).await.unwrap();
        sqlx::query("INSERT INTO t VALUES (1)").execute(&mut *holder).await.unwrap();
        let writer = pool.clone();
        let mut writer = tokio::spawn(async move {
            let mut lease = writer.acquire().await?;
            sqlx::query("INSERT INTO t VALUES (2)").execute(&mut *lease).await
        });
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(200), &mut writer).await;
        assert!(waiting.is_err(), "still waiting while the lock is held: {waiting:?}");
        holder.commit().await.unwrap();
        writer.await.unwrap().expect("written once the lock is free");
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM t").fetch_one(&mut *pool.acquire().await.unwrap()).await.unwrap();
        assert_eq!(n, 2);
    }

    /// The store's SQLite writes take turns, two at a time: while another program holds
    /// the write lock, writes queue for their turn holding no connection, so reads are
    /// still served; a write given no turn within `pool_timeout` is a transient refusal
    /// (503); once the lock is free the two that had their turn are made, and the writes
    /// after them take theirs.
    #[tokio::test]
    async fn sqlite_writes_take_turns_and_leave_connections_to_reads() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("turns.db").display());
        let pool_timeout = Duration::from_millis(300);
        let options = StoreOptions { max_connections: Some(3), pool_timeout, ..StoreOptions::default() };
        let store = Store::connect_with(&url, options).await.unwrap();
        on_pool!(store, pool => { sqlx::query(AssertSqlSafe(kinds_table(Dialect::Sqlite))).execute(&mut *pool.acquire().await.unwrap()).await.unwrap(); });
        // Another program's connection, holding the write lock.
        let mut other = sqlx::ConnectOptions::connect(&SqliteConnectOptions::from_str(&url).unwrap()).await.unwrap();
        sqlx::query("BEGIN IMMEDIATE").execute(&mut other).await.unwrap();
        let write = |n: i64| {
            let store = store.clone();
            tokio::spawn(async move {
                let values = vec![
                    ("i", SqlValue::Int(Some(n))),
                    ("created_at", text("2026-11-27T08:00:00.000000Z")),
                    ("updated_at", text("2026-11-27T08:00:00.000000Z")),
                ];
                store.insert(&KINDS, values, None).await
            })
        };
        let turns = store.writers.clone().expect("a SQLite store has turns");
        let mut writes: Vec<_> = (0..5).map(write).collect();
        // Until every write has been polled: two have their turn (each then waits on the
        // lock, on a connection), three wait for one.
        while turns.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        // Of three connections, one is free for a read.
        let read = store.exists("kinds", &SqlValue::Int(Some(1))).await;
        assert!(matches!(read, Ok(false)), "a read beside the waiting writes: {read:?}");
        let queued = writes.split_off(2);
        // The queued writes wait no longer than a connection would be waited for.
        let mut refused = 0;
        for w in queued {
            match w.await.unwrap() {
                Err(e) => {
                    assert!(matches!(e, StoreError::NoTurn), "{e}");
                    answered_503(e);
                    refused += 1;
                }
                Ok(record) => panic!("written while another program held the lock: {record:?}"),
            }
        }
        assert_eq!(refused, 3);
        sqlx::query("COMMIT").execute(&mut other).await.unwrap();
        for w in writes {
            w.await.unwrap().expect("written once the lock is free");
        }
        for w in (5..10).map(write).collect::<Vec<_>>() {
            w.await.unwrap().expect("written in turn");
        }
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM kinds").fetch_one(&mut other).await.unwrap();
        assert_eq!(n, 7, "the two that had their turn and the five after");
    }

    /// SQLite's log is copied into the database file once it passes 1,000 pages (SQLite's
    /// `wal_autocheckpoint`, done by the WAL hook of `busy`, which replaces SQLite's), not
    /// left to grow without end. Written as a service writes, one `INSERT ... RETURNING` a
    /// record, whose commit calls the hook only when the statement is read to its end.
    #[tokio::test]
    async fn sqlite_checkpoints_the_log_as_records_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.db");
        let store = Store::connect(&format!("sqlite://{}", file.display())).await.unwrap();
        let Pool::Sqlite(pool) = &store.pool else { unreachable!("a SQLite store") };
        sqlx::query(AssertSqlSafe(kinds_table(Dialect::Sqlite)))
            .execute(&mut *pool.acquire().await.unwrap())
            .await
            .unwrap();
        // 300 records of four to five pages each: 1,300 frames or more in the log.
        let big = "x".repeat(16_000);
        for _ in 0..300 {
            let values = vec![
                ("s", text(&big)),
                ("created_at", text("2026-11-26T08:00:00.000000Z")),
                ("updated_at", text("2026-11-26T08:00:00.000000Z")),
            ];
            store.insert(&KINDS, values, None).await.unwrap();
        }
        // Until a checkpoint, every page is in the log and the database file holds the
        // few it was created with (the last connection's close checkpoints too, so the
        // store stays open).
        let size = std::fs::metadata(&file).unwrap().len();
        assert!(size > 1_000_000, "the database file is {size} bytes: the log was never checkpointed");
        drop(store);
    }

    /// A lock SQLite's writer would not wait for is a transient refusal, answered 503 with
    /// `Retry-After`; a statement the database cannot run is not.
    #[tokio::test]
    async fn a_busy_sqlite_is_a_transient_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = Store::connect(&url).await.unwrap();
        let Pool::Sqlite(pool) = &store.pool else { unreachable!("a SQLite store") };
        sqlx::query("CREATE TABLE t (n INTEGER)").execute(&mut *pool.acquire().await.unwrap()).await.unwrap();
        let mut lease = pool.acquire().await.unwrap();
        let holder = begin(&mut lease, Some("BEGIN IMMEDIATE")).await.unwrap();
        // Another program's connection that does not wait at all.
        let options = SqliteConnectOptions::from_str(&url).unwrap().busy_timeout(std::time::Duration::ZERO);
        let mut other = sqlx::ConnectOptions::connect(&options).await.unwrap();
        let busy = StoreError::from(sqlx::query("INSERT INTO t VALUES (1)").execute(&mut other).await.unwrap_err());
        answered_503(busy);
        drop(holder);
        let wrong =
            StoreError::from(sqlx::query("INSERT INTO nowhere VALUES (1)").execute(&mut other).await.unwrap_err());
        assert!(!wrong.is_transient(), "{wrong}");
    }

    /// PostgreSQL's refusal to wait longer for a lock is transient too.
    #[tokio::test]
    async fn a_postgres_lock_timeout_is_a_transient_refusal() {
        let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
            eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
            return;
        };
        let store = Store::connect(&url).await.unwrap();
        let Pool::Postgres(pool) = &store.pool else { unreachable!("a PostgreSQL store") };
        let key = i64::from(std::process::id()) << 20 | 0x5_b5e;
        let mut holder = pool.acquire().await.unwrap();
        sqlx::query("SELECT pg_advisory_lock($1)").bind(key).execute(&mut *holder).await.unwrap();
        let mut other = pool.acquire().await.unwrap();
        sqlx::query("SET lock_timeout = '20ms'").execute(&mut *other).await.unwrap();
        let refused = sqlx::query("SELECT pg_advisory_lock($1)").bind(key).execute(&mut *other).await.unwrap_err();
        let refused = StoreError::from(refused);
        assert!(refused.is_transient(), "{refused}");
        sqlx::query("SELECT pg_advisory_unlock($1)").bind(key).execute(&mut *holder).await.unwrap();
        // Closed, not returned to the pool with its `lock_timeout`.
        other.discard();
    }

    /// A sweep whose connection goes silent is given up within its bound, and gives up
    /// the connection's place: the queries after it are served on a new one (held, the
    /// pool's only place would refuse them all until a restart).
    #[tokio::test]
    async fn a_sweep_on_a_silent_connection_gives_its_place_up() {
        let Some(url) = test_database::fresh_schema("t_sweep_silent").await else { return };
        Store::connect(&url).await.unwrap().create_runtime_tables().await.unwrap();
        let (relay, relayed) = test_database::Relay::to(&url).await;
        let pool_timeout = Duration::from_millis(500);
        let store = Store::connect_with(
            &relayed,
            StoreOptions { max_connections: Some(1), pool_timeout, ..StoreOptions::default() },
        )
        .await
        .unwrap();
        let Pool::Postgres(pool) = &store.pool else { unreachable!("a PostgreSQL store") };
        assert!(store.ping().await, "the pool's one connection answers");
        // Back in the pool: it goes silent there, as a connection left idle by a failover.
        test_database::until_idle(&store).await;
        relay.silence();
        let swept = store.clone();
        sweep("the test's sweep", Duration::from_millis(500), async move { swept.expire_keys(None, 0).await });
        // Bounded from above only so that a regression fails rather than hangs.
        let taken = tokio::time::timeout(Duration::from_secs(20), async {
            while pool.num_idle() > 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        taken.await.expect("the sweep takes the silent connection");
        let served = tokio::time::timeout(Duration::from_secs(20), async {
            // Each try waits `pool_timeout` for the place, and fails while it is held.
            while !store.ping().await {}
        });
        assert!(served.await.is_ok(), "the sweep still holds the pool's only place");
    }
}
