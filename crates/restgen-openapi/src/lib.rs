//! The OpenAPI 3.1 document of a service, from the same model its code comes from: every
//! path and operation the service serves, the allow-listed request shapes per operation,
//! the response shapes with their envelopes, the problem+json errors, the headers, and the
//! security schemes. A crate of its own, light enough (serde_json and the model) for the
//! runtime to serve a derived service's document, which it emits at start.
//!
//! One module a topic: `paths` (operations and their parameters), `schemas` (records,
//! inputs, lists), `problems` (error answers), `security` (schemes and requirements),
//! `headers` (ETag, conditional requests, idempotency, CORS), `rate` (rate limit fields and
//! 429s); this file assembles the document.

mod headers;
mod paths;
mod problems;
mod rate;
mod schemas;
mod security;

use crate::headers::{cors_headers, etag_header};
use crate::paths::{auth_paths, healthz, resource_paths};
use crate::problems::{error_responses, problem_schema};
use crate::security::security_schemes;
use restgen_model::model::*;
use serde_json::{Map, Value, json};

/// The document as pretty JSON text, ending in a newline.
pub fn render(service: &Service) -> String {
    let mut text = serde_json::to_string_pretty(&document(service)).unwrap_or_default();
    text.push('\n');
    text
}

pub fn document(service: &Service) -> Value {
    let base = service.api.base_path.value.as_str();
    let mut paths = Map::new();
    let mut schemas = Map::new();
    schemas.insert("Problem".into(), problem_schema());
    paths.insert("/healthz".into(), healthz());
    if let Some(auth) = &service.auth {
        auth_paths(service, auth, base, &mut paths, &mut schemas);
    }
    let per_resource: Vec<(String, Vec<String>)> = service
        .resources
        .iter()
        .map(|r| (r.name.value.clone(), resource_paths(service, r, base, &mut paths, &mut schemas)))
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
        "tags": tags,
        "paths": paths,
        "components": { "schemas": schemas, "responses": error_responses(service) },
    });
    if let Some(auth) = &service.auth {
        doc["components"]["securitySchemes"] = security_schemes(auth);
    }
    if !service.resources.is_empty() {
        doc["components"]["headers"] = json!({ "ETag": etag_header() });
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
