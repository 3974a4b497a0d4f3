//! The OpenAPI 3.1 document of a service, from the same model its code comes from: every
//! path and operation the service serves, the allow-listed request shapes per operation,
//! the response shapes with their envelopes, the problem+json errors, the headers, and the
//! security schemes. A crate of its own, light enough (serde_json and the model) for the
//! runtime to serve a derived service's document, which it emits at start.
//!
//! One module a topic: `paths` (operations and their parameters), `schemas` (records,
//! inputs, lists), `problems` (error answers), `security` (schemes and requirements),
//! `headers` (ETag, conditional requests, idempotency, CORS), `rate` (rate limit fields and
//! 429s), `access` (who may call each operation, in words); `parts` makes the document as
//! it is written, one resource at a time, and `downgrade` renders it in OpenAPI 3.0.3.

mod access;
pub mod downgrade;
mod feed;
mod headers;
mod lifecycle;
mod parts;
mod paths;
mod problems;
mod rate;
mod schemas;
mod security;
mod webhooks;

use crate::parts::Parts;
use restgen_model::model::*;
use restgen_wire::http;
use serde_json::{Value, json};

/// The document as pretty JSON text, ending in a newline: the newest version at the
/// unprefixed paths, or the whole service where it has no versions.
pub fn render(service: &Service) -> String {
    match service.api.versions.last() {
        Some(newest) => version_text(service, newest, false),
        None => {
            let base = &service.api.base_path.value;
            Parts::new(service, base, base, None).text()
        }
    }
}

/// One document per served version, `(n, text)`: its resources and fields, at
/// `{base_path}/v{n}` where paths name versions.
pub fn render_versions(service: &Service) -> Vec<(u32, String)> {
    let by_path = service.api.versioning.iter().any(|v| v.value == Versioning::Path);
    service.api.versions.iter().map(|v| (v.number.value, version_text(service, v, by_path))).collect()
}

/// Version `v` of the API: what it has, where it lives, and, when it is deprecated, the
/// `Deprecation`, `Sunset` and successor `Link` on every answer and each operation marked.
fn version_text(service: &Service, v: &ApiVersion, prefixed: bool) -> String {
    let n = v.number.value;
    let view = service.at_version(n);
    let base = &service.api.base_path.value;
    let resource_base = if prefixed { format!("{base}/v{n}") } else { base.clone() };
    let deprecated = (v.deprecated.is_some() || v.sunset.is_some()).then_some(v);
    let mut parts = Parts::new(&view, base, &resource_base, deprecated);
    let doc = &mut parts.doc;
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
    parts.text()
}

pub(crate) fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// Text the runtime stores: PostgreSQL holds no NUL character, so it is refused on both.
pub(crate) const NO_NUL: &str = "^[^\\u0000]*$";

pub(crate) fn json_body(schema: Value) -> Value {
    json!({ "required": true, "content": { (http::media::JSON): { "schema": schema } } })
}

pub(crate) fn json_response(description: &str, schema: Value) -> Value {
    json!({ "description": description, "content": { (http::media::JSON): { "schema": schema } } })
}
