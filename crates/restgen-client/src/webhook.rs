//! Webhooks: the subscriptions a caller holds and their deliveries, and for receivers,
//! checking that a delivery is the service's.

pub use restgen_wire::signature::Invalid;
pub use restgen_wire::webhook::{Delivery, NewWebhook, Webhook, WebhookChanges, WebhookWithSecret};

/// Checks a delivery the service sent to a receiver: the request's headers and its body,
/// exactly as received, against the subscription's `secret` (`whsec_...`, given when the
/// subscription was made). `Ok` when a `webhook-signature` is the secret's over the
/// `webhook-id`, the `webhook-timestamp` and the body, and the timestamp is within five
/// minutes of now (older deliveries may be replays). Keep `webhook-id` to recognise a
/// delivery that arrives twice.
pub fn verify(secret: &str, headers: &reqwest::header::HeaderMap, body: &[u8]) -> Result<(), Invalid> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    verify_at(secret, headers, body, now)
}

/// [`verify`] with the receiver's clock given (Unix seconds).
pub fn verify_at(secret: &str, headers: &reqwest::header::HeaderMap, body: &[u8], now: i64) -> Result<(), Invalid> {
    restgen_wire::signature::verify(secret, |name| headers.get(name).and_then(|v| v.to_str().ok()), body, now)
}
