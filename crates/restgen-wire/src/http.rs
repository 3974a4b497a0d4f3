//! The protocol's names, each written once: the headers a service and its clients exchange
//! beyond HTTP's own, and the media types of their bodies. The runtime sends and reads
//! them, the client sends them, and the OpenAPI document describes them, all from here.

/// A header's name as documents write it (`Idempotency-Key`) and as HTTP/2 sends it
/// (lowercase, the form `http::HeaderName::from_static` takes). [`Header::new`] checks at
/// compile time that the two spell one name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// As documents write it.
    pub name: &'static str,
    /// Lowercase.
    pub lowercase: &'static str,
}

impl Header {
    /// The header `name`, `lowercase` its lowercase spelling; anything else does not compile.
    pub const fn new(name: &'static str, lowercase: &'static str) -> Header {
        let (a, b) = (name.as_bytes(), lowercase.as_bytes());
        assert!(a.len() == b.len(), "a header's two spellings differ");
        let mut i = 0;
        while i < a.len() {
            assert!(
                a[i].to_ascii_lowercase() == b[i],
                "a header's two spellings differ, or the second is not lowercase"
            );
            i += 1;
        }
        Header { name, lowercase }
    }
}

/// The key that makes a create safe to retry: the same key answers with the first answer.
pub const IDEMPOTENCY_KEY: Header = Header::new("Idempotency-Key", "idempotency-key");
/// On an answer given again for an `Idempotency-Key` seen before: `true`.
pub const IDEMPOTENT_REPLAYED: Header = Header::new("Idempotent-Replayed", "idempotent-replayed");
/// The quota left and when it resets (draft-ietf-httpapi-ratelimit-headers).
pub const RATELIMIT: Header = Header::new("RateLimit", "ratelimit");
/// The quota's policy: the limit and its window.
pub const RATELIMIT_POLICY: Header = Header::new("RateLimit-Policy", "ratelimit-policy");
/// A version's deprecation (RFC 9745).
pub const DEPRECATION: Header = Header::new("Deprecation", "deprecation");
/// When a version stops being served (RFC 8594).
pub const SUNSET: Header = Header::new("Sunset", "sunset");
/// A webhook delivery's event id (Standard Webhooks).
pub const WEBHOOK_ID: Header = Header::new("webhook-id", "webhook-id");
/// When a webhook delivery was signed, in seconds since the Unix epoch.
pub const WEBHOOK_TIMESTAMP: Header = Header::new("webhook-timestamp", "webhook-timestamp");
/// A webhook delivery's signatures, `v1,<base64>` separated by spaces.
pub const WEBHOOK_SIGNATURE: Header = Header::new("webhook-signature", "webhook-signature");

/// The id of one request, to quote in a report and find in the service's log: on every
/// answer, and taken from a request only when a trusted proxy sent it.
pub const REQUEST_ID: Header = Header::new("X-Request-Id", "x-request-id");

/// W3C Trace Context: the trace a request belongs to and its caller's span, continued by a
/// service built with traces, and sent with its webhook deliveries.
pub const TRACEPARENT: Header = Header::new("traceparent", "traceparent");

/// W3C Trace Context: vendors' own state of the trace, carried beside `traceparent`.
pub const TRACESTATE: Header = Header::new("tracestate", "tracestate");

/// Where a change feed's client resumes: the id of the last event it received.
pub const LAST_EVENT_ID: Header = Header::new("Last-Event-ID", "last-event-id");

/// `no` on a change stream: nginx, which buffers a proxied answer, passes it on as it comes.
pub const X_ACCEL_BUFFERING: Header = Header::new("X-Accel-Buffering", "x-accel-buffering");

/// Media types of the bodies a service reads and writes.
pub mod media {
    /// JSON (RFC 8259).
    pub const JSON: &str = "application/json";
    /// A JSON merge patch (RFC 7396), what `PATCH` takes.
    pub const MERGE_PATCH: &str = "application/merge-patch+json";
    /// A problem body (RFC 9457): every error.
    pub const PROBLEM: &str = "application/problem+json";
    /// CSV (RFC 4180) as a service writes it: UTF-8, its header row announced (RFC 7111).
    pub const CSV: &str = "text/csv; charset=utf-8; header=present";
    /// Server-Sent Events (HTML's `EventSource`): a change feed.
    pub const EVENT_STREAM: &str = "text/event-stream";
    /// The reference page at `/docs`, and the script and styles it loads.
    pub const HTML: &str = "text/html; charset=utf-8";
    pub const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
    pub const CSS: &str = "text/css; charset=utf-8";
}

#[cfg(test)]
mod tests {
    use super::Header;

    /// Two spellings of different names, or a second one not lowercase, are refused (at
    /// compile time for the constants above; here at run time, where a test can see it).
    #[test]
    fn a_header_spelled_two_ways_is_refused() {
        let refused =
            |name: &'static str, lower: &'static str| std::panic::catch_unwind(|| Header::new(name, lower)).is_err();
        assert!(refused("Idempotency-Key", "idempotency-kez"), "another name");
        assert!(refused("Idempotency-Key", "Idempotency-Key"), "not lowercase");
        assert!(refused("RateLimit", "ratelimit-policy"), "another length");
        assert!(!refused("RateLimit-Policy", "ratelimit-policy"));
    }
}
