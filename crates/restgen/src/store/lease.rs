//! The store's connections, taken from their pool and given back to it: on PostgreSQL
//! from [`super::postgres`]'s pool, which gives a settled connection back without a check,
//! on SQLite from sqlx's.

use super::postgres::{Lease as PgLease, PgConnections};
use sqlx::pool::PoolConnection;
use sqlx::{AssertSqlSafe, Postgres, SqlSafeStr, Sqlite, SqlitePool};
use std::ops::DerefMut;

/// A connection taken from a store's pool, given back when dropped.
pub(crate) trait Leased<DB: sqlx::Database>: DerefMut<Target = DB::Connection> {
    /// Says that the work on the connection has finished ([`PgLease::settle`]).
    fn settle(&mut self) {}

    /// Says that work has begun that leaves the connection unsettled (a transaction).
    fn unsettle(&mut self) {}
}

/// sqlx's SQLite connections: their check as they are given back is a message to the
/// connection's own thread, no round trip to a server.
impl Leased<Sqlite> for PoolConnection<Sqlite> {}

impl Leased<Postgres> for PgLease {
    fn settle(&mut self) {
        PgLease::settle(self);
    }

    fn unsettle(&mut self) {
        PgLease::unsettle(self);
    }
}

/// A store's pool of one database's connections.
pub(crate) trait Leases {
    type Database: sqlx::Database;
    type Lease: Leased<Self::Database> + Send;

    /// A connection: an idle one at once where there is one, else one waited for.
    fn lease(&self) -> impl Future<Output = Result<Self::Lease, sqlx::Error>> + Send;
}

impl Leases for SqlitePool {
    type Database = Sqlite;
    type Lease = PoolConnection<Sqlite>;

    /// What sqlx's pool does for a query given the pool itself, but without its cost on the
    /// common path: there the query's future holds the whole of `acquire` (which may have to
    /// open a connection, kilobytes of state), created and copied onto the heap for every
    /// query whether or not it waits. An idle connection is taken as `acquire` would take it
    /// (this store's pools do not ping a connection before use, nor run a check of their
    /// own); only a query that has to wait builds `acquire`'s future, on the heap: made there
    /// by an async block, whose first state is a pointer, where the future `acquire` returns
    /// would be made on the stack and copied in.
    async fn lease(&self) -> Result<PoolConnection<Sqlite>, sqlx::Error> {
        match self.try_acquire() {
            Some(idle) => Ok(idle),
            None => Box::pin(async move { self.acquire().await }).await,
        }
    }
}

impl Leases for PgConnections {
    type Database = Postgres;
    type Lease = PgLease;

    async fn lease(&self) -> Result<PgLease, sqlx::Error> {
        self.acquire().await
    }
}

/// A connection of `pool`.
pub(crate) async fn connection<P: Leases>(pool: &P) -> Result<P::Lease, sqlx::Error> {
    pool.lease().await
}

/// Runs `$statement`, a future made from `$connection` (a connection of `$pool`), and
/// gives the connection back settled once it has finished ([`settles`]): on PostgreSQL
/// without a check ([`super::postgres`]). Evaluates to the statement's output.
macro_rules! leased {
    ($pool:expr, $connection:ident => $statement:expr) => {{
        let mut lease = $crate::store::lease::connection($pool).await?;
        let done = {
            let $connection = &mut *lease;
            $statement.await
        };
        if $crate::store::lease::settles(&done) {
            $crate::store::lease::Leased::settle(&mut lease);
        }
        done
    }};
}
pub(crate) use leased;

/// Whether a statement that ended with `done` leaves its connection settled: it did unless
/// the connection itself failed (its stream broke, or the database said what the driver
/// could not follow), when the check as it goes back finds out whether to keep it. An error
/// the database answered with leaves it settled: sqlx reads what is left of the answer
/// before the next statement.
pub(crate) fn settles<T>(done: &Result<T, sqlx::Error>) -> bool {
    !matches!(done, Err(sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::Protocol(_)))
}

/// A transaction on `lease`'s connection, begun with `statement` where the write needs its
/// own (SQLite's `BEGIN IMMEDIATE`). The lease is unsettled until the caller settles it
/// after the commit: dropped unfinished, the transaction is rolled back as the lease gives
/// the connection back (the rollback is sent with the check).
pub(crate) async fn begin<'c, DB: sqlx::Database, L: Leased<DB>>(
    lease: &'c mut L,
    statement: Option<&'static str>,
) -> Result<sqlx::Transaction<'c, DB>, sqlx::Error> {
    lease.unsettle();
    let connection: &'c mut DB::Connection = lease;
    sqlx::Transaction::begin(connection, statement.map(|s| AssertSqlSafe(s).into_sql_str())).await
}

#[cfg(test)]
mod tests {
    use super::settles;

    /// A connection whose stream broke is not given back unchecked; one the database
    /// answered, even with an error, is.
    #[test]
    fn only_a_failed_connection_is_left_unsettled() {
        assert!(settles(&Ok::<_, sqlx::Error>(())));
        assert!(settles::<()>(&Err(sqlx::Error::RowNotFound)));
        assert!(!settles::<()>(&Err(sqlx::Error::Io(std::io::ErrorKind::BrokenPipe.into()))));
        assert!(!settles::<()>(&Err(sqlx::Error::Protocol("out of step".into()))));
    }
}
