//! The store's connections, pooled so that giving one back costs the database nothing.
//!
//! sqlx's pool checks every connection given back to it: on PostgreSQL a `Sync` sent and
//! its `ReadyForQuery` awaited, a second round trip for every query whose statement needs
//! one (a large share of a create's CPU and throughput in the service bench,
//! docs/bench/history.md);
//! on SQLite a message to the connection's thread and its answer, two thread wake-ups, in a
//! task spawned for it. Here a connection goes back to the pool as it is when the work on
//! it is known to have finished ([`Lease::settle`]): its statement read to its end, its
//! transaction committed. One given back otherwise (its request cut off in the middle of a
//! statement, a transaction left unfinished, whose rollback sqlx only queues) is checked
//! first, the rollback sent with the check, within the pool's wait: one whose check goes
//! unanswered (a database or network gone silent) is closed and its place freed
//! (transact-rs/sqlx#4349). A connection taken after it sat unused for longer than
//! [`FRESH`] is checked before it is used, as HikariCP's pool does: a connection that died
//! while idle is found before a request is given it, and one in steady use costs no check
//! at all.

use super::StoreOptions;
use crate::outlined::Outlined;
use deadpool::managed::{self, Metrics, Object, PoolError, RecycleError, RecycleResult, Timeouts};
use sqlx::{ConnectOptions, Connection};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a connection may go unused and still be taken without a check.
pub(crate) const FRESH: Duration = Duration::from_secs(1);

/// A database whose connections the store pools: how one is opened.
pub trait Driver: sqlx::Database {
    /// Opens a connection of `options`, set up as the store uses it.
    fn open(
        options: &<Self::Connection as Connection>::Options,
    ) -> impl Future<Output = Result<Self::Connection, sqlx::Error>> + Send;
}

#[cfg(feature = "postgres")]
impl Driver for sqlx::Postgres {
    async fn open(options: &sqlx::postgres::PgConnectOptions) -> Result<sqlx::PgConnection, sqlx::Error> {
        options.connect().await
    }
}

#[cfg(feature = "sqlite")]
impl Driver for sqlx::Sqlite {
    /// With the store's busy handler ([`busy`]).
    async fn open(options: &sqlx::sqlite::SqliteConnectOptions) -> Result<sqlx::SqliteConnection, sqlx::Error> {
        let mut connection = options.connect().await?;
        super::busy::install(&mut connection).await?;
        Ok(connection)
    }
}

/// What opens, and checks again, the pool's connections.
pub struct Opener<DB: Driver> {
    options: <DB::Connection as Connection>::Options,
    max_lifetime: Duration,
    /// How long a connection taken after it sat unused may take to answer its check.
    within: Duration,
    /// What the pool did, for the metrics.
    counts: Counts,
}

/// What a pool did since it was made, counted for the metrics ([`PoolStatus`]).
#[derive(Debug, Default)]
struct Counts {
    /// Takes of a connection, given one or not.
    taken: AtomicU64,
    /// The time those takes waited, in nanoseconds.
    waited_nanos: AtomicU64,
    /// Connections closed as broken: their check failed, or went unanswered.
    broken: AtomicU64,
    /// Connections closed for their age (`DATABASE_MAX_LIFETIME`).
    expired: AtomicU64,
    /// Connections closed for going unused (`DATABASE_IDLE_TIMEOUT`).
    idle: AtomicU64,
}

impl Counts {
    fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

impl<DB: Driver> managed::Manager for Opener<DB> {
    type Type = DB::Connection;
    type Error = sqlx::Error;

    /// Outlined, as [`Connections::acquire`] is: the pool's every wait for a connection
    /// may open one.
    async fn create(&self) -> Result<DB::Connection, sqlx::Error> {
        Outlined::new(DB::open(&self.options)).await
    }

    async fn recycle(&self, connection: &mut DB::Connection, metrics: &Metrics) -> RecycleResult<sqlx::Error> {
        if metrics.age() >= self.max_lifetime {
            Counts::add(&self.counts.expired, 1);
            return Err(RecycleError::message("older than DATABASE_MAX_LIFETIME"));
        }
        // `last_used` is the time since the connection was last taken.
        if metrics.last_used() < FRESH {
            return Ok(());
        }
        // Bounded here rather than by the pool, so that one gone silent is counted broken.
        let checked = match tokio::time::timeout(self.within, connection.ping()).await {
            Ok(checked) => checked.map_err(RecycleError::Backend),
            Err(_) => Err(RecycleError::message("did not answer its check")),
        };
        if checked.is_err() {
            Counts::add(&self.counts.broken, 1);
        }
        checked
    }
}

/// A store's pool of connections to one database.
pub struct Connections<DB: Driver> {
    pool: managed::Pool<Opener<DB>>,
    /// How long a query waits for a connection ([`StoreOptions::pool_timeout`]), and a
    /// connection given back unsettled for the answer to its check.
    within: Duration,
}

/// A PostgreSQL store's connections.
#[cfg(feature = "postgres")]
pub type PgConnections = Connections<sqlx::Postgres>;

/// A SQLite store's connections.
#[cfg(feature = "sqlite")]
pub type SqliteConnections = Connections<sqlx::Sqlite>;

impl<DB: Driver> Clone for Connections<DB> {
    fn clone(&self) -> Self {
        Connections { pool: self.pool.clone(), within: self.within }
    }
}

/// Shows how many connections are open and idle, not the options they were opened with,
/// which hold the database's password.
impl<DB: Driver> std::fmt::Debug for Connections<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connections").field("status", &self.pool.status()).field("within", &self.within).finish()
    }
}

impl<DB: Driver> Connections<DB> {
    /// A pool of at most `most` connections to the database of `options`, none opened
    /// yet; connections unused for `idle_timeout` or older than `max_lifetime` are closed
    /// by a sweep, keeping `min_connections` open.
    pub(crate) fn new(
        options: <DB::Connection as Connection>::Options,
        settings: &StoreOptions,
        most: u32,
    ) -> Connections<DB> {
        let within = settings.pool_timeout;
        let opener = Opener { options, max_lifetime: settings.max_lifetime, within, counts: Counts::default() };
        // A check is bounded by `recycle` itself; the pool's bound only backs it up.
        let timeouts = Timeouts { wait: Some(within), create: Some(within), recycle: Some(within.saturating_mul(2)) };
        let pool = managed::Pool::builder(opener)
            .max_size(most as usize)
            .timeouts(timeouts)
            .runtime(deadpool::Runtime::Tokio1)
            .build()
            .expect("a runtime and timeouts are given");
        let connections = Connections { pool, within };
        crate::outlined::spawn(sweep(
            connections.pool.weak(),
            settings.idle_timeout,
            settings.max_lifetime,
            settings.min_connections,
        ));
        connections
    }

    /// A connection: an idle one at once where there is one, else one come free or newly
    /// opened within the pool's wait. A database that refuses connections is asked again
    /// until the wait is over: the query is then refused as transient, as when every
    /// connection is busy.
    ///
    /// Outlined (`outlined.rs`): the body, with the opening of a connection it holds, is
    /// compiled once rather than for every part of the crate that takes a connection.
    pub fn acquire(&self) -> impl Future<Output = Result<Lease<DB>, sqlx::Error>> + Send + '_ {
        Outlined::new(async move {
            let started = Instant::now();
            let taken = self.take(started).await;
            // Counted whatever came of it: a take that timed out waited the longest.
            let counts = &self.pool.manager().counts;
            Counts::add(&counts.taken, 1);
            Counts::add(&counts.waited_nanos, u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
            taken
        })
    }

    async fn take(&self, started: Instant) -> Result<Lease<DB>, sqlx::Error> {
        loop {
            let error = match self.pool.get().await {
                Ok(object) => {
                    let (within, max_lifetime) = (self.within, self.pool.manager().max_lifetime);
                    return Ok(Lease { object: Some(object), settled: false, within, max_lifetime });
                }
                Err(PoolError::Timeout(_)) => return Err(sqlx::Error::PoolTimedOut),
                Err(PoolError::Closed) => return Err(sqlx::Error::PoolClosed),
                Err(PoolError::Backend(e)) => e,
                Err(other) => return Err(sqlx::Error::Configuration(other.to_string().into())),
            };
            let refused = matches!(error, sqlx::Error::Io(_) | sqlx::Error::Tls(_));
            if !refused {
                return Err(error);
            }
            if Instant::now() + RETRY > started + self.within {
                return Err(sqlx::Error::PoolTimedOut);
            }
            tokio::time::sleep(RETRY).await;
        }
    }

    /// Connections open, in use or idle.
    pub fn size(&self) -> usize {
        self.pool.status().size
    }

    /// Connections idle in the pool.
    pub fn num_idle(&self) -> usize {
        self.pool.status().available
    }

    /// The pool as it is now, and what it did so far, for the metrics.
    pub(crate) fn status(&self) -> PoolStatus {
        let status = self.pool.status();
        let counts = &self.pool.manager().counts;
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        PoolStatus {
            max: status.max_size,
            size: status.size,
            idle: status.available,
            waiting: status.waiting,
            taken: read(&counts.taken),
            waited: Duration::from_nanos(read(&counts.waited_nanos)),
            closed: Closed { broken: read(&counts.broken), expired: read(&counts.expired), idle: read(&counts.idle) },
        }
    }

    pub(crate) fn within(&self) -> Duration {
        self.within
    }

    /// Closes the idle connections, each with a word to the database, and the pool: a
    /// connection in use is closed as it is given back, and every later take fails.
    pub(crate) async fn close(&self) {
        let idle = self.pool.retain(|_, _| false).removed;
        self.pool.close();
        let closing = idle.into_iter().map(|c| tokio::time::timeout(self.within, c.close()));
        futures_util::future::join_all(closing).await;
    }
}

/// A pool's connections at one moment, and what it did until then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PoolStatus {
    /// The most it opens.
    pub max: usize,
    /// Open, in use or idle.
    pub size: usize,
    pub idle: usize,
    /// Takes waiting for a connection.
    pub waiting: usize,
    /// Takes of a connection so far, given one or not, and the time they waited in all.
    pub taken: u64,
    pub waited: Duration,
    pub closed: Closed,
}

/// Connections the pool closed so far, by why.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Closed {
    /// Their check failed or went unanswered: the database or the network to it failed.
    pub broken: u64,
    /// Older than `DATABASE_MAX_LIFETIME`.
    pub expired: u64,
    /// Unused for `DATABASE_IDLE_TIMEOUT`.
    pub idle: u64,
}

/// How long a take waits before it asks a database that refused a connection again.
const RETRY: Duration = Duration::from_millis(100);

/// Closes, now and then, the connections of `pool` unused for `idle` or older than
/// `lifetime`, keeping `least` of those unused open, and opens connections up to `least`;
/// ends with the pool.
async fn sweep<DB: Driver>(pool: managed::WeakPool<Opener<DB>>, idle: Duration, lifetime: Duration, least: u32) {
    let every = idle.min(lifetime).max(Duration::from_secs(1));
    loop {
        tokio::time::sleep(every).await;
        let Some(pool) = pool.upgrade() else { return };
        if pool.is_closed() {
            return;
        }
        let mut kept = pool.status().size.saturating_sub(pool.status().available);
        let counts = &pool.manager().counts;
        let removed = pool
            .retain(|_, metrics| {
                let young = metrics.age() < lifetime;
                let keep = young && (metrics.last_used() < idle || kept < least as usize);
                kept += usize::from(keep);
                if !keep {
                    Counts::add(if young { &counts.idle } else { &counts.expired }, 1);
                }
                keep
            })
            .removed;
        for connection in removed {
            let _ = tokio::time::timeout(Duration::from_secs(5), connection.close()).await;
        }
        let open = pool.status().size;
        if open < least as usize {
            let opening = (open..least as usize).map(|_| pool.get());
            drop(futures_util::future::join_all(opening).await);
        }
    }
}

/// A connection of the pool, given back when dropped: at once when [`Lease::settle`] said
/// the work on it finished, else after its check (see the module's doc).
pub struct Lease<DB: Driver> {
    object: Option<Object<Opener<DB>>>,
    settled: bool,
    within: Duration,
    /// [`StoreOptions::max_lifetime`]: a connection older is closed as it is given back.
    max_lifetime: Duration,
}

/// A connection of a PostgreSQL store.
#[cfg(feature = "postgres")]
pub type PgLease = Lease<sqlx::Postgres>;

/// A connection of a SQLite store.
#[cfg(feature = "sqlite")]
pub type SqliteLease = Lease<sqlx::Sqlite>;

impl<DB: Driver> Lease<DB> {
    /// Says that the work on the connection has finished: no statement is being read and
    /// no transaction is open, so that it goes back to the pool without a check. Work that
    /// ends with an error from the database counts as finished (sqlx reads what is left of
    /// the statement before the next one); a transaction dropped unfinished does not.
    pub fn settle(&mut self) {
        self.settled = true;
    }

    /// Closes the connection instead of giving it back (it holds what another must not
    /// inherit, an advisory lock, say): its session ends with it.
    pub(crate) fn discard(mut self) {
        if let Some(object) = self.object.take() {
            drop(Object::take(object));
        }
    }

    /// Closes the connection, found broken (it did not answer), and counts it so.
    pub(crate) fn close_broken(mut self) {
        if let Some(object) = self.object.take() {
            count(&object, |c| &c.broken);
            drop(Object::take(object));
        }
    }

    /// Says that work has begun that leaves the connection unsettled until it is settled
    /// again (a transaction).
    pub(crate) fn unsettle(&mut self) {
        self.settled = false;
    }
}

impl<DB: Driver> Deref for Lease<DB> {
    type Target = DB::Connection;

    fn deref(&self) -> &DB::Connection {
        self.object.as_ref().expect("a lease holds its connection until dropped")
    }
}

impl<DB: Driver> DerefMut for Lease<DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        self.object.as_mut().expect("a lease holds its connection until dropped")
    }
}

impl<DB: Driver> Drop for Lease<DB> {
    fn drop(&mut self) {
        let Some(mut object) = self.object.take() else { return };
        if Object::metrics(&object).age() >= self.max_lifetime {
            count(&object, |c| &c.expired);
            drop(Object::take(object));
            return;
        }
        if self.settled {
            return;
        }
        let within = self.within;
        crate::outlined::spawn(async move {
            match tokio::time::timeout(within, object.ping()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => {
                    count(&object, |c| &c.broken);
                    drop(Object::take(object));
                }
                Err(_) => {
                    tracing::warn!(
                        "a database connection given back to the pool did not answer its check within {within:?} \
                         (the database, or the network to it, went silent): closed, its place free for a new one"
                    );
                    count(&object, |c| &c.broken);
                    drop(Object::take(object));
                }
            }
        });
    }
}

/// Counts a connection of the pool closed, in the counter `which` picks (the pool may be
/// gone: then nobody reads it).
fn count<DB: Driver>(object: &Object<Opener<DB>>, which: impl Fn(&Counts) -> &AtomicU64) {
    if let Some(pool) = Object::pool(object) {
        Counts::add(which(&pool.manager().counts), 1);
    }
}

#[cfg(test)]
mod tests {
    use super::FRESH;
    use crate::store::test_database::{Relay, until_idle};
    use crate::store::{Pool, Store, StoreOptions};
    use std::time::Duration;

    /// A store on the test database with `options`, through a relay; `None`, saying so,
    /// when `RESTGEN_TEST_DATABASE_URL` is unset.
    async fn through_relay(options: StoreOptions) -> Option<(Relay, Store)> {
        let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
            eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
            return None;
        };
        let (relay, relayed) = Relay::to(&url).await;
        Some((relay, Store::connect_with(&relayed, options).await.unwrap()))
    }

    fn connections(store: &Store) -> &super::PgConnections {
        let Pool::Postgres(pool) = &store.pool else { unreachable!("a PostgreSQL store") };
        pool
    }

    /// A connection that goes silent while the store holds it, given back unsettled, is
    /// closed within the pool's wait, and its place opens a new one: the pool does not stay
    /// full of connections waiting forever for an answer to their check (every later query would
    /// wait out `pool_timeout` and fail, until a restart). A connection that answers is
    /// kept and used again.
    #[tokio::test]
    async fn a_connection_gone_silent_is_closed_and_its_place_freed() {
        let pool_timeout = Duration::from_millis(500);
        let options = StoreOptions { max_connections: Some(1), pool_timeout, ..StoreOptions::default() };
        let Some((relay, store)) = through_relay(options).await else { return };
        let pool = connections(&store);
        let backend = async || -> i32 { pid(&mut pool.acquire().await.expect("a connection")).await };
        let first = backend().await;
        assert_eq!(backend().await, first, "a connection that answers is given back and used again");

        let mut lease = pool.acquire().await.unwrap();
        sqlx::query("SELECT 1").execute(&mut *lease).await.unwrap();
        relay.silence();
        drop(lease);
        // Bounded from above only so that a regression fails rather than hangs.
        let freed = tokio::time::timeout(Duration::from_secs(20), async {
            while pool.size() > 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert!(freed.is_ok(), "the silent connection still holds the pool's only place");
        assert_eq!(pool.status().closed.broken, 1, "counted as broken");
        let after = backend().await;
        assert_ne!(after, first, "served on a new connection");
        assert_eq!(backend().await, after, "which is kept");
    }

    /// The connection's session, as PostgreSQL numbers it; the lease settled after.
    async fn pid(lease: &mut super::PgLease) -> i32 {
        let pid = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut **lease).await.unwrap();
        lease.settle();
        pid
    }

    /// A ping whose connection fails (its session ended by the server: a restart, a
    /// failover, `pg_terminate_backend`) closes that connection: it is never handed to the
    /// next request, which is served on a new one.
    #[tokio::test]
    async fn a_connection_whose_ping_failed_is_closed_not_reused() {
        let options = StoreOptions { max_connections: Some(1), ..StoreOptions::default() };
        let Some((_relay, store)) = through_relay(options).await else { return };
        let pool = connections(&store);
        let url = std::env::var("RESTGEN_TEST_DATABASE_URL").unwrap();
        let admin = Store::connect(&url).await.unwrap();
        let Pool::Postgres(admin_pool) = &admin.pool else { unreachable!() };
        let mut lease = admin_pool.acquire().await.unwrap();
        // Ended well within a second of its use, so the pool hands it out unchecked (FRESH).
        let first = pid(&mut pool.acquire().await.unwrap()).await;
        sqlx::query("SELECT pg_terminate_backend($1)").bind(first).execute(&mut *lease).await.unwrap();
        lease.settle();
        drop(lease);
        assert!(!store.ping().await, "the ping's connection was ended");
        assert_eq!(pool.size(), 0, "the failed connection was closed, not given back");
        assert_eq!(pool.status().closed.broken, 1, "counted as broken");
        assert!(store.ping().await, "the next ping opens a new connection");
        assert_ne!(pid(&mut pool.acquire().await.unwrap()).await, first);
        admin.close().await;
    }

    /// A connection given back settled costs the database nothing: not a byte is sent, and
    /// it is idle in the pool at once. One given back unsettled is checked first, a round
    /// trip.
    #[tokio::test]
    async fn a_settled_connection_goes_back_without_a_word() {
        let options = StoreOptions { max_connections: Some(1), ..StoreOptions::default() };
        let Some((relay, store)) = through_relay(options).await else { return };
        let pool = connections(&store);
        let mut lease = pool.acquire().await.unwrap();
        let first = pid(&mut lease).await;
        let sent = relay.sent();
        drop(lease);
        assert_eq!(pool.num_idle(), 1, "idle at once");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(relay.sent(), sent, "nothing sent as it went back");
        assert_eq!(pid(&mut pool.acquire().await.unwrap()).await, first, "and used again");

        let sent = relay.sent();
        let mut lease = pool.acquire().await.unwrap();
        sqlx::query("SELECT 1").execute(&mut *lease).await.unwrap();
        let query = relay.sent() - sent;
        drop(lease);
        assert_eq!(pool.num_idle(), 0, "an unsettled one is checked before it is idle");
        until_idle(&store).await;
        assert!(relay.sent() > sent + query, "its check was sent");
    }

    /// A pool shown for debugging (a `Store` in a log line) does not show the password it
    /// connects with.
    #[tokio::test]
    async fn a_pool_shown_keeps_its_password() {
        let options = sqlx::postgres::PgConnectOptions::new().password("s3cret-pass");
        let pool = super::PgConnections::new(options, &StoreOptions::default(), 1);
        let shown = format!("{pool:?}");
        assert!(shown.contains("within") && !shown.contains("s3cret-pass"), "{shown}");
    }

    /// A store on a SQLite file in `dir`.
    async fn sqlite(dir: &tempfile::TempDir, options: StoreOptions) -> Store {
        let url = format!("sqlite://{}", dir.path().join("s.db").display());
        Store::connect_with(&url, options).await.unwrap()
    }

    /// Every take is counted with the time it waited: one that waited for another's
    /// connection to come back, from before it was seen waiting until it was given back.
    #[tokio::test]
    async fn takes_are_counted_with_their_wait_and_old_connections_as_closed() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite(&dir, StoreOptions { max_connections: Some(1), ..StoreOptions::default() }).await;
        let Pool::Sqlite(pool) = &store.pool else { unreachable!("a SQLite store") };
        let mut first = pool.acquire().await.unwrap();
        first.settle();
        let before = pool.status();
        let waiting = tokio::spawn({
            let pool = pool.clone();
            async move { pool.acquire().await.map(drop) }
        });
        while pool.status().waiting == 0 {
            tokio::task::yield_now().await;
        }
        let seen = std::time::Instant::now();
        drop(first);
        let released = seen.elapsed();
        waiting.await.unwrap().unwrap();
        let after = pool.status();
        assert_eq!(after.taken - before.taken, 1);
        assert!(after.waited - before.waited >= released, "{:?} < {released:?}", after.waited - before.waited);
        assert_eq!(after.closed, super::Closed::default(), "none closed");

        // Past its lifetime (none at all here), a connection is closed as it comes back.
        let store = sqlite(&dir, StoreOptions { max_lifetime: Duration::ZERO, ..StoreOptions::default() }).await;
        let Pool::Sqlite(pool) = &store.pool else { unreachable!("a SQLite store") };
        let expired = pool.status().closed.expired;
        let mut lease = pool.acquire().await.unwrap();
        sqlx::query("SELECT 1").execute(&mut *lease).await.unwrap();
        lease.settle();
        drop(lease);
        assert_eq!(pool.status().closed.expired, expired + 1);
        assert_eq!(pool.size(), 0, "closed, not kept");
    }

    /// On SQLite too a settled connection is idle in the pool the moment it is given back,
    /// with no message to its thread; one given back unsettled is idle only
    /// once its thread has answered the check, and is then used again.
    #[tokio::test]
    async fn a_settled_sqlite_connection_is_idle_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite(&dir, StoreOptions { max_connections: Some(1), ..StoreOptions::default() }).await;
        let Pool::Sqlite(pool) = &store.pool else { unreachable!("a SQLite store") };
        let mut lease = pool.acquire().await.unwrap();
        sqlx::query("CREATE TEMP TABLE mark (x)").execute(&mut *lease).await.unwrap();
        lease.settle();
        drop(lease);
        assert_eq!(pool.num_idle(), 1, "idle at once");

        let lease = pool.acquire().await.unwrap();
        drop(lease);
        assert_eq!(pool.num_idle(), 0, "an unsettled one is checked before it is idle");
        until_idle(&store).await;
        let mut lease = pool.acquire().await.unwrap();
        let marks: i64 = sqlx::query_scalar("SELECT count(*) FROM sqlite_temp_master WHERE name = 'mark'")
            .fetch_one(&mut *lease)
            .await
            .unwrap();
        assert_eq!(marks, 1, "the same connection, used again");
    }

    /// A connection that died while idle is found when it is next taken, if it sat unused
    /// longer than FRESH: it is checked, closed when the check goes unanswered, and the
    /// query is served on a new one within the pool's wait.
    #[tokio::test]
    async fn a_connection_gone_silent_while_idle_is_found_when_taken() {
        let pool_timeout = Duration::from_millis(500);
        let options = StoreOptions { max_connections: Some(1), pool_timeout, ..StoreOptions::default() };
        let Some((relay, store)) = through_relay(options).await else { return };
        let pool = connections(&store);
        let first = pid(&mut pool.acquire().await.unwrap()).await;
        relay.silence();
        tokio::time::sleep(FRESH + Duration::from_millis(100)).await;
        // Bounded from above only so that a regression fails rather than hangs.
        let taken = tokio::time::timeout(Duration::from_secs(20), pool.acquire()).await;
        let mut lease = taken.expect("the check is bounded").expect("a new connection");
        let served = tokio::time::timeout(Duration::from_secs(20), pid(&mut lease)).await;
        assert_ne!(served.expect("an answer: the connection taken is not the silent one"), first, "a new session");
        assert_eq!(pool.status().closed.broken, 1, "the silent one counted as broken");
    }

    /// A transaction left unfinished (its request cut off) is rolled back as its connection
    /// is given back, not when the connection is next used: what it locked is free at once.
    #[tokio::test]
    async fn a_transaction_left_unfinished_is_rolled_back_at_once() {
        let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
            eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
            return;
        };
        let options = StoreOptions { max_connections: Some(2), ..StoreOptions::default() };
        let store = Store::connect_with(&url, options).await.unwrap();
        let Pool::Postgres(pool) = &store.pool else { unreachable!("a PostgreSQL store") };
        let key = i64::from(std::process::id()) << 20 | 0x7a11;
        // Another session first, so that the lock's holder is not the one that asks again
        // (whose next statement would send the rollback before it).
        let mut other = pool.acquire().await.unwrap();
        let mut lease = pool.acquire().await.unwrap();
        lease.settle();
        let mut tx = crate::store::begin(&mut lease, None).await.unwrap();
        sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(key).execute(&mut *tx).await.unwrap();
        drop(tx);
        drop(lease);
        let mut tx = crate::store::begin(&mut other, None).await.unwrap();
        sqlx::query("SET LOCAL lock_timeout = '5s'").execute(&mut *tx).await.unwrap();
        let taken = sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(key).execute(&mut *tx).await;
        assert!(taken.is_ok(), "the lock is free: {taken:?}");
        tx.commit().await.unwrap();
        other.settle();
    }
}
