//! The shapes of webhooks on the wire: a subscription as its subscriber reads it (with its
//! signing secret where one is made or read), what a subscriber sends to make or change
//! one, and one delivery with its attempts. The service writes these, its clients read
//! them.

use serde::{Deserialize, Serialize};

/// A subscription to events.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookWithSecret {
    #[serde(flatten)]
    pub webhook: Webhook,
    /// `whsec_...`: what [`verify`](crate::signature::verify) checks deliveries with.
    pub secret: String,
}

/// The secret stays out of logs.
impl std::fmt::Debug for WebhookWithSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookWithSecret")
            .field("webhook", &self.webhook)
            .field("secret", &crate::redact::Redacted)
            .finish()
    }
}

/// A new subscription.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewWebhook {
    pub url: String,
    pub events: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Changes to a subscription: what is `None` stays.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
