//! Traces, as an OpenTelemetry collector receives them: the shop in a process of its own
//! with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a receiver on loopback, which decodes
//! what arrives with OpenTelemetry's own protocol messages (`opentelemetry-proto`). A request
//! that sends `traceparent` is a span of that trace, with spans for its authentication and
//! each SQL statement under it; a webhook delivery is a trace of its own, whose
//! `traceparent` the endpoint is sent; no attribute holds a credential or a record's value.

use crate::support::accounts::PASSWORD;
use crate::support::child::{Process, shop_command};
use crate::support::harness::{Reply, request, secrets};
use crate::support::receiver::Receiver;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use prost::Message;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::process::Stdio;

/// The caller's trace, and the span of the caller's the request continues.
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";
/// Credentials that are no token of the shop's.
const FORGED_TOKEN: &str = "Bearer not.a-token.7f3a";

/// A span as the collector received it: ids in hex, attributes as text.
#[derive(Debug)]
struct Span {
    trace: String,
    id: String,
    parent: String,
    name: String,
    kind: i32,
    /// Whether its status is an error.
    error: bool,
    attributes: BTreeMap<String, String>,
}

impl Span {
    fn attribute(&self, key: &str) -> &str {
        self.attributes.get(key).map_or("", String::as_str)
    }
}

#[test]
fn a_request_with_a_traceparent_is_traced_down_to_its_statements_and_deliveries_carry_theirs() {
    let dir = tempfile::tempdir().unwrap();
    traced(&format!("sqlite://{}", dir.path().join("traces.db").display()), "sqlite");
}

/// The same on PostgreSQL, whose statements run on the request's own task (SQLite's on a
/// thread of the connection's).
#[test]
fn on_postgresql_too() {
    let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
        eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
        return;
    };
    let runtime = restgen::__private::tokio::runtime::Runtime::new().unwrap();
    let url = runtime.block_on(crate::support::harness::fresh_schema(&url, "traces"));
    traced(&url, "postgresql");
}

/// The shop on the database at `url` (`database`, as OpenTelemetry names it), traced.
fn traced(url: &str, database: &str) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = restgen::__private::tokio::runtime::Runtime::new().unwrap();
    let (collector, endpoint) = runtime.block_on(async { (Receiver::start(&[]).await, Receiver::start(&[]).await) });
    let mut command = shop_command(url);
    let otlp = collector.url.trim_end_matches("/hooks").to_owned();
    let secret = restgen::wire::signature::secret_of(&secrets().webhook_keys[0]);
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &otlp)
        .env("OTEL_SERVICE_NAME", "shop-under-test")
        // Sent as they end rather than every 5 s: the test waits on the child's exit anyway.
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .env("RUST_LOG", "warn")
        .env("SHOP_WEBHOOK_ALLOW_HTTP", "1")
        .env("SHOP_WEBHOOK_ALLOW_LOOPBACK", "1")
        .env("SHOP_WEBHOOK_SECRET", &secret);
    let mut child = Process(command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap());
    // Kept open while the shop runs: it writes more, and a closed pipe would stop it.
    let mut lines = std::io::BufReader::new(child.0.stdout.take().unwrap()).lines().map_while(Result::ok);
    let mut said = Vec::new();
    let public = lines
        .by_ref()
        .find_map(|l| {
            said.push(l.clone());
            l.split("listening on ").nth(1).map(str::to_owned)
        })
        .expect("the shop says where it listens");
    // (The test harness of the child may begin the line.)
    let banner = format!("traces: OTLP to {otlp}/v1/traces");
    assert!(said.iter().any(|l| l.ends_with(&banner)), "{said:?}");

    let customer = json!({ "name": "Quintessa Marlowe", "email": "quintessa@example.com", "city": "Llanfair", "phone": "+44 20 7946 0958" });
    let (bearer, created, listed, forged, refused, invented) = runtime.block_on(async {
        let client = reqwest::Client::new();
        let send = async |method: &str, path: &str, body: Option<serde_json::Value>, headers: &[(&str, &str)]| {
            let r: Reply = request(&client, &public, method, path, body, headers).await;
            r
        };
        let ann = json!({ "name": "Ann Oakhurst", "email": "ann@example.com", "password": PASSWORD });
        assert_eq!(send("POST", "/api/users", Some(ann), &[]).await.status, 201);
        let login = json!({ "email": "ann@example.com", "password": PASSWORD });
        let token =
            send("POST", "/api/auth/login", Some(login), &[]).await.body["access_token"].as_str().unwrap().to_owned();
        let bearer = format!("Bearer {token}");
        let signed = [("authorization", bearer.as_str())];
        let subscription = json!({ "url": endpoint.url, "events": ["customer.created"] });
        assert_eq!(send("POST", "/api/webhooks", Some(subscription), &signed).await.status, 201);
        let traceparent = format!("00-{TRACE}-{PARENT}-01");
        let continued = [
            ("authorization", bearer.as_str()),
            ("traceparent", traceparent.as_str()),
            ("tracestate", "vendor=opaque"),
        ];
        let created = send("POST", "/api/customers", Some(customer.clone()), &continued).await;
        assert_eq!(created.status, 201, "{}", created.text);
        let listed = send("GET", "/api/customers?city=Llanfair", None, &signed).await;
        assert_eq!(listed.status, 200);
        // Not W3C Trace Context: a trace of its own.
        let forged =
            send("GET", "/api/customers", None, &[("authorization", bearer.as_str()), ("traceparent", "00-zz-yy-01")])
                .await;
        assert_eq!(forged.status, 200);
        // Credentials refused, and a method of the caller's own invention.
        let refused = send("GET", "/api/customers", None, &[("authorization", FORGED_TOKEN)]).await;
        assert_eq!(refused.status, 401);
        let invented = send("PURGE", "/api/customers", None, &[]).await;
        assert!(invented.status >= 400, "{}", invented.status);
        endpoint.wait_for(1).await;
        (bearer, created, listed, forged, refused, invented)
    });
    // Stopped as an orchestrator stops it: what the exporter holds is sent before it exits.
    child.terminate();
    let exited = child.0.wait().unwrap();
    assert!(exited.success(), "{exited:?}");

    let mut spans = Vec::new();
    for arrived in collector.seen() {
        assert_eq!(arrived.headers["content-type"], "application/x-protobuf");
        let export = ExportTraceServiceRequest::decode(arrived.body.as_ref()).expect("an OTLP export");
        for resource in export.resource_spans {
            let service = resource.resource.unwrap().attributes.into_iter().find(|a| a.key == "service.name");
            assert_eq!(service.map(|a| text(a.value)), Some("shop-under-test".to_owned()));
            for span in resource.scope_spans.into_iter().flat_map(|s| s.spans) {
                spans.push(Span {
                    trace: hex(&span.trace_id),
                    id: hex(&span.span_id),
                    parent: hex(&span.parent_span_id),
                    name: span.name,
                    kind: span.kind,
                    error: span.status.is_some_and(|s| s.code == StatusCode::Error as i32),
                    attributes: span.attributes.into_iter().map(|a| (a.key, text(a.value))).collect(),
                });
            }
        }
    }
    let shown = || {
        spans.iter().map(|s| format!("{} {} <- {} {}", s.name, s.id, s.parent, s.trace)).collect::<Vec<_>>().join("\n")
    };

    // The create: a span of the caller's trace, under the caller's span, named by the
    // operation, and quoting the request's id.
    let server = spans.iter().find(|s| s.trace == TRACE && s.parent == PARENT).unwrap_or_else(|| panic!("{}", shown()));
    assert_eq!(server.name, "customer.create");
    assert_eq!(server.kind, SpanKind::Server as i32);
    assert_eq!(server.attribute("http.request.method"), "POST");
    assert_eq!(server.attribute("http.response.status_code"), "201");
    assert_eq!(server.attribute("restgen.request_id"), created.header("x-request-id").unwrap());
    // Every span of every trace hangs from its trace's root (the caller's span, for the
    // caller's trace) through spans of the trace.
    for span in &spans {
        let mut at = span;
        let root = |s: &Span| s.parent.is_empty() || (s.trace == TRACE && s.parent == PARENT);
        while !root(at) {
            let parent = spans.iter().find(|s| s.trace == at.trace && s.id == at.parent);
            at = parent.unwrap_or_else(|| panic!("{}'s parent is not in its trace\n{}", at.name, shown()));
        }
        assert!(at.kind == SpanKind::Server as i32 || at.name == "webhook delivery", "{} roots a trace", at.name);
    }
    let within: Vec<&Span> = spans.iter().filter(|s| s.trace == TRACE && s.id != server.id).collect();
    assert!(within.iter().all(|s| s.parent == server.id), "the create's spans are its own children: {}", shown());
    let authenticate = within.iter().find(|s| s.name == "authenticate").unwrap_or_else(|| panic!("{}", shown()));
    assert_eq!(authenticate.parent, server.id);
    assert_eq!(authenticate.attribute("restgen.auth.scheme"), "bearer");
    let insert = within.iter().find(|s| s.name == "INSERT customer").unwrap_or_else(|| panic!("{}", shown()));
    assert_eq!(insert.kind, SpanKind::Client as i32);
    assert_eq!(insert.attribute("db.system.name"), database);
    assert!(insert.attribute("db.query.text").starts_with("INSERT INTO \"customer\""), "{insert:?}");
    assert!(
        within.iter().filter(|s| s.kind == SpanKind::Client as i32).count() >= 2,
        "each statement is a span: {}",
        shown()
    );

    // A request without a `traceparent`, or with one that is not W3C's, begins a trace.
    for (reply, operation) in [(&listed, "customer.list"), (&forged, "customer.list")] {
        let id = reply.header("x-request-id").unwrap();
        let span =
            spans.iter().find(|s| s.attribute("restgen.request_id") == id).unwrap_or_else(|| panic!("{}", shown()));
        assert_eq!(span.name, operation);
        assert_eq!(span.parent, "", "a root");
        assert_ne!(span.trace, TRACE);
        let filtered = spans.iter().find(|s| s.trace == span.trace && s.name == "SELECT customer");
        assert!(filtered.is_some(), "{}", shown());
    }

    // The delivery: a trace of its own, whose span the endpoint was sent as `traceparent`.
    let sent = endpoint.seen()[0].headers["traceparent"].to_str().unwrap().to_owned();
    let parts: Vec<&str> = sent.split('-').collect();
    assert_eq!((parts.len(), parts[0], parts[3]), (4, "00", "01"), "{sent}");
    let delivery =
        spans.iter().find(|s| s.trace == parts[1] && s.id == parts[2]).unwrap_or_else(|| panic!("{sent}\n{}", shown()));
    assert_eq!(delivery.name, "webhook delivery");
    assert_eq!(delivery.kind, SpanKind::Client as i32);
    assert_eq!(delivery.parent, "");
    assert_eq!(delivery.attribute("restgen.event"), "customer.created");
    assert_eq!(delivery.attribute("http.response.status_code"), "204");

    // Nothing a caller sent as a credential or a value is in any attribute: statements
    // carry placeholders, spans the schema's names.
    let token = bearer.trim_start_matches("Bearer ");
    // The refused credentials: an error of their check, the scheme named and nothing more.
    let of = |reply: &Reply| {
        let id = reply.header("x-request-id").unwrap().to_owned();
        spans.iter().find(|s| s.attribute("restgen.request_id") == id).unwrap_or_else(|| panic!("{}", shown()))
    };
    let server = of(&refused);
    let check = spans.iter().find(|s| s.parent == server.id && s.name == "authenticate").unwrap();
    assert!(check.error && !server.error, "a 401 is the caller's, its check's failure the span's");
    assert_eq!(check.attribute("restgen.auth.scheme"), "bearer");
    // An invented method is no attribute's value: OpenTelemetry's `_OTHER` stands for it.
    let server = of(&invented);
    assert_eq!((server.name.as_str(), server.attribute("http.request.method")), ("_OTHER", "_OTHER"));

    let mut private = vec![
        PASSWORD,
        token,
        FORGED_TOKEN,
        "PURGE",
        secret.as_str(),
        "ann@example.com",
        "Ann Oakhurst",
        endpoint.url.as_str(),
    ];
    private.extend(customer.as_object().unwrap().values().map(|v| v.as_str().unwrap()));
    for span in &spans {
        for (key, value) in &span.attributes {
            for word in &private {
                assert!(!value.contains(word), "{}'s {key} holds `{word}`: {value}", span.name);
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An attribute's value as text.
fn text(value: Option<opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    match value.and_then(|v| v.value) {
        Some(Any::StringValue(s)) => s,
        Some(Any::IntValue(n)) => n.to_string(),
        Some(Any::BoolValue(b)) => b.to_string(),
        Some(Any::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}
