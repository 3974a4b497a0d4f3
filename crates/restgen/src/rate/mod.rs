//! Rate limits (`rate_limit` in the schema): every request on a limited route counts
//! against its caller's budget, and every answer says how much is left in the `RateLimit`
//! and `RateLimit-Policy` fields (draft-ietf-httpapi-ratelimit-headers); past the budget
//! the answer is 429 with `Retry-After`. Under a leaky bucket a request that finds others
//! waiting is held until its turn, so the service sees a constant rate.
//!
//! Budgets live in this process on SQLite, a single-machine database, and in
//! PostgreSQL when the service runs on it, so that every instance counts against the
//! same budgets. One pure implementation of the algorithms (the private `algorithm` module) serves
//! both.

pub(crate) mod address;
mod algorithm;

use crate::caller::Caller;
use crate::clock::Clock;
use crate::problem::Problem;
use crate::spec::{RateKey, RateSpec, ResourceSpec};
use crate::store::{Budget, Dialect, Store};
use address::Proxies;
use algorithm::{Quota, Verdict};
use axum::extract::{ConnectInfo, MatchedPath, Request};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

const RATELIMIT: HeaderName = HeaderName::from_static(restgen_wire::http::RATELIMIT.lowercase);
const RATELIMIT_POLICY: HeaderName = HeaderName::from_static(restgen_wire::http::RATELIMIT_POLICY.lowercase);

/// How often expired budgets are dropped.
const SWEEP_EVERY: i64 = 60_000_000;
/// Tries of a budget's compare-and-swap before the request is refused. Every lost race
/// is another request's win, so only a caller with more requests in flight on one
/// budget than this loses that many in a row.
const MAX_SWAPS: usize = 64;

/// What a deployment decides about rate limits beside the schema.
#[derive(Clone, Debug)]
pub struct RateSettings {
    /// Multiplies every quota and refill rate of the schema (`<SERVICE>_RATE_LIMIT_SCALE`):
    /// above 1 for a load test or a judge that must not be throttled, below 1 to tighten.
    pub scale: f64,
}

impl Default for RateSettings {
    fn default() -> Self {
        RateSettings { scale: 1.0 }
    }
}

impl RateSettings {
    /// `<SERVICE>_RATE_LIMIT_SCALE` as [`RateSettings::scale`]: a positive number.
    pub fn from_lookup(service: &str, var: impl Fn(&str) -> Option<String>) -> Result<RateSettings, String> {
        let name = format!("{}_RATE_LIMIT_SCALE", crate::settings::env_prefix(service));
        let scale = crate::settings::positive_var(&name, var, |s: &f64| s.is_finite() && *s > 0.0)?.unwrap_or(1.0);
        Ok(RateSettings { scale })
    }
}

/// Budget states by bucket, each with the time it expires.
type States = Mutex<HashMap<String, (Budget, i64)>>;

/// The states, locked: a request that panicked holding them left nothing half-written (each
/// change is one insert or one sweep), so they are used as they are.
fn held(states: &States) -> std::sync::MutexGuard<'_, HashMap<String, (Budget, i64)>> {
    states.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Drops the states that expired by `now`.
fn sweep(states: &mut HashMap<String, (Budget, i64)>, now: i64) {
    states.retain(|_, (_, expires_at)| *expires_at > now);
}

/// Where budgets are kept.
enum Budgets {
    Memory(States),
    /// In the database, with the state this instance last wrote of each (and when it
    /// expires): what the next request decides on first, written only if the database
    /// still holds it, so a request takes one statement while the budget is this
    /// instance's alone (see [`shared`]).
    Shared(Store, States),
}

/// The limits of one service and the budgets they count against.
pub(crate) struct Limiter {
    budgets: Budgets,
    settings: RateSettings,
    clock: Clock,
    proxies: Proxies,
    /// The service's own limit: routes of no resource, and credentials that fail.
    default: Option<RateSpec>,
    /// Route pattern (as axum matched it) to its resource's own limit, if it has one.
    routes: HashMap<String, Option<RateSpec>>,
    last_sweep: AtomicI64,
}

/// The limits a service declares, as the runtime needs them.
pub(crate) struct Limits<'a> {
    pub default: Option<RateSpec>,
    pub resources: &'a [&'static ResourceSpec],
    pub base_path: &'a str,
    pub trusted_proxies: &'a [&'static str],
    pub proxy_header: crate::spec::ProxyHeader,
}

impl Limiter {
    /// `None` when the service declares no limit at all.
    pub fn new(
        limits: Limits<'_>,
        store: &Store,
        settings: RateSettings,
        clock: Clock,
    ) -> Result<Option<Limiter>, String> {
        let mut routes = HashMap::new();
        for spec in limits.resources {
            for path in spec.route_paths(limits.base_path) {
                routes.insert(path, spec.rate_limit);
            }
        }
        if limits.default.is_none() && routes.values().all(Option::is_none) {
            return Ok(None);
        }
        let budgets = match store.dialect() {
            Dialect::Postgres => Budgets::Shared(store.clone(), Mutex::new(HashMap::new())),
            Dialect::Sqlite => Budgets::Memory(Mutex::new(HashMap::new())),
        };
        Ok(Some(Limiter {
            budgets,
            last_sweep: AtomicI64::new(clock.now()),
            settings,
            clock,
            proxies: Proxies::parse(limits.trusted_proxies, limits.proxy_header)?,
            default: limits.default,
            routes,
        }))
    }

    /// The limit of the route `request` was routed to: its resource's, the service's
    /// default for other routes (login, API keys, unknown paths), none where exempt.
    fn limit_of(&self, extensions: &Extensions) -> Option<RateSpec> {
        match extensions.get::<MatchedPath>() {
            Some(path) => self.routes.get(path.as_str()).copied().flatten().or(self.default),
            None => self.default,
        }
    }

    /// The budget key of the caller under `key`, falling back from an API key to its
    /// account and from an account to the address.
    fn caller_key(&self, key: RateKey, extensions: &Extensions, headers: &HeaderMap) -> String {
        let principal = extensions.get::<Caller>().and_then(|c| c.principal.as_ref());
        if key == RateKey::ApiKey
            && let Some(id) = principal.and_then(|p| p.api_key.as_deref())
        {
            return format!("k:{id}");
        }
        if key != RateKey::Ip
            && let Some(p) = principal
        {
            return format!("p:{}", p.id);
        }
        address::key(self.address(extensions, headers))
    }

    /// The client's address; unspecified when the server was not started with
    /// connection info (every such request then shares one budget).
    fn address(&self, extensions: &Extensions, headers: &HeaderMap) -> IpAddr {
        let peer = extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |ConnectInfo(addr)| addr.ip());
        self.proxies.client(peer, headers)
    }

    /// Counts one request of `who` against `limit`.
    async fn check(&self, limit: RateSpec, who: &str) -> Checked {
        let quota = Quota::scaled(limit.algorithm, self.settings.scale);
        let bucket = format!("{}/{}|{who}", limit.name, quota.tag());
        let now = self.clock.now();
        let verdict = match &self.budgets {
            Budgets::Memory(map) => {
                let mut map = held(map);
                if self.sweep_due(now) {
                    sweep(&mut map, now);
                }
                let verdict = algorithm::decide(quota, map.get(&bucket).map(|(s, _)| *s), now);
                if verdict.allowed {
                    map.insert(bucket, (verdict.state, verdict.expires_at));
                }
                verdict
            }
            Budgets::Shared(store, seen) => {
                if self.sweep_due(now) {
                    sweep(&mut held(seen), now);
                    let store = store.clone();
                    let within = std::time::Duration::from_micros(SWEEP_EVERY.unsigned_abs());
                    crate::store::sweep("rate limit: cannot drop expired budgets", within, async move {
                        store.sweep_budgets(now).await
                    });
                }
                match shared(store, seen, quota, &bucket, now).await {
                    Ok(v) => v,
                    Err(e) => {
                        // The database that holds the budgets holds the records too: the
                        // request would fail anyway, and the handler says so better.
                        tracing::error!(error = %e, "rate limit: budgets unavailable; request let through");
                        return Checked { limit, quota, verdict: None };
                    }
                }
            }
        };
        Checked { limit, quota, verdict: Some(verdict) }
    }

    fn sweep_due(&self, now: i64) -> bool {
        let last = self.last_sweep.load(Ordering::Relaxed);
        now - last >= SWEEP_EVERY
            && self.last_sweep.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    }
}

/// Decides on the budget's state and writes the new one back only if the database still
/// holds the state decided on; a lost race decides again on the state the database
/// answered with. The first decision is on the state this instance last wrote (`seen`; none
/// where it wrote none, as for a new caller), so while a budget is this instance's alone a
/// request costs one statement, where reading first cost two. A request is let through
/// only by a write from the state it was decided on, and refused only on a state the
/// database answered with (a refusal on a state seen before is decided again on the
/// stored one): the same answers as reading first.
async fn shared(
    store: &Store,
    seen: &States,
    quota: Quota,
    bucket: &str,
    now: i64,
) -> Result<Verdict, crate::store::StoreError> {
    let mut state = held(seen).get(bucket).map(|(s, _)| *s);
    // Whether `state` is what the database answered with, not what this instance wrote.
    let mut stored = false;
    for _ in 0..MAX_SWAPS {
        let verdict = algorithm::decide(quota, state, now);
        if !verdict.allowed {
            if stored {
                return Ok(verdict);
            }
            state = store.budget(bucket).await?;
            stored = true;
            continue;
        }
        match store.swap_budget(bucket, state, verdict.state, verdict.expires_at).await? {
            Ok(()) => {
                held(seen).insert(bucket.to_owned(), (verdict.state, verdict.expires_at));
                return Ok(verdict);
            }
            Err(found) => (state, stored) = (found, true),
        }
    }
    let refused = algorithm::decide(quota, None, now);
    Ok(Verdict { allowed: false, remaining: 0, retry_after: 1_000_000, ..refused })
}

/// One request's check, with what its answer says about the budget.
struct Checked {
    limit: RateSpec,
    quota: Quota,
    /// `None` when the budgets could not be read.
    verdict: Option<Verdict>,
}

impl Checked {
    fn refused(&self) -> bool {
        self.verdict.is_some_and(|v| !v.allowed)
    }

    /// `RateLimit-Policy` and `RateLimit` on `headers`.
    fn write(&self, headers: &mut HeaderMap) {
        let Some(v) = self.verdict else { return };
        let name = self.limit.name;
        let policy = format!("\"{name}\";q={};w={}", self.quota.limit(), self.quota.window_seconds());
        let now = format!("\"{name}\";r={};t={}", v.remaining.max(0), seconds(v.reset));
        for (field, value) in [(RATELIMIT_POLICY, policy), (RATELIMIT, now)] {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(field, value);
            }
        }
    }

    /// 429 with `Retry-After` and the budget's fields.
    fn too_many(&self) -> Response {
        let wait = self.verdict.map_or(1, |v| seconds(v.retry_after).max(1));
        let plural = if wait == 1 { "" } else { "s" };
        let detail =
            format!("too many requests under the `{}` rate limit; retry in {wait} second{plural}", self.limit.name);
        let mut response = Problem::new(StatusCode::TOO_MANY_REQUESTS, detail)
            .with_header(header::RETRY_AFTER, HeaderValue::from(wait))
            .into_response();
        self.write(response.headers_mut());
        response
    }
}

/// Whole seconds, rounded up: a client that waits that long is never early.
fn seconds(micros: i64) -> i64 {
    (micros.max(0) + 999_999) / 1_000_000
}

/// The middleware: counts the request against its route's limit, answers 429 past it,
/// and writes the budget's fields on the answer. Runs after the caller is known.
pub(crate) async fn enforce(limiter: Arc<Limiter>, request: Request, next: Next) -> Response {
    let Some(limit) = limiter.limit_of(request.extensions()) else { return next.run(request).await };
    let who = limiter.caller_key(limit.key, request.extensions(), request.headers());
    let checked = limiter.check(limit, &who).await;
    if checked.refused() {
        crate::current::refused_by(limit.name);
        return checked.too_many();
    }
    // A leaky bucket's request waits its turn (its place in the bucket is already taken,
    // so the requests after it are spaced after it).
    if let Some(v) = checked.verdict.filter(|v| v.delay > 0) {
        limiter.clock.sleep(v.delay).await;
    }
    let mut response = next.run(request).await;
    checked.write(response.headers_mut());
    response
}

/// The answer to a request whose credentials failed: they count against the address in
/// the service's default limit, so guessing passwords or keys is throttled like any
/// other traffic; past it the answer is 429 instead of `refusal`.
pub(crate) async fn refuse(limiter: Option<&Limiter>, request: &Parts, refusal: Response) -> Response {
    let Some((limiter, limit)) = limiter.and_then(|l| Some((l, l.default?))) else { return refusal };
    let who = address::key(limiter.address(&request.extensions, &request.headers));
    let checked = limiter.check(limit, &who).await;
    if checked.refused() {
        crate::current::refused_by(limit.name);
        return checked.too_many();
    }
    let mut refusal = refusal;
    checked.write(refusal.headers_mut());
    refusal
}
