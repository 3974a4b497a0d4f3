//! Opening a store: the URL's database, its pool sized for the machine and opened to its
//! least, and SQLite's turns to write.

use super::{Connections, Dialect, Lease, Pool, Store, StoreError, StoreOptions, pool};
use crate::clock::Clock;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// How many connections of one SQLite store write at once ([`Store::write_permit`]).
#[cfg(feature = "sqlite")]
const WRITERS: usize = 2;

/// One write's turn ([`Store::write_permit`]). Its end rings the writer waiting on the lock
/// (`busy`): a write that failed, or a transaction rolled back, lets the lock go without
/// the commit that rings otherwise.
pub(super) struct WritePermit<'a> {
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl Drop for WritePermit<'_> {
    fn drop(&mut self) {
        #[cfg(feature = "sqlite")]
        super::busy::ring();
    }
}

/// The refusal of a URL of a `database` this build of the runtime leaves out.
#[cfg(not(all(feature = "sqlite", feature = "postgres")))]
fn left_out(database: &str, feature: &str) -> sqlx::Error {
    sqlx::Error::Configuration(
        format!(
            "DATABASE_URL names {database}, which this build of the service leaves out: add \"{feature}\" to the \
             `features` of the `restgen` dependency in Cargo.toml"
        )
        .into(),
    )
}

/// How long a start waits for the database to take its first connection, retrying one
/// that refuses: a database started beside the service (a container, say) may take some
/// seconds to listen.
const START_WITHIN: Duration = Duration::from_secs(30);

fn cores() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| u32::try_from(n.get()).unwrap_or(u32::MAX))
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
fn max_connections(options: &StoreOptions, default: u32, said: &str) -> Result<u32, sqlx::Error> {
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
async fn open_min_connections<DB: pool::Driver>(
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
impl Store {
    /// Connects to `url` (`sqlite://file.db` or `postgres://...`) with the default
    /// [`StoreOptions`]. SQLite files are created when missing and put in WAL mode with
    /// foreign keys enforced.
    pub async fn connect(url: &str) -> Result<Store, sqlx::Error> {
        Store::connect_with(url, StoreOptions::default()).await
    }

    /// This store, its records stamped by `clock`.
    pub fn with_clock(self, clock: Clock) -> Store {
        Store { clock, ..self }
    }

    /// The clock records are stamped by.
    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The time a record is written at, by the store's clock: RFC 3339 in UTC, to the
    /// microsecond, fixed width so that text order is time order.
    pub(crate) fn now(&self) -> String {
        self.clock.timestamp()
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
    ///
    /// A URL of a database this build of the runtime leaves out (its cargo feature off) is
    /// refused, naming the feature.
    pub async fn connect_with(url: &str, options: StoreOptions) -> Result<Store, sqlx::Error> {
        if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Store::connect_postgres(url, options).await
        } else if url.starts_with("sqlite:") {
            Store::connect_sqlite(url, options).await
        } else {
            Err(sqlx::Error::Configuration("DATABASE_URL must start with sqlite: or postgres:".into()))
        }
    }

    #[cfg(feature = "postgres")]
    async fn connect_postgres(url: &str, options: StoreOptions) -> Result<Store, sqlx::Error> {
        {
            let most = max_connections(&options, 4 * cores(), "4 per core on PostgreSQL")?;
            let connect = sqlx::postgres::PgConnectOptions::from_str(url)?;
            let pool = super::PgConnections::new(connect, &options, most);
            let first = first_connection(&pool).await?;
            open_min_connections(&pool, first, options.min_connections).await?;
            Ok(Store {
                pool: Pool::Postgres(pool),
                dialect: Dialect::Postgres,
                signals: Default::default(),
                writers: None,
                clock: Clock::System,
            })
        }
    }

    #[cfg(feature = "sqlite")]
    async fn connect_sqlite(url: &str, options: StoreOptions) -> Result<Store, sqlx::Error> {
        use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
        {
            let synchronous = match options.synchronous {
                super::Synchronous::Normal => SqliteSynchronous::Normal,
                super::Synchronous::Full => SqliteSynchronous::Full,
            };
            let connect = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(synchronous)
                .foreign_keys(true);
            let most = max_connections(&options, 2 * cores(), "2 per core on SQLite")?;
            let pool = super::SqliteConnections::new(connect, &options, most);
            let first = first_connection(&pool).await?;
            open_min_connections(&pool, first, options.min_connections).await?;
            let writers = Some(std::sync::Arc::new(tokio::sync::Semaphore::new(WRITERS)));
            Ok(Store {
                pool: Pool::Sqlite(pool),
                dialect: Dialect::Sqlite,
                signals: Default::default(),
                writers,
                clock: Clock::System,
            })
        }
    }

    #[cfg(not(feature = "postgres"))]
    async fn connect_postgres(_: &str, _: StoreOptions) -> Result<Store, sqlx::Error> {
        Err(left_out("PostgreSQL", restgen_model::features::POSTGRES))
    }

    #[cfg(not(feature = "sqlite"))]
    async fn connect_sqlite(_: &str, _: StoreOptions) -> Result<Store, sqlx::Error> {
        Err(left_out("SQLite", restgen_model::features::SQLITE))
    }

    /// This instance's turn to write to SQLite, waited for in the order the writers came
    /// and holding no connection meanwhile; `None` on PostgreSQL, whose writers lock only
    /// the rows they write.
    ///
    /// SQLite lets one connection write at a time. Left to race for its lock, every
    /// connection of the pool may be waiting on it, each trying again at every commit or
    /// millisecond ([`busy`]), while reads find no connection free. Here two writers go at
    /// a time: one holds the lock, the other waits on it to take it the moment it is free,
    /// and the rest wait here, in order, each try spent on a lock about to be free (racing
    /// cost more CPU and less throughput under the service bench's concurrent creates;
    /// docs/bench/history.md). A lock another process holds is still waited for by the busy handler. The wait here
    /// is bounded as the wait for a connection is (`pool_timeout`), and refused the same
    /// way: transient, 503 with `Retry-After`.
    pub(super) async fn write_permit(&self) -> Result<Option<WritePermit<'_>>, StoreError> {
        let Some(writers) = &self.writers else { return Ok(None) };
        // A free turn is taken without building the timed wait (a waiter queued before
        // keeps its place: the semaphore hands a released turn to the first waiter).
        if let Ok(turn) = writers.try_acquire() {
            return Ok(Some(WritePermit { _permit: turn }));
        }
        let within = on_pool!(self, pool => pool.within());
        match tokio::time::timeout(within, writers.acquire()).await {
            Ok(turn) => Ok(Some(WritePermit { _permit: turn.expect("the semaphore is never closed") })),
            Err(_) => Err(StoreError::NoTurn),
        }
    }
}
