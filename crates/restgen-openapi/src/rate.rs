//! Rate limits in the document: every answer of a limited route carries `RateLimit` and
//! `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers), and every limited operation
//! may answer 429 with `Retry-After`, as the runtime's `rate` module does.

use crate::paths::PROBES;
use restgen_model::model::{RateAlgorithm, RateKey, RateLimit, Resource, Service};
use restgen_wire::http;
use serde_json::{Value, json};

/// The longest number the runtime writes in the fields (an `i64`).
const DIGITS: usize = 19;

/// Adds the fields and the 429 answer to the shared error answers, and returns the
/// references to the fields that [`limit`] puts on the operations of each limited path
/// (`None` where nothing is limited).
pub(crate) fn document(doc: &mut Value, service: &Service) -> Option<Value> {
    let policies = policies(service);
    if policies.is_empty() {
        return None;
    }
    let longest = policies.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let described: Vec<String> =
        policies.iter().map(|(name, limit)| format!("`{name}`: {}", describe(limit))).collect();
    let field = |what: &str, params: (&str, &str), required: bool| {
        json!({
            "description": format!("{what} Policies: {}.", described.join("; ")),
            "required": required,
            "schema": {
                "type": "string",
                "pattern": format!("^\"[a-z][a-z0-9_]*\";{}=[0-9]{{1,{DIGITS}}};{}=[0-9]{{1,{DIGITS}}}$", params.0, params.1),
                "maxLength": longest + 2 + 2 * (3 + DIGITS),
            },
        })
    };
    let now = "The caller's budget under this route's limit: the policy, `r` the requests left, `t` the seconds until the whole quota is back.";
    let policy = "The route's limit: the policy, `q` its quota of requests, `w` the seconds it is measured over (for a token bucket, the time it takes to refill, so `q/w` is the sustained rate).";
    let components = doc["components"].as_object_mut().expect("components is an object");
    let headers = components.entry("headers").or_insert_with(|| json!({}));
    let (ratelimit, ratelimit_policy) = (http::RATELIMIT.name, http::RATELIMIT_POLICY.name);
    headers[ratelimit] = field(now, ("r", "t"), true);
    headers[ratelimit_policy] = field(policy, ("q", "w"), true);
    let refs = json!({
        (ratelimit): { "$ref": format!("#/components/headers/{ratelimit}") },
        (ratelimit_policy): { "$ref": format!("#/components/headers/{ratelimit_policy}") },
    });
    // Every route but the probes shares the error answers; with a service-wide limit they
    // all carry the fields, else only the limited ones do.
    let shared = if service.rate_limit.is_some() {
        refs.clone()
    } else {
        let when = "Sent on routes with a rate limit.";
        json!({ (ratelimit): field(&format!("{now} {when}"), ("r", "t"), false),
                (ratelimit_policy): field(&format!("{policy} {when}"), ("q", "w"), false) })
    };
    let mut too_many = json!({
        "description": "Too many requests: the caller's budget under this route's limit is spent.",
        "content": { (http::media::PROBLEM): { "schema": { "$ref": "#/components/schemas/Problem" } } },
        "headers": {
            "Retry-After": {
                "description": "Seconds until a request would pass again.",
                "required": true,
                "schema": { "type": "integer", "format": "int32", "minimum": 1, "maximum": i32::MAX },
            },
        },
    });
    merge(&mut too_many["headers"], &refs);
    if let Some(Value::Object(responses)) = doc["components"].get_mut("responses") {
        for (name, response) in responses.iter_mut() {
            if name.starts_with("Error4") {
                merge(response.as_object_mut().unwrap().entry("headers").or_insert_with(|| json!({})), &shared);
            }
        }
        responses.insert("Error429".into(), too_many);
    }
    Some(refs)
}

/// The fields (`refs`, as [`document`] gave them) on every answer of the limited path
/// `item` but its 5xx, and the 429 among its answers.
pub(crate) fn limit(item: &mut Value, refs: &Value) {
    let Some(item) = item.as_object_mut() else { return };
    for op in item.values_mut().filter_map(|op| op.get_mut("responses")).filter_map(Value::as_object_mut) {
        for (status, response) in op.iter_mut() {
            let inline = response.as_object_mut().filter(|r| !r.contains_key("$ref"));
            if let Some(r) = inline.filter(|_| !status.starts_with('5')) {
                merge(r.entry("headers").or_insert_with(|| json!({})), refs);
            }
        }
        // An answer of its own stays (a change feed's cap on open streams).
        op.entry("429").or_insert_with(|| json!({ "$ref": "#/components/responses/Error429" }));
    }
}

/// Each limit by the name its fields give it: the service's, then the resources' own.
fn policies(service: &Service) -> Vec<(String, &RateLimit)> {
    let mut out: Vec<(String, &RateLimit)> = service.rate_limit.iter().map(|l| ("default".to_owned(), l)).collect();
    for r in &service.resources {
        if let Some(own) = &r.rate_limit {
            out.push((r.rate_limit_name(), own));
        }
    }
    out
}

fn describe(limit: &RateLimit) -> String {
    let per = match limit.key.value {
        RateKey::Principal => "per account (per address for anonymous callers)",
        RateKey::ApiKey => "per API key (per account for other credentials, per address for anonymous callers)",
        RateKey::Ip => "per address",
    };
    let seconds = |d: &std::time::Duration| format!("{} s", d.as_secs_f64());
    match &limit.algorithm {
        RateAlgorithm::TokenBucket { capacity, refill_per_second } => {
            format!("bursts of {capacity}, refilled at {refill_per_second} per second, {per}")
        }
        RateAlgorithm::LeakyBucket { capacity, leak_per_second } => format!(
            "{leak_per_second} per second, evenly spaced: a request that finds others waiting is held until its turn, up to {capacity} at a time, {per}"
        ),
        RateAlgorithm::FixedWindow { limit, window } => format!("{limit} per window of {}, {per}", seconds(window)),
        RateAlgorithm::SlidingWindow { limit, window } => {
            format!("{limit} in any {}, {per}", seconds(window))
        }
    }
}

/// `extra`'s entries into the object `into`.
fn merge(into: &mut Value, extra: &Value) {
    if let (Some(into), Some(extra)) = (into.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            into.insert(k.clone(), v.clone());
        }
    }
}

/// Whether a limit applies to `path`, one of `resource`'s or none's: with a service-wide
/// limit every path but the probes, else those of the resources with their own.
pub(crate) fn limited(service: &Service, path: &str, resource: Option<&Resource>) -> bool {
    if service.rate_limit.is_some() {
        return !PROBES.contains(&path);
    }
    resource.is_some_and(|r| r.rate_limit.is_some())
}
