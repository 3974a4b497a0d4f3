//! Rate limit budgets in PostgreSQL, shared by every instance of a service: one row per
//! budget, changed by compare-and-swap so that two instances counting the same caller at
//! once never lose a request. The table is the runtime's own, not the schema's, so
//! [`Store::migrate`] creates it beside the generated migrations.

use super::{Dialect, Store, StoreError, bind, leased};
use crate::store::SqlValue;
use sqlx::Row;

/// One budget's state, as the rate limiter's algorithms decide it (`rate::algorithm`) and
/// the store keeps it. What the numbers mean depends on the algorithm:
/// - token bucket (GCRA): `start` is the theoretical arrival time, the moment the bucket
///   is full again;
/// - leaky bucket: `start` is the moment the last request admitted leaves (is served);
/// - fixed window: `start` of the window and the `count` of requests in it;
/// - sliding window: `start` of the current window, the `count` in it and the count of
///   the window before (`previous`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Budget {
    pub start: i64,
    pub count: i64,
    pub previous: i64,
}

/// Unlogged: a budget is worth less than the write-ahead log it would cost on every
/// request; after a crash PostgreSQL empties the table and every budget starts full.
const CREATE: &str = "CREATE UNLOGGED TABLE IF NOT EXISTS \"restgen_rate_limit\" (\
    \"bucket\" TEXT PRIMARY KEY, \
    \"start\" BIGINT NOT NULL, \
    \"count\" BIGINT NOT NULL, \
    \"previous\" BIGINT NOT NULL, \
    \"expires_at\" BIGINT NOT NULL)";
const CREATE_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS \"restgen_rate_limit_expires_at\" ON \"restgen_rate_limit\" (\"expires_at\")";

/// What a swap answers: whether the write (`swapped`) was made, and the budget's row as
/// the statement found it (the main query sees the table as it was before the write).
macro_rules! found {
    () => {
        "SELECT EXISTS (SELECT 1 FROM \"swapped\"), r.\"start\", r.\"count\", r.\"previous\" \
         FROM (VALUES (1)) AS \"one\" LEFT JOIN \"restgen_rate_limit\" AS r ON r.\"bucket\" = $1"
    };
}

/// A budget's first state, where it has none.
const SWAP_FROM_NONE: &str = concat!(
    "WITH \"swapped\" AS (INSERT INTO \"restgen_rate_limit\" (\"bucket\", \"start\", \"count\", \"previous\", \"expires_at\") \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (\"bucket\") DO NOTHING RETURNING 1) ",
    found!()
);

/// A budget's next state, where it still holds the one decided on.
const SWAP: &str = concat!(
    "WITH \"swapped\" AS (UPDATE \"restgen_rate_limit\" SET \"start\" = $2, \"count\" = $3, \"previous\" = $4, \"expires_at\" = $5 \
     WHERE \"bucket\" = $1 AND \"start\" = $6 AND \"count\" = $7 AND \"previous\" = $8 RETURNING 1) ",
    found!()
);

impl Store {
    /// Creates the runtime's own tables: answers kept by idempotency key on both
    /// databases, rate limit budgets where they live in the database (PostgreSQL).
    pub(crate) async fn create_runtime_tables(&self) -> Result<(), sqlx::Error> {
        self.create_idempotency_table().await?;
        self.create_outbox_tables().await?;
        self.create_change_tables().await?;
        self.create_login_table().await?;
        if self.dialect == Dialect::Postgres {
            on_pool!(self, pool => {
                leased!(pool, c => bind(CREATE, Vec::new()).execute(c))?;
                leased!(pool, c => bind(CREATE_INDEX, Vec::new()).execute(c))?;
            });
        }
        Ok(())
    }

    /// A budget's state, `None` when it has none.
    pub(crate) async fn budget(&self, bucket: &str) -> Result<Option<Budget>, StoreError> {
        let sql = "SELECT \"start\", \"count\", \"previous\" FROM \"restgen_rate_limit\" WHERE \"bucket\" = $1";
        let args = vec![SqlValue::Text(Some(bucket.to_owned()))];
        on_pool!(self, pool => {
            let row = leased!(pool, c => bind(sql, args).fetch_optional(c))?;
            Ok(match row {
                Some(r) => Some(Budget { start: r.try_get(0)?, count: r.try_get(1)?, previous: r.try_get(2)? }),
                None => None,
            })
        })
    }

    /// Replaces a budget's state `old` (none: no row) with `new`, in one statement that
    /// also reads the state as it stands: `Err` with that state (none: no row) when
    /// another request changed it first, and nothing is written; the caller decides again
    /// on it without reading it first. What it finds is the state as the statement began;
    /// a change committed while the write waited for the row is found by the next try.
    pub(crate) async fn swap_budget(
        &self,
        bucket: &str,
        old: Option<Budget>,
        new: Budget,
        expires_at: i64,
    ) -> Result<Result<(), Option<Budget>>, StoreError> {
        let int = |v: i64| SqlValue::Int(Some(v));
        let mut args = vec![
            SqlValue::Text(Some(bucket.to_owned())),
            int(new.start),
            int(new.count),
            int(new.previous),
            int(expires_at),
        ];
        let sql = match old {
            None => SWAP_FROM_NONE,
            Some(old) => {
                args.extend([int(old.start), int(old.count), int(old.previous)]);
                SWAP
            }
        };
        writing!(self, pool => {
            let row = leased!(pool, c => bind(sql, args).fetch_one(c))?;
            if row.try_get::<bool, _>(0)? {
                return Ok(Ok(()));
            }
            let start: Option<i64> = row.try_get(1)?;
            Ok(Err(match start {
                Some(start) => Some(Budget { start, count: row.try_get(2)?, previous: row.try_get(3)? }),
                None => None,
            }))
        })
    }

    /// Drops the budgets whose state means nothing any more at `now`.
    pub(crate) async fn sweep_budgets(&self, now: i64) -> Result<u64, StoreError> {
        let sql = "DELETE FROM \"restgen_rate_limit\" WHERE \"expires_at\" <= $1";
        Ok(
            writing!(self, pool => leased!(pool, c => bind(sql, vec![SqlValue::Int(Some(now))]).execute(c))?.rows_affected()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Budget;
    use crate::store::test_database::postgres_schema;

    /// A budget's swap writes only from the state it was decided on; otherwise it writes
    /// nothing and answers, in the same statement, with the state the database holds (none
    /// where there is no row), for the next decision.
    #[tokio::test]
    async fn postgres_budgets_swap_only_from_the_state_decided_on() {
        let Some(store) = postgres_schema("t_budget").await else { return };
        store.create_runtime_tables().await.unwrap();
        let s = |start, count| Budget { start, count, previous: 0 };
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
}
