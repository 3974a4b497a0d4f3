//! Cross-origin requests from browsers (`cors` in the schema), on tower-http's layer.
//!
//! Credentials travel in headers (`Authorization`, the API key header), never in cookies,
//! so `Access-Control-Allow-Credentials` is never sent and `*` is safe where the schema
//! allows every origin.

use crate::spec::{AuthSpec, Scheme};
use axum::http::{HeaderName, HeaderValue, Method, header};
use restgen_wire::http;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// Which browser origins may call the service (`cors` in the schema).
#[derive(Clone, Copy, Debug)]
pub struct CorsSpec {
    /// `["*"]`, or exact origins such as `https://shop.example.com`.
    pub allowed_origins: &'static [&'static str],
    /// How long a browser may cache a preflight answer.
    pub max_age: Option<std::time::Duration>,
}

/// Request headers a browser may send: the ones the service reads.
const REQUEST_HEADERS: [HeaderName; 8] = [
    header::AUTHORIZATION,
    header::CONTENT_TYPE,
    header::ACCEPT,
    header::IF_NONE_MATCH,
    header::IF_MATCH,
    HeaderName::from_static(http::IDEMPOTENCY_KEY.lowercase),
    // A page's OpenTelemetry sends them, for traces that begin in the browser.
    HeaderName::from_static(http::TRACEPARENT.lowercase),
    HeaderName::from_static(http::TRACESTATE.lowercase),
];

/// Answer headers a script may read beyond the CORS-safelisted ones.
const EXPOSED: [HeaderName; 8] = [
    header::LOCATION,
    header::LINK,
    header::ETAG,
    header::RETRY_AFTER,
    header::WWW_AUTHENTICATE,
    HeaderName::from_static(http::RATELIMIT.lowercase),
    HeaderName::from_static(http::RATELIMIT_POLICY.lowercase),
    HeaderName::from_static(http::REQUEST_ID.lowercase),
];

pub(crate) fn layer(spec: CorsSpec, auth: Option<&'static AuthSpec>) -> CorsLayer {
    let origin = if spec.allowed_origins.contains(&"*") {
        AllowOrigin::any()
    } else {
        // Origins the schema checker accepted; one that is not a header value cannot
        // match a request's `Origin` anyway.
        AllowOrigin::list(spec.allowed_origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    let mut headers = REQUEST_HEADERS.to_vec();
    if let Some(auth) = auth.filter(|a| a.schemes.contains(&Scheme::ApiKey))
        && let Ok(name) = HeaderName::try_from(auth.api_key.header)
    {
        headers.push(name);
    }
    let layer = CorsLayer::new()
        .allow_origin(origin)
        .allow_methods([Method::GET, Method::HEAD, Method::POST, Method::PUT, Method::PATCH, Method::DELETE])
        .allow_headers(headers)
        .expose_headers(EXPOSED.to_vec());
    match spec.max_age {
        Some(age) => layer.max_age(age),
        None => layer,
    }
}
