//! Webhooks in the database: subscriptions, the outbox of events and their deliveries.
//! An event is written in the very transaction of the change that caused it, so a
//! committed change always has its event and a rolled back one never does; workers of any
//! number of instances then share the rows, each claiming what it works on for a while
//! (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite has one writer at a time), so each
//! delivery is made by one of them. The tables are the runtime's own, created by
//! [`Store::migrate`] on both databases.

use super::{Pool, Record, SqlValue, Store, StoreError, begin, bind, int, leased, text};
use crate::spec::ResourceSpec;
use serde_json::json;

#[cfg(feature = "webhooks")]
mod deliveries;
#[cfg(feature = "webhooks")]
pub(crate) use deliveries::Claimed;
#[cfg(feature = "webhooks")]
pub use deliveries::{DeliveryRow, EventRow, WebhookRow};

const CREATE: [&str; 7] = [
    "CREATE TABLE IF NOT EXISTS \"restgen_webhook\" (\
        \"id\" TEXT PRIMARY KEY, \
        \"owner_id\" TEXT, \
        \"url\" TEXT NOT NULL, \
        \"events\" TEXT NOT NULL, \
        \"description\" TEXT, \
        \"enabled\" BOOLEAN NOT NULL, \
        \"disabled_reason\" TEXT, \
        \"enabled_since\" BIGINT NOT NULL, \
        \"created_at\" TEXT NOT NULL, \
        \"updated_at\" TEXT NOT NULL, \
        \"failures\" BIGINT NOT NULL DEFAULT 0, \
        \"paused_until\" BIGINT NOT NULL DEFAULT 0)",
    "CREATE INDEX IF NOT EXISTS \"restgen_webhook_owner\" ON \"restgen_webhook\" (\"owner_id\", \"created_at\")",
    "CREATE TABLE IF NOT EXISTS \"restgen_event\" (\
        \"id\" TEXT PRIMARY KEY, \
        \"type\" TEXT NOT NULL, \
        \"resource\" TEXT NOT NULL, \
        \"payload\" TEXT NOT NULL, \
        \"created_at\" BIGINT NOT NULL, \
        \"dispatched\" BOOLEAN NOT NULL, \
        \"claimed_until\" BIGINT)",
    "CREATE INDEX IF NOT EXISTS \"restgen_event_pending\" ON \"restgen_event\" (\"dispatched\", \"created_at\")",
    "CREATE TABLE IF NOT EXISTS \"restgen_delivery\" (\
        \"id\" TEXT PRIMARY KEY, \
        \"event_id\" TEXT NOT NULL REFERENCES \"restgen_event\" (\"id\") ON DELETE CASCADE, \
        \"webhook_id\" TEXT NOT NULL REFERENCES \"restgen_webhook\" (\"id\") ON DELETE CASCADE, \
        \"status\" TEXT NOT NULL, \
        \"attempts\" BIGINT NOT NULL, \
        \"next_attempt_at\" BIGINT, \
        \"locked_until\" BIGINT, \
        \"last_status\" BIGINT, \
        \"last_error\" TEXT, \
        \"history\" TEXT NOT NULL, \
        \"created_at\" BIGINT NOT NULL, \
        \"updated_at\" BIGINT NOT NULL, \
        UNIQUE (\"event_id\", \"webhook_id\"))",
    "CREATE INDEX IF NOT EXISTS \"restgen_delivery_due\" ON \"restgen_delivery\" (\"status\", \"next_attempt_at\")",
    "CREATE INDEX IF NOT EXISTS \"restgen_delivery_webhook\" ON \"restgen_delivery\" (\"webhook_id\", \"created_at\")",
];

/// Columns a table of an earlier runtime lacks, added where missing: the table, the
/// column, and its definition.
const ADDED: [(&str, &str, &str); 2] = [
    // The endpoint's own schedule: consecutive attempts it did not answer, and the time
    // (Unix microseconds) before which none of its deliveries is attempted.
    ("restgen_webhook", "failures", "BIGINT NOT NULL DEFAULT 0"),
    ("restgen_webhook", "paused_until", "BIGINT NOT NULL DEFAULT 0"),
];

/// What a change's record is to what leaves the write (an event, a logged change): the
/// record as stored, its write-only fields left out.
pub(super) fn published(spec: &ResourceSpec, record: &Record) -> Record {
    let mut kept = record.clone();
    kept.retain(|name| !spec.field(name).is_some_and(|f| f.write_only));
    kept
}

/// The statement that writes `event` of `spec` about `record` into the outbox, made in
/// the write's transaction, stamped by `clock`; `None` when the resource does not publish it.
pub(super) fn event_insert(
    clock: &crate::clock::Clock,
    spec: &ResourceSpec,
    event: Option<&str>,
    record: &Record,
) -> Option<(&'static str, Vec<SqlValue>)> {
    let event = event.filter(|e| spec.events.contains(e))?;
    let micros = clock.now();
    let data = serde_json::to_value(published(spec, record)).ok()?;
    let kind = format!("{}.{event}", spec.name);
    let payload = json!({
        "type": kind,
        "timestamp": crate::clock::format_micros(micros),
        "data": data,
    });
    let id = format!("msg_{}", uuid::Uuid::now_v7().simple());
    let sql = "INSERT INTO \"restgen_event\" (\"id\", \"type\", \"resource\", \"payload\", \"created_at\", \"dispatched\") \
               VALUES ($1, $2, $3, $4, $5, FALSE)";
    Some((sql, vec![text(&id), text(&kind), text(spec.name), text(&payload.to_string()), int(micros)]))
}

impl Store {
    pub(super) async fn create_outbox_tables(&self) -> Result<(), sqlx::Error> {
        on_pool!(self, pool => {
            for sql in CREATE {
                leased!(pool, c => bind(sql, Vec::new()).execute(c))?;
            }
        });
        for (table, column, definition) in ADDED {
            self.add_column(table, column, definition).await?;
        }
        Ok(())
    }

    /// Adds `column` to `table` unless it has it: PostgreSQL says `IF NOT EXISTS`, SQLite
    /// is asked first.
    async fn add_column(&self, table: &str, column: &str, definition: &str) -> Result<(), sqlx::Error> {
        let add = format!("ALTER TABLE \"{table}\" ADD COLUMN IF NOT EXISTS \"{column}\" {definition}");
        match &self.pool {
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                leased!(pool, c => bind(add, Vec::new()).execute(c))?;
            }
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                use sqlx::Row as _;
                let has = "SELECT COUNT(*) FROM pragma_table_info($1) WHERE \"name\" = $2";
                let found: i64 =
                    leased!(pool, c => bind(has, vec![text(table), text(column)]).fetch_one(c))?.try_get(0)?;
                if found == 0 {
                    let add = add.replace(" IF NOT EXISTS", "");
                    leased!(pool, c => bind(add, Vec::new()).execute(c))?;
                }
            }
        }
        Ok(())
    }

    /// Writes `event` of `spec` about `record` to the outbox by itself, as a write of
    /// another instance would.
    #[cfg(test)]
    pub(crate) async fn publish(&self, spec: &ResourceSpec, event: &str, record: &Record) -> Result<(), StoreError> {
        let (sql, args) =
            event_insert(&self.clock, spec, Some(event), record).expect("the resource publishes the event");
        writing!(self, pool => leased!(pool, c => bind(sql, args).execute(c))?.rows_affected());
        Ok(())
    }

    /// Forgets events dispatched before `before` (Unix microseconds, real time) with no
    /// delivery still pending, and with them their deliveries: the outbox and the delivery
    /// log keep what is recent, not every write ever made. How many went.
    pub async fn prune_events(&self, before: i64) -> Result<u64, StoreError> {
        writing!(self, pool => {
            let mut lease = pool.acquire().await?;
            let mut tx = begin(&mut lease, None).await?;
            let old = "SELECT e.\"id\" FROM \"restgen_event\" e WHERE e.\"dispatched\" = TRUE AND e.\"created_at\" < $1 \
                       AND NOT EXISTS (SELECT 1 FROM \"restgen_delivery\" d WHERE d.\"event_id\" = e.\"id\" AND d.\"status\" = 'pending')";
            bind(format!("DELETE FROM \"restgen_delivery\" WHERE \"event_id\" IN ({old})"), vec![int(before)]).execute(&mut *tx).await?;
            let n = bind(format!("DELETE FROM \"restgen_event\" WHERE \"id\" IN ({old})"), vec![int(before)]).execute(&mut *tx).await?.rows_affected();
            tx.commit().await?;
            lease.settle();
            Ok(n)
        })
    }
}
