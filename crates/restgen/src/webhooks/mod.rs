//! Webhooks: subscriptions (`/webhooks`), the events the resources publish, and their
//! signed delivery. A write's event goes to the outbox in the write's own transaction
//! (`store::outbox`); a worker in every instance matches new events to the subscriptions
//! whose owners may read the record, and delivers each to its URL, signed as Standard
//! Webhooks says (`restgen_wire::signature`), retrying with backoff until it is answered
//! 2xx or its attempts run out.

//!
//! Without the `webhooks` feature a build keeps the settings and keys a deployment names,
//! and leaves out the subscriptions, the deliveries and the HTTP client they are sent with.

#[cfg(feature = "webhooks")]
mod api;
mod resolver;
#[cfg(feature = "webhooks")]
pub mod target;
#[cfg(feature = "webhooks")]
mod worker;

pub use resolver::{Resolver, SystemResolver};
#[cfg(feature = "webhooks")]
pub use target::Policy;

#[cfg(feature = "webhooks")]
use crate::clock::Clock;
use crate::spec::WebhooksSpec;
#[cfg(feature = "webhooks")]
use crate::spec::{AuthSpec, ResourceSpec};
#[cfg(feature = "webhooks")]
use hmac::{Hmac, Mac};
#[cfg(feature = "webhooks")]
use sha2::Sha256;
use std::sync::Arc;
use std::time::Duration;

/// How this deployment delivers: what it admits as a target, and whether this instance
/// runs a worker.
#[derive(Clone, Debug)]
pub struct WebhookSettings {
    /// Plain http targets (`<SERVICE>_WEBHOOK_ALLOW_HTTP=1`).
    pub allow_http: bool,
    /// Loopback targets, and only those (`<SERVICE>_WEBHOOK_ALLOW_LOOPBACK=1`).
    pub allow_loopback: bool,
    /// How target names are resolved; the system's resolver when `None`.
    pub resolver: Option<Arc<dyn Resolver>>,
    /// Whether this instance delivers (`<SERVICE>_WEBHOOK_WORKER=0` leaves it to others).
    pub worker: bool,
    /// How often an idle worker looks for work another instance wrote.
    pub poll: Duration,
    /// How long a worker's claims outlast two of its deliveries' timeouts: the time its
    /// store work in a round may take. A round still running when its claims run out is
    /// given up (by then they are another worker's to take), so a database connection gone
    /// silent mid-query holds this instance's deliveries up for one round, not for good.
    pub slack: Duration,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            allow_http: false,
            allow_loopback: false,
            resolver: None,
            worker: true,
            poll: POLL,
            slack: SLACK,
        }
    }
}

/// How often an idle worker looks for work; its own instance's writes wake it at once.
const POLL: Duration = Duration::from_secs(1);
const SLACK: Duration = Duration::from_secs(30);

impl WebhookSettings {
    /// `<SERVICE>_WEBHOOK_ALLOW_HTTP`, `_ALLOW_LOOPBACK` and `_WORKER`, looked up by `var`.
    pub fn from_lookup(service: &str, var: impl Fn(&str) -> Option<String>) -> Result<WebhookSettings, String> {
        let prefix = crate::settings::env_prefix(service);
        let flag = |name: &str, default: bool| -> Result<bool, String> {
            let name = format!("{prefix}_WEBHOOK_{name}");
            match var(&name).as_deref().map(str::trim) {
                None | Some("") => Ok(default),
                Some("1" | "true") => Ok(true),
                Some("0" | "false") => Ok(false),
                Some(other) => Err(format!("{name} is `{other}`: use 1 or 0")),
            }
        };
        Ok(WebhookSettings {
            allow_http: flag("ALLOW_HTTP", false)?,
            allow_loopback: flag("ALLOW_LOOPBACK", false)?,
            worker: flag("WORKER", true)?,
            ..WebhookSettings::default()
        })
    }

    #[cfg(feature = "webhooks")]
    fn policy(&self) -> Policy {
        Policy {
            allow_http: self.allow_http,
            allow_loopback: self.allow_loopback,
            resolver: self.resolver.clone().unwrap_or_else(|| Arc::new(SystemResolver)),
        }
    }
}

/// The signing keys: `<secret_env>` and, during a rotation, `<secret_env>_PREVIOUS`, each
/// `whsec_` and base64. Without the first, a random key for this process (with a warning):
/// subscribers' secrets then change at every start.
pub fn keys_from_lookup(spec: &WebhooksSpec, var: impl Fn(&str) -> Option<String>) -> Result<Vec<Vec<u8>>, String> {
    let read = |name: &str| -> Result<Option<Vec<u8>>, String> {
        match var(name).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(text) => match restgen_wire::signature::key_of(&text) {
                Ok(key) if key.len() >= 24 => Ok(Some(key)),
                Ok(_) => Err(format!("{name} is too short: use at least 24 random bytes (whsec_ and base64)")),
                Err(e) => Err(format!("{name}: {e}")),
            },
        }
    };
    let mut keys = Vec::new();
    match read(spec.secret_env)? {
        Some(key) => keys.push(key),
        None => {
            tracing::warn!(
                "{} is unset: webhooks are signed with a random key for this process, and subscribers' secrets change at every start",
                spec.secret_env
            );
            keys.push(crate::auth::random_bytes(32));
        }
    }
    keys.extend(read(&format!("{}_PREVIOUS", spec.secret_env))?);
    Ok(keys)
}

/// Everything the webhook routes and worker share.
#[cfg(feature = "webhooks")]
pub(crate) struct Webhooks {
    pub spec: WebhooksSpec,
    pub resources: &'static [&'static ResourceSpec],
    pub auth: Option<&'static AuthSpec>,
    /// The service's signing keys, current first.
    keys: Vec<Vec<u8>>,
    pub policy: Policy,
    pub clock: Clock,
    pub settings: WebhookSettings,
    /// Where deliveries are counted, when they are.
    pub metrics: Option<std::sync::Arc<crate::metrics::Metrics>>,
}

/// The most subscriptions one account may have (409 beyond).
pub const MAX_WEBHOOKS: u32 = restgen_model::bounds::MAX_WEBHOOKS;

#[cfg(feature = "webhooks")]
impl Webhooks {
    pub(crate) fn new(
        spec: WebhooksSpec,
        resources: &'static [&'static ResourceSpec],
        auth: Option<&'static AuthSpec>,
        keys: Vec<Vec<u8>>,
        settings: WebhookSettings,
        clock: Clock,
    ) -> Webhooks {
        Webhooks { spec, resources, auth, keys, policy: settings.policy(), clock, settings, metrics: None }
    }

    /// How long a worker holds what it claims, and how long one of its rounds may run.
    pub(crate) fn claim_for(&self) -> Duration {
        self.spec.timeout * 2 + self.settings.slack
    }

    /// Every event type the service publishes (`order.pay`), in schema order.
    pub(crate) fn types(&self) -> Vec<String> {
        self.resources.iter().flat_map(|r| r.events.iter().map(move |e| format!("{}.{e}", r.name))).collect()
    }

    /// The key of one subscription under each service key: its own, so that a subscriber
    /// can verify its deliveries and forge nobody else's.
    fn subscription_keys(&self, webhook: &str) -> Vec<Vec<u8>> {
        self.keys
            .iter()
            .map(|key| {
                let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
                mac.update(b"restgen webhook subscription ");
                mac.update(webhook.as_bytes());
                mac.finalize().into_bytes().to_vec()
            })
            .collect()
    }

    /// The subscription's secret, as its subscriber verifies with it (`whsec_...`).
    pub(crate) fn secret(&self, webhook: &str) -> String {
        restgen_wire::signature::secret_of(&self.subscription_keys(webhook)[0])
    }

    /// `webhook-signature`: the delivery signed with the subscription's key under each
    /// service key, space-separated (both during a rotation).
    pub(crate) fn signature(&self, webhook: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
        let signatures: Vec<String> = self
            .subscription_keys(webhook)
            .iter()
            .map(|key| restgen_wire::signature::sign(key, id, timestamp, body))
            .collect();
        signatures.join(" ")
    }
}

#[cfg(feature = "webhooks")]
pub(crate) use api::routes;
#[cfg(feature = "webhooks")]
pub(crate) use worker::{Background, install_tls_provider, start};
#[cfg(feature = "webhooks")]
pub use worker::{IN_FLIGHT, PER_OWNER};

/// A running worker, which a build without webhooks never has.
#[cfg(not(feature = "webhooks"))]
pub(crate) enum Background {}

#[cfg(not(feature = "webhooks"))]
impl Background {
    pub(crate) async fn shutdown(self) {
        match self {}
    }
}

#[cfg(all(test, feature = "webhooks"))]
mod tests {
    use super::*;

    fn hooks(keys: &[&[u8]]) -> Webhooks {
        let spec = WebhooksSpec { secret_env: "X", max_attempts: 8, timeout: Duration::from_secs(5) };
        let keys = keys.iter().map(|k| k.to_vec()).collect();
        Webhooks::new(spec, &[], None, keys, WebhookSettings::default(), Clock::System)
    }

    /// During a rotation (the new secret, and the old one as `_PREVIOUS`) each delivery
    /// verifies with the secret a subscriber was given under either.
    #[test]
    fn a_rotation_signs_for_the_old_secret_and_the_new() {
        let (old, new) =
            (b"old-service-key-0123456789abcdef".as_slice(), b"new-service-key-0123456789abcdef".as_slice());
        let rotating = hooks(&[new, old]);
        let signature = rotating.signature("wh_1", "msg_1", 1_800_000_000, b"{}");
        assert_eq!(signature.split(' ').count(), 2);
        let header = |name: &str| match name {
            "webhook-id" => Some("msg_1"),
            "webhook-timestamp" => Some("1800000000"),
            "webhook-signature" => Some(signature.as_str()),
            _ => None,
        };
        for secret in [hooks(&[old]).secret("wh_1"), hooks(&[new]).secret("wh_1"), rotating.secret("wh_1")] {
            assert_eq!(restgen_wire::signature::verify(&secret, header, b"{}", 1_800_000_000), Ok(()));
        }
        // Another subscription's secret, under the same keys, does not verify it.
        let other = rotating.secret("wh_2");
        assert!(restgen_wire::signature::verify(&other, header, b"{}", 1_800_000_000).is_err());
    }
}
