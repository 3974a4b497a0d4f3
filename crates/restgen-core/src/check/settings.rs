//! The values of service-wide settings: request limits, rate limits, trusted proxies and
//! webhook delivery. Every front-end's model is held to the same ranges here.

use crate::diagnostics::{Diagnostics, codes};
use crate::model::{RateAlgorithm, RateLimit, Resource, Service};
use crate::predicates;

pub(super) fn check(service: &Service, diags: &mut Diagnostics) {
    limits(service, diags);
    if let Some(rate) = &service.rate_limit {
        rate_limit(rate, diags);
    }
    trusted_proxies(service, diags);
    webhooks(service, diags);
    for r in &service.resources {
        resource(r, diags);
    }
    let limits = service.rate_limit.iter().chain(service.resources.iter().filter_map(|r| r.rate_limit.as_ref()));
    for rate in limits {
        queue_within_timeout(rate, service.limits.request_timeout.value, diags);
    }
}

/// A leaky bucket holds a request until its turn, at most `capacity - 1` intervals: that
/// wait must fit in the request timeout, or the last requests it admits time out instead
/// of being served.
fn queue_within_timeout(rate: &RateLimit, timeout: std::time::Duration, diags: &mut Diagnostics) {
    let RateAlgorithm::LeakyBucket { capacity, leak_per_second } = rate.algorithm else { return };
    if capacity == 0 || !leak_per_second.is_finite() || leak_per_second <= 0.0 {
        return; // reported above
    }
    let longest = f64::from(capacity - 1) / leak_per_second;
    if longest >= timeout.as_secs_f64() {
        diags
            .error(
                codes::INVALID_VALUE,
                &rate.origin,
                format!(
                    "a leaky bucket of {capacity} at {leak_per_second} per second holds a request up to {longest} s, \
                     not less than `limits.request_timeout` ({} s)",
                    timeout.as_secs_f64()
                ),
            )
            .hint("lower `capacity`, raise `leak_per_second`, or lengthen `limits.request_timeout`");
    }
}

/// A resource's own settings: its rate limit.
pub(super) fn resource(resource: &Resource, diags: &mut Diagnostics) {
    if let Some(rate) = &resource.rate_limit {
        rate_limit(rate, diags);
    }
}

/// A request may take some time, and at least one request is served at once.
fn limits(service: &Service, diags: &mut Diagnostics) {
    let timeout = &service.limits.request_timeout;
    if timeout.value.is_zero() {
        diags.error(codes::INVALID_VALUE, &timeout.origin, "`request_timeout` must be longer than 0");
    }
    if let Some(n) = &service.limits.max_in_flight
        && n.value == 0
    {
        diags.error(
            codes::INVALID_VALUE,
            &n.origin,
            "`max_in_flight` must be at least 1: 0 would refuse every request",
        );
    }
}

/// A budget that admits something and refills: a bucket of at least one token refilled at
/// a positive rate; a window of some length admitting at least one request.
fn rate_limit(rate: &RateLimit, diags: &mut Diagnostics) {
    let mut bad = |message: &str| {
        diags.error(codes::INVALID_VALUE, &rate.origin, message.to_owned());
    };
    match &rate.algorithm {
        RateAlgorithm::TokenBucket { capacity, refill_per_second: per_second }
        | RateAlgorithm::LeakyBucket { capacity, leak_per_second: per_second } => {
            if *capacity == 0 {
                bad("`capacity` must be at least 1: an empty bucket admits nothing");
            }
            if !per_second.is_finite() || *per_second <= 0.0 {
                bad(if matches!(rate.algorithm, RateAlgorithm::TokenBucket { .. }) {
                    "`refill_per_second` must be above 0"
                } else {
                    "`leak_per_second` must be above 0"
                });
            }
        }
        RateAlgorithm::FixedWindow { limit, window } | RateAlgorithm::SlidingWindow { limit, window } => {
            if *limit == 0 {
                bad("`limit` must be at least 1: a window of 0 requests admits nothing");
            }
            if window.is_zero() {
                bad("`window` must be longer than 0");
            }
        }
    }
}

/// Each entry is an address or a CIDR range (`10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`).
fn trusted_proxies(service: &Service, diags: &mut Diagnostics) {
    for p in service.trusted_proxies.iter().filter(|p| !predicates::is_ip_or_cidr(&p.value)) {
        diags
            .error(codes::INVALID_VALUE, &p.origin, format!("`{}` is not an IP address or CIDR range", p.value))
            .hint("write `10.0.0.1` or `10.0.0.0/8`");
    }
}

/// At least one delivery attempt, signed with a secret an environment variable holds.
fn webhooks(service: &Service, diags: &mut Diagnostics) {
    let w = &service.webhooks;
    if w.max_attempts == 0 {
        diags.error(codes::INVALID_VALUE, &w.origin, "`max_attempts` must be at least 1");
    }
    env_name(&w.secret_env, "`secret_env`", diags);
}

/// The name of an environment variable: letters, digits and `_`.
pub(super) fn env_name(name: &crate::Located<String>, what: &str, diags: &mut Diagnostics) {
    if !predicates::is_env_name(&name.value) {
        diags
            .error(
                codes::INVALID_VALUE,
                &name.origin,
                format!("{what} `{}` is not an environment variable name", name.value),
            )
            .hint("letters, digits and `_`, e.g. `SHOP_JWT_SECRET`");
    }
}
