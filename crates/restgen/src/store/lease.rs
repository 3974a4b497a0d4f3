//! The store's connections, taken from their pool and given back to it.
//!
//! sqlx checks a connection before it takes it back (a ping: on PostgreSQL a round trip),
//! in a task of its own that holds the connection's place in the pool until the check is
//! answered, with no time limit. A connection whose peer went silent without closing it
//! (a NAT or a load balancer that forgot the flow, a database host gone in a failover)
//! never answers: its place is never freed, and once every place is held so, every query
//! waits out `DATABASE_POOL_TIMEOUT` and fails, until the process is restarted
//! (transact-rs/sqlx#4349, not fixed in the sqlx this crate builds). So the store gives
//! its PostgreSQL connections back itself, within the time a query waits for one: a
//! connection whose check is not answered by then is closed, and its place opens a new
//! one.

use sqlx::{AssertSqlSafe, SqlSafeStr};
use std::ops::{Deref, DerefMut};
use std::time::Duration;

/// A database whose connections are given back within a bound, or as sqlx gives them.
pub(crate) trait Release: sqlx::Database {
    /// Whether a connection's check can go unanswered: one over a network can, SQLite's
    /// (a thread of this process) cannot.
    const BOUNDED: bool;
}

impl Release for sqlx::Sqlite {
    const BOUNDED: bool = false;
}

impl Release for sqlx::Postgres {
    const BOUNDED: bool = true;
}

/// A connection of a pool, given back to it when dropped: within `within` where the
/// database's connections are [`Release::BOUNDED`], else as sqlx gives it back.
pub(crate) struct Lease<DB: Release> {
    connection: Option<sqlx::pool::PoolConnection<DB>>,
    within: Duration,
}

impl<DB: Release> Deref for Lease<DB> {
    type Target = DB::Connection;

    fn deref(&self) -> &DB::Connection {
        self.connection.as_ref().expect("a lease holds its connection until dropped")
    }
}

impl<DB: Release> DerefMut for Lease<DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        self.connection.as_mut().expect("a lease holds its connection until dropped")
    }
}

impl<DB: Release> Drop for Lease<DB> {
    fn drop(&mut self) {
        if !DB::BOUNDED {
            return;
        }
        let Some(mut connection) = self.connection.take() else { return };
        // The connection's check and return, which sqlx would run unbounded as the
        // connection is dropped (its `return_to_pool`, hidden from its docs: what its drop
        // runs, taken to run here instead); dropped in turn when the time is up, which
        // closes the connection without another word to its peer and frees its place.
        // What is left of `connection` keeps the pool's minimum as it is dropped. Boxed at
        // once: the future is kilobytes (it may open a connection for the minimum), and
        // each move into the timeout, the task and its cell would copy it whole (83k
        // instructions of `memcpy` a PostgreSQL request, counted, where sqlx copies it once).
        let give_back = Box::pin(connection.return_to_pool());
        let within = self.within;
        tokio::spawn(async move {
            if tokio::time::timeout(within, give_back).await.is_err() {
                tracing::warn!(
                    "a database connection given back to the pool did not answer its check within {within:?} \
                     (the database, or the network to it, went silent): closed, its place free for a new one"
                );
            }
        });
    }
}

/// A connection of `pool`: an idle one at once where there is one, else one waited for.
///
/// What sqlx's pool does for a query given the pool itself, but without its cost on the
/// common path: there the query's future holds the whole of `acquire` (which may have to
/// open a connection, kilobytes of state), created and copied onto the heap for every
/// query whether or not it waits. An idle connection is taken as `acquire` would take it
/// (this store's pools do not ping a connection before use, nor run a check of their
/// own); only a query that has to wait builds `acquire`'s future, on the heap: made there
/// by an async block, whose first state is a pointer, where the 2.5 KB future `acquire`
/// returns would be made on the stack and copied in (under the bench's 16 concurrent
/// PATCHes on PostgreSQL, most of them wait: 8,500 instructions a request of the copy).
pub(crate) async fn connection<DB: Release>(pool: &sqlx::Pool<DB>) -> Result<Lease<DB>, sqlx::Error> {
    let connection = match pool.try_acquire() {
        Some(idle) => idle,
        None => Box::pin(async move { pool.acquire().await }).await?,
    };
    Ok(Lease { connection: Some(connection), within: pool.options().get_acquire_timeout() })
}

/// A transaction on `lease`'s connection, begun with `statement` where the write needs its
/// own (SQLite's `BEGIN IMMEDIATE`). Dropped unfinished, it is rolled back as the lease
/// gives the connection back (the rollback is sent with the check).
pub(crate) async fn begin<'c, DB: Release>(
    lease: &'c mut Lease<DB>,
    statement: Option<&'static str>,
) -> Result<sqlx::Transaction<'c, DB>, sqlx::Error> {
    let connection: &'c mut DB::Connection = lease;
    sqlx::Transaction::begin(connection, statement.map(|s| AssertSqlSafe(s).into_sql_str())).await
}

#[cfg(test)]
mod tests {
    use super::connection;
    use crate::store::test_database::Relay;
    use crate::store::{Pool, Store, StoreOptions};
    use std::time::Duration;

    /// A connection that goes silent while the store holds it is closed within the pool's
    /// wait once given back, and its place opens a new one: the pool does not stay full of
    /// connections waiting forever for an answer to their check (every later query would
    /// wait out `pool_timeout` and fail, until a restart). A connection that answers is
    /// kept and used again.
    #[tokio::test]
    async fn a_connection_gone_silent_is_closed_and_its_place_freed() {
        let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
            eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
            return;
        };
        let (relay, relayed) = Relay::to(&url).await;
        let pool_timeout = Duration::from_millis(500);
        let options = StoreOptions { max_connections: Some(1), pool_timeout, ..StoreOptions::default() };
        let store = Store::connect_with(&relayed, options).await.unwrap();
        let Pool::Postgres(pool) = &store.pool else { unreachable!("a PostgreSQL store") };
        let backend = async || -> i32 {
            let mut lease = connection(pool).await.expect("a connection");
            sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut *lease).await.unwrap()
        };
        let first = backend().await;
        assert_eq!(backend().await, first, "a connection that answers is given back and used again");

        let mut lease = connection(pool).await.unwrap();
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
        let after = backend().await;
        assert_ne!(after, first, "served on a new connection");
        assert_eq!(backend().await, after, "which is kept");
    }
}
