//! The worker every instance runs (unless told not to): it matches new events of the
//! outbox to the subscriptions whose owners may read the record, then makes the
//! deliveries that are due. Rows are claimed for a while before they are worked on, so
//! instances sharing a database never make the same delivery twice, and one that dies
//! mid-work leaves its claims to expire for another to take.
//!
//! Deliveries are shared fairly between the accounts that own the subscriptions: each
//! delivery is a task of its own, started as soon as there is room (never waiting for the
//! slowest of a batch), at most [`IN_FLIGHT`] at once per instance and [`PER_OWNER`] of one
//! owner's at once among all instances, and the due deliveries are taken round-robin by
//! owner (each owner's oldest first). So an account whose endpoints never answer holds a
//! few places for one attempt's time each, and another account's delivery waits for none
//! of them. An endpoint that keeps not answering (a timeout, a connection that fails) is
//! paused on its own schedule: its subscription's deliveries wait the retry schedule's
//! first delay after one such attempt, then the next, and so on, until it answers again.
//!
//! A delivery succeeds on a 2xx answer; anything else (3xx included: redirects are not
//! followed) is a failed attempt, retried at once and then on Standard Webhooks' example
//! schedule (`restgen_wire::retries`), each delay varied by up to a tenth
//! so that retries of many deliveries spread out, and lengthened to a `Retry-After` the
//! endpoint gave with 429, 502, 503 or 504. After `max_attempts` the delivery fails and its
//! subscription is disabled, saying why; a 410 disables it at once.

use super::Webhooks;
use super::target::PolicyResolver;
use crate::access;
use crate::caller::Caller;
use crate::store::outbox::{Claimed, DeliveryRow, EventRow};
use crate::store::{Record, Store};
use restgen_model::bounds::MAX_DELIVERY_ERROR;
use restgen_wire::http;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tracing::Instrument;

/// Delays before the second, third, ... attempt (the last repeats).
const SCHEDULE: [Duration; 9] = restgen_wire::retries::RETRY_SCHEDULE;

/// The longest wait an endpoint's `Retry-After` can ask for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Events matched per round.
const EVENTS_PER_ROUND: u32 = 50;
/// Deliveries one instance makes at once: each waits on its endpoint, not on a thread, so
/// the bound is memory and sockets, not cores.
pub const IN_FLIGHT: usize = 256;
/// Deliveries of one owner's subscriptions made at once, among all instances.
pub const PER_OWNER: u32 = 8;
/// The longest a connection to an endpoint may take to open: shorter than the answer's
/// timeout, so an address that swallows connection attempts holds a place briefly.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long events and their deliveries are kept once nothing about them is pending, and
/// how often a worker forgets older ones.
pub(crate) const RETENTION: Duration = Duration::from_secs(30 * 24 * 3600);
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// The most of an answer's body read (and thrown away): an endpoint that streams cannot
/// hold a worker.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// A running worker. Dropped, it stops; [`Background::shutdown`] also waits for the
/// deliveries in flight to finish (each is bounded by the timeout).
pub(crate) struct Background {
    stop: watch::Sender<bool>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Background {
    pub(crate) async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// rustls's provider for the process, which every HTTPS client built in it needs: ring,
/// unless the program installed another first (docs/deploy.md, "Outgoing TLS").
pub(crate) fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Starts this instance's worker.
pub(crate) fn start(webhooks: Arc<Webhooks>, store: Store) -> Result<Background, String> {
    install_tls_provider();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(webhooks.spec.timeout)
        .connect_timeout(CONNECT_TIMEOUT.min(webhooks.spec.timeout / 2))
        .dns_resolver(Arc::new(PolicyResolver(webhooks.policy.clone())))
        .user_agent(concat!("restgen-webhooks/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot build the webhook client: {e}"))?;
    let (stop, stopped) = watch::channel(false);
    let task = crate::outlined::spawn(run(webhooks, store, http, stopped));
    Ok(Background { stop, task: Some(task) })
}

async fn run(w: Arc<Webhooks>, store: Store, http: reqwest::Client, mut stopped: watch::Receiver<bool>) {
    // The store's calls are bounded too: one on a connection gone silent (a failover, a
    // NAT that forgot the flow) would wait for good, and this instance would deliver
    // nothing more until it restarted. Given up, its connection is closed as it is given
    // back (`store::lease`) and the next call opens another.
    let bound = w.claim_for();
    let mut pruned: Option<Instant> = None;
    let mut flying: JoinSet<()> = JoinSet::new();
    loop {
        if *stopped.borrow() {
            // Deliveries in flight finish, each within its timeout.
            while flying.join_next().await.is_some() {}
            return;
        }
        if pruned.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
            pruned = Some(Instant::now());
            let before = w.clock.now() - i64::try_from(RETENTION.as_micros()).unwrap_or(i64::MAX);
            match tokio::time::timeout(bound, store.prune_events(before)).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "forgetting old webhook events"),
                Err(_) => tracing::warn!(
                    "forgetting old webhook events took longer than {bound:?}: given up until the next hour"
                ),
            }
        }
        let busy = match tokio::time::timeout(bound, round(&w, &store, &http, &mut flying)).await {
            Ok(Ok(busy)) => busy,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "webhook worker");
                false
            }
            Err(_) => {
                tracing::warn!(
                    "a webhook worker's round ran past its claims ({bound:?}: the database, or the network to it, \
                     may have gone silent): given up, what it claimed is left to be claimed again"
                );
                false
            }
        };
        if busy && flying.len() < IN_FLIGHT {
            continue;
        }
        tokio::select! {
            Some(_) = flying.join_next(), if !flying.is_empty() => {}
            _ = store.signals.outbox.notified() => {}
            _ = tokio::time::sleep(w.settings.poll) => {}
            _ = stopped.changed() => {}
        }
    }
}

/// One round: match new events, then start the due deliveries there is room for, each a
/// task of its own. Whether there was work.
async fn round(
    w: &Arc<Webhooks>,
    store: &Store,
    http: &reqwest::Client,
    flying: &mut JoinSet<()>,
) -> Result<bool, crate::store::StoreError> {
    let now = w.clock.now();
    let lease = i64::try_from(w.claim_for().as_micros()).unwrap_or(i64::MAX);
    let events = store.claim_events(now, now + lease, EVENTS_PER_ROUND).await?;
    for event in &events {
        let recipients = recipients(w, store, event).await?;
        store.dispatch(&event.id, &recipients, now).await?;
    }
    let room = IN_FLIGHT.saturating_sub(flying.len());
    let due = match room {
        0 => Vec::new(),
        room => store.claim_deliveries(now, now + lease, u32::try_from(room).unwrap_or(u32::MAX), PER_OWNER).await?,
    };
    let busy = !events.is_empty() || !due.is_empty();
    for claimed in due {
        let (w, store, http) = (w.clone(), store.clone(), http.clone());
        let bound = w.claim_for();
        // A trace of its own (the request that made the event has long been answered).
        let span = crate::traces::delivery(&claimed.delivery.kind, claimed.delivery.attempts + 1);
        let delivery = async move {
            // Bounded as a round is: past its claim, the delivery is another worker's.
            match tokio::time::timeout(bound, attempt(&w, &store, &http, claimed)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "webhook worker: recording an attempt"),
                Err(_) => tracing::warn!("a webhook delivery ran past its claim ({bound:?}): left to be claimed again"),
            }
        };
        flying.spawn(delivery.instrument(span));
    }
    Ok(busy)
}

/// The subscriptions that receive `event`: enabled, listing its type, and owned by
/// somebody who may read the record as it was at the event (as they are now).
async fn recipients(w: &Webhooks, store: &Store, event: &EventRow) -> Result<Vec<String>, crate::store::StoreError> {
    let Some(spec) = w.resources.iter().find(|r| r.name == event.resource) else { return Ok(Vec::new()) };
    let mut payload: Value = serde_json::from_str(&event.payload).unwrap_or(Value::Null);
    let Some(Value::Object(data)) = payload.get_mut("data").map(Value::take) else { return Ok(Vec::new()) };
    let record = Record::from(data);
    let mut out = Vec::new();
    let subscribed =
        |s: &crate::store::outbox::WebhookRow| s.events.contains(&event.kind) && s.enabled_since <= event.created_at;
    for sub in store.enabled_webhooks().await?.into_iter().filter(subscribed) {
        // An account that is gone reads nothing.
        let Some(caller) = owner_of(w, store, sub.owner_id.as_deref()).await else { continue };
        let may_read = access::collection(spec.access.read, &caller)
            .is_ok_and(|scope| access::record(spec, scope, &caller, &record).is_ok());
        if may_read {
            out.push(sub.id);
        }
    }
    Ok(out)
}

/// The subscription owner as a caller, as they are now: `None` where their account is gone.
async fn owner_of(w: &Webhooks, store: &Store, owner_id: Option<&str>) -> Option<Caller> {
    match (w.auth, owner_id) {
        (Some(auth), Some(owner)) => crate::auth::caller_of(auth, store, owner).await,
        _ => Some(Caller::default()),
    }
}

/// The event's payload as the subscription's owner may see its record now: a field whose
/// `read` does not admit them is left out, as it is of their reads.
async fn as_seen(w: &Webhooks, store: &Store, claimed: &Claimed) -> String {
    let Some(spec) = w.resources.iter().find(|r| r.name == claimed.resource) else { return claimed.payload.clone() };
    if spec.fields.iter().all(|f| f.read.is_none()) {
        return claimed.payload.clone();
    }
    let caller = owner_of(w, store, claimed.owner_id.as_deref()).await.unwrap_or_default();
    let mut payload: Value = serde_json::from_str(&claimed.payload).unwrap_or(Value::Null);
    if let Some(Value::Object(data)) = payload.get_mut("data") {
        let record = Record::from(data.clone());
        for f in spec.fields.iter().filter(|f| !access::reads(spec, f, &caller, &record)) {
            data.shift_remove(f.name);
        }
    }
    payload.to_string()
}

/// One attempt of one delivery, and what it leads to.
async fn attempt(
    w: &Webhooks,
    store: &Store,
    http: &reqwest::Client,
    claimed: Claimed,
) -> Result<(), crate::store::StoreError> {
    let payload = as_seen(w, store, &claimed).await;
    let Claimed { delivery, url, failures, .. } = claimed;
    let started = Instant::now();
    let at = w.clock.now();
    let outcome = send(w, http, &delivery, &payload, &url).await;
    crate::traces::delivered(
        &tracing::Span::current(),
        match outcome {
            Outcome::Answered { status, .. } => Some(status),
            Outcome::Failed(_) => None,
        },
    );
    let metrics = w.metrics.as_deref();
    if let Some(m) = metrics {
        m.attempted(match outcome {
            Outcome::Answered { status, .. } => Some(status),
            Outcome::Failed(_) => None,
        });
    }
    // The endpoint's own schedule: paused after it did not answer, free once it does.
    match &outcome {
        Outcome::Failed(_) => {
            let pause = i64::try_from(delay(failures + 1, None).as_micros()).unwrap_or(i64::MAX);
            store.pause_webhook(&delivery.webhook_id, failures + 1, at.saturating_add(pause)).await?;
        }
        Outcome::Answered { .. } if failures > 0 => store.pause_webhook(&delivery.webhook_id, 0, 0).await?,
        Outcome::Answered { .. } => {}
    }
    let number = delivery.attempts + 1;
    let mut history: Vec<Value> = serde_json::from_str(&delivery.history).unwrap_or_default();
    let (answer, error) = match &outcome {
        Outcome::Answered { status, .. } => (Some(i64::from(*status)), None),
        Outcome::Failed(e) => (None, Some(e.clone())),
    };
    history.push(json!({
        "attempt": number,
        "at": chrono::DateTime::from_timestamp_micros(at).map(crate::clock::format_time),
        "status": answer,
        "error": error,
        "duration_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }));
    let history = Value::Array(history).to_string();
    let now_text = w.clock.timestamp();
    let record = |status: &'static str, next: Option<i64>, error: Option<String>| {
        let history = history.clone();
        async move { store.record_attempt(&delivery.id, status, number, next, answer, error.as_deref(), &history, at).await }
    };
    // Counted once recorded, so that a scrape that sees the count sees the outbox as it
    // is after the attempt.
    let count = |succeeded: bool, disabled: bool| {
        if let Some(m) = metrics {
            m.delivered(succeeded);
            if disabled {
                m.disabled_one();
            }
        }
    };
    match outcome {
        Outcome::Answered { status, .. } if (200..300).contains(&status) => {
            record("succeeded", None, None).await?;
            count(true, false);
            Ok(())
        }
        // The subscription is disabled before the delivery says it failed, so whoever
        // sees the failure sees why deliveries stopped.
        Outcome::Answered { status: 410, .. } => {
            let disabled = store
                .disable_webhook(
                    &delivery.webhook_id,
                    "the endpoint answered 410 Gone: it asked for no more deliveries",
                    &now_text,
                )
                .await?;
            record("failed", None, Some("the endpoint answered 410 Gone".into())).await?;
            count(false, disabled);
            Ok(())
        }
        outcome => {
            let why = match &outcome {
                Outcome::Answered { status, .. } if (300..400).contains(status) => {
                    format!("answered {status}: redirects are not followed")
                }
                Outcome::Answered { status, .. } => format!("answered {status}"),
                Outcome::Failed(e) => e.clone(),
            };
            if number >= i64::from(w.spec.max_attempts) {
                let reason = format!(
                    "{number} attempts of a delivery failed (the last: {why}); enable it again once the endpoint answers"
                );
                let disabled = store.disable_webhook(&delivery.webhook_id, &cut(&reason), &now_text).await?;
                record("failed", None, Some(why)).await?;
                count(false, disabled);
                return Ok(());
            }
            let wait = delay(number, outcome.retry_after());
            record("pending", Some(at + i64::try_from(wait.as_micros()).unwrap_or(i64::MAX)), Some(why)).await
        }
    }
}

enum Outcome {
    Answered { status: u16, retry_after: Option<Duration> },
    Failed(String),
}

impl Outcome {
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Outcome::Answered { status: 429 | 502 | 503 | 504, retry_after } => *retry_after,
            _ => None,
        }
    }
}

async fn send(w: &Webhooks, http: &reqwest::Client, delivery: &DeliveryRow, payload: &str, url: &str) -> Outcome {
    // The URL was checked when it was given; the address is checked again now. A name is
    // checked as it resolves, by the client's resolver; an address literal here.
    let url = match w.policy.form(url) {
        Ok(url) => url,
        Err(why) => return Outcome::Failed(format!("refused: the URL {why}")),
    };
    if let Some(host) = url.host_str().map(|h| h.trim_start_matches('[').trim_end_matches(']'))
        && host.parse::<std::net::IpAddr>().is_ok()
        && let Err(why) = w.policy.addresses(host).await
    {
        return Outcome::Failed(format!("the URL {why}"));
    }
    let timestamp = w.clock.now() / 1_000_000;
    let signature = w.signature(&delivery.webhook_id, &delivery.event_id, timestamp, payload.as_bytes());
    let request = http
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, http::media::JSON)
        .header(http::WEBHOOK_ID.lowercase, &delivery.event_id)
        .header(http::WEBHOOK_TIMESTAMP.lowercase, timestamp.to_string())
        .header(http::WEBHOOK_SIGNATURE.lowercase, signature)
        .body(payload.to_owned());
    // The delivery's trace, for an endpoint that traces what it is sent.
    let request = crate::traces::inject(&tracing::Span::current())
        .into_iter()
        .fold(request, |request, (name, value)| request.header(name, value));
    let mut response = match request.send().await {
        Ok(r) => r,
        Err(e) => return Outcome::Failed(describe(&e, w.spec.timeout)),
    };
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER));
    // Read what the endpoint sends, up to a bound, so the connection can be reused.
    let mut read = 0;
    while read < MAX_ANSWER_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => read += chunk.len(),
            _ => break,
        }
    }
    Outcome::Answered { status, retry_after }
}

/// What went wrong, for the subscriber: every cause, cut to a bound.
fn describe(e: &reqwest::Error, timeout: Duration) -> String {
    if e.is_timeout() {
        return format!("no answer within {} ms", timeout.as_millis());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    cut(&text)
}

fn cut(text: &str) -> String {
    text.chars().take(MAX_DELIVERY_ERROR).collect()
}

/// The wait after attempt `number` (1 for the first): the schedule's, varied by up to a
/// tenth either way, at least what the endpoint asked for.
fn delay(number: i64, asked: Option<Duration>) -> Duration {
    let index = usize::try_from(number - 1).unwrap_or(0).min(SCHEDULE.len() - 1);
    let base = SCHEDULE[index];
    let mut byte = [0u8; 1];
    let _ = getrandom::fill(&mut byte);
    let factor = 0.9 + 0.2 * f64::from(byte[0]) / 255.0;
    base.mul_f64(factor).max(asked.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::spec::{AccessSpec, ResourceSpec, Rule, WebhooksSpec};
    use crate::store::StoreOptions;
    use crate::store::outbox::WebhookRow;
    use crate::store::test_database::{Relay, fresh_schema, until_idle};
    use crate::webhooks::WebhookSettings;
    use tokio::sync::mpsc;

    /// A database connection gone silent under the worker (a failover, a NAT or load
    /// balancer that forgot the flow) holds deliveries up for one round, not for good: the
    /// round is given up when its claims run out, its connection closed as it is given
    /// back, and the next round delivers on a new one.
    #[tokio::test]
    async fn deliveries_go_on_after_the_database_connection_goes_silent() {
        let Some(url) = fresh_schema("t_worker_silent").await else { return };
        let direct = Store::connect(&url).await.unwrap();
        direct.create_runtime_tables().await.unwrap();
        let (relay, relayed) = Relay::to(&url).await;
        // One connection: the one that goes silent is the worker's only one.
        let options = StoreOptions {
            max_connections: Some(1),
            pool_timeout: Duration::from_millis(500),
            ..StoreOptions::default()
        };
        let store = Store::connect_with(&relayed, options).await.unwrap();

        let (delivered, mut deliveries) = mpsc::unbounded_channel::<String>();
        let receiver = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |body: String| {
                let _ = delivered.send(body);
                async { axum::http::StatusCode::NO_CONTENT }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, receiver).await });
        let at = "2026-11-28T00:00:00Z".to_owned();
        let subscription = WebhookRow {
            id: "wh_1".into(),
            owner_id: None,
            url: target,
            events: vec!["note.created".into()],
            description: None,
            enabled: true,
            disabled_reason: None,
            enabled_since: 0,
            created_at: at.clone(),
            updated_at: at,
        };
        direct.insert_webhook(&subscription).await.unwrap();

        static NOTE: ResourceSpec = ResourceSpec {
            name: "note",
            events: &["created"],
            access: AccessSpec { create: &[], read: &[Rule::Anyone], write: &[], delete: &[] },
            ..ResourceSpec::DEFAULT
        };
        static RESOURCES: &[&ResourceSpec] = &[&NOTE];
        let spec = WebhooksSpec { secret_env: "X", max_attempts: 8, timeout: Duration::from_millis(250) };
        let settings = WebhookSettings {
            allow_http: true,
            allow_loopback: true,
            poll: Duration::from_millis(20),
            slack: Duration::from_secs(1),
            ..WebhookSettings::default()
        };
        let webhooks = Webhooks::new(spec, RESOURCES, None, vec![vec![7; 32]], settings, Clock::System);
        let worker = start(Arc::new(webhooks), store.clone()).unwrap();

        // Written beside the service, as another instance would: the worker finds it as it
        // looks for work.
        let publish = async |note: &str| {
            let record = Record::from(json!({ "id": note }).as_object().unwrap().clone());
            direct.publish(&NOTE, "created", &record).await.unwrap();
        };
        // Bounded from above only so that a regression fails rather than hangs.
        let mut next = async || tokio::time::timeout(Duration::from_secs(20), deliveries.recv()).await.ok().flatten();
        publish("n1").await;
        let first = next().await.expect("the first event delivered");
        assert!(first.contains("\"n1\""), "{first}");
        // Its success recorded: the worker waits for work, its connection back in the pool
        // (where the connection goes silent).
        let recorded = tokio::time::timeout(Duration::from_secs(20), async {
            while !direct.deliveries("wh_1", 1).await.unwrap().iter().any(|d| d.status == "succeeded") {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        recorded.await.expect("the first delivery recorded");
        until_idle(&store).await;
        relay.silence();
        publish("n2").await;
        let second = next().await.expect("no delivery since the worker's connection went silent");
        assert!(second.contains("\"n2\""), "the next delivery is the next event's: {second}");
        worker.shutdown().await;
    }

    #[test]
    fn retries_follow_the_schedule_within_a_tenth_and_honour_retry_after() {
        for (number, base) in [(1, 5), (2, 300), (3, 1800), (9, 86400), (20, 86400)] {
            let d = delay(number, None).as_secs_f64();
            assert!((base as f64 * 0.9..=base as f64 * 1.1).contains(&d), "attempt {number}: {d}");
        }
        assert!(delay(1, Some(Duration::from_secs(120))) >= Duration::from_secs(120));
    }
}
