//! The store's connections, taken from their pool ([`super::pool`]) and given back to it.

use super::pool::{Driver, Lease};
use sqlx::{AssertSqlSafe, SqlSafeStr};

/// Runs `$statement`, a future made from `$connection` (a connection of `$pool`), and
/// gives the connection back settled once it has finished ([`settles`]): without a check
/// ([`super::pool`]). Evaluates to the statement's output.
macro_rules! leased {
    ($pool:expr, $connection:ident => $statement:expr) => {{
        let mut lease = $pool.acquire().await?;
        let done = {
            let $connection = &mut *lease;
            $statement.await
        };
        if $crate::store::lease::settles(&done) {
            lease.settle();
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
pub(crate) async fn begin<'c, DB: Driver>(
    lease: &'c mut Lease<DB>,
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
