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
        RateAlgorithm::TokenBucket { capacity, refill_per_second } => {
            if *capacity == 0 {
                bad("`capacity` must be at least 1: an empty bucket admits nothing");
            }
            if !refill_per_second.is_finite() || *refill_per_second <= 0.0 {
                bad("`refill_per_second` must be above 0");
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
