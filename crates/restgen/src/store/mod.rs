//! Storage through sqlx's native drivers: SQLite by default, PostgreSQL when
//! `DATABASE_URL` says so, with the same generated code on both. Records travel as JSON
//! objects; columns are typed
//! uniformly (text for uuids, dates, decimals and JSON; 64-bit integers; doubles;
//! booleans), so one query builder serves both dialects. Every value is a bound
//! parameter; identifiers come from the validated schema and are always quoted.

mod busy;
mod error;
mod lease;
mod pool;
mod record;
mod sql;
mod typed;
mod value;

pub use api_keys::ApiKeyRow;
pub use error::{MigrateError, StoreError};
use error::{classify, retried};
pub use pool::{Connections, Lease, PgConnections, PgLease, SqliteConnections, SqliteLease};
pub use record::Record;
pub use sql::{Filter, ListQuery, Page, SortKey, Statements};
pub use value::SqlValue;

use crate::spec::ResourceSpec;
use lease::{begin, leased};
use sql::Columns;
use sqlx::encode::Encode;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::postgres::PgConnectOptions;
use sqlx::query::Query;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{AssertSqlSafe, Database, Row, SqlSafeStr, SqlStr, Type};
use std::str::FromStr;
use std::time::{Duration, Instant};

/// Rows of records as the driver read them: read into [`Record`]s, or written as JSON
/// straight from the rows ([`Rows::json`]), which a page of a list is.
pub(crate) enum Rows {
    Sqlite(Vec<sqlx::sqlite::SqliteRow>),
    Postgres(Vec<sqlx::postgres::PgRow>),
}

/// Runs `$body` with `$rows` bound to the rows of whichever driver read them and `$dialect`
/// to its dialect; compiled once per driver, as `on_pool!` is.
macro_rules! on_rows {
    ($rows:expr, $bound:ident, $dialect:ident => $body:expr) => {
        match $rows {
            Rows::Sqlite($bound) => {
                let $dialect = Dialect::Sqlite;
                $body
            }
            Rows::Postgres($bound) => {
                let $dialect = Dialect::Postgres;
                $body
            }
        }
    };
}

impl Rows {
    /// The records of the rows.
    pub(crate) fn records(&self, spec: &ResourceSpec) -> Result<Vec<Record>, sqlx::Error> {
        on_rows!(self, rows, dialect => value::records(dialect, spec, rows))
    }

    /// The record of the (first and only) row of a write or a read by id.
    pub(crate) fn record(&self, spec: &ResourceSpec) -> Result<Record, StoreError> {
        self.last(spec)?.ok_or(StoreError::NotFound)
    }

    /// The id of the first row, as text: read alone, not with the record.
    pub(crate) fn id_text(&self, spec: &ResourceSpec) -> Result<String, StoreError> {
        let id = on_rows!(self, rows, _dialect => rows.first().map(|r| value::id(spec, r)).transpose()?);
        match id {
            Some(value::Column::Int(Some(n))) => Ok(n.to_string()),
            Some(value::Column::Text(Some(t))) => Ok(t.to_owned()),
            _ => Err(StoreError::NotFound),
        }
    }

    /// The record of the last row.
    pub(crate) fn last(&self, spec: &ResourceSpec) -> Result<Option<Record>, sqlx::Error> {
        on_rows!(self, rows, dialect => rows.last().map(|r| value::record(dialect, spec, r)).transpose())
    }

    /// The first row as the JSON object of its record's representation, as [`Rows::json`]
    /// writes each.
    pub(crate) fn first_json<'a>(&'a self, spec: &'a ResourceSpec, shown: &'a [bool]) -> impl serde::Serialize + 'a {
        FirstJson(RowsJson { rows: self, spec, shown })
    }

    /// The rows as a JSON array of their records' representations, the fields `shown`
    /// leaves out skipped (see [`value::Shown`]).
    pub(crate) fn json<'a>(&'a self, spec: &'a ResourceSpec, shown: &'a [bool]) -> impl serde::Serialize + 'a {
        RowsJson { rows: self, spec, shown }
    }
}

impl From<Vec<sqlx::sqlite::SqliteRow>> for Rows {
    fn from(rows: Vec<sqlx::sqlite::SqliteRow>) -> Rows {
        Rows::Sqlite(rows)
    }
}

impl From<Vec<sqlx::postgres::PgRow>> for Rows {
    fn from(rows: Vec<sqlx::postgres::PgRow>) -> Rows {
        Rows::Postgres(rows)
    }
}

/// The one row of a write or a read by id.
fn one<R>(row: R) -> Rows
where
    Rows: From<Vec<R>>,
{
    Rows::from(vec![row])
}

#[derive(Clone, Copy)]
struct RowsJson<'a> {
    rows: &'a Rows,
    spec: &'a ResourceSpec,
    shown: &'a [bool],
}

struct FirstJson<'a>(RowsJson<'a>);

impl serde::Serialize for FirstJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let RowsJson { rows, spec, shown } = self.0;
        on_rows!(rows, rows, dialect => match rows.first() {
            Some(row) => value::Shown { dialect, spec, shown, row }.serialize(serializer),
            None => Err(serde::ser::Error::custom("no row")),
        })
    }
}

impl serde::Serialize for RowsJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (spec, shown) = (self.spec, self.shown);
        on_rows!(self.rows, rows, dialect => {
            serializer.collect_seq(rows.iter().map(|row| value::Shown { dialect, spec, shown, row }))
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// How the service uses its database, beside the URL (`DATABASE_MAX_CONNECTIONS`,
/// `DATABASE_MIN_CONNECTIONS`, `DATABASE_POOL_TIMEOUT`, `DATABASE_IDLE_TIMEOUT`,
/// `DATABASE_MAX_LIFETIME`, `SQLITE_SYNCHRONOUS`; docs/service.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreOptions {
    /// Connections each instance keeps at most; `None`: 2 per core on SQLite (one writer
    /// at a time, readers beside it), 4 per core on PostgreSQL (queries wait on the network).
    pub max_connections: Option<u32>,
    /// Connections each instance opens at start and keeps open, so that the first requests
    /// after a start (or a quiet spell) wait for no login; 0 opens them as requests need
    /// them. At most the pool's maximum, or the start fails saying so.
    pub min_connections: u32,
    /// How long a query waits for a connection (one to come free, or a new one the
    /// database takes) before it is refused as transient: 503 with `Retry-After`.
    pub pool_timeout: Duration,
    /// How long a connection may sit unused in the pool before it is closed (at the pool's
    /// next sweep, which comes every `idle_timeout` or `max_lifetime`, whichever is
    /// shorter), the least kept open by opening others.
    pub idle_timeout: Duration,
    /// How long a connection is used at most: one older is closed when it is given back,
    /// and a new one opened when needed. Below any limit a proxy, firewall or the database
    /// puts on a connection's life, so that the pool closes it before they do.
    pub max_lifetime: Duration,
    /// SQLite only: whether a commit waits for the disk.
    pub synchronous: Synchronous,
}

/// The default [`StoreOptions::pool_timeout`]: Rails' `checkout_timeout`, and SQLite's wait
/// for the write lock ([`busy`]). sqlx's own is as long as a request may run at all by
/// default ([`restgen_model::model::Limits::REQUEST_TIMEOUT`]), so the request would be cut
/// off before the pool said why; behind a load balancer a refusal in seconds lets the
/// client go elsewhere.
const POOL_TIMEOUT: Duration = Duration::from_secs(5);

/// The default [`StoreOptions::idle_timeout`] and [`StoreOptions::max_lifetime`]: sqlx's,
/// named here so that the docs and the settings say the same.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);
const MAX_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// How many connections of one SQLite store write at once ([`Store::turn`]).
const WRITERS: usize = 2;

/// One write's turn ([`Store::turn`]). Its end rings the writer waiting on the lock
/// (`busy`): a write that failed, or a transaction rolled back, lets the lock go without
/// the commit that rings otherwise.
struct Turn<'a> {
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        busy::ring();
    }
}

/// How long a start waits for the database to take its first connection, retrying one
/// that refuses: a database started beside the service (a container, say) may take some
/// seconds to listen.
const START_WITHIN: Duration = Duration::from_secs(30);

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            max_connections: None,
            min_connections: 0,
            pool_timeout: POOL_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            max_lifetime: MAX_LIFETIME,
            synchronous: Synchronous::default(),
        }
    }
}

/// When a SQLite commit is on disk (`PRAGMA synchronous`, in WAL mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// The write-ahead log is synced at checkpoints, not at each commit: no crash
    /// corrupts the database and a process crash loses nothing committed; a power loss
    /// or kernel crash may lose the last commits. SQLite's advice for WAL, and Rails'.
    #[default]
    Normal,
    /// Every commit waits until it is on disk: nothing committed is lost even to a power
    /// loss, at the cost of a sync per write.
    Full,
}

impl StoreOptions {
    /// The options from the environment: `DATABASE_MAX_CONNECTIONS` (a positive number),
    /// `DATABASE_MIN_CONNECTIONS` (a whole number), `DATABASE_POOL_TIMEOUT`,
    /// `DATABASE_IDLE_TIMEOUT` and `DATABASE_MAX_LIFETIME` (positive seconds, fractions
    /// allowed) and `SQLITE_SYNCHRONOUS` (`normal` or `full`).
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<StoreOptions, String> {
        let max_connections = crate::serve::positive_var("DATABASE_MAX_CONNECTIONS", &var, |n: &u32| *n > 0)?;
        let min_connections =
            crate::serve::number_var("DATABASE_MIN_CONNECTIONS", &var, "a whole number", |_: &u32| true)?.unwrap_or(0);
        let seconds = |name: &str, default: Duration| {
            let seconds = crate::serve::positive_var(name, &var, |s: &f64| {
                Duration::try_from_secs_f64(*s).is_ok_and(|d| !d.is_zero())
            })?;
            Ok::<_, String>(seconds.map_or(default, Duration::from_secs_f64))
        };
        let pool_timeout = seconds("DATABASE_POOL_TIMEOUT", POOL_TIMEOUT)?;
        let idle_timeout = seconds("DATABASE_IDLE_TIMEOUT", IDLE_TIMEOUT)?;
        let max_lifetime = seconds("DATABASE_MAX_LIFETIME", MAX_LIFETIME)?;
        let synchronous = match var("SQLITE_SYNCHRONOUS").as_deref().map(str::trim) {
            None | Some("normal") => Synchronous::Normal,
            Some("full") => Synchronous::Full,
            Some(other) => return Err(format!("SQLITE_SYNCHRONOUS must be `normal` or `full`, not `{other}`")),
        };
        Ok(StoreOptions { max_connections, min_connections, pool_timeout, idle_timeout, max_lifetime, synchronous })
    }
}

fn cores() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| u32::try_from(n.get()).unwrap_or(u32::MAX))
}

/// One migration, in both dialects.
#[derive(Debug)]
pub struct MigrationSpec {
    pub version: i64,
    pub description: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

/// The condition of a conditional write: whether it may go ahead on the record as it
/// stands (held while the condition is judged).
pub type Admit<'a> = &'a (dyn Fn(&Record) -> bool + Send + Sync);

/// The database of one service.
#[derive(Clone, Debug)]
pub struct Store {
    pool: Pool,
    dialect: Dialect,
    /// Told when a write put an event in the outbox, so this instance's webhook worker
    /// goes to it at once rather than at its next poll.
    pub(crate) outbox: std::sync::Arc<tokio::sync::Notify>,
    /// SQLite only: whose turn it is to write (see [`Store::turn`]).
    writers: Option<std::sync::Arc<tokio::sync::Semaphore>>,
}

/// The native pool of each database: one query builder, two drivers, no conversion layer
/// between them and the rows.
#[derive(Clone, Debug)]
enum Pool {
    Sqlite(SqliteConnections),
    Postgres(PgConnections),
}

/// Runs `$body` with `$pool` bound to whichever native pool the store has; the body is
/// compiled once per driver.
/// The migration lock's key: two 32-bit halves, the first restgen's, the second the
/// schema's, so services on other schemas of one database do not wait for each other.
const LOCK: &str = "SELECT pg_advisory_lock(hashtext('restgen migrate'), hashtext(current_schema()))";
const UNLOCK: &str = "SELECT pg_advisory_unlock(hashtext('restgen migrate'), hashtext(current_schema()))";

macro_rules! on_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.pool {
            Pool::Sqlite($pool) => $body,
            Pool::Postgres($pool) => $body,
        }
    };
}

/// Runs `$body` as `on_pool!` does, in this instance's turn to write ([`Store::turn`]):
/// every statement or transaction that writes runs so.
macro_rules! writing {
    ($store:expr, $pool:ident => $body:expr) => {{
        let _turn = $store.turn().await?;
        on_pool!($store, $pool => $body)
    }};
}

/// Opens `pool`'s first connection, as sqlx's `connect` would, but waiting up to
/// [`START_WITHIN`] for a database that refuses connections (still starting), where each
/// query waits only its `pool_timeout`.
async fn first_connection<DB: pool::Driver>(pool: &Connections<DB>) -> Result<Lease<DB>, sqlx::Error> {
    let started = Instant::now();
    loop {
        match pool.acquire().await {
            Ok(first) => return Ok(first),
            Err(sqlx::Error::PoolTimedOut) if started.elapsed() < START_WITHIN => {}
            Err(e) => return Err(e),
        }
    }
}

/// The most connections a pool of `options` holds (`default`, described as `said`, when
/// unset), refused when it is fewer than the least it keeps.
fn most(options: &StoreOptions, default: u32, said: &str) -> Result<u32, sqlx::Error> {
    let most = options.max_connections.unwrap_or(default);
    if options.min_connections <= most {
        return Ok(most);
    }
    let whence = match options.max_connections {
        Some(_) => "DATABASE_MAX_CONNECTIONS".to_owned(),
        None => format!("DATABASE_MAX_CONNECTIONS's default, {said}"),
    };
    Err(sqlx::Error::Configuration(
        format!("DATABASE_MIN_CONNECTIONS is {}, more than the pool holds: {most} ({whence})", options.min_connections)
            .into(),
    ))
}

/// Opens the `least` connections `pool` keeps, at start: the pool's sweep would open them
/// only at its first round, an idle timeout on. Held all at once, so that
/// each is a connection of its own, the `first` among them; one the database refuses stops
/// the start, where under load it would refuse a request.
async fn open_least<DB: pool::Driver>(
    pool: &Connections<DB>,
    mut first: Lease<DB>,
    least: u32,
) -> Result<(), sqlx::Error> {
    let more = least.saturating_sub(1);
    let opened = futures_util::future::try_join_all((0..more).map(|_| pool.acquire())).await;
    // Each was opened, and nothing done on it.
    first.settle();
    opened.map(|leases| leases.into_iter().for_each(|mut l| l.settle())).map_err(|e| {
        sqlx::Error::Configuration(
            format!("DATABASE_MIN_CONNECTIONS is {least}, and opening as many connections failed: {e}").into(),
        )
    })
}

// After the macro, which they use.
mod api_keys;
mod budgets;
mod idempotency;
mod logins;
pub mod outbox;
#[cfg(test)]
pub(crate) mod test_database;

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
    tokio::spawn(async move {
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
    /// Connects to `url` (`sqlite://file.db` or `postgres://...`) with the default
    /// [`StoreOptions`]. SQLite files are created when missing and put in WAL mode with
    /// foreign keys enforced.
    pub async fn connect(url: &str) -> Result<Store, sqlx::Error> {
        Store::connect_with(url, StoreOptions::default()).await
    }

    /// Connects to `url` with these options.
    ///
    /// A connection in steady use is checked neither as it is taken nor as it is given back
    /// ([`Connections`]): either would be a round trip more per query. A connection the
    /// server dropped fails the one query that finds out and is then discarded; `/readyz`
    /// tells a load balancer while the database is away. The store's SQLite writes take turns, two at a time (see
    /// `turn`); one that finds the lock held tries again whenever a connection of this
    /// process lets it go, or every millisecond, for up to 5 s, then fails as busy: 503
    /// with `Retry-After`.
    pub async fn connect_with(url: &str, options: StoreOptions) -> Result<Store, sqlx::Error> {
        if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            let most = most(&options, 4 * cores(), "4 per core on PostgreSQL")?;
            let pool = PgConnections::new(PgConnectOptions::from_str(url)?, &options, most);
            let first = first_connection(&pool).await?;
            open_least(&pool, first, options.min_connections).await?;
            Ok(Store {
                pool: Pool::Postgres(pool),
                dialect: Dialect::Postgres,
                outbox: Default::default(),
                writers: None,
            })
        } else if url.starts_with("sqlite:") {
            let synchronous = match options.synchronous {
                Synchronous::Normal => SqliteSynchronous::Normal,
                Synchronous::Full => SqliteSynchronous::Full,
            };
            let connect = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(synchronous)
                .foreign_keys(true);
            let most = most(&options, 2 * cores(), "2 per core on SQLite")?;
            let pool = SqliteConnections::new(connect, &options, most);
            let first = first_connection(&pool).await?;
            open_least(&pool, first, options.min_connections).await?;
            let writers = Some(std::sync::Arc::new(tokio::sync::Semaphore::new(WRITERS)));
            Ok(Store { pool: Pool::Sqlite(pool), dialect: Dialect::Sqlite, outbox: Default::default(), writers })
        } else {
            Err(sqlx::Error::Configuration("DATABASE_URL must start with sqlite: or postgres:".into()))
        }
    }

    /// This instance's turn to write to SQLite, waited for in the order the writers came
    /// and holding no connection meanwhile; `None` on PostgreSQL, whose writers lock only
    /// the rows they write.
    ///
    /// SQLite lets one connection write at a time. Left to race for its lock, every
    /// connection of the pool may be waiting on it, each trying again at every commit or
    /// millisecond ([`busy`]), while reads find no connection free. Here two writers go at
    /// a time: one holds the lock, the other waits on it to take it the moment it is free,
    /// and the rest wait here, in order, each try spent on a lock about to be free (under
    /// the service bench's 16 concurrent creates, 0.92x the CPU of a hand-written
    /// service's writes and 1.2x its throughput, where racing cost 1.08x and 0.96x). A
    /// lock another process holds is still waited for by the busy handler. The wait here
    /// is bounded as the wait for a connection is (`pool_timeout`), and refused the same
    /// way: transient, 503 with `Retry-After`.
    async fn turn(&self) -> Result<Option<Turn<'_>>, StoreError> {
        let Some(writers) = &self.writers else { return Ok(None) };
        // A free turn is taken without building the timed wait (a waiter queued before
        // keeps its place: the semaphore hands a released turn to the first waiter).
        if let Ok(turn) = writers.try_acquire() {
            return Ok(Some(Turn { _permit: turn }));
        }
        let within = on_pool!(self, pool => pool.within());
        match tokio::time::timeout(within, writers.acquire()).await {
            Ok(turn) => Ok(Some(Turn { _permit: turn.expect("the semaphore is never closed") })),
            Err(_) => Err(StoreError::NoTurn),
        }
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The SQLite connections, for a hand-written route beside the generated ones, taken
    /// and settled as [`Store::postgres`]'s are.
    pub fn sqlite(&self) -> Option<&SqliteConnections> {
        match &self.pool {
            Pool::Sqlite(pool) => Some(pool),
            Pool::Postgres(_) => None,
        }
    }

    /// The PostgreSQL connections, for a hand-written route beside the generated ones:
    /// [`PgConnections::acquire`] takes one, which a route settles ([`PgLease::settle`])
    /// when its work on it has finished, so that it goes back without a check.
    pub fn postgres(&self) -> Option<&PgConnections> {
        match &self.pool {
            Pool::Postgres(pool) => Some(pool),
            Pool::Sqlite(_) => None,
        }
    }

    /// Applies the migrations not yet applied, in order, each in a transaction, then
    /// creates the runtime's own tables that are missing. A migration that fails rolls
    /// back whole, and the error names it.
    ///
    /// On SQLite, foreign keys are off while migrations run (on the one connection that
    /// runs them), as rebuilding a table needs: dropping the old table must not cascade to
    /// the rows that refer to it. A rebuilding migration checks the references itself
    /// before it commits.
    ///
    /// Instances started together on one PostgreSQL take turns, holding a session-level
    /// advisory lock on a connection of its own (so it goes if the process dies): the first
    /// migrates, the others find it done.
    pub async fn migrate(&self, migrations: &[MigrationSpec]) -> Result<(), MigrateError> {
        self.exclusively(self.migrate_unlocked(migrations)).await
    }

    async fn migrate_unlocked(&self, migrations: &[MigrationSpec]) -> Result<(), MigrateError> {
        self.run_migrations(migrations, false).await?;
        self.create_runtime_tables().await.map_err(|e| MigrateError(e.to_string()))
    }

    /// Runs `work` holding, on PostgreSQL, a session lock that every instance of a service
    /// on the same schema takes before it changes tables. sqlx's migrator locks around
    /// the migrations alone; the runtime's own tables and a derived service's record are
    /// made after it, and PostgreSQL's `CREATE TABLE IF NOT EXISTS` run at once by two
    /// sessions fails in one of them. The lock is held by a connection of its own, so it
    /// goes with the connection if this process dies.
    async fn exclusively<T>(&self, work: impl Future<Output = Result<T, MigrateError>>) -> Result<T, MigrateError> {
        let Pool::Postgres(pool) = &self.pool else { return work.await };
        let failed = |e: sqlx::Error| MigrateError(format!("cannot take the migration lock: {e}"));
        let mut holder = pool.acquire().await.map_err(failed)?;
        sqlx::query(LOCK).execute(&mut *holder).await.map_err(failed)?;
        let done = work.await;
        match sqlx::query(UNLOCK).execute(&mut *holder).await {
            Ok(_) => holder.settle(),
            // Closed rather than returned to the pool still holding the lock.
            Err(_) => holder.discard(),
        }
        done
    }

    /// Applies `migrations` not yet applied; with `only_these`, migrations applied before
    /// and not among them are not asked for (a derived service hands over its new one).
    async fn run_migrations(&self, migrations: &[MigrationSpec], only_these: bool) -> Result<(), MigrateError> {
        let list = migrations
            .iter()
            .map(|m| {
                let sql = match self.dialect {
                    Dialect::Sqlite => m.sqlite,
                    Dialect::Postgres => m.postgres,
                };
                Migration::new(
                    m.version,
                    m.description.into(),
                    MigrationType::Simple,
                    sqlx::SqlStr::from_static(restgen_model::migration::body(sql)),
                    false,
                )
            })
            .collect();
        let mut migrator = Migrator::with_migrations(list);
        migrator.set_ignore_missing(only_these);
        let name = |version: i64| {
            migrations
                .iter()
                .find(|m| m.version == version)
                .map_or(format!("{version:04}"), |m| restgen_model::evolution::stem(m.version, m.description))
        };
        let named = |e: sqlx::migrate::MigrateError| match &e {
            sqlx::migrate::MigrateError::ExecuteMigration(inner, version) => MigrateError(format!(
                "migration {} failed and was rolled back, nothing of it applied: {inner}",
                name(*version)
            )),
            sqlx::migrate::MigrateError::VersionMismatch(version) => MigrateError(format!(
                "migration {} was applied to this database with other contents: a migration never changes once \
                 applied. Restore it as it was (a generated service's migrations/ from version control); a service \
                 written with the derive macros cannot change its tables yet (docs/evolution.md)",
                name(*version)
            )),
            sqlx::migrate::MigrateError::VersionMissing(version) => MigrateError(format!(
                "this database has migration {version:04}, which this service does not carry: a newer version of \
                 the service migrated it, and migrations only go forward"
            )),
            _ => MigrateError(e.to_string()),
        };
        match &self.pool {
            Pool::Sqlite(pool) => {
                let mut conn = pool.acquire().await.map_err(|e| MigrateError(e.to_string()))?;
                sqlx::query("PRAGMA foreign_keys = OFF")
                    .execute(&mut *conn)
                    .await
                    .map_err(|e| MigrateError(e.to_string()))?;
                let ran = migrator.run(&mut *conn).await.map_err(named);
                // Whatever happened, the connection goes back to the pool enforcing them, or
                // is closed.
                let on = sqlx::query("PRAGMA foreign_keys = ON").execute(&mut *conn).await;
                match on {
                    Ok(_) => conn.settle(),
                    Err(_) => conn.discard(),
                }
                ran?;
                on.map_err(|e| MigrateError(e.to_string()))?;
            }
            Pool::Postgres(pool) => {
                let mut conn = pool.acquire().await.map_err(|e| MigrateError(e.to_string()))?;
                if let Err(e) = migrator.run(&mut *conn).await {
                    // A failed run keeps its advisory lock on the connection: closing the
                    // connection lets another instance migrate.
                    conn.discard();
                    return Err(named(e));
                }
                conn.settle();
            }
        }
        Ok(())
    }

    /// A derived service's migrations: the first (`first`, its tables as its derives
    /// make them) when the database has no record yet, then, whenever `model`'s storage
    /// differs from the record the database keeps, the migration `restgen generate` would
    /// plan for it, with the new record in the same transaction. A change that loses data
    /// is refused, naming what and what to do; nothing is applied then.
    pub async fn evolve(
        &self,
        first: &[MigrationSpec],
        model: &restgen_model::model::Service,
    ) -> Result<(), MigrateError> {
        self.exclusively(self.evolve_unlocked(first, model)).await
    }

    async fn evolve_unlocked(
        &self,
        first: &[MigrationSpec],
        model: &restgen_model::model::Service,
    ) -> Result<(), MigrateError> {
        use restgen_model::evolution::{plan, storage::Storage};
        let failed = |e: sqlx::Error| MigrateError(e.to_string());
        let create = "CREATE TABLE IF NOT EXISTS \"restgen_storage\" (\"version\" BIGINT PRIMARY KEY NOT NULL, \"record\" TEXT NOT NULL)";
        on_pool!(self, pool => async { leased!(pool, c => sqlx::query(create).execute(c)).map(drop) }.await)
            .map_err(failed)?;
        let latest = "SELECT \"version\", \"record\" FROM \"restgen_storage\" ORDER BY \"version\" DESC LIMIT 1";
        let last: Option<(i64, String)> =
            on_pool!(self, pool => async { leased!(pool, c => sqlx::query_as(latest).fetch_optional(c)) }.await)
                .map_err(failed)?;
        let storage = Storage::of(model);
        let record = |s: &Storage| serde_json::to_string(s).expect("storage serializes");
        let Some((version, text)) = last else {
            // The first start, or a database made before the record was kept: its first
            // migration must be the one these derives make.
            self.migrate_unlocked(first).await?;
            let insert = "INSERT INTO \"restgen_storage\" (\"version\", \"record\") VALUES ($1, $2)";
            let version = first.last().map_or(1, |m| m.version);
            let stored = record(&storage);
            on_pool!(self, pool => async {
                leased!(pool, c => sqlx::query(insert).bind(version).bind(&stored).execute(c)).map(drop)
            }.await)
            .map_err(failed)?;
            return Ok(());
        };
        let before: Storage = serde_json::from_str(&text)
            .map_err(|e| MigrateError(format!("the storage record of migration {version} does not read: {e}")))?;
        let mut diags = restgen_model::diagnostics::Diagnostics::new();
        let planned = plan::plan(&before, model, false, &mut diags);
        if diags.has_errors() {
            let reasons: Vec<String> = diags
                .into_sorted()
                .into_iter()
                .filter(|d| d.severity == restgen_model::diagnostics::Severity::Error)
                .map(|d| format!("{} [{}]{}", d.message, d.code.id, d.hint.map_or(String::new(), |h| format!("; {h}"))))
                .collect();
            return Err(MigrateError(format!(
                "the model changes what the database holds in ways no migration keeps: {}",
                reasons.join("; ")
            )));
        }
        let Some(migration) = planned else {
            self.create_runtime_tables().await.map_err(failed)?;
            return Ok(());
        };
        let next = version + 1;
        let keep = format!(
            "INSERT INTO \"restgen_storage\" (\"version\", \"record\") VALUES ({next}, '{}');\n",
            record(&storage).replace('\'', "''")
        );
        let sql = match self.dialect {
            Dialect::Sqlite => migration.sqlite,
            Dialect::Postgres => migration.postgres,
        };
        let stem = restgen_model::evolution::stem(next, &migration.slug);
        let description: &'static str = Box::leak(restgen_model::evolution::description_of(&stem).into_boxed_str());
        let sql: &'static str = Box::leak(format!("{sql}{keep}").into_boxed_str());
        // Only the new migration is handed over: those applied before are the record's.
        let spec = [MigrationSpec { version: next, description, sqlite: sql, postgres: sql }];
        self.run_migrations(&spec, true).await?;
        self.create_runtime_tables().await.map_err(failed)
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
                    lease.discard();
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

    /// Stores a new record; `event` (`created`) goes to the outbox in the same
    /// transaction where the resource publishes it.
    pub async fn insert(
        &self,
        spec: &ResourceSpec,
        values: Vec<(&str, SqlValue)>,
        event: Option<&str>,
    ) -> Result<Record, StoreError> {
        self.insert_row(spec, values, event).await?.record(spec)
    }

    /// [`Store::insert`], the record left in its row.
    pub(crate) async fn insert_row(
        &self,
        spec: &ResourceSpec,
        values: Vec<(&str, SqlValue)>,
        event: Option<&str>,
    ) -> Result<Rows, StoreError> {
        let (sql, args) = sql::insert(spec, values);
        self.write(spec, sql, args, event).await?.ok_or(StoreError::NotFound)
    }

    /// Runs `sql`, which returns the row it wrote, in a transaction with the event it
    /// makes (when the resource publishes `event`), and tells this instance's worker.
    async fn write(
        &self,
        spec: &ResourceSpec,
        sql: impl Statement,
        args: Vec<SqlValue>,
        event: Option<&str>,
    ) -> Result<Option<Rows>, StoreError> {
        retried(self.dialect, sql, args, |sql, args| self.write_once(spec, sql, args, event)).await
    }

    /// [`Store::write`], once.
    async fn write_once(
        &self,
        spec: &ResourceSpec,
        sql: impl Statement,
        args: Vec<SqlValue>,
        event: Option<&str>,
    ) -> Result<Option<Rows>, StoreError> {
        let publishes = event.is_some_and(|e| spec.events.contains(&e));
        if !publishes {
            // One statement needs no transaction of its own. It is read to its end, not
            // only to its row: SQLite calls the WAL hook, which checkpoints (and wakes the
            // writer waiting its turn, `busy`), when a statement steps to its end, and one
            // dropped after its row commits without it; a service whose every write returns
            // its row would never checkpoint, and its log would grow without end.
            return Ok(writing!(self, pool => {
                let rows = leased!(pool, c => bind(sql, args).fetch_all(c)).map_err(|e| classify(spec, e))?;
                rows.into_iter().next().map(one)
            }));
        }
        // On the heap: a transaction's futures are kilobytes, which every write's future
        // (and each future holding it) would otherwise carry, and copy as it moves.
        let written = Box::pin(async move {
            Ok::<_, StoreError>(writing!(self, pool => {
                let mut lease = pool.acquire().await?;
                let mut tx = begin(&mut lease, None).await?;
                let row = bind(sql, args).fetch_optional(&mut *tx).await.map_err(|e| classify(spec, e))?;
                let Some(row) = row else { return Ok(None) };
                let record = value::record(self.dialect, spec, &row)?;
                if let Some((sql, args)) = outbox::event_insert(spec, event, &record) {
                    bind(sql, args).execute(&mut *tx).await?;
                }
                tx.commit().await?;
                lease.settle();
                Some(one(row))
            }))
        })
        .await?;
        if written.is_some() {
            self.outbox.notify_one();
        }
        Ok(written)
    }

    pub async fn get(&self, spec: &ResourceSpec, id: &SqlValue) -> Result<Record, StoreError> {
        self.get_row(spec, id).await?.record(spec)
    }

    /// One record by id, as its row: one of [`Rows`].
    pub(crate) async fn get_row(&self, spec: &ResourceSpec, id: &SqlValue) -> Result<Rows, StoreError> {
        let row = on_pool!(self, pool => {
            leased!(pool, c => bind(sql::by_id(spec), vec![id.clone()]).fetch_optional(c))?.map(one)
        });
        row.ok_or(StoreError::NotFound)
    }

    /// Sets the given columns of one record and returns it as stored, with its `event`.
    pub async fn update(
        &self,
        spec: &ResourceSpec,
        id: &SqlValue,
        values: Vec<(&str, SqlValue)>,
        event: Option<&str>,
    ) -> Result<Record, StoreError> {
        self.update_owned_row(spec, id, values, None, event).await?.record(spec)
    }

    /// [`Store::update`] of a record only where `owner` (a column and its value) also
    /// holds (`NotFound` when the record is missing or somebody else's), left in its row.
    pub(crate) async fn update_owned_row(
        &self,
        spec: &ResourceSpec,
        id: &SqlValue,
        values: Vec<(&str, SqlValue)>,
        owner: Option<(&str, SqlValue)>,
        event: Option<&str>,
    ) -> Result<Rows, StoreError> {
        let (sql, args) = sql::update(spec, id.clone(), values, owner);
        self.write(spec, sql, args, event).await?.ok_or(StoreError::NotFound)
    }

    /// Sets the given columns of one record if `admit` admits it as it stands, judged and
    /// written in one transaction that holds the row, so no other write comes between
    /// (`Changed` with the record otherwise).
    pub async fn update_if(
        &self,
        spec: &ResourceSpec,
        id: &SqlValue,
        values: Vec<(&str, SqlValue)>,
        admit: Admit<'_>,
        event: Option<&str>,
    ) -> Result<Record, StoreError> {
        let (sql, args) = sql::update(spec, id.clone(), values, None);
        self.write_if(spec, id, admit, sql, args, event).await?.ok_or(StoreError::NotFound)
    }

    /// Deletes one record if `admit` admits it as it stands, in one transaction as
    /// [`Store::update_if`] writes.
    pub async fn delete_if(
        &self,
        spec: &ResourceSpec,
        id: &SqlValue,
        admit: Admit<'_>,
        event: Option<&str>,
    ) -> Result<(), StoreError> {
        let deleted = self.write_if(spec, id, admit, sql::delete(spec), vec![id.clone()], event).await;
        self.name_referrer(spec, id, deleted).await.map(drop)
    }

    /// Runs `sql` on one record if `admit` admits the record as it stands: the row is read
    /// and held, judged, and written in one transaction. Returns the row `sql` returns.
    async fn write_if(
        &self,
        spec: &ResourceSpec,
        id: &SqlValue,
        admit: Admit<'_>,
        sql: impl Statement,
        args: Vec<SqlValue>,
        event: Option<&str>,
    ) -> Result<Option<Record>, StoreError> {
        retried(self.dialect, sql, args, |sql, args| self.write_if_once(spec, id, admit, sql, args, event)).await
    }

    /// [`Store::write_if`], once.
    async fn write_if_once(
        &self,
        spec: &ResourceSpec,
        id: &SqlValue,
        admit: Admit<'_>,
        sql: impl Statement,
        args: Vec<SqlValue>,
        event: Option<&str>,
    ) -> Result<Option<Record>, StoreError> {
        // On the heap, as a transaction in `write` is.
        let written = Box::pin(async move { Ok::<_, StoreError>(writing!(self, pool => {
            let mut lease = pool.acquire().await?;
            let mut tx = begin(&mut lease, Some(self.begin_write())).await?;
            let current = match bind(sql::by_id_locked(self.dialect, spec), vec![id.clone()]).fetch_optional(&mut *tx).await? {
                Some(row) => value::record(self.dialect, spec, &row)?,
                None => return Err(StoreError::NotFound),
            };
            if !admit(&current) {
                return Err(StoreError::Changed(Box::new(current)));
            }
            let row = bind(sql, args).fetch_optional(&mut *tx).await.map_err(|e| classify(spec, e))?;
            let written = row.map(|r| value::record(self.dialect, spec, &r)).transpose()?;
            if let Some(record) = &written
                && let Some((sql, args)) = outbox::event_insert(spec, event, record)
            {
                bind(sql, args).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            lease.settle();
            written
        })) })
        .await?;
        if event.is_some_and(|e| spec.events.contains(&e)) && written.is_some() {
            self.outbox.notify_one();
        }
        Ok(written)
    }

    /// How a transaction that will write begins: SQLite's `IMMEDIATE` takes the write lock
    /// at once, so the read it starts with is not of a database another writer is about to
    /// change (a deferred one could only fail at its first write).
    fn begin_write(&self) -> &'static str {
        match self.dialect {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }

    /// Deletes one record, with its `event` (the record as it was is the event's data).
    pub async fn delete(&self, spec: &ResourceSpec, id: &SqlValue, event: Option<&str>) -> Result<(), StoreError> {
        let deleted = self.write(spec, sql::delete(spec), vec![id.clone()], event).await;
        self.name_referrer(spec, id, deleted).await?.map(drop).ok_or(StoreError::NotFound)
    }

    /// A delete refused because a record refers to the one deleted, with the referring
    /// field named where the database did not (SQLite): looked up in the tables whose
    /// foreign keys point at this one, only once refused. The catalog query is SQLite's,
    /// and PostgreSQL always names the constraint.
    async fn name_referrer<T>(
        &self,
        spec: &ResourceSpec,
        id: &SqlValue,
        deleted: Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let deleted = match deleted {
            // A delete leaves no ref of its own naming nothing: a foreign key it breaks is
            // another record's (or, where a resource refers to itself, another row's).
            Err(StoreError::MissingRef { field }) if !field.is_empty() => {
                return Err(StoreError::Referenced { by: Some(format!("{}.{field}", spec.name)) });
            }
            Err(StoreError::MissingRef { .. }) => Err(StoreError::Referenced { by: None }),
            other => other,
        };
        let (Err(StoreError::Referenced { by: None }), Dialect::Sqlite) = (&deleted, self.dialect) else {
            return deleted;
        };
        // Only the keys that refuse: a cascading or nulling one names no holder.
        let referring = "SELECT m.\"name\", k.\"from\" FROM \"sqlite_master\" m, pragma_foreign_key_list(m.\"name\") k \
                         WHERE m.\"type\" = 'table' AND k.\"table\" = $1 AND k.\"on_delete\" IN ('RESTRICT', 'NO ACTION') \
                         ORDER BY m.\"name\", k.\"from\"";
        let found = on_pool!(self, pool => {
            let mut connection = pool.acquire().await?;
            let pairs: Vec<(String, String)> =
                sqlx::query_as(referring).bind(spec.name).fetch_all(&mut *connection).await?;
            let mut found = None;
            for (table, column) in pairs {
                let probe = format!("SELECT 1 FROM {} WHERE {} = $1 LIMIT 1", sql::ident(&table), sql::ident(&column));
                if bind(probe, vec![id.clone()]).fetch_optional(&mut *connection).await?.is_some() {
                    found = Some(format!("{table}.{column}"));
                    break;
                }
            }
            found
        });
        Err(StoreError::Referenced { by: found })
    }

    /// The record whose `column` holds `value` (a unique column: the login identifier).
    pub async fn find_by(
        &self,
        spec: &ResourceSpec,
        column: &str,
        value: SqlValue,
    ) -> Result<Option<Record>, StoreError> {
        let sql = format!(
            "SELECT {} FROM {} WHERE {} = $1 LIMIT 1",
            Columns(spec),
            sql::ident(spec.name),
            sql::ident(column)
        );
        on_pool!(self, pool => match leased!(pool, c => bind(sql, vec![value]).fetch_optional(c))? {
            Some(row) => Ok(Some(value::record(self.dialect, spec, &row)?)),
            None => Ok(None),
        })
    }

    /// Whether a record with this id exists in `table` (for ref checks).
    pub async fn exists(&self, table: &str, id: &SqlValue) -> Result<bool, StoreError> {
        self.exists_owned(table, id, None).await
    }

    /// Whether a record with this id exists in `table` and, given `owner` (a column and
    /// the caller's id), is the caller's.
    pub(crate) async fn exists_owned(
        &self,
        table: &str,
        id: &SqlValue,
        owner: Option<(&str, SqlValue)>,
    ) -> Result<bool, StoreError> {
        let mut sql = format!("SELECT 1 FROM {} WHERE \"id\" = $1", sql::ident(table));
        let mut args = vec![id.clone()];
        if let Some((column, value)) = owner {
            sql.push_str(&format!(" AND {} = $2", sql::ident(column)));
            args.push(value);
        }
        on_pool!(self, pool => Ok(leased!(pool, c => bind(sql, args).fetch_optional(c))?.is_some()))
    }

    /// One page of a list: the records and whether more follow.
    pub async fn list(&self, spec: &ResourceSpec, query: &ListQuery) -> Result<(Vec<Record>, bool), StoreError> {
        let (rows, more) = self.list_rows(spec, query).await?;
        Ok((rows.records(spec)?, more))
    }

    /// One page of records as the driver read them, and whether more follow.
    pub(crate) async fn list_rows(&self, spec: &ResourceSpec, query: &ListQuery) -> Result<(Rows, bool), StoreError> {
        let (sql, args) = sql::select_page(self.dialect, spec, query);
        let limit = query.limit as usize;
        Ok(on_pool!(self, pool => {
            let mut rows = leased!(pool, c => bind(sql, args).fetch_all(c))?;
            let more = beyond(&mut rows, limit);
            (Rows::from(rows), more)
        }))
    }

    /// The database's plan for a list query, one line per step (SQLite's `EXPLAIN QUERY
    /// PLAN`, PostgreSQL's `EXPLAIN`): to see which index serves a list.
    pub async fn explain_list(&self, spec: &ResourceSpec, query: &ListQuery) -> Result<Vec<String>, StoreError> {
        let (sql, args) = sql::select_page(self.dialect, spec, query);
        let (explain, column) = match self.dialect {
            Dialect::Sqlite => (format!("EXPLAIN QUERY PLAN {sql}"), "detail"),
            Dialect::Postgres => (format!("EXPLAIN {sql}"), "QUERY PLAN"),
        };
        on_pool!(self, pool => {
            let rows = leased!(pool, c => bind(explain, args).fetch_all(c))?;
            Ok(rows.iter().filter_map(|r| r.try_get::<String, _>(column).ok()).collect())
        })
    }
}

/// Whether `rows` (a page read with one row more) go beyond `limit`; they are cut to it.
fn beyond<T>(rows: &mut Vec<T>, limit: usize) -> bool {
    let more = rows.len() > limit;
    rows.truncate(limit);
    more
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

    use super::*;
    use crate::spec::{FieldKind, FieldSpec, IdKind};
    use serde_json::{Value, json};

    /// Every kind a column can be read as, a write-only field, an owner, and times.
    static KINDS: ResourceSpec = ResourceSpec {
        name: "kinds",
        id: IdKind::Integer,
        owner: Some(("user", IdKind::Uuid)),
        fields: &[
            FieldSpec { name: "s", kind: FieldKind::String, ..FieldSpec::DEFAULT },
            FieldSpec { name: "i", kind: FieldKind::Integer, ..FieldSpec::DEFAULT },
            FieldSpec { name: "n", kind: FieldKind::Number, ..FieldSpec::DEFAULT },
            FieldSpec { name: "b", kind: FieldKind::Boolean, ..FieldSpec::DEFAULT },
            FieldSpec { name: "d", kind: FieldKind::Decimal, ..FieldSpec::DEFAULT },
            FieldSpec { name: "j", kind: FieldKind::Json, ..FieldSpec::DEFAULT },
            FieldSpec { name: "secret", kind: FieldKind::Password, write_only: true, ..FieldSpec::DEFAULT },
            FieldSpec { name: "r", kind: FieldKind::Roles, ..FieldSpec::DEFAULT },
        ],
        ..ResourceSpec::DEFAULT
    };

    fn table(dialect: Dialect) -> String {
        let (id, int, float, boolean) = match dialect {
            Dialect::Sqlite => ("INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER", "REAL", "INTEGER"),
            Dialect::Postgres => {
                ("BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "BIGINT", "DOUBLE PRECISION", "BOOLEAN")
            }
        };
        format!(
            "CREATE TABLE \"kinds\" (\"id\" {id}, \"owner_id\" TEXT, \"s\" TEXT, \"i\" {int}, \"n\" {float}, \
             \"b\" {boolean}, \"d\" TEXT, \"j\" TEXT, \"secret\" TEXT, \"r\" TEXT, \
             \"created_at\" TEXT NOT NULL, \"updated_at\" TEXT NOT NULL)"
        )
    }

    fn text(t: &str) -> SqlValue {
        SqlValue::Text(Some(t.to_owned()))
    }

    async fn rows_are_written_as_their_records(store: Store) {
        let create = table(store.dialect);
        on_pool!(store, pool => { sqlx::query(AssertSqlSafe(create)).execute(&mut *pool.acquire().await.unwrap()).await.unwrap(); });
        let full = vec![
            ("owner_id", text("0190b6a4-0000-7000-8000-0000000000aa")),
            ("s", text("quote \" back \\ tab \t nl \n é 😀 </script>")),
            ("i", SqlValue::Int(Some(-9_007_199_254_740_993))),
            ("n", SqlValue::Float(Some(1.5e300))),
            ("b", SqlValue::Bool(Some(true))),
            ("d", text("12.50")),
            ("j", text(r#"{"a":[1,"x",null],"b":{"c":true}}"#)),
            ("secret", text("hunter2")),
            ("r", text(r#"["admin"]"#)),
            ("created_at", text("2026-11-26T08:00:00.000001Z")),
            ("updated_at", text("2026-11-26T08:00:00.000002Z")),
        ];
        let empty = vec![
            ("created_at", text("2026-11-26T08:00:01.000000Z")),
            ("updated_at", text("2026-11-26T08:00:01.000000Z")),
        ];
        let unparsed = vec![
            ("j", text("not json")),
            ("n", SqlValue::Float(Some(-0.25))),
            ("b", SqlValue::Bool(Some(false))),
            ("created_at", text("2026-11-26T08:00:02.000000Z")),
            ("updated_at", text("2026-11-26T08:00:02.000000Z")),
        ];
        for values in [full, empty, unparsed] {
            store.insert(&KINDS, values, None).await.unwrap();
        }
        let query = ListQuery {
            filters: Vec::new(),
            sort: vec![SortKey { column: "id", descending: false, nullable: false, numeric: false }],
            page: Page::Offset(0),
            limit: 2,
        };
        let (rows, more) = store.list_rows(&KINDS, &query).await.unwrap();
        assert!(more, "three rows, a page of two");
        let shown: Vec<bool> = KINDS.fields.iter().map(|f| !f.write_only).collect();
        let mut records = rows.records(&KINDS).unwrap();
        for r in &mut records {
            r.shift_remove("secret");
        }
        let from_rows = serde_json::to_string(&rows.json(&KINDS, &shown)).unwrap();
        assert_eq!(from_rows, serde_json::to_string(&records).unwrap(), "{:?}", store.dialect);
        let page: Value = serde_json::from_str(&from_rows).unwrap();
        assert_eq!(
            page[0],
            json!({
                "id": 1, "owner_id": "0190b6a4-0000-7000-8000-0000000000aa",
                "s": "quote \" back \\ tab \t nl \n é 😀 </script>", "i": -9_007_199_254_740_993_i64,
                "n": 1.5e300, "b": true, "d": "12.50", "j": { "a": [1, "x", null], "b": { "c": true } },
                "r": ["admin"],
                "created_at": "2026-11-26T08:00:00.000001Z", "updated_at": "2026-11-26T08:00:00.000002Z"
            })
        );
        assert_eq!(
            page[1],
            json!({
                "id": 2, "owner_id": null, "s": null, "i": null, "n": null, "b": null, "d": null, "j": null,
                "r": null, "created_at": "2026-11-26T08:00:01.000000Z", "updated_at": "2026-11-26T08:00:01.000000Z"
            })
        );
        // JSON text that does not parse reads as null, both ways.
        let last = Page::Offset(2);
        let (rows, _) = store.list_rows(&KINDS, &ListQuery { page: last, ..query }).await.unwrap();
        let all = vec![true; KINDS.fields.len()];
        let from_rows = serde_json::to_string(&rows.json(&KINDS, &all)).unwrap();
        assert_eq!(from_rows, serde_json::to_string(&rows.records(&KINDS).unwrap()).unwrap());
        let page: Value = serde_json::from_str(&from_rows).unwrap();
        assert_eq!((&page[0]["j"], &page[0]["n"], &page[0]["b"]), (&Value::Null, &json!(-0.25), &json!(false)));
        assert_eq!(rows.last(&KINDS).unwrap().and_then(|r| r.get("id").cloned()), Some(json!(3)));
    }

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
        on_pool!(store, pool => { sqlx::query(AssertSqlSafe(table(Dialect::Sqlite))).execute(&mut *pool.acquire().await.unwrap()).await.unwrap(); });
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
        sqlx::query(AssertSqlSafe(table(Dialect::Sqlite))).execute(&mut *pool.acquire().await.unwrap()).await.unwrap();
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

    /// A resource that refers to itself: the row that refuses a delete is in the deleted
    /// row's own table.
    static NODE: ResourceSpec = ResourceSpec {
        name: "node",
        id: IdKind::Integer,
        timestamps: false,
        fields: &[FieldSpec {
            name: "parent_id",
            kind: FieldKind::Ref,
            to: Some(("node", IdKind::Integer)),
            ..FieldSpec::DEFAULT
        }],
        ..ResourceSpec::DEFAULT
    };

    /// A row another still refers to stays, and the refusal names the ref that holds it
    /// (409), not one that would let go (`aside`, first by name, is set to null); once the
    /// referrer is gone it goes. A write naming a missing row is refused
    /// as such, not as a delete's.
    async fn a_referred_row_is_deleted_only_once_nothing_refers_to_it(store: Store) {
        let id = match store.dialect {
            Dialect::Sqlite => "INTEGER PRIMARY KEY",
            Dialect::Postgres => "BIGINT PRIMARY KEY",
        };
        let create = format!(
            "CREATE TABLE \"node\" (\"id\" {id}, \"parent_id\" BIGINT, CONSTRAINT \"node_parent_id_fkey\" \
             FOREIGN KEY (\"parent_id\") REFERENCES \"node\" (\"id\") ON DELETE RESTRICT); \
             INSERT INTO \"node\" (\"id\", \"parent_id\") VALUES (1, NULL), (2, 1); \
             CREATE TABLE \"aside\" (\"id\" BIGINT PRIMARY KEY, \"node_id\" BIGINT, CONSTRAINT \"aside_node_id_fkey\" \
             FOREIGN KEY (\"node_id\") REFERENCES \"node\" (\"id\") ON DELETE SET NULL); \
             INSERT INTO \"aside\" (\"id\", \"node_id\") VALUES (1, 1)"
        );
        on_pool!(store, pool => { sqlx::raw_sql(AssertSqlSafe(create)).execute(&mut *pool.acquire().await.unwrap()).await.unwrap(); });
        let (root, child) = (SqlValue::Int(Some(1)), SqlValue::Int(Some(2)));
        let refused = store.delete(&NODE, &root, None).await.unwrap_err();
        assert!(matches!(&refused, StoreError::Referenced { by: Some(by) } if by == "node.parent_id"), "{refused}");
        let answer = crate::problem::Problem::from(refused);
        assert_eq!(answer.status, axum::http::StatusCode::CONFLICT);
        assert!(answer.detail.contains("`node.parent_id`"), "{}", answer.detail);
        let orphan = store
            .insert_row(&NODE, vec![("id", SqlValue::Int(Some(3))), ("parent_id", SqlValue::Int(Some(99)))], None)
            .await;
        assert!(matches!(orphan, Err(StoreError::MissingRef { .. })), "{:?}", orphan.err());
        store.delete(&NODE, &child, None).await.unwrap();
        store.delete(&NODE, &root, None).await.expect("nothing refers to it now");
    }

    #[tokio::test]
    async fn sqlite_referred_rows_are_deleted_only_once_nothing_refers_to_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::connect(&format!("sqlite://{}", dir.path().join("n.db").display())).await.unwrap();
        a_referred_row_is_deleted_only_once_nothing_refers_to_it(store).await;
    }

    #[tokio::test]
    async fn postgres_referred_rows_are_deleted_only_once_nothing_refers_to_them() {
        let Some(store) = postgres_schema("t_node").await else { return };
        a_referred_row_is_deleted_only_once_nothing_refers_to_it(store).await;
    }

    /// A budget's swap writes only from the state it was decided on; otherwise it writes
    /// nothing and answers, in the same statement, with the state the database holds (none
    /// where there is no row), for the next decision.
    #[tokio::test]
    async fn postgres_budgets_swap_only_from_the_state_decided_on() {
        use crate::rate::State;
        let Some(store) = postgres_schema("t_budget").await else { return };
        store.create_runtime_tables().await.unwrap();
        let s = |start, count| State { start, count, previous: 0 };
        assert_eq!(store.swap_budget("b", None, s(1, 1), 100).await.unwrap(), Ok(()), "a new budget");
        let twin = store.swap_budget("b", None, s(1, 1), 100).await.unwrap();
        assert_eq!(twin, Err(Some(s(1, 1))), "another instance's first request finds it");
        assert_eq!(store.swap_budget("b", Some(s(1, 1)), s(1, 2), 100).await.unwrap(), Ok(()), "from the state held");
        let stale = store.swap_budget("b", Some(s(1, 1)), s(1, 9), 100).await.unwrap();
        assert_eq!(stale, Err(Some(s(1, 2))), "from a state no longer held: the one held");
        assert_eq!(store.budget("b").await.unwrap(), Some(s(1, 2)), "nothing written");
        assert_eq!(store.sweep_budgets(1_000).await.unwrap(), 1);
        let swept = store.swap_budget("b", Some(s(1, 2)), s(1, 3), 100).await.unwrap();
        assert_eq!(swept, Err(None), "a budget swept away meanwhile");
        assert_eq!(store.budget("b").await.unwrap(), None);
    }

    /// A store on a fresh schema of its own in the test database; `None` (saying so) when
    /// `RESTGEN_TEST_DATABASE_URL` is unset.
    async fn postgres_schema(name: &str) -> Option<Store> {
        Some(Store::connect(&test_database::fresh_schema(name).await?).await.unwrap())
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

    #[tokio::test]
    async fn sqlite_rows_are_written_as_their_records() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::connect(&format!("sqlite://{}", dir.path().join("k.db").display())).await.unwrap();
        rows_are_written_as_their_records(store).await;
    }

    #[tokio::test]
    async fn postgres_rows_are_written_as_their_records() {
        let Some(store) = postgres_schema("t_kinds").await else { return };
        rows_are_written_as_their_records(store).await;
    }
}
