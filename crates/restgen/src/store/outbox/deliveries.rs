//! Subscriptions and their deliveries in the database: what the webhook routes and
//! workers read and write. Only in builds with the `webhooks` feature; the tables are
//! created in every build, so turning the feature on later finds them.

use crate::store::{Dialect, SqlValue, Store, StoreError, begin, bind, int, leased, text};
use sqlx::Row;

/// One subscription.
#[derive(Clone, Debug, PartialEq)]
pub struct WebhookRow {
    pub id: String,
    /// The account that made it (none where the service has no auth).
    pub owner_id: Option<String>,
    pub url: String,
    pub events: Vec<String>,
    pub description: Option<String>,
    pub enabled: bool,
    /// Why the service stopped delivering to it.
    pub disabled_reason: Option<String>,
    /// Since when (Unix microseconds) it receives events: those of changes made while it
    /// did not exist, or was disabled, are not its.
    pub enabled_since: i64,
    pub created_at: String,
    pub updated_at: String,
}

/// One event of the outbox.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRow {
    /// `msg_...`: the `webhook-id` of every delivery of it, retries included.
    pub id: String,
    /// `<resource>.<event>`
    pub kind: String,
    pub resource: String,
    /// `{type, timestamp, data}`, as delivered.
    pub payload: String,
    pub created_at: i64,
}

/// A delivery claimed to be attempted: the delivery, its event's payload, its
/// subscription's URL, and how many attempts before it the endpoint did not answer.
#[derive(Clone, Debug)]
pub(crate) struct Claimed {
    pub delivery: DeliveryRow,
    pub payload: String,
    /// The resource the event is of.
    pub resource: String,
    pub url: String,
    /// Who the subscription is for: what its payloads show is what they may read.
    pub owner_id: Option<String>,
    pub failures: i64,
}

/// One event for one subscription, with its attempts so far.
#[derive(Clone, Debug, PartialEq)]
pub struct DeliveryRow {
    pub id: String,
    pub event_id: String,
    pub webhook_id: String,
    /// `pending`, `succeeded` or `failed`.
    pub status: String,
    pub attempts: i64,
    pub next_attempt_at: Option<i64>,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    /// Each attempt: `{at, status?, error?}`, as JSON.
    pub history: String,
    pub created_at: i64,
    pub updated_at: i64,
    /// The event's type, for listing.
    pub kind: String,
}

fn webhook_of<R: Row>(r: &R) -> Result<WebhookRow, sqlx::Error>
where
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> Option<String>: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> bool: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> i64: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    let events: String = r.try_get("events")?;
    Ok(WebhookRow {
        id: r.try_get("id")?,
        owner_id: r.try_get("owner_id")?,
        url: r.try_get("url")?,
        events: serde_json::from_str(&events).unwrap_or_default(),
        description: r.try_get("description")?,
        enabled: r.try_get("enabled")?,
        disabled_reason: r.try_get("disabled_reason")?,
        enabled_since: r.try_get("enabled_since")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

fn delivery_of<R: Row>(r: &R) -> Result<DeliveryRow, sqlx::Error>
where
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> Option<String>: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> i64: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> Option<i64>: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    Ok(DeliveryRow {
        id: r.try_get("id")?,
        event_id: r.try_get("event_id")?,
        webhook_id: r.try_get("webhook_id")?,
        status: r.try_get("status")?,
        attempts: r.try_get("attempts")?,
        next_attempt_at: r.try_get("next_attempt_at")?,
        last_status: r.try_get("last_status")?,
        last_error: r.try_get("last_error")?,
        history: r.try_get("history")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
        kind: r.try_get("type")?,
    })
}

const DELIVERY_COLUMNS: &str = "d.\"id\", d.\"event_id\", d.\"webhook_id\", d.\"status\", d.\"attempts\", \
    d.\"next_attempt_at\", d.\"last_status\", d.\"last_error\", d.\"history\", d.\"created_at\", d.\"updated_at\", e.\"type\"";

impl Store {
    /// Sets the endpoint schedule of a subscription: `failures` attempts in a row it did not
    /// answer, none of its deliveries attempted before `until` (0 and 0 once it answers).
    pub(crate) async fn pause_webhook(&self, id: &str, failures: i64, until: i64) -> Result<(), StoreError> {
        let sql = "UPDATE \"restgen_webhook\" SET \"failures\" = $2, \"paused_until\" = $3 WHERE \"id\" = $1";
        writing!(self, pool => leased!(pool, c => bind(sql, vec![text(id), int(failures), int(until)]).execute(c))?.rows_affected());
        Ok(())
    }

    #[cfg(test)]
    pub(crate) async fn insert_webhook(&self, w: &WebhookRow) -> Result<(), StoreError> {
        self.insert_webhook_below(w, u32::MAX).await.map(drop)
    }

    /// Stores a new subscription unless its owner (or, without accounts, the service) has
    /// `max` already: `false` then. The count and the insert are one step
    /// ([`Store::insert_below_limit`]), so concurrent requests cannot pass the limit.
    pub(crate) async fn insert_webhook_below(&self, w: &WebhookRow, max: u32) -> Result<bool, StoreError> {
        let whose = if w.owner_id.is_some() { "WHERE \"owner_id\" = $2" } else { "" };
        let sql = format!(
            "INSERT INTO \"restgen_webhook\" (\"id\", \"owner_id\", \"url\", \"events\", \"description\", \
             \"enabled\", \"disabled_reason\", \"created_at\", \"updated_at\", \"enabled_since\") \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 \
             WHERE (SELECT COUNT(*) FROM \"restgen_webhook\" {whose}) < {max}"
        );
        let args = vec![
            text(&w.id),
            SqlValue::Text(w.owner_id.clone()),
            text(&w.url),
            text(&serde_json::to_string(&w.events).unwrap_or_default()),
            SqlValue::Text(w.description.clone()),
            SqlValue::Bool(Some(w.enabled)),
            SqlValue::Text(w.disabled_reason.clone()),
            text(&w.created_at),
            text(&w.updated_at),
            int(w.enabled_since),
        ];
        let scope = format!("restgen_webhook:{}", w.owner_id.as_deref().unwrap_or("*"));
        Ok(self.insert_below_limit(&scope, sql, args).await? == 1)
    }

    /// Replaces what a subscriber may change of a subscription.
    /// A subscriber's change ends a pause of its endpoint: a new URL, or one enabled
    /// again, is tried at once.
    pub(crate) async fn update_webhook(&self, w: &WebhookRow) -> Result<(), StoreError> {
        let sql = "UPDATE \"restgen_webhook\" SET \"url\" = $2, \"events\" = $3, \"description\" = $4, \
                   \"enabled\" = $5, \"disabled_reason\" = $6, \"updated_at\" = $7, \"enabled_since\" = $8, \
                   \"failures\" = 0, \"paused_until\" = 0 WHERE \"id\" = $1";
        let args = vec![
            text(&w.id),
            text(&w.url),
            text(&serde_json::to_string(&w.events).unwrap_or_default()),
            SqlValue::Text(w.description.clone()),
            SqlValue::Bool(Some(w.enabled)),
            SqlValue::Text(w.disabled_reason.clone()),
            text(&w.updated_at),
            int(w.enabled_since),
        ];
        let n = writing!(self, pool => leased!(pool, c => bind(sql, args).execute(c))?.rows_affected());
        if n == 0 { Err(StoreError::NotFound) } else { Ok(()) }
    }

    pub(crate) async fn webhook(&self, id: &str) -> Result<Option<WebhookRow>, StoreError> {
        let sql = "SELECT * FROM \"restgen_webhook\" WHERE \"id\" = $1";
        Ok(on_pool!(self, pool => match leased!(pool, c => bind(sql, vec![text(id)]).fetch_optional(c))? {
            Some(r) => Some(webhook_of(&r)?),
            None => None,
        }))
    }

    /// The subscriptions of `owner` (every one with `None`), newest first, at most `max`.
    pub(crate) async fn webhooks(&self, owner: Option<&str>, max: u32) -> Result<Vec<WebhookRow>, StoreError> {
        let (filter, args) = match owner {
            Some(o) => ("WHERE \"owner_id\" = $1", vec![text(o)]),
            None => ("", Vec::new()),
        };
        let sql =
            format!("SELECT * FROM \"restgen_webhook\" {filter} ORDER BY \"created_at\" DESC, \"id\" DESC LIMIT {max}");
        Ok(on_pool!(self, pool => {
            let rows = leased!(pool, c => bind(sql, args).fetch_all(c))?;
            rows.iter().map(webhook_of).collect::<Result<Vec<_>, _>>()?
        }))
    }

    /// Deletes a subscription and, with it, its deliveries.
    pub(crate) async fn delete_webhook(&self, id: &str) -> Result<(), StoreError> {
        writing!(self, pool => {
            let mut lease = pool.acquire().await?;
            let mut tx = begin(&mut lease, None).await?;
            bind("DELETE FROM \"restgen_delivery\" WHERE \"webhook_id\" = $1", vec![text(id)]).execute(&mut *tx).await?;
            let n = bind("DELETE FROM \"restgen_webhook\" WHERE \"id\" = $1", vec![text(id)]).execute(&mut *tx).await?.rows_affected();
            if n == 0 {
                return Err(StoreError::NotFound);
            }
            tx.commit().await?;
            lease.settle();
        });
        Ok(())
    }

    /// Every enabled subscription (the dispatcher matches each event against them).
    pub(crate) async fn enabled_webhooks(&self) -> Result<Vec<WebhookRow>, StoreError> {
        let sql = "SELECT * FROM \"restgen_webhook\" WHERE \"enabled\" = TRUE";
        Ok(on_pool!(self, pool => {
            let rows = leased!(pool, c => bind(sql, Vec::new()).fetch_all(c))?;
            rows.iter().map(webhook_of).collect::<Result<Vec<_>, _>>()?
        }))
    }

    /// The outbox as the metrics show it: when (Unix microseconds) the oldest event still
    /// waiting was made, one not yet given its deliveries or with one still pending, and
    /// how many subscriptions are disabled.
    pub(crate) async fn outbox_state(&self) -> Result<(Option<i64>, i64), StoreError> {
        let oldest = "SELECT MIN(\"t\") FROM (\
             SELECT MIN(\"created_at\") AS \"t\" FROM \"restgen_event\" WHERE \"dispatched\" = FALSE \
             UNION ALL SELECT MIN(\"created_at\") FROM \"restgen_delivery\" WHERE \"status\" = 'pending') AS \"waiting\"";
        let disabled = "SELECT COUNT(*) FROM \"restgen_webhook\" WHERE \"enabled\" = FALSE";
        Ok(on_pool!(self, pool => {
            let oldest: Option<i64> = leased!(pool, c => bind(oldest, Vec::new()).fetch_one(c))?.try_get(0)?;
            let disabled: i64 = leased!(pool, c => bind(disabled, Vec::new()).fetch_one(c))?.try_get(0)?;
            (oldest, disabled)
        }))
    }

    /// Stops deliveries to a subscription, saying why; whether it was enabled until now
    /// (the first of its failing deliveries disables it, the others find it done).
    pub(crate) async fn disable_webhook(&self, id: &str, reason: &str, now: &str) -> Result<bool, StoreError> {
        let sql = "UPDATE \"restgen_webhook\" SET \"enabled\" = FALSE, \"disabled_reason\" = $2, \"updated_at\" = $3 \
                   WHERE \"id\" = $1 AND \"enabled\" = TRUE";
        let changed = writing!(self, pool => leased!(pool, c => bind(sql, vec![text(id), text(reason), text(now)]).execute(c))?.rows_affected());
        Ok(changed > 0)
    }

    /// Claims up to `n` events not yet dispatched (nor claimed by another worker) until
    /// `until`.
    pub(crate) async fn claim_events(&self, now: i64, until: i64, n: u32) -> Result<Vec<EventRow>, StoreError> {
        let lock = self.skip_locked();
        let sql = format!(
            "UPDATE \"restgen_event\" SET \"claimed_until\" = $2 WHERE \"id\" IN (\
               SELECT \"id\" FROM \"restgen_event\" WHERE \"dispatched\" = FALSE \
               AND (\"claimed_until\" IS NULL OR \"claimed_until\" < $1) \
               ORDER BY \"created_at\", \"id\" LIMIT {n}{lock}) \
             RETURNING \"id\", \"type\", \"resource\", \"payload\", \"created_at\""
        );
        let mut events = writing!(self, pool => {
            let rows = leased!(pool, c => bind(sql, vec![int(now), int(until)]).fetch_all(c))?;
            rows.iter()
                .map(|r| -> Result<EventRow, sqlx::Error> {
                    Ok(EventRow {
                        id: r.try_get("id")?,
                        kind: r.try_get("type")?,
                        resource: r.try_get("resource")?,
                        payload: r.try_get("payload")?,
                        created_at: r.try_get("created_at")?,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?
        });
        events.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(events)
    }

    /// Writes one delivery per recipient of `event`, due at once, and marks it dispatched,
    /// in one transaction (again for an event already dispatched: nothing twice).
    pub(crate) async fn dispatch(&self, event: &str, recipients: &[String], now: i64) -> Result<(), StoreError> {
        writing!(self, pool => {
            let mut lease = pool.acquire().await?;
            let mut tx = begin(&mut lease, None).await?;
            for webhook in recipients {
                let id = format!("dlv_{}", uuid::Uuid::now_v7().simple());
                bind(
                    "INSERT INTO \"restgen_delivery\" (\"id\", \"event_id\", \"webhook_id\", \"status\", \"attempts\", \
                     \"next_attempt_at\", \"history\", \"created_at\", \"updated_at\") \
                     VALUES ($1, $2, $3, 'pending', 0, $4, '[]', $4, $4) ON CONFLICT (\"event_id\", \"webhook_id\") DO NOTHING",
                    vec![text(&id), text(event), text(webhook), int(now)],
                )
                .execute(&mut *tx)
                .await?;
            }
            bind("UPDATE \"restgen_event\" SET \"dispatched\" = TRUE, \"claimed_until\" = NULL WHERE \"id\" = $1", vec![text(event)])
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            lease.settle();
        });
        Ok(())
    }

    /// Claims up to `n` deliveries that are due (and nobody else's) until `until`, each
    /// with its event's payload and its subscription's URL, shared fairly between the
    /// subscriptions' owners: round-robin by owner, each owner's oldest first, and none of
    /// an owner who has `per_owner` claimed already (by any instance). Deliveries of a
    /// subscription paused after its endpoint did not answer wait for the pause to end.
    pub(crate) async fn claim_deliveries(
        &self,
        now: i64,
        until: i64,
        n: u32,
        per_owner: u32,
    ) -> Result<Vec<Claimed>, StoreError> {
        // `place` is a delivery's turn within its owner's: its rank among the owner's due
        // deliveries, after those of the owner's already claimed. Ordered by it, one
        // delivery of every owner comes before the second of any. The update checks the
        // claim again, so that of two workers choosing the same row only one takes it.
        let sql = format!(
            "WITH \"due\" AS (\
               SELECT d.\"id\", d.\"next_attempt_at\", COALESCE(w.\"owner_id\", '') AS \"owner\" \
               FROM \"restgen_delivery\" d JOIN \"restgen_webhook\" w ON w.\"id\" = d.\"webhook_id\" \
               WHERE d.\"status\" = 'pending' AND d.\"next_attempt_at\" <= $1 \
               AND (d.\"locked_until\" IS NULL OR d.\"locked_until\" < $1) AND w.\"paused_until\" <= $1), \
             \"busy\" AS (\
               SELECT COALESCE(w.\"owner_id\", '') AS \"owner\", COUNT(*) AS \"n\" \
               FROM \"restgen_delivery\" d JOIN \"restgen_webhook\" w ON w.\"id\" = d.\"webhook_id\" \
               WHERE d.\"status\" = 'pending' AND d.\"locked_until\" >= $1 GROUP BY COALESCE(w.\"owner_id\", '')), \
             \"ranked\" AS (\
               SELECT \"due\".\"id\", \"due\".\"next_attempt_at\", \
               ROW_NUMBER() OVER (PARTITION BY \"due\".\"owner\" ORDER BY \"due\".\"next_attempt_at\", \"due\".\"id\") \
                 + COALESCE(\"busy\".\"n\", 0) AS \"place\" \
               FROM \"due\" LEFT JOIN \"busy\" ON \"busy\".\"owner\" = \"due\".\"owner\") \
             UPDATE \"restgen_delivery\" SET \"locked_until\" = $2 WHERE \"id\" IN (\
               SELECT \"id\" FROM \"ranked\" WHERE \"place\" <= {per_owner} \
               ORDER BY \"place\", \"next_attempt_at\", \"id\" LIMIT {n}) \
             AND \"status\" = 'pending' AND (\"locked_until\" IS NULL OR \"locked_until\" < $1) \
             RETURNING \"id\""
        );
        let ids: Vec<String> = writing!(self, pool => {
            let rows = leased!(pool, c => bind(sql, vec![int(now), int(until)]).fetch_all(c))?;
            rows.iter().map(|r| r.try_get::<String, _>(0)).collect::<Result<Vec<_>, _>>()?
        });
        let mut out = Vec::new();
        for id in ids {
            let sql = format!(
                "SELECT {DELIVERY_COLUMNS}, e.\"payload\", e.\"resource\", w.\"url\", w.\"owner_id\", w.\"failures\" FROM \"restgen_delivery\" d \
                 JOIN \"restgen_event\" e ON e.\"id\" = d.\"event_id\" JOIN \"restgen_webhook\" w ON w.\"id\" = d.\"webhook_id\" \
                 WHERE d.\"id\" = $1"
            );
            let row = on_pool!(self, pool => match leased!(pool, c => bind(sql, vec![text(&id)]).fetch_optional(c))? {
                Some(r) => Some(Claimed {
                    delivery: delivery_of(&r)?,
                    payload: r.try_get("payload")?,
                    resource: r.try_get("resource")?,
                    url: r.try_get("url")?,
                    owner_id: r.try_get("owner_id")?,
                    failures: r.try_get("failures")?,
                }),
                None => None,
            });
            out.extend(row);
        }
        Ok(out)
    }

    /// Records an attempt: `status` is the delivery's new state (`pending` with the next
    /// attempt's time, `succeeded` or `failed`), and the claim is released.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn record_attempt(
        &self,
        id: &str,
        status: &str,
        attempts: i64,
        next_attempt_at: Option<i64>,
        answer: Option<i64>,
        error: Option<&str>,
        history: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        let sql = "UPDATE \"restgen_delivery\" SET \"status\" = $2, \"attempts\" = $3, \"next_attempt_at\" = $4, \
                   \"last_status\" = $5, \"last_error\" = $6, \"history\" = $7, \"updated_at\" = $8, \"locked_until\" = NULL \
                   WHERE \"id\" = $1";
        let args = vec![
            text(id),
            text(status),
            int(attempts),
            SqlValue::Int(next_attempt_at),
            SqlValue::Int(answer),
            SqlValue::Text(error.map(str::to_owned)),
            text(history),
            int(now),
        ];
        writing!(self, pool => leased!(pool, c => bind(sql, args).execute(c))?.rows_affected());
        Ok(())
    }

    /// The deliveries of one subscription, newest first, at most `max`.
    pub(crate) async fn deliveries(&self, webhook: &str, max: u32) -> Result<Vec<DeliveryRow>, StoreError> {
        let sql = format!(
            "SELECT {DELIVERY_COLUMNS} FROM \"restgen_delivery\" d JOIN \"restgen_event\" e ON e.\"id\" = d.\"event_id\" \
             WHERE d.\"webhook_id\" = $1 ORDER BY d.\"created_at\" DESC, d.\"id\" DESC LIMIT {max}"
        );
        Ok(on_pool!(self, pool => {
            let rows = leased!(pool, c => bind(sql, vec![text(webhook)]).fetch_all(c))?;
            rows.iter().map(delivery_of).collect::<Result<Vec<_>, _>>()?
        }))
    }

    /// One delivery of one subscription.
    pub(crate) async fn delivery(&self, webhook: &str, id: &str) -> Result<Option<DeliveryRow>, StoreError> {
        let sql = format!(
            "SELECT {DELIVERY_COLUMNS} FROM \"restgen_delivery\" d JOIN \"restgen_event\" e ON e.\"id\" = d.\"event_id\" \
             WHERE d.\"webhook_id\" = $1 AND d.\"id\" = $2"
        );
        Ok(
            on_pool!(self, pool => match leased!(pool, c => bind(sql, vec![text(webhook), text(id)]).fetch_optional(c))? {
                Some(r) => Some(delivery_of(&r)?),
                None => None,
            }),
        )
    }

    /// Sends a delivery again: due now, with a fresh round of attempts.
    pub(crate) async fn resend(&self, id: &str, now: i64) -> Result<(), StoreError> {
        let sql = "UPDATE \"restgen_delivery\" SET \"status\" = 'pending', \"attempts\" = 0, \"next_attempt_at\" = $2, \
                   \"updated_at\" = $2 WHERE \"id\" = $1";
        writing!(self, pool => leased!(pool, c => bind(sql, vec![text(id), int(now)]).execute(c))?.rows_affected());
        Ok(())
    }

    /// ` FOR UPDATE SKIP LOCKED` where rows can be locked (PostgreSQL): of workers racing
    /// for the same rows, each gets others.
    fn skip_locked(&self) -> &'static str {
        match self.dialect {
            Dialect::Postgres => " FOR UPDATE SKIP LOCKED",
            Dialect::Sqlite => "",
        }
    }
}
