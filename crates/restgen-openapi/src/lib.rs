//! The OpenAPI 3.1 document of a service, from the same model its code comes from: every
//! path and operation the service serves, the allow-listed request shapes per operation,
//! the response shapes with their envelopes, the problem+json errors, the headers, and the
//! security schemes. A crate of its own, light enough (serde_json and the model) for the
//! runtime to serve a derived service's document, which it emits at start.
//!
//! One module a topic: `paths` (operations and their parameters), `schemas` (records,
//! inputs, lists), `problems` (error answers), `security` (schemes and requirements),
//! `headers` (ETag, conditional requests, idempotency, CORS), `rate` (rate limit fields and
//! 429s), `size` (how long its text is); this file assembles the document.

mod headers;
mod lifecycle;
mod paths;
mod problems;
mod rate;
mod schemas;
mod security;
mod size;
mod webhooks;

use crate::headers::{cors_headers, etag_header};
use crate::paths::{auth_paths, probes, resource_paths};
use crate::problems::{error_responses, problem_schema};
use crate::security::security_schemes;
use restgen_model::model::*;
use serde_json::{Map, Value, json};

/// The document as pretty JSON text, ending in a newline.
pub fn render(service: &Service) -> String {
    text(&document(service))
}

fn text(doc: &Value) -> String {
    let len = size::pretty_len(doc) + 1;
    let mut text = Vec::with_capacity(len);
    if serde_json::to_writer_pretty(&mut text, doc).is_err() {
        return String::new();
    }
    text.push(b'\n');
    // Every document the test suites render, of every fixture, is measured right.
    debug_assert_eq!(text.len(), len, "the measured length of the document's text");
    String::from_utf8(text).unwrap_or_default()
}

/// The document of what a request that names no version gets: the newest version at the
/// unprefixed paths, or the whole service where it has no versions.
pub fn document(service: &Service) -> Value {
    match service.api.versions.last() {
        Some(newest) => version_document(service, newest, false),
        None => build(service, &service.api.base_path.value),
    }
}

/// One document per served version, `(n, text)`: its resources and fields, at
/// `{base_path}/v{n}` where paths name versions.
pub fn render_versions(service: &Service) -> Vec<(u32, String)> {
    let by_path = service.api.versioning.iter().any(|v| v.value == Versioning::Path);
    service.api.versions.iter().map(|v| (v.number.value, text(&version_document(service, v, by_path)))).collect()
}

/// Version `v` of the API: what it has, where it lives, and, when it is deprecated, the
/// `Deprecation`, `Sunset` and successor `Link` on every answer and each operation marked.
fn version_document(service: &Service, v: &ApiVersion, prefixed: bool) -> Value {
    let n = v.number.value;
    let view = service.at_version(n);
    let base = &service.api.base_path.value;
    let resource_base = if prefixed { format!("{base}/v{n}") } else { base.clone() };
    let deprecated = (v.deprecated.is_some() || v.sunset.is_some()).then_some(v);
    let mut doc = build_at(&view, base, &resource_base, deprecated);
    doc["info"]["version"] = json!(n.to_string());
    let served: Vec<String> = service.api.versions.iter().map(|v| v.number.value.to_string()).collect();
    let how: Vec<String> = service
        .api
        .versioning
        .iter()
        .map(|scheme| match scheme.value {
            Versioning::Path => format!("the path `{base}/v{n}/...`"),
            Versioning::Header => format!("`{VERSION_HEADER}: {n}`"),
            Versioning::MediaType => format!("`Accept: {}`", service.api.media_type(n)),
        })
        .collect();
    let note = format!(
        "Version {n} of the API (served: {}), named by {}; a request that names none gets the newest.",
        served.join(", "),
        how.join(", or ")
    );
    doc["info"]["description"] = match service.description.as_deref() {
        Some(d) => json!(format!("{d}\n\n{note}")),
        None => json!(note),
    };
    doc
}

fn build(service: &Service, base: &str) -> Value {
    build_at(service, base, base, None)
}

/// The document with auth endpoints under `base` and resources under `resource_base`,
/// those of a `deprecated` version marked as such.
fn build_at(service: &Service, base: &str, resource_base: &str, deprecated: Option<&ApiVersion>) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    schemas.insert("Problem".into(), problem_schema());
    for (path, item) in probes() {
        paths.insert(path.into(), item);
    }
    if let Some(auth) = &service.auth {
        auth_paths(service, auth, base, &mut paths, &mut schemas);
    }
    if webhooks::published(service) {
        webhooks::paths(service, base, &mut paths, &mut schemas);
    }
    let per_resource: Vec<(String, Vec<String>)> = service
        .resources
        .iter()
        .map(|r| (r.name.value.clone(), resource_paths(service, r, resource_base, &mut paths, &mut schemas)))
        .collect();
    let limited = rate::limited_paths(service, &per_resource, &paths);
    let version = service.api.versions.last().map_or_else(|| "1".to_owned(), |v| v.number.value.to_string());
    let mut info = json!({
        "title": service.title.clone().unwrap_or_else(|| service.name.value.clone()),
        "version": version,
    });
    if let Some(d) = &service.description {
        info["description"] = json!(d);
    }
    let mut tags = vec![json!({ "name": "service", "description": "The service itself." })];
    if service.auth.is_some() {
        tags.push(json!({ "name": "auth", "description": "Signing in and API keys." }));
    }
    if webhooks::published(service) {
        tags.push(json!({ "name": "webhooks", "description": "Subscriptions to the events the service publishes, and their deliveries." }));
    }
    for r in &service.resources {
        let description = r.description.clone().unwrap_or_else(|| format!("The {} collection.", r.path.value));
        tags.push(json!({ "name": r.name.value, "description": description }));
    }
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": info,
        "servers": [{
            "url": "/",
            "description": "The instance serving this document, whichever environment it runs in (local, staging or production).",
            "x-internal": false,
        }],
        "tags": [],
        "paths": {},
        "components": { "schemas": {}, "responses": error_responses(service) },
    });
    // Moved in, not through `json!`, which copies every value it is given: these are
    // nearly the whole document.
    doc["tags"] = Value::Array(tags);
    doc["paths"] = Value::Object(paths);
    doc["components"]["schemas"] = Value::Object(schemas);
    if let Some(auth) = &service.auth {
        doc["components"]["securitySchemes"] = security_schemes(auth);
    }
    if webhooks::published(service) {
        doc["webhooks"] = webhooks::events(service);
    }
    if !service.resources.is_empty() {
        doc["components"]["headers"] = json!({ "ETag": etag_header() });
    }
    if let Some(v) = deprecated {
        let resource_paths: Vec<&String> = per_resource.iter().flat_map(|(_, paths)| paths).collect();
        headers::deprecation(&mut doc, v, &resource_paths);
    }
    rate::document(&mut doc, service, &limited);
    if let Some(cors) = &service.cors {
        cors_headers(&mut doc, cors);
    }
    doc
}

pub(crate) fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// Text the runtime stores: PostgreSQL holds no NUL character, so it is refused on both.
pub(crate) const NO_NUL: &str = "^[^\\u0000]*$";

pub(crate) fn json_body(schema: Value) -> Value {
    json!({ "required": true, "content": { "application/json": { "schema": schema } } })
}

pub(crate) fn json_response(description: &str, schema: Value) -> Value {
    json!({ "description": description, "content": { "application/json": { "schema": schema } } })
}
