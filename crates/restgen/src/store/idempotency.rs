//! Answers kept by `Idempotency-Key`: one row per key, reserved before the request runs
//! and completed with its answer, so that a retry is answered from here and never runs
//! twice. The table is the runtime's own, created by [`Store::migrate`] on both
//! databases: it must outlive the process and be shared by every instance.

use super::{Store, StoreError, bind, int, leased, text};
use sqlx::Row;

const CREATE: &str = "CREATE TABLE IF NOT EXISTS \"restgen_idempotency\" (\
    \"scope\" TEXT PRIMARY KEY, \
    \"fingerprint\" TEXT NOT NULL, \
    \"status\" BIGINT, \
    \"headers\" TEXT, \
    \"body\" TEXT, \
    \"started_at\" BIGINT NOT NULL, \
    \"expires_at\" BIGINT NOT NULL)";
const CREATE_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS \"restgen_idempotency_expires_at\" ON \"restgen_idempotency\" (\"expires_at\")";

/// A key's row: reserved (`status` none) while its request runs, then the answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyRecord {
    /// SHA-256 of the request body the key was first used with.
    pub fingerprint: String,
    pub status: Option<i64>,
    /// The kept answer headers, as a JSON object.
    pub headers: Option<String>,
    pub body: Option<String>,
    pub started_at: i64,
    pub expires_at: i64,
}

impl Store {
    pub(super) async fn create_idempotency_table(&self) -> Result<(), sqlx::Error> {
        on_pool!(self, pool => {
            leased!(pool, c => bind(CREATE, Vec::new()).execute(c))?;
            leased!(pool, c => bind(CREATE_INDEX, Vec::new()).execute(c))?;
        });
        Ok(())
    }

    /// Reserves `scope` for a request with body `fingerprint`; `false` when a row exists.
    pub(crate) async fn reserve_key(
        &self,
        scope: &str,
        fingerprint: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<bool, StoreError> {
        let sql = "INSERT INTO \"restgen_idempotency\" (\"scope\", \"fingerprint\", \"started_at\", \"expires_at\") \
                   VALUES ($1, $2, $3, $4) ON CONFLICT (\"scope\") DO NOTHING";
        let args = vec![text(scope), text(fingerprint), int(now), int(expires_at)];
        Ok(writing!(self, pool => leased!(pool, c => bind(sql, args).execute(c))?.rows_affected()) == 1)
    }

    pub(crate) async fn key(&self, scope: &str) -> Result<Option<KeyRecord>, StoreError> {
        let sql = "SELECT \"fingerprint\", \"status\", \"headers\", \"body\", \"started_at\", \"expires_at\" \
                   FROM \"restgen_idempotency\" WHERE \"scope\" = $1";
        on_pool!(self, pool => {
            let Some(r) = leased!(pool, c => bind(sql, vec![text(scope)]).fetch_optional(c))? else { return Ok(None) };
            Ok(Some(KeyRecord {
                fingerprint: r.try_get(0)?,
                status: r.try_get(1)?,
                headers: r.try_get(2)?,
                body: r.try_get(3)?,
                started_at: r.try_get(4)?,
                expires_at: r.try_get(5)?,
            }))
        })
    }

    /// Keeps the answer of the request that reserved `scope`.
    pub(crate) async fn complete_key(
        &self,
        scope: &str,
        status: u16,
        headers: &str,
        body: &str,
    ) -> Result<(), StoreError> {
        let sql =
            "UPDATE \"restgen_idempotency\" SET \"status\" = $2, \"headers\" = $3, \"body\" = $4 WHERE \"scope\" = $1";
        let args = vec![text(scope), int(i64::from(status)), text(headers), text(body)];
        writing!(self, pool => leased!(pool, c => bind(sql, args).execute(c))?.rows_affected());
        Ok(())
    }

    /// Gives `scope` up, so that the next request with the key runs.
    pub(crate) async fn release_key(&self, scope: &str) -> Result<(), StoreError> {
        let sql = "DELETE FROM \"restgen_idempotency\" WHERE \"scope\" = $1 AND \"status\" IS NULL";
        writing!(self, pool => leased!(pool, c => bind(sql, vec![text(scope)]).execute(c))?.rows_affected());
        Ok(())
    }

    /// Takes over a reservation whose request was abandoned (it started at `started_at`
    /// and never finished); `false` when another request took it first.
    pub(crate) async fn retake_key(&self, scope: &str, started_at: i64, now: i64) -> Result<bool, StoreError> {
        let sql = "UPDATE \"restgen_idempotency\" SET \"started_at\" = $3 \
                   WHERE \"scope\" = $1 AND \"status\" IS NULL AND \"started_at\" = $2";
        let args = vec![text(scope), int(started_at), int(now)];
        Ok(writing!(self, pool => leased!(pool, c => bind(sql, args).execute(c))?.rows_affected()) == 1)
    }

    /// Drops the rows kept past `now`: one scope's, or with `None` every one.
    pub(crate) async fn expire_keys(&self, scope: Option<&str>, now: i64) -> Result<u64, StoreError> {
        let (sql, args) = match scope {
            Some(s) => (
                "DELETE FROM \"restgen_idempotency\" WHERE \"scope\" = $1 AND \"expires_at\" <= $2",
                vec![text(s), int(now)],
            ),
            None => ("DELETE FROM \"restgen_idempotency\" WHERE \"expires_at\" <= $1", vec![int(now)]),
        };
        Ok(writing!(self, pool => leased!(pool, c => bind(sql, args).execute(c))?.rows_affected()))
    }
}
