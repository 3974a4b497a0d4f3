//! Records one at a time: inserted, read by id or by a unique field, replaced, changed
//! under a condition, deleted (naming the record that still refers to it), and checked
//! for existence. A write that fails for another transaction's sake is tried again
//! ([`retried`]).

use super::error::{classify, retried};
use super::lease::{begin, leased};
use super::rows::single_row;
use super::sql::{self, Columns};
use super::{
    Dialect, Record, Rows, SqlValue, Statement, Store, StoreError, WriteCondition, bind, changes, outbox, value,
};
use crate::spec::ResourceSpec;

impl Store {
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
        let logs = spec.feed && event.is_some();
        if !publishes && !logs {
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
                for (sql, args) in self.side_rows(spec, event, &record) {
                    bind(sql, args).execute(&mut *tx).await?;
                }
                tx.commit().await?;
                lease.settle();
                Some(single_row(row))
            }))
        })
        .await?;
        if written.is_some() {
            self.wake_for(spec, event);
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
            if let Some(record) = &written {
                for (sql, args) in self.side_rows(spec, event, record) {
                    bind(sql, args).execute(&mut *tx).await?;
                }
            }
            tx.commit().await?;
            lease.settle();
            written
        })) })
        .await?;
        if written.is_some() {
            self.wake_for(spec, event);
        }
        Ok(written)
    }

    /// What a write of `spec` about `record` adds in its transaction: its event for
    /// webhook subscribers (where the resource publishes it), its change for the feed
    /// (where the resource has one).
    fn side_rows(
        &self,
        spec: &ResourceSpec,
        event: Option<&str>,
        record: &Record,
    ) -> impl Iterator<Item = (&'static str, Vec<SqlValue>)> {
        let published = outbox::event_insert(&self.clock, spec, event, record);
        published.into_iter().chain(changes::change_insert(&self.clock, spec, event, record))
    }

    /// Tells this instance's webhook worker and feed of what a committed write added.
    fn wake_for(&self, spec: &ResourceSpec, event: Option<&str>) {
        if event.is_some_and(|e| spec.events.contains(&e)) {
            self.signals.outbox.notify_one();
        }
        if spec.feed && event.is_some() {
            self.signals.changes.notify_one();
        }
    }

    /// How a transaction that will write begins: SQLite's `IMMEDIATE` takes the write lock
    /// at once, so the read it starts with is not of a database another writer is about to
    /// change (a deferred one could only fail at its first write).
    pub(super) fn begin_write(&self) -> &'static str {
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
}

#[cfg(test)]
mod tests {
    //! Records written and read alike on both databases, and deletes a ref still holds.

    use super::super::test_database::{KINDS, kinds_table, postgres_schema, text};
    use crate::spec::{FieldKind, FieldSpec, IdKind, ResourceSpec};
    use crate::store::{Dialect, ListQuery, Page, SortKey, SqlValue, Store, StoreError};
    use serde_json::{Value, json};
    use sqlx::AssertSqlSafe;

    async fn rows_are_written_as_their_records(store: Store) {
        let create = kinds_table(store.dialect);
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
}
