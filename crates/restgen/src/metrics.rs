//! The service's metrics, in the Prometheus text format, served at `/metrics` on a
//! listener of their own (`<SERVICE>_METRICS_BIND`, [`crate::observe`]), never on the
//! public port.
//!
//! Every label is one of the schema's names or a fixed word: a caller cannot add a series
//! (a path, an id, a header of theirs never becomes a label), so the number of series is
//! bounded by the schema.

use crate::current::Facts;
use crate::store::Store;
use axum::http::StatusCode;
#[cfg(feature = "webhooks")]
use prometheus::Gauge;
use prometheus::{
    Counter, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry, TextEncoder,
};
use std::time::Duration;

/// Where request durations are counted, in seconds: from a millisecond (a read served
/// from a warm database) to ten seconds (past any sensible `request_timeout`'s alert).
const BUCKETS: [f64; 13] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// The metrics of one service: what its requests did, counted as they are answered, and
/// its database pool, read when scraped. Served by `restgen::serve::main` where
/// `<SERVICE>_METRICS_BIND` asks for them.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    duration: HistogramVec,
    in_flight: IntGauge,
    refusals: IntCounterVec,
    replays: IntCounterVec,
    pool: IntGaugeVec,
    pool_waiting: IntGauge,
    pool_max: IntGauge,
    store: Totals,
    #[cfg(feature = "webhooks")]
    webhooks: Deliveries,
}

/// What the store counts itself (its pool's takes and closings, the migrations it
/// applied), brought to its totals at each scrape; one scrape at a time, so that two never
/// add the same difference.
struct Totals {
    acquires: IntCounter,
    waited: Counter,
    closed: IntCounterVec,
    migrations: IntCounter,
    syncing: std::sync::Mutex<()>,
}

/// The webhook worker's counts, and the outbox as the database has it.
#[cfg(feature = "webhooks")]
struct Deliveries {
    attempts: IntCounterVec,
    deliveries: IntCounterVec,
    disabling: IntCounter,
    outbox_lag: Gauge,
    disabled: IntGauge,
}

impl Metrics {
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let counter = |name: &str, help: &str, labels: &[&str]| {
            let counter = IntCounterVec::new(Opts::new(name, help), labels).expect("a valid counter");
            registry.register(Box::new(counter.clone())).expect("registered once");
            counter
        };
        let gauge = |name: &str, help: &str| {
            let gauge = IntGauge::new(name, help).expect("a valid gauge");
            registry.register(Box::new(gauge.clone())).expect("registered once");
            gauge
        };
        let requests = counter(
            "restgen_http_requests_total",
            "Requests answered, by the resource and operation that answered and the status class.",
            &["resource", "operation", "status"],
        );
        let duration = HistogramVec::new(
            HistogramOpts::new(
                "restgen_http_request_duration_seconds",
                "Time from a request's head to its answer's head, by resource and operation.",
            )
            .buckets(BUCKETS.to_vec()),
            &["resource", "operation"],
        )
        .expect("a valid histogram");
        registry.register(Box::new(duration.clone())).expect("registered once");
        let in_flight = gauge("restgen_http_requests_in_flight", "Requests being answered now.");
        let refusals = counter(
            "restgen_rate_limit_refusals_total",
            "Requests refused with 429 by a rate limit, by policy (`default` or the resource's name).",
            &["policy"],
        );
        let replays = counter(
            "restgen_idempotent_replays_total",
            "Answers given again for a repeated Idempotency-Key, by resource and operation.",
            &["resource", "operation"],
        );
        let pool = IntGaugeVec::new(
            Opts::new("restgen_db_pool_connections", "Database connections open, by state (`busy`, `idle`)."),
            &["state"],
        )
        .expect("a valid gauge");
        registry.register(Box::new(pool.clone())).expect("registered once");
        let pool_waiting = gauge("restgen_db_pool_waiting", "Requests waiting for a database connection now.");
        let pool_max = gauge("restgen_db_pool_max_connections", "The most database connections the pool opens.");
        let store = Totals {
            acquires: IntCounter::new(
                "restgen_db_pool_acquires_total",
                "Takes of a database connection, given one or timed out.",
            )
            .expect("a valid counter"),
            waited: Counter::new(
                "restgen_db_pool_wait_seconds_total",
                "Time takes of a database connection waited for one, in all.",
            )
            .expect("a valid counter"),
            closed: counter(
                "restgen_db_pool_connections_closed_total",
                "Database connections closed, by reason: `broken` (their check failed or went unanswered), \
                 `lifetime` (DATABASE_MAX_LIFETIME), `idle` (DATABASE_IDLE_TIMEOUT).",
                &["reason"],
            ),
            migrations: IntCounter::new(
                "restgen_migrations_applied_total",
                "Migrations this instance applied to its database at start.",
            )
            .expect("a valid counter"),
            syncing: std::sync::Mutex::new(()),
        };
        for counter in [store.acquires.clone(), store.migrations.clone()] {
            registry.register(Box::new(counter)).expect("registered once");
        }
        registry.register(Box::new(store.waited.clone())).expect("registered once");
        for reason in ["broken", "lifetime", "idle"] {
            store.closed.with_label_values(&[reason]);
        }
        #[cfg(feature = "webhooks")]
        let webhooks = Deliveries::new(&registry);
        Metrics {
            registry,
            requests,
            duration,
            in_flight,
            refusals,
            replays,
            pool,
            pool_waiting,
            pool_max,
            store,
            #[cfg(feature = "webhooks")]
            webhooks,
        }
    }

    /// A request begins.
    pub(crate) fn started(&self) {
        self.in_flight.inc();
    }

    /// A request ended: answered with `status` after `took`, having done `facts`; or, with
    /// no status, given up (its client gone) before its answer.
    pub(crate) fn ended(&self, facts: Facts, answered: Option<(StatusCode, Duration)>) {
        self.in_flight.dec();
        let Some((status, took)) = answered else { return };
        let (resource, operation) = (facts.resource, facts.operation);
        self.requests.with_label_values(&[resource, operation, class(status)]).inc();
        self.duration.with_label_values(&[resource, operation]).observe(took.as_secs_f64());
        if let Some(policy) = facts.refused_by {
            self.refusals.with_label_values(&[policy]).inc();
        }
        if facts.replayed {
            self.replays.with_label_values(&[resource, operation]).inc();
        }
    }

    /// A webhook delivery attempt, answered with `status` or not at all.
    #[cfg(feature = "webhooks")]
    pub(crate) fn attempted(&self, status: Option<u16>) {
        let outcome = match status.and_then(|s| StatusCode::from_u16(s).ok()) {
            Some(status) => class(status),
            None => "error",
        };
        self.webhooks.attempts.with_label_values(&[outcome]).inc();
    }

    /// A webhook delivery finished: delivered, or given up.
    #[cfg(feature = "webhooks")]
    pub(crate) fn delivered(&self, succeeded: bool) {
        self.webhooks.deliveries.with_label_values(&[if succeeded { "succeeded" } else { "failed" }]).inc();
    }

    /// A subscription this instance disabled.
    #[cfg(feature = "webhooks")]
    pub(crate) fn disabled_one(&self) {
        self.webhooks.disabling.inc();
    }

    /// Every metric as Prometheus reads it, the pool's as it is now, and with `outbox` the
    /// outbox's lag and disabled subscriptions as the database has them (left as they were
    /// when it does not answer in time: a scrape never waits on a slow database for long).
    pub(crate) async fn render(&self, store: &Store, outbox: bool, now: i64) -> String {
        #[cfg(feature = "webhooks")]
        if outbox {
            let within = std::time::Duration::from_secs(restgen_model::bounds::READY_WITHIN_SECONDS);
            match tokio::time::timeout(within, store.outbox_state()).await {
                Ok(Ok((oldest, disabled))) => {
                    let lag = oldest.map_or(0, |t| now.saturating_sub(t).max(0));
                    self.webhooks.outbox_lag.set(Duration::from_micros(u64::try_from(lag).unwrap_or(0)).as_secs_f64());
                    self.webhooks.disabled.set(disabled);
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "metrics: cannot read the outbox"),
                Err(_) => tracing::warn!("metrics: the database did not say how the outbox stands in time"),
            }
        }
        #[cfg(not(feature = "webhooks"))]
        let _ = (outbox, now);
        let pool = store.pool_status();
        self.pool.with_label_values(&["busy"]).set(gauge(pool.size.saturating_sub(pool.idle)));
        self.pool.with_label_values(&["idle"]).set(gauge(pool.idle));
        self.pool_waiting.set(gauge(pool.waiting));
        self.pool_max.set(gauge(pool.max));
        self.store.sync(pool, store.migrations_applied());
        TextEncoder::new().encode_to_string(&self.registry.gather()).expect("metrics encode as text")
    }
}

impl Totals {
    /// Brings each counter to the store's total.
    fn sync(&self, pool: crate::store::PoolStatus, migrations: u64) {
        let _one = self.syncing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let to = |counter: &IntCounter, total: u64| counter.inc_by(total.saturating_sub(counter.get()));
        to(&self.acquires, pool.taken);
        to(&self.migrations, migrations);
        let waited = pool.waited.as_secs_f64() - self.waited.get();
        if waited > 0.0 {
            self.waited.inc_by(waited);
        }
        let closed = pool.closed;
        for (reason, total) in [("broken", closed.broken), ("lifetime", closed.expired), ("idle", closed.idle)] {
            to(&self.closed.with_label_values(&[reason]), total);
        }
    }
}

#[cfg(feature = "webhooks")]
impl Deliveries {
    fn new(registry: &Registry) -> Deliveries {
        let register =
            |metric: Box<dyn prometheus::core::Collector>| registry.register(metric).expect("registered once");
        let counter = |name: &str, help: &str, labels: &[&str]| {
            let counter = IntCounterVec::new(Opts::new(name, help), labels).expect("a valid counter");
            register(Box::new(counter.clone()));
            counter
        };
        let attempts = counter(
            "restgen_webhook_attempts_total",
            "Webhook delivery attempts by this instance, by the endpoint's answer (`2xx`...`5xx`, or `error`: none).",
            &["outcome"],
        );
        let deliveries = counter(
            "restgen_webhook_deliveries_total",
            "Webhook deliveries this instance finished, by outcome (`succeeded`, `failed`: given up).",
            &["outcome"],
        );
        let disabling = IntCounter::new(
            "restgen_webhook_subscriptions_disabled_total",
            "Subscriptions this instance disabled (410 Gone, or every attempt of a delivery failed).",
        )
        .expect("a valid counter");
        register(Box::new(disabling.clone()));
        let outbox_lag = Gauge::new(
            "restgen_webhook_outbox_lag_seconds",
            "Age of the oldest event still waiting to be delivered (0: none waits), from the database at scrape.",
        )
        .expect("a valid gauge");
        register(Box::new(outbox_lag.clone()));
        let disabled = IntGauge::new(
            "restgen_webhook_subscriptions_disabled",
            "Subscriptions disabled now, from the database at scrape.",
        )
        .expect("a valid gauge");
        register(Box::new(disabled.clone()));
        Deliveries { attempts, deliveries, disabling, outbox_lag, disabled }
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

fn gauge(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `2xx` for 200 to 299, and so on.
fn class(status: StatusCode) -> &'static str {
    match status.as_u16() / 100 {
        1 => "1xx",
        2 => "2xx",
        3 => "3xx",
        4 => "4xx",
        _ => "5xx",
    }
}
