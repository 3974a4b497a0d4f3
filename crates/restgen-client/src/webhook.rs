//! Webhooks: the subscriptions a caller holds and their deliveries, and for receivers,
//! checking that a delivery is the service's.

pub use restgen_wire::signature::Invalid;
use serde::{Deserialize, Serialize};

/// A subscription to events.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Webhook {
    pub id: String,
    pub url: String,
    /// Event types (`order.pay`).
    pub events: Vec<String>,
    pub description: Option<String>,
    pub enabled: bool,
    /// Why deliveries stopped, when the service disabled it.
    pub disabled_reason: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// A subscription with its signing secret: the answer to `create_webhook` and
/// `get_webhook` (after the service rotates its secret, the new one is here).
#[derive(Clone, PartialEq, Eq, Deserialize)]
pub struct WebhookWithSecret {
    #[serde(flatten)]
    pub webhook: Webhook,
    /// `whsec_...`: what [`verify`] checks deliveries with.
    pub secret: String,
}

/// The secret stays out of logs.
impl std::fmt::Debug for WebhookWithSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookWithSecret")
            .field("webhook", &self.webhook)
            .field("secret", &restgen_wire::redact::Redacted)
            .finish()
    }
}

/// A new subscription.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NewWebhook {
    pub url: String,
    pub events: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Changes to a subscription: what is `None` stays.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WebhookChanges {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `false` pauses deliveries, `true` resumes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// One event for one subscription, with its attempts.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Delivery {
    pub id: String,
    /// The `webhook-id` of every attempt.
    pub event_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// `pending`, `succeeded` or `failed`.
    pub status: String,
    pub attempts: i64,
    pub last_status: Option<u16>,
    pub last_error: Option<String>,
    pub next_attempt_at: Option<String>,
    pub history: Vec<serde_json::Value>,
    pub created_at: String,
    pub updated_at: String,
}

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

#[cfg(test)]
mod tests {
    /// A subscription's secret shows as `***` when printed for debugging.
    #[test]
    fn a_subscriptions_secret_shows_as_stars() {
        let webhook = super::Webhook {
            id: "wh_1".into(),
            url: "https://hooks.example.com/in".into(),
            events: vec!["order.created".into()],
            description: None,
            enabled: true,
            disabled_reason: None,
            created_at: "2026-11-28T00:00:00Z".into(),
            updated_at: "2026-11-28T00:00:00Z".into(),
        };
        let with = super::WebhookWithSecret { webhook, secret: "whsec_s3cret".into() };
        let shown = format!("{with:?}");
        assert!(shown.contains("***") && !shown.contains("s3cret") && shown.contains("wh_1"), "{shown}");
    }
}
