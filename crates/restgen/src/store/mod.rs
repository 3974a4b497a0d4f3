//! Storage through sqlx's native drivers: SQLite by default, PostgreSQL when
//! `DATABASE_URL` says so, with the same generated code on both. Records travel as JSON
//! objects; columns are typed
//! uniformly (text for uuids, dates, decimals and JSON; 64-bit integers; doubles;
//! booleans), so one query builder serves both dialects. Every value is a bound
//! parameter; identifiers come from the validated schema and are always quoted.

mod busy;
mod error;
mod lease;
mod options;
mod pool;
mod record;
mod rows;
mod sql;
mod typed;
mod value;

pub use api_keys::ApiKeyRow;
pub(crate) use budgets::Budget;
pub use error::{MigrateError, StoreError};
use error::{classify, retried};
pub use migrate::MigrationSpec;
pub use options::{StoreOptions, Synchronous};
pub use pool::{Connections, Lease, PgConnections, PgLease, SqliteConnections, SqliteLease};
pub use record::Record;
pub(crate) use rows::Rows;
use rows::single_row;
pub use sql::{Filter, ListQuery, Page, SortKey};
pub use value::SqlValue;

use crate::spec::ResourceSpec;
use lease::{begin, leased};
use sql::Columns;
use sqlx::encode::Encode;
use sqlx::query::Query;
use sqlx::{AssertSqlSafe, Database, Row, SqlSafeStr, SqlStr, Type};
use std::time::Duration;

/// Which database a store speaks: the model's own, which its migrations are planned for.
pub use restgen_model::evolution::ddl::Dialect;

/// The condition of a conditional write: whether it may go ahead on the record as it
/// stands (held while the condition is judged).
pub type WriteCondition<'a> = &'a (dyn Fn(&Record) -> bool + Send + Sync);

/// The database of one service.
#[derive(Clone, Debug)]
pub struct Store {
    pool: Pool,
    dialect: Dialect,
    /// Told when a write put an event in the outbox, so this instance's webhook worker
    /// goes to it at once rather than at its next poll.
    pub(crate) outbox: std::sync::Arc<tokio::sync::Notify>,
    /// SQLite only: whose turn it is to write (see [`Store::write_permit`]).
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
macro_rules! on_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.pool {
            Pool::Sqlite($pool) => $body,
            Pool::Postgres($pool) => $body,
        }
    };
}

/// Runs `$body` as `on_pool!` does, in this instance's turn to write ([`Store::write_permit`]):
/// every statement or transaction that writes runs so.
macro_rules! writing {
    ($store:expr, $pool:ident => $body:expr) => {{
        let _turn = $store.write_permit().await?;
        on_pool!($store, $pool => $body)
    }};
}

mod api_keys;
mod budgets;
mod connect;
mod idempotency;
mod logins;
mod migrate;
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
                rows.into_iter().next().map(single_row)
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
                Some(single_row(row))
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
            leased!(pool, c => bind(sql::by_id(spec), vec![id.clone()]).fetch_optional(c))?.map(single_row)
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
        admit: WriteCondition<'_>,
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
        admit: WriteCondition<'_>,
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
        admit: WriteCondition<'_>,
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
        admit: WriteCondition<'_>,
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
            let more = cut_to_limit(&mut rows, limit);
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
fn cut_to_limit<T>(rows: &mut Vec<T>, limit: usize) -> bool {
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
    use sqlx::sqlite::SqliteConnectOptions;
    use std::str::FromStr;
    use std::time::Instant;

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
