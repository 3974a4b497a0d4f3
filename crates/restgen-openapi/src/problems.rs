//! Error answers: the problem+json schema (RFC 9457) and the shared responses of each status.

use crate::schema_ref;
use crate::security::challenges;
use restgen_model::bounds::{MAX_DETAIL, MAX_FIELD, MAX_FIELD_ERRORS, MAX_MESSAGE, MAX_REQUEST_ID, REQUEST_ID_PATTERN};
use restgen_model::model::*;
use restgen_wire::http;
use serde_json::{Map, Value, json};

pub(crate) fn problem_schema() -> Value {
    let max_errors = MAX_FIELD_ERRORS;
    json!({
        "type": "object",
        "description": "An RFC 9457 problem: every error answer has this shape.",
        "required": ["type", "title", "status", "detail"],
        "properties": {
            "type": { "type": "string", "format": "uri-reference", "maxLength": 256 },
            "title": { "type": "string", "maxLength": 64 },
            "status": { "type": "integer", "format": "int32", "minimum": 100, "maximum": 599 },
            "detail": { "type": "string", "maxLength": MAX_DETAIL },
            "errors": {
                "type": "array",
                "maxItems": max_errors,
                "description": "One entry per invalid input, naming it.",
                "items": {
                    "type": "object",
                    "required": ["field", "message"],
                    "properties": {
                        "field": { "type": "string", "maxLength": MAX_FIELD },
                        "message": { "type": "string", "maxLength": MAX_MESSAGE },
                    },
                },
            },
            "request_id": {
                "type": "string",
                "maxLength": MAX_REQUEST_ID,
                "pattern": REQUEST_ID_PATTERN,
                "description": format!(
                    "The request's id, as its `{}` header says: quote it in a report; the service's log lines of the request carry it.",
                    http::REQUEST_ID.name
                ),
            },
        },
    })
}

/// The error answers, shared by every operation through `$ref`.
pub(crate) fn error_responses(service: &Service) -> Value {
    let mut out = Map::new();
    for (status, what) in [
        ("400", "The request is malformed or breaks a rule; `errors` names each field."),
        ("401", "Credentials are missing or invalid."),
        ("403", "The caller may not do this."),
        ("404", "No such record."),
        ("406", "`Accept` admits none of the representations the resource offers; `detail` lists them."),
        (
            "409",
            "A unique value is taken, a record to delete is still referred to by another's required ref, a per-account limit is reached, or a request with the same `Idempotency-Key` is still running.",
        ),
        ("413", "The body is larger than the service accepts."),
        (
            "412",
            "`If-Match` names no current version of the record: it changed since the caller read it. `ETag` is its current tag.",
        ),
        ("414", "The request's URL is longer than the service redirects."),
        ("415", "The body is not JSON."),
        ("422", "A business rule refused the input, or an `Idempotency-Key` was used before with another body."),
        ("428", "The resource takes writes only with `If-Match` (`require_if_match`)."),
        ("500", "The service failed; the fault is logged."),
        ("502", "A business rule called an upstream service, and its answer could not be used; nothing was written."),
        (
            "503",
            "The request took too long, the database refused for now (nothing was written), or the service is not ready.",
        ),
        ("504", "A business rule called an upstream service, and it did not answer in time; nothing was written."),
    ] {
        let mut response = json!({
            "description": what,
            "content": { (http::media::PROBLEM): { "schema": schema_ref("Problem") } },
        });
        if status == "401" {
            let longest = challenges(service).len();
            response["headers"] = json!({
                "WWW-Authenticate": {
                    "description": "A challenge for each accepted scheme.",
                    "schema": { "type": "string", "maxLength": longest },
                },
            });
        }
        if status == "503" {
            response["headers"] = json!({
                "Retry-After": {
                    "description": "Seconds to wait, when the database refused for now or the service sheds load (`limits.max_in_flight`).",
                    "schema": { "type": "integer", "format": "int32", "minimum": 0, "maximum": 86400 },
                },
            });
        }
        // Transitions are writes too, conditional and hooked as the others.
        let transitions = service.resources.iter().any(|r| r.states.is_some());
        let writes = [Operation::Replace, Operation::Patch, Operation::Delete];
        if status == "412" && !transitions && !service.resources.iter().any(|r| writes.iter().any(|op| r.has(*op))) {
            continue;
        }
        if status == "412" {
            response["headers"] = json!({ "ETag": { "$ref": "#/components/headers/ETag" } });
        }
        // Hooks run before writes; a service without writes runs none.
        let written = [Operation::Create, Operation::Replace, Operation::Patch, Operation::Delete];
        if (status == "502" || status == "504")
            && !transitions
            && !service.resources.iter().any(|r| written.iter().any(|op| r.has(*op)))
        {
            continue;
        }
        if status == "428" && service.resources.iter().all(|r| !r.require_if_match.value) {
            continue;
        }
        // Only redirects from former paths answer 414.
        if status == "414" && service.resources.iter().all(|r| r.former_paths.is_empty()) {
            continue;
        }
        out.insert(format!("Error{status}"), response);
    }
    Value::Object(out)
}

/// An operation's `responses`: its success answer, and the shared error answers.
pub(crate) fn responses(status: &str, ok: Value, errors: &[u16]) -> Value {
    let mut out = Map::new();
    out.insert(status.into(), ok);
    for s in errors {
        out.insert(s.to_string(), json!({ "$ref": format!("#/components/responses/Error{s}") }));
    }
    Value::Object(out)
}
