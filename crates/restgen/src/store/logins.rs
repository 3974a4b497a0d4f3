//! Failed logins by identifier, shared by every instance: one row per identifier (its
//! hash: the table holds no e-mail address) with the failures in a row and the time before
//! which no password for it is checked. The table is the runtime's own, created by
//! [`Store::migrate`] on both databases.

use super::{Store, StoreError, bind, int, leased, text};
use sqlx::Row;

const CREATE: &str = "CREATE TABLE IF NOT EXISTS \"restgen_login_failure\" (\
    \"key\" TEXT PRIMARY KEY, \
    \"failures\" BIGINT NOT NULL, \
    \"blocked_until\" BIGINT NOT NULL, \
    \"updated_at\" BIGINT NOT NULL)";

/// One identifier's failed logins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Failures {
    /// Failures in a row (forgotten after a quiet spell).
    pub count: i64,
    /// Unix microseconds before which no password for the identifier is checked.
    pub blocked_until: i64,
}

impl Store {
    pub(super) async fn create_login_table(&self) -> Result<(), sqlx::Error> {
        on_pool!(self, pool => {
            leased!(pool, c => bind(CREATE, Vec::new()).execute(c))?;
        });
        Ok(())
    }

    /// `key`'s failures, `None` when it has none.
    pub(crate) async fn login_failures(&self, key: &str) -> Result<Option<Failures>, StoreError> {
        let sql = "SELECT \"failures\", \"blocked_until\" FROM \"restgen_login_failure\" WHERE \"key\" = $1";
        on_pool!(self, pool => {
            let row = leased!(pool, c => bind(sql, vec![text(key)]).fetch_optional(c))?;
            Ok(match row {
                Some(r) => Some(Failures { count: r.try_get(0)?, blocked_until: r.try_get(1)? }),
                None => None,
            })
        })
    }

    /// Counts one more failure of `key` at `now`, its count starting again where the last
    /// was before `forget_before`; the count now. Atomic: failures on several instances at
    /// once are each counted.
    pub(crate) async fn count_login_failure(&self, key: &str, now: i64, forget_before: i64) -> Result<i64, StoreError> {
        let sql = "INSERT INTO \"restgen_login_failure\" (\"key\", \"failures\", \"blocked_until\", \"updated_at\") \
                   VALUES ($1, 1, 0, $2) ON CONFLICT (\"key\") DO UPDATE SET \
                   \"failures\" = CASE WHEN \"restgen_login_failure\".\"updated_at\" < $3 THEN 1 \
                                  ELSE \"restgen_login_failure\".\"failures\" + 1 END, \
                   \"updated_at\" = $2 RETURNING \"failures\"";
        let args = vec![text(key), int(now), int(forget_before)];
        Ok(writing!(self, pool => leased!(pool, c => bind(sql, args).fetch_one(c))?.try_get::<i64, _>(0)?))
    }

    /// No password for `key` is checked before `until`.
    pub(crate) async fn block_login(&self, key: &str, until: i64) -> Result<(), StoreError> {
        let sql = "UPDATE \"restgen_login_failure\" SET \"blocked_until\" = $2 WHERE \"key\" = $1";
        writing!(self, pool => leased!(pool, c => bind(sql, vec![text(key), int(until)]).execute(c))?.rows_affected());
        Ok(())
    }

    /// Forgets `key`'s failures (a login that succeeded).
    pub(crate) async fn clear_login_failures(&self, key: &str) -> Result<(), StoreError> {
        let sql = "DELETE FROM \"restgen_login_failure\" WHERE \"key\" = $1";
        writing!(self, pool => leased!(pool, c => bind(sql, vec![text(key)]).execute(c))?.rows_affected());
        Ok(())
    }

    /// Drops the rows of identifiers quiet since before `before`.
    pub(crate) async fn sweep_login_failures(&self, before: i64) -> Result<u64, StoreError> {
        let sql = "DELETE FROM \"restgen_login_failure\" WHERE \"updated_at\" < $1 AND \"blocked_until\" < $1";
        Ok(writing!(self, pool => leased!(pool, c => bind(sql, vec![int(before)]).execute(c))?.rows_affected()))
    }
}
