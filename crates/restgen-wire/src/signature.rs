//! Webhook signatures as Standard Webhooks (standardwebhooks.com) defines them: a
//! `whsec_` secret (base64 of the key), and for each delivery the headers `webhook-id`,
//! `webhook-timestamp` (Unix seconds) and `webhook-signature`, a space-separated list of
//! `v1,<base64 of HMAC-SHA256 over "{id}.{timestamp}.{body}">` — one per secret in use, so
//! a receiver holding the old or the new secret verifies a delivery during a rotation.
//! The service signs with [`sign`]; a receiver checks with [`verify`].

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// The prefix of a secret's text.
pub const SECRET_PREFIX: &str = "whsec_";

/// How far a delivery's timestamp may be from the receiver's clock, in seconds, before
/// [`verify`] refuses it as a replay (Standard Webhooks' recommendation).
pub const TOLERANCE_SECONDS: i64 = 5 * 60;

/// Why a delivery does not verify.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// The secret is not `whsec_` and base64.
    Secret,
    /// A header is missing or malformed (named).
    Header(&'static str),
    /// The timestamp is further than [`TOLERANCE_SECONDS`] from now.
    Timestamp,
    /// No signature is the secret's over this id, timestamp and body.
    Signature,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Invalid::Secret => f.write_str("the secret is not `whsec_` followed by base64"),
            Invalid::Header(name) => write!(f, "`{name}` is missing or malformed"),
            Invalid::Timestamp => write!(f, "`webhook-timestamp` is more than {TOLERANCE_SECONDS} s from now"),
            Invalid::Signature => {
                f.write_str("no signature matches: the body, id or timestamp changed, or the secret differs")
            }
        }
    }
}

impl std::error::Error for Invalid {}

/// The key a `whsec_...` secret holds.
pub fn key_of(secret: &str) -> Result<Vec<u8>, Invalid> {
    let text = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    STANDARD.decode(text).ok().filter(|k| !k.is_empty()).ok_or(Invalid::Secret)
}

/// The text of a secret holding `key`.
pub fn secret_of(key: &[u8]) -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(key))
}

/// `v1,<signature>` of one delivery with one key.
pub fn sign(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    format!("v1,{}", STANDARD.encode(mac(key, id, timestamp, body)))
}

fn mac(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.finalize().into_bytes().to_vec()
}

/// Checks a delivery as a receiver: `header` looks up a header by its lower-case name,
/// `now` is the receiver's clock in Unix seconds. `Ok` when one of the signatures is the
/// secret's over exactly this id, timestamp and body, and the timestamp is recent.
pub fn verify<'a>(
    secret: &str,
    header: impl Fn(&str) -> Option<&'a str>,
    body: &[u8],
    now: i64,
) -> Result<(), Invalid> {
    let key = key_of(secret)?;
    let id = header(crate::http::WEBHOOK_ID.lowercase)
        .filter(|v| !v.is_empty())
        .ok_or(Invalid::Header(crate::http::WEBHOOK_ID.lowercase))?;
    let timestamp: i64 = header(crate::http::WEBHOOK_TIMESTAMP.lowercase)
        .and_then(|v| v.trim().parse().ok())
        .ok_or(Invalid::Header(crate::http::WEBHOOK_TIMESTAMP.lowercase))?;
    let signatures = header(crate::http::WEBHOOK_SIGNATURE.lowercase)
        .ok_or(Invalid::Header(crate::http::WEBHOOK_SIGNATURE.lowercase))?;
    // Checked: a timestamp near `i64::MIN` or `MAX` would overflow the difference (a
    // panic in a debug build, a wrapped "recent" one in a release build).
    let recent = now.checked_sub(timestamp).and_then(i64::checked_abs).is_some_and(|d| d <= TOLERANCE_SECONDS);
    if !recent {
        return Err(Invalid::Timestamp);
    }
    let expected = mac(&key, id, timestamp, body);
    let matches = signatures
        .split(' ')
        .filter_map(|s| s.strip_prefix("v1,"))
        .filter_map(|s| STANDARD.decode(s).ok())
        .any(|given| bool::from(given.ct_eq(&expected)));
    if matches { Ok(()) } else { Err(Invalid::Signature) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A timestamp at either end of the range is refused as stale, never an overflow.
    #[test]
    fn a_crafted_timestamp_is_refused_not_an_overflow() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        for (timestamp, now) in
            [(i64::MIN.to_string(), 1_614_265_330), (i64::MAX.to_string(), -5), ("-9223372036854775808".into(), 0)]
        {
            let headers = |name: &str| match name {
                "webhook-id" => Some("msg_1"),
                "webhook-timestamp" => Some(timestamp.as_str()),
                "webhook-signature" => Some("v1,AAAA"),
                _ => None,
            };
            assert_eq!(verify(secret, headers, b"{}", now), Err(Invalid::Timestamp), "{timestamp} at {now}");
        }
    }

    /// Standard Webhooks' published test vector.
    #[test]
    fn signs_the_specification_example() {
        let key = key_of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        let signature = sign(&key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        let headers = |name: &str| match name {
            "webhook-id" => Some("msg_p5jXN8AQM9LWM0D4loKWxJek"),
            "webhook-timestamp" => Some("1614265330"),
            "webhook-signature" => Some("v1,bm90IHRoaXMgb25l v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="),
            _ => None,
        };
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        assert_eq!(verify(secret, headers, body, 1614265330), Ok(()));
        assert_eq!(verify(secret, headers, b"{}", 1614265330), Err(Invalid::Signature));
        assert_eq!(verify(secret, headers, body, 1614265330 + 301), Err(Invalid::Timestamp));
        assert_eq!(verify("whsec_!!", headers, body, 1614265330), Err(Invalid::Secret));
        assert_eq!(verify(secret, |_| None, body, 0), Err(Invalid::Header("webhook-id")));
    }
}
