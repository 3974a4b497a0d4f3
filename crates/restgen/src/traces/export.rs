//! Traces exported over OTLP (http/protobuf), set up from OpenTelemetry's own environment
//! variables as every OpenTelemetry SDK is: `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) turns them on; `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and its argument,
//! `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` and `OTEL_BSP_*` are read by the
//! SDK itself.

use super::{Layers, TARGET};
use axum::http::HeaderMap;
#[cfg(feature = "webhooks")]
use opentelemetry::propagation::Injector;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{Span as _, SpanKind, TraceContextExt as _, Tracer as _, TracerProvider as _};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};
use tracing::field::{Field, Visit};
use tracing::{Dispatch, Event, Span, Subscriber, dispatcher::WeakDispatch};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::Registry;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// The target sqlx reports each statement it ran at.
const STATEMENTS: &str = "sqlx::query";

/// The exporter, kept so that what it holds is sent before the service exits.
pub(crate) struct Exporting(SdkTracerProvider);

impl Exporting {
    /// Sends the spans not sent yet, and stops the exporter.
    pub async fn finish(self) {
        let provider = self.0;
        // The SDK's shutdown blocks until its exporting thread is done.
        match tokio::task::spawn_blocking(move || provider.shutdown()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "traces not all exported at shutdown"),
            Err(e) => tracing::warn!(error = %e, "traces not all exported at shutdown"),
        }
    }
}

/// The layers that export the spans at [`TARGET`] and make a span of each statement sqlx
/// reports within them, where OpenTelemetry's variables ask for traces; `service` names
/// the service where `OTEL_SERVICE_NAME` does not.
pub(crate) fn layer(service: &str) -> Result<Option<(Layers, Exporting)>, String> {
    if !wanted(|name| std::env::var(name).ok())? {
        return Ok(None);
    }
    // The exporter's HTTP client is reqwest on rustls, built without a provider of its own.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
        .map_err(|e| format!("cannot export traces: {e}"))?;
    let mut resource = opentelemetry_sdk::Resource::builder();
    let named = std::env::var_os("OTEL_SERVICE_NAME").is_some()
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|a| a.contains("service.name="));
    if !named {
        resource = resource.with_service_name(service.to_owned());
    }
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource.build()).build();
    let scope = InstrumentationScope::builder("restgen").with_version(env!("CARGO_PKG_VERSION")).build();
    let tracer = provider.tracer_with_scope(scope);
    let spans = tracing_opentelemetry::layer()
        .with_tracer(tracer.clone())
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_tracked_inactivity(false)
        // No OpenTelemetry code within reads the current context: a span finds its parent
        // among the spans entered, without a context attached at every poll.
        .with_context_activation(false)
        .with_filter(Targets::new().with_target(TARGET, tracing::Level::TRACE));
    let statements = Statements { tracer, dispatch: OnceLock::new() }
        .with_filter(Targets::new().with_target(STATEMENTS, tracing::Level::TRACE));
    // Where they go, as the exporter reads it (a password in the URL left out).
    let to = match std::env::var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").ok().filter(|v| !v.trim().is_empty()) {
        Some(url) => url,
        None => format!(
            "{}/v1/traces",
            std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_default().trim_end_matches('/')
        ),
    };
    println!("traces: OTLP to {}", restgen_wire::redact::url(&to));
    Ok(Some((Box::new(spans.and_then(statements)), Exporting(provider))))
}

/// Whether OpenTelemetry's variables ask for traces: an endpoint is set, and neither
/// `OTEL_SDK_DISABLED` nor `OTEL_TRACES_EXPORTER=none` says otherwise. What this build
/// cannot do (another exporter, OTLP over gRPC or JSON) is an error naming the variable.
fn wanted(var: impl Fn(&str) -> Option<String>) -> Result<bool, String> {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return Ok(false);
    }
    match set("OTEL_TRACES_EXPORTER").as_deref().map(str::trim) {
        None | Some("otlp") => {}
        Some("none") => return Ok(false),
        Some(other) => {
            return Err(format!(
                "OTEL_TRACES_EXPORTER is `{other}`: this service exports traces over OTLP (`otlp`) or not at all (`none`)"
            ));
        }
    }
    for name in ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"] {
        if let Some(protocol) = set(name) {
            if protocol.trim() != "http/protobuf" {
                return Err(format!(
                    "{name} is `{}`: this service sends OTLP as http/protobuf; set that, or leave it unset, and point \
                     the endpoint at the collector's HTTP port (4318)",
                    protocol.trim()
                ));
            }
            break;
        }
    }
    Ok(set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some() || set("OTEL_EXPORTER_OTLP_ENDPOINT").is_some())
}

/// Makes `span` continue the trace a request's `traceparent` (and `tracestate`) names; a
/// header that is not W3C Trace Context leaves it the root of a trace of its own.
pub(crate) fn continue_from(span: &Span, headers: &HeaderMap) {
    if span.is_disabled() || !headers.contains_key(restgen_wire::http::TRACEPARENT.lowercase) {
        return;
    }
    let parent = TraceContextPropagator::new().extract(&Headers(headers));
    let _ = span.set_parent(parent);
}

/// Names a request's span by the operation that answered (known once the span has begun,
/// past what a recorded `otel.name` changes) and gives it what the answer says, in one
/// visit to the span.
pub(crate) fn answered(span: &Span, name: Option<String>, attributes: Vec<KeyValue>, failed: bool) {
    let cx = span.context();
    let span = cx.span();
    if let Some(name) = name {
        span.update_name(name);
    }
    span.set_attributes(attributes);
    if failed {
        span.set_status(opentelemetry::trace::Status::error(""));
    }
}

/// The `traceparent` and `tracestate` headers that carry `span`'s trace to the one a
/// request is sent to.
#[cfg(feature = "webhooks")]
pub(crate) fn inject(span: &Span) -> Vec<(String, String)> {
    let mut carried = Carried(Vec::new());
    if !span.is_disabled() {
        TraceContextPropagator::new().inject_context(&span.context(), &mut carried);
    }
    carried.0
}

struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

#[cfg(feature = "webhooks")]
struct Carried(Vec<(String, String)>);

#[cfg(feature = "webhooks")]
impl Injector for Carried {
    fn set(&mut self, key: &str, value: String) {
        self.0.push((key.to_owned(), value));
    }
}

/// Makes a span of each statement sqlx reports (its text, with placeholders where the
/// values went) within a span of a trace, as that span's child. sqlx reports a statement
/// once it is done, with how long it took: the span is given the times it ran between.
struct Statements {
    tracer: SdkTracer,
    dispatch: OnceLock<WeakDispatch>,
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Statements {
    fn on_register_dispatch(&self, dispatch: &Dispatch) {
        let _ = self.dispatch.set(dispatch.downgrade());
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if event.metadata().target() != STATEMENTS {
            return;
        }
        let Some(dispatch) = self.dispatch.get().and_then(WeakDispatch::upgrade) else { return };
        // The span of a trace the statement ran within, through spans the trace does not
        // show (the request's, which SQLite's connection thread enters alone). A statement
        // outside any request or delivery (the outbox's polling, a migration) is no trace's.
        let Some(registry) = dispatch.downcast_ref::<Registry>() else { return };
        let start = if event.is_contextual() { ctx.current_span().id().cloned() } else { event.parent().cloned() };
        let Some(start) = start.and_then(|id| registry.span(&id)) else { return };
        let Some(within) = start.scope().find(|s| s.metadata().target() == TARGET).map(|s| s.id()) else { return };
        drop(start);
        let Some(parent) = tracing_opentelemetry::get_otel_context(&within, &dispatch) else { return };
        // A trace the sampler left out leaves out its statements too, whichever standard
        // sampler it is (a ratio decides by the trace's id, the same for every span of it),
        // so they cost no more than that.
        if !parent.span().span_context().is_sampled() {
            return;
        }
        let mut statement = Statement::default();
        event.record(&mut statement);
        let text = if statement.text.trim().is_empty() {
            statement.summary.trim_end_matches(" …")
        } else {
            statement.text.trim()
        };
        let (operation, collection) = summary(text);
        let end = SystemTime::now();
        let start = end - Duration::try_from_secs_f64(statement.seconds).unwrap_or_default();
        let name = if collection.is_empty() { operation.clone() } else { format!("{operation} {collection}") };
        let mut attributes = vec![
            KeyValue::new("db.system.name", super::database_name()),
            KeyValue::new("db.query.text", text.to_owned()),
            KeyValue::new("db.operation.name", operation),
        ];
        if !collection.is_empty() {
            attributes.push(KeyValue::new("db.collection.name", collection));
        }
        if let Some(rows) = statement.returned.filter(|r| *r > 0) {
            attributes.push(KeyValue::new("db.response.returned_rows", i64::try_from(rows).unwrap_or(i64::MAX)));
        }
        let mut span = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Client)
            .with_start_time(start)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, &parent);
        span.end_with_timestamp(end);
    }
}

/// What sqlx says of a statement it ran.
#[derive(Default)]
struct Statement {
    /// Its first words, or all of it when short.
    summary: String,
    /// All of it, when the summary is not.
    text: String,
    returned: Option<u64>,
    seconds: f64,
}

impl Visit for Statement {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "summary" => value.clone_into(&mut self.summary),
            "db.statement" => value.clone_into(&mut self.text),
            _ => {}
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "rows_returned" {
            self.returned = Some(value);
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if field.name() == "elapsed_secs" {
            self.seconds = value;
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

/// A statement's operation (`SELECT`) and the table it names first (`order`), for the
/// span's name: `SELECT order`. One pass over its words, as far as the table.
fn summary(text: &str) -> (String, String) {
    let mut words = text.split_ascii_whitespace();
    let operation = words.next().unwrap_or_default().to_ascii_uppercase();
    let before = match operation.as_str() {
        "SELECT" | "DELETE" => "FROM",
        "INSERT" => "INTO",
        "UPDATE" => "UPDATE",
        _ => return (operation, String::new()),
    };
    let collection = if before == "UPDATE" {
        words.next()
    } else {
        words.by_ref().find(|w| w.eq_ignore_ascii_case(before)).and_then(|_| words.next())
    };
    let collection = collection.unwrap_or_default().split(['(', ',', ';']).next().unwrap_or_default();
    (operation, collection.trim_matches('"').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn traces_are_on_where_an_endpoint_is_set_and_nothing_says_otherwise() {
        assert_eq!(wanted(vars(&[])), Ok(false));
        assert_eq!(wanted(vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")])), Ok(true));
        assert_eq!(wanted(vars(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces")])), Ok(true));
        assert_eq!(wanted(vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])), Ok(false));
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        assert_eq!(wanted(vars(&[on, ("OTEL_SDK_DISABLED", "TRUE")])), Ok(false));
        assert_eq!(wanted(vars(&[on, ("OTEL_TRACES_EXPORTER", "none")])), Ok(false));
        assert_eq!(wanted(vars(&[on, ("OTEL_TRACES_EXPORTER", "otlp")])), Ok(true));
        assert_eq!(wanted(vars(&[on, ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")])), Ok(true));
    }

    #[test]
    fn what_this_build_cannot_export_is_an_error_naming_the_variable() {
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317");
        let grpc = wanted(vars(&[on, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])).unwrap_err();
        assert!(grpc.starts_with("OTEL_EXPORTER_OTLP_PROTOCOL is `grpc`"), "{grpc}");
        // The traces' own variable is read before the general one.
        let json = vars(&[
            on,
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ]);
        assert!(wanted(json).unwrap_err().starts_with("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL is `http/json`"));
        let zipkin = wanted(vars(&[on, ("OTEL_TRACES_EXPORTER", "zipkin")])).unwrap_err();
        assert!(zipkin.starts_with("OTEL_TRACES_EXPORTER is `zipkin`"), "{zipkin}");
    }

    #[test]
    fn a_statement_is_named_by_its_operation_and_first_table() {
        let named = |text| {
            let (operation, collection) = summary(text);
            format!("{operation} {collection}").trim_end().to_owned()
        };
        assert_eq!(named("SELECT * FROM \"order\" WHERE \"id\" = $1"), "SELECT order");
        assert_eq!(named("INSERT INTO \"customer\"(\"id\", \"name\") VALUES ($1, $2)"), "INSERT customer");
        assert_eq!(named("UPDATE \"order\" SET \"status\" = $1"), "UPDATE order");
        assert_eq!(named("delete from restgen_api_key where id = ?"), "DELETE restgen_api_key");
        assert_eq!(named("BEGIN"), "BEGIN");
        assert_eq!(named("SELECT 1"), "SELECT");
    }
}
