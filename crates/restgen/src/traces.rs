//! What a trace shows of a request: a span per request named by the operation that
//! answered it, with spans within for authentication, each SQL statement and each hook, and
//! a span per webhook delivery attempt. W3C `traceparent` is read from requests and sent
//! with deliveries.
//!
//! The spans are `tracing` spans at their own target ([`TARGET`]), which the log never
//! shows: only the exporter takes them, and where it is not set up (the `traces` feature
//! left out, or `OTEL_EXPORTER_OTLP_ENDPOINT` unset) no layer wants them and each costs a
//! cached check. Their attributes are the schema's names, fixed words and numbers: never a
//! header, a value of a record or a credential.

#[cfg(feature = "traces")]
mod export;
#[cfg(not(feature = "traces"))]
#[path = "traces/absent.rs"]
mod export;

#[cfg(feature = "webhooks")]
pub(crate) use export::inject;
pub(crate) use export::{Exporting, continue_from, layer};

/// The layers that export traces, over the registry every log line goes through.
pub(crate) type Layers = Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>;

use axum::http::{Method, StatusCode};
use std::sync::OnceLock;
use tracing::Span;
use tracing::field::Empty;

/// The target of every span made for traces.
pub(crate) const TARGET: &str = "restgen::trace";

/// The database the statements run on, as OpenTelemetry names it (`db.system.name`).
static DATABASE: OnceLock<&'static str> = OnceLock::new();

/// Says which database the service's statements run on: `sqlite` or `postgresql`.
pub(crate) fn database(name: &'static str) {
    let _ = DATABASE.set(name);
}

#[cfg(feature = "traces")]
fn database_name() -> &'static str {
    DATABASE.get().copied().unwrap_or("other_sql")
}

/// The span a request is answered in, as the trace shows it; named once the operation is
/// known ([`answered`]). `request_id` ties it to the request's log lines.
pub(crate) fn server(method: &Method, request_id: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "request",
        otel.name = method_name(method),
        otel.kind = "server",
        http.request.method = method_name(method),
        restgen.request_id = request_id,
    )
}

/// Names `span` ([`server`]) by the operation that answered (`order.create`, `login`),
/// and says how it ended: a 5xx is an error of the service's.
#[cfg(feature = "traces")]
pub(crate) fn answered(span: &Span, resource: &'static str, operation: &'static str, status: StatusCode) {
    use opentelemetry::KeyValue;
    if span.is_disabled() {
        return;
    }
    let name = match (resource, operation) {
        (_, "") => None,
        ("", operation) => Some(operation.to_owned()),
        (resource, operation) => Some(format!("{resource}.{operation}")),
    };
    let mut attributes = vec![KeyValue::new("http.response.status_code", i64::from(status.as_u16()))];
    if !resource.is_empty() {
        attributes.push(KeyValue::new("restgen.resource", resource));
    }
    if !operation.is_empty() {
        attributes.push(KeyValue::new("restgen.operation", operation));
    }
    export::answered(span, name, attributes, status.is_server_error());
}

/// Without the feature no span is exported.
#[cfg(not(feature = "traces"))]
pub(crate) fn answered(_span: &Span, _resource: &'static str, _operation: &'static str, _status: StatusCode) {}

/// A method as OpenTelemetry's conventions name it: one of HTTP's own, else `_OTHER`
/// (a caller's invented method is not an attribute's value).
fn method_name(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "_OTHER",
    }
}

/// The span a request's credentials are checked in; [`authenticated`] says how it ended.
pub(crate) fn authenticating() -> Span {
    tracing::info_span!(target: TARGET, "authenticate", otel.status_code = Empty, restgen.auth.scheme = Empty)
}

/// Records the scheme the credentials came by (`bearer`, `basic`, `api_key`, `none`), and
/// whether they were refused.
pub(crate) fn authenticated(span: &Span, scheme: &'static str, refused: bool) {
    span.record("restgen.auth.scheme", scheme);
    if refused {
        span.record("otel.status_code", "error");
    }
}

/// The span a hook of `resource` runs in: `name` is what `hook_name` made once.
pub(crate) fn hook(name: &str, resource: &'static str, hook: &'static str) -> Span {
    tracing::info_span!(target: TARGET, "hook", otel.name = name, restgen.resource = resource, restgen.hook = hook)
}

/// `order.before_create`: a hook's span's name, made once where the hook is mounted.
pub(crate) fn hook_name(resource: &str, hook: &str) -> std::sync::Arc<str> {
    format!("{resource}.{hook}").into()
}

/// The span of one attempt of a webhook delivery: the `traceparent` it sends is this
/// span's ([`inject`]). `event` is the event's type (`order.created`).
#[cfg(feature = "webhooks")]
pub(crate) fn delivery(event: &str, attempt: i64) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: None,
        "webhook delivery",
        otel.name = "webhook delivery",
        otel.kind = "client",
        otel.status_code = Empty,
        http.request.method = "POST",
        http.response.status_code = Empty,
        restgen.event = event,
        restgen.attempt = attempt,
    )
}

/// Records how a delivery's attempt was answered: `None` when it was not.
#[cfg(feature = "webhooks")]
pub(crate) fn delivered(span: &Span, status: Option<u16>) {
    match status {
        Some(status) => {
            span.record("http.response.status_code", status);
            if !(200..300).contains(&status) {
                span.record("otel.status_code", "error");
            }
        }
        None => {
            span.record("otel.status_code", "error");
        }
    }
}
