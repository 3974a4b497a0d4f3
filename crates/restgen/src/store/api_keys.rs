//! API keys in the database: one row per key, the secret only as its SHA-256, at most a
//! limit per account, counted and written in one step. The table is the runtime's own
//! (`restgen_api_key`), created by the migrations where the service issues keys.

#[cfg(feature = "postgres")]
use super::begin;
use super::{Pool, SqlValue, Store, StoreError, bind, leased, value};
use crate::spec::IdKind;

/// One row of the API key table.
#[derive(Clone)]
pub struct ApiKeyRow {
    pub id: String,
    pub owner_id: SqlValue,
    pub name: String,
    /// The first characters of the key, to tell keys apart in a list.
    pub prefix: String,
    /// SHA-256 of the secret part, lower-case hex.
    pub secret_hash: String,
    pub created_at: String,
}

/// The secret's hash stays out of logs: the prefix tells the key.
impl std::fmt::Debug for ApiKeyRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeyRow")
            .field("id", &self.id)
            .field("owner_id", &self.owner_id)
            .field("name", &self.name)
            .field("prefix", &self.prefix)
            .field("secret_hash", &restgen_wire::redact::Redacted)
            .field("created_at", &self.created_at)
            .finish()
    }
}

impl Store {
    /// Runs `sql`, an `INSERT ... SELECT ... WHERE` that counts what `scope` (an owner's
    /// keys, say) holds already and inserts only below a limit, so that no two such
    /// statements of one scope run at once; the rows it inserted. On PostgreSQL it runs in
    /// a transaction holding an advisory lock on `scope`: under READ COMMITTED two
    /// concurrent statements would each count the rows before the other's insert, both
    /// find room for one more, and pass the limit together. SQLite runs one write at a
    /// time, so the count and the insert are one step there as they are.
    pub(crate) async fn insert_below_limit(
        &self,
        #[cfg_attr(not(feature = "postgres"), expect(unused_variables, reason = "SQLite's one writer is the lock"))]
        scope: &str,
        sql: String,
        args: Vec<SqlValue>,
    ) -> Result<u64, sqlx::Error> {
        let _turn = self.write_permit().await.map_err(|e| match e {
            StoreError::Database(e) => e,
            other => sqlx::Error::Protocol(other.to_string()),
        })?;
        match &self.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => Ok(leased!(pool, c => bind(sql, args).execute(c))?.rows_affected()),
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let mut lease = pool.acquire().await?;
                let mut tx = begin(&mut lease, None).await?;
                let lock = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";
                bind(lock, vec![SqlValue::Text(Some(scope.to_owned()))]).execute(&mut *tx).await?;
                let inserted = bind(sql, args).execute(&mut *tx).await?.rows_affected();
                tx.commit().await?;
                lease.settle();
                Ok(inserted)
            }
        }
    }

    /// Stores a new API key (its secret only as a hash) unless its owner has `max` keys
    /// already; `false` then.
    pub async fn insert_api_key(&self, key: &ApiKeyRow, max: u32) -> Result<bool, StoreError> {
        let sql = format!(
            "INSERT INTO \"restgen_api_key\" (\"id\", \"owner_id\", \"name\", \"prefix\", \"secret_hash\", \"created_at\") \
             SELECT $1, $2, $3, $4, $5, $6 \
             WHERE (SELECT COUNT(*) FROM \"restgen_api_key\" WHERE \"owner_id\" = $2) < {max}"
        );
        let args = vec![
            SqlValue::Text(Some(key.id.clone())),
            key.owner_id.clone(),
            SqlValue::Text(Some(key.name.clone())),
            SqlValue::Text(Some(key.prefix.clone())),
            SqlValue::Text(Some(key.secret_hash.clone())),
            SqlValue::Text(Some(key.created_at.clone())),
        ];
        let scope = format!("restgen_api_key:{}", key.owner_id.to_json());
        let inserted = self.insert_below_limit(&scope, sql, args).await.map_err(|e| match e {
            sqlx::Error::Database(db) if db.kind() == sqlx::error::ErrorKind::ForeignKeyViolation => {
                StoreError::MissingRef { field: "owner_id".into() }
            }
            e => StoreError::Database(e),
        })?;
        Ok(inserted == 1)
    }

    /// The API key with this id.
    pub async fn api_key(&self, id: &str, owner: IdKind) -> Result<Option<ApiKeyRow>, StoreError> {
        let sql = "SELECT * FROM \"restgen_api_key\" WHERE \"id\" = $1";
        let rows = on_pool!(self, pool => {
            let rows = leased!(pool, c => bind(sql, vec![SqlValue::Text(Some(id.to_owned()))]).fetch_all(c))?;
            rows.iter().map(|r| value::api_key(r, owner)).collect::<Result<Vec<_>, _>>()?
        });
        Ok(rows.into_iter().next())
    }

    /// The API keys of one principal, newest first, at most `max`.
    pub async fn api_keys_of(&self, owner_id: SqlValue, owner: IdKind, max: u32) -> Result<Vec<ApiKeyRow>, StoreError> {
        let sql = format!(
            "SELECT * FROM \"restgen_api_key\" WHERE \"owner_id\" = $1 ORDER BY \"created_at\" DESC, \"id\" DESC LIMIT {max}"
        );
        Ok(on_pool!(self, pool => {
            let rows = leased!(pool, c => bind(sql, vec![owner_id]).fetch_all(c))?;
            rows.iter().map(|r| value::api_key(r, owner)).collect::<Result<Vec<_>, _>>()?
        }))
    }

    /// Revokes one API key of `owner_id`; `NotFound` when it has no such key.
    pub async fn delete_api_key(&self, id: &str, owner_id: Option<SqlValue>) -> Result<(), StoreError> {
        let mut sql = "DELETE FROM \"restgen_api_key\" WHERE \"id\" = $1".to_owned();
        let mut args = vec![SqlValue::Text(Some(id.to_owned()))];
        if let Some(owner) = owner_id {
            sql.push_str(" AND \"owner_id\" = $2");
            args.push(owner);
        }
        let affected = writing!(self, pool => leased!(pool, c => bind(sql, args).execute(c))?.rows_affected());
        if affected == 0 { Err(StoreError::NotFound) } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    /// An API key's row shown for debugging hides the hash of its secret.
    #[test]
    fn an_api_key_row_shown_hides_its_secrets_hash() {
        let row = super::ApiKeyRow {
            id: "k1".into(),
            owner_id: super::SqlValue::Text(Some("u1".into())),
            name: "ci".into(),
            prefix: "rk_abcd".into(),
            secret_hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".into(),
            created_at: "2026-11-28T00:00:00Z".into(),
        };
        let shown = format!("{row:?}");
        assert!(shown.contains("***") && shown.contains("rk_abcd") && !shown.contains("9f86d08"), "{shown}");
    }
}
