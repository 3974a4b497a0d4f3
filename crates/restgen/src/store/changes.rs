//! The change log that `feed` resources' streams read: every write of such a resource
//! leaves a row in the very transaction that makes it, and each row is later given its
//! position, the number a client resumes after.
//!
//! Positions are not handed out as rows are written: two transactions may commit in the
//! other order than they wrote, and a reader that had seen the later number would never
//! be shown the earlier one. So rows are written without one, and a sequencer numbers what
//! has committed, one sequencer at a time (the single row of `restgen_change_position`
//! is its lock on PostgreSQL; SQLite has one writer), each number above every number
//! given before. A reader at position N has then seen everything that will ever be
//! numbered N or less.

use super::{Record, SqlValue, Store, StoreError, begin, bind, int, leased, text};
use crate::spec::ResourceSpec;
use sqlx::Row;

const CREATE: [&str; 3] = [
    "CREATE TABLE IF NOT EXISTS \"restgen_change\" (\
        \"id\" TEXT PRIMARY KEY, \
        \"seq\" BIGINT UNIQUE, \
        \"resource\" TEXT NOT NULL, \
        \"kind\" TEXT NOT NULL, \
        \"record\" TEXT NOT NULL, \
        \"created_at\" BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS \"restgen_change_position\" (\"id\" BIGINT PRIMARY KEY, \"last\" BIGINT NOT NULL)",
    "INSERT INTO \"restgen_change_position\" (\"id\", \"last\") VALUES (1, 0) ON CONFLICT (\"id\") DO NOTHING",
];

/// The most rows one sequencing numbers: a burst of writes is numbered over a few
/// rounds rather than in one long transaction.
pub const BATCH: i64 = 1000;

/// What a change did to its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Updated,
    Deleted,
}

impl ChangeKind {
    /// Its name on the wire (the event's type in the stream).
    pub fn word(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Updated => "updated",
            ChangeKind::Deleted => "deleted",
        }
    }

    /// The change an operation's event is: a transition changes its record.
    fn of(event: &str) -> ChangeKind {
        match event {
            "created" => ChangeKind::Created,
            "deleted" => ChangeKind::Deleted,
            _ => ChangeKind::Updated,
        }
    }
}

/// One numbered change.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// Its position in the log.
    pub seq: i64,
    pub resource: String,
    pub kind: ChangeKind,
    /// The record as stored after the change (before it, for a delete), write-only
    /// fields left out.
    pub record: Record,
}

/// Where the log stands: the first position it still keeps, and the last one given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogBounds {
    /// `last + 1` when it keeps none.
    pub first: i64,
    pub last: i64,
}

/// The statement that logs `event` of `spec` about `record`, made in the write's
/// transaction; `None` when the resource has no feed or the write no event.
pub(super) fn change_insert(
    clock: &crate::clock::Clock,
    spec: &ResourceSpec,
    event: Option<&str>,
    record: &Record,
) -> Option<(&'static str, Vec<SqlValue>)> {
    let kind = ChangeKind::of(event.filter(|_| spec.feed)?);
    let record = serde_json::to_string(&super::outbox::published(spec, record)).ok()?;
    let id = uuid::Uuid::now_v7().simple().to_string();
    let sql = "INSERT INTO \"restgen_change\" (\"id\", \"resource\", \"kind\", \"record\", \"created_at\") \
               VALUES ($1, $2, $3, $4, $5)";
    Some((sql, vec![text(&id), text(spec.name), text(kind.word()), text(&record), int(clock.now())]))
}

impl Store {
    pub(super) async fn create_change_tables(&self) -> Result<(), sqlx::Error> {
        on_pool!(self, pool => {
            for sql in CREATE {
                leased!(pool, c => bind(sql, Vec::new()).execute(c))?;
            }
        });
        Ok(())
    }

    /// Numbers the changes that have committed and have no position yet, in the order
    /// they were written; how many it numbered.
    pub async fn sequence_changes(&self) -> Result<u64, StoreError> {
        // Most rounds find nothing, and cost no turn to write.
        let waiting = "SELECT 1 FROM \"restgen_change\" WHERE \"seq\" IS NULL LIMIT 1";
        let found = on_pool!(self, pool => leased!(pool, c => bind(waiting, Vec::new()).fetch_optional(c))?.is_some());
        if !found {
            return Ok(0);
        }
        writing!(self, pool => {
            let mut lease = pool.acquire().await?;
            let mut tx = begin(&mut lease, Some(self.begin_write())).await?;
            // Holds the position's row until commit: the next sequencer waits here, then
            // sees what this one numbered.
            let hold = "UPDATE \"restgen_change_position\" SET \"last\" = \"last\" WHERE \"id\" = 1 RETURNING \"last\"";
            let last: i64 = bind(hold, Vec::new()).fetch_one(&mut *tx).await?.try_get(0)?;
            let number = "UPDATE \"restgen_change\" SET \"seq\" = $1 + p.\"n\" FROM (\
                              SELECT \"id\", ROW_NUMBER() OVER (ORDER BY \"created_at\", \"id\") AS \"n\" \
                              FROM \"restgen_change\" WHERE \"seq\" IS NULL ORDER BY \"created_at\", \"id\" LIMIT $2\
                          ) AS p WHERE \"restgen_change\".\"id\" = p.\"id\"";
            let n = bind(number, vec![int(last), int(BATCH)]).execute(&mut *tx).await?.rows_affected();
            let moved = "UPDATE \"restgen_change_position\" SET \"last\" = \"last\" + $1 WHERE \"id\" = 1";
            bind(moved, vec![int(i64::try_from(n).unwrap_or(i64::MAX))]).execute(&mut *tx).await?;
            tx.commit().await?;
            lease.settle();
            Ok(n)
        })
    }

    /// Numbers every change that has committed and has none yet, a batch at a time.
    pub async fn sequence_all_changes(&self) -> Result<u64, StoreError> {
        let mut numbered = 0;
        loop {
            let n = self.sequence_changes().await?;
            numbered += n;
            if n < BATCH as u64 {
                return Ok(numbered);
            }
        }
    }

    /// The numbered changes after position `after`, in order, at most `limit`.
    pub async fn changes_after(&self, after: i64, limit: u32) -> Result<Vec<Change>, StoreError> {
        let sql = "SELECT \"seq\", \"resource\", \"kind\", \"record\" FROM \"restgen_change\" \
                   WHERE \"seq\" > $1 ORDER BY \"seq\" LIMIT $2";
        let args = vec![int(after), int(i64::from(limit))];
        on_pool!(self, pool => {
            let rows = leased!(pool, c => bind(sql, args).fetch_all(c))?;
            let mut changes = Vec::with_capacity(rows.len());
            for row in rows {
                let kind: String = row.try_get("kind")?;
                let record: String = row.try_get("record")?;
                // Written by `change_insert` alone; a row that does not read back is a
                // database edited by hand, and shown as the record it still names.
                let record: Record = serde_json::from_str(&record).unwrap_or_default();
                changes.push(Change {
                    seq: row.try_get("seq")?,
                    resource: row.try_get("resource")?,
                    kind: ChangeKind::of(&kind),
                    record,
                });
            }
            Ok(changes)
        })
    }

    /// The first position the log keeps and the last it gave.
    pub async fn change_bounds(&self) -> Result<LogBounds, StoreError> {
        let sql = "SELECT p.\"last\", (SELECT MIN(\"seq\") FROM \"restgen_change\") AS \"first\" \
                   FROM \"restgen_change_position\" p WHERE p.\"id\" = 1";
        on_pool!(self, pool => {
            let row = leased!(pool, c => bind(sql, Vec::new()).fetch_one(c))?;
            let last: i64 = row.try_get("last")?;
            let first: Option<i64> = row.try_get("first")?;
            Ok(LogBounds { first: first.unwrap_or(last + 1), last })
        })
    }

    /// Forgets the changes up to the last one written before `before` (Unix
    /// microseconds): a client that resumes from one of them is told to list again. The
    /// log is cut at a position, never holed: a change numbered late for a write that
    /// began early goes with those numbered before it. How many went.
    pub async fn prune_changes(&self, before: i64) -> Result<u64, StoreError> {
        let sql = "DELETE FROM \"restgen_change\" WHERE \"seq\" <= \
                   (SELECT MAX(\"seq\") FROM \"restgen_change\" WHERE \"created_at\" < $1)";
        Ok(writing!(self, pool => leased!(pool, c => bind(sql, vec![int(before)]).execute(c))?.rows_affected()))
    }
}

#[cfg(test)]
mod tests {
    //! Positions follow commits, not writes; the log is cut from its start.

    use super::*;
    use crate::store::test_database::postgres_schema;
    use serde_json::json;

    static NOTE: ResourceSpec = ResourceSpec { name: "note", feed: true, ..ResourceSpec::DEFAULT };

    fn record(id: &str) -> Record {
        serde_json::from_value(json!({ "id": id })).unwrap()
    }

    fn ids(changes: &[Change]) -> Vec<(i64, String)> {
        changes.iter().map(|c| (c.seq, c.record.id_text())).collect()
    }

    /// A write that began first but commits last is numbered after the one that committed
    /// before it: a reader who had read to the first number still gets it.
    #[tokio::test]
    async fn postgres_a_change_is_numbered_when_it_commits() {
        let Some(store) = postgres_schema("t_changes").await else { return };
        store.create_change_tables().await.unwrap();
        let clock = crate::clock::Clock::System;
        let (early, early_args) = change_insert(&clock, &NOTE, Some("created"), &record("early")).unwrap();
        let (late, late_args) = change_insert(&clock, &NOTE, Some("created"), &record("late")).unwrap();
        on_pool!(store, pool => {
            let mut slow = pool.acquire().await.unwrap();
            let mut open = begin(&mut slow, None).await.unwrap();
            bind(early, early_args).execute(&mut *open).await.unwrap();
            bind(late, late_args).execute(&mut *pool.acquire().await.unwrap()).await.unwrap();
            assert_eq!(store.sequence_changes().await.unwrap(), 1, "only what has committed is numbered");
            let seen = store.changes_after(0, 10).await.unwrap();
            assert_eq!(ids(&seen), [(1, "late".to_owned())]);
            open.commit().await.unwrap();
        });
        store.sequence_changes().await.unwrap();
        assert_eq!(ids(&store.changes_after(1, 10).await.unwrap()), [(2, "early".to_owned())]);
        assert_eq!(store.change_bounds().await.unwrap(), LogBounds { first: 1, last: 2 });
    }

    async fn the_log_is_cut_at_a_position(store: Store) {
        store.create_change_tables().await.unwrap();
        let clock = crate::clock::Clock::manual();
        for (n, id) in ["a", "b", "c"].iter().enumerate() {
            clock.advance(std::time::Duration::from_secs(10));
            let (sql, args) =
                change_insert(&clock, &NOTE, Some(if n == 2 { "deleted" } else { "updated" }), &record(id)).unwrap();
            on_pool!(store, pool => { bind(sql, args).execute(&mut *pool.acquire().await.unwrap()).await.unwrap(); });
        }
        assert_eq!(store.change_bounds().await.unwrap(), LogBounds { first: 1, last: 0 }, "nothing numbered yet");
        assert_eq!(store.sequence_changes().await.unwrap(), 3);
        assert_eq!(store.sequence_changes().await.unwrap(), 0, "numbered once");
        let all = store.changes_after(0, 10).await.unwrap();
        assert_eq!(ids(&all), [(1, "a".to_owned()), (2, "b".to_owned()), (3, "c".to_owned())]);
        assert_eq!(all[2].kind, ChangeKind::Deleted);
        // Everything written before the second change's time, and nothing after.
        let second = clock.now() - 10_000_000;
        assert_eq!(store.prune_changes(second).await.unwrap(), 1);
        assert_eq!(store.change_bounds().await.unwrap(), LogBounds { first: 2, last: 3 });
        assert_eq!(store.prune_changes(clock.now() + 1).await.unwrap(), 2);
        assert_eq!(store.change_bounds().await.unwrap(), LogBounds { first: 4, last: 3 }, "the last position stays");
    }

    /// What waited while no stream was open, more than one batch of it, is numbered
    /// whole and in order by one call.
    #[tokio::test]
    async fn sqlite_a_backlog_is_numbered_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::connect(&format!("sqlite://{}", dir.path().join("b.db").display())).await.unwrap();
        store.create_change_tables().await.unwrap();
        let clock = crate::clock::Clock::manual();
        let waiting = BATCH + 3;
        for n in 0..waiting {
            clock.advance(std::time::Duration::from_millis(1));
            let (sql, args) = change_insert(&clock, &NOTE, Some("created"), &record(&n.to_string())).unwrap();
            on_pool!(store, pool => { bind(sql, args).execute(&mut *pool.acquire().await.unwrap()).await.unwrap(); });
        }
        assert_eq!(store.sequence_all_changes().await.unwrap(), waiting as u64);
        assert_eq!(store.change_bounds().await.unwrap(), LogBounds { first: 1, last: waiting });
        let tail = store.changes_after(waiting - 2, 10).await.unwrap();
        assert_eq!(ids(&tail), [(waiting - 1, (waiting - 2).to_string()), (waiting, (waiting - 1).to_string())]);
    }

    #[tokio::test]
    async fn sqlite_the_log_is_cut_at_a_position() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::connect(&format!("sqlite://{}", dir.path().join("c.db").display())).await.unwrap();
        the_log_is_cut_at_a_position(store).await;
    }

    #[tokio::test]
    async fn postgres_the_log_is_cut_at_a_position() {
        let Some(store) = postgres_schema("t_change_cut").await else { return };
        the_log_is_cut_at_a_position(store).await;
    }
}
