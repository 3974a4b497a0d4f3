//! A lifecycle's paths: each transition (`POST {item}/{transition}`) and the status
//! endpoint (`GET {item}/status`).

use crate::headers::{conditional_status, idempotency_key, if_match, write_errors};
use crate::problems::responses;
use crate::schemas::{path_param, schema_name};
use crate::security::security;
use crate::{json_response, schema_ref};
use heck::{ToLowerCamelCase, ToUpperCamelCase};
use restgen_model::bounds::DATETIME_CHARS;
use restgen_model::model::*;
use restgen_model::words::a;
use restgen_wire::http;
use serde_json::{Map, Value, json};

/// Adds the transition and status paths of `r` under `item` (its item path); returns them.
pub(crate) fn lifecycle_paths(
    service: &Service,
    r: &Resource,
    item: &str,
    paths: &mut Map<String, Value>,
    schemas: &mut Map<String, Value>,
) -> Vec<String> {
    let Some(states) = &r.states else { return Vec::new() };
    let mut added = Vec::new();
    let name = &r.name.value;
    let noun = r.noun();
    let model = schema_name(r, "");
    let values: Vec<&str> = r
        .field(&states.field.value)
        .map_or_else(Vec::new, |f| f.ty.value.values().iter().map(|v| v.value.as_str()).collect());
    let id = json!([path_param(&r.id_param(), r.id)]);
    let names: Vec<&str> = states.transitions.iter().map(|t| t.name.value.as_str()).collect();
    let conflict = json!({
        "description": "The record's state is not one this transition starts from (`state` says which it is, `transitions` what is open from it to this caller), or a request with the same `Idempotency-Key` is still running.",
        "content": { (http::media::PROBLEM): { "schema": { "allOf": [
            schema_ref("Problem"),
            { "type": "object", "properties": {
                "state": { "type": "string", "enum": values },
                "transitions": { "type": "array", "uniqueItems": true, "maxItems": names.len(), "items": { "type": "string", "enum": names } },
            } },
        ] } } },
    });
    for t in &states.transitions {
        let tname = &t.name.value;
        let from: Vec<&str> = t.from.iter().map(|f| f.value.as_str()).collect();
        let mut stored = json_response(&format!("The {noun}, now {}.", t.to.value), schema_ref(&model));
        stored["headers"] = json!({
            "ETag": { "$ref": "#/components/headers/ETag" },
            (http::IDEMPOTENT_REPLAYED.name): {
                "description": "`true` when this is the answer kept for an earlier request with the same `Idempotency-Key`.",
                "schema": { "type": "string", "enum": ["true"], "maxLength": 4 },
            },
        });
        let mut answers =
            responses("200", stored, &write_errors(r, &[400, 401, 403, 404, 413, 415, 422, 500, 502, 504]));
        answers["409"] = conflict.clone();
        let roles = if t.roles.is_empty() {
            String::new()
        } else {
            let roles: Vec<String> = t.roles.iter().map(|r| format!("`{}`", r.value)).collect();
            format!(" Of those, only callers with the role {} may take it (403 for others).", roles.join(" or "))
        };
        let who = crate::access::who_may(service, r, &r.access.write, crate::access::Reach::Item);
        let description = format!(
            "Moves the {noun} from {} to `{}`. {who}{roles} From any other state: 409. Takes no input (an empty body, or `{{}}`).",
            from.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(" or "),
            t.to.value,
        );
        let mut op = Map::new();
        op.insert(
            "post".into(),
            json!({
                "operationId": format!("{}{model}", tname.to_lower_camel_case()),
                "summary": format!("{} {} ({} → {})", tname.to_upper_camel_case(), a(&noun), from.join(", "), t.to.value),
                "description": description,
                "tags": [name],
                "security": security(service, &r.access.write),
                "parameters": [idempotency_key(), if_match(r)],
                "responses": answers,
            }),
        );
        op.insert("parameters".into(), id.clone());
        let path = format!("{item}/{tname}");
        added.push(path.clone());
        paths.insert(path, Value::Object(op));
    }
    if r.status_endpoint.value {
        let status_name = schema_name(r, "StatusReport");
        schemas.insert(
            status_name.clone(),
            json!({
                "type": "object",
                "required": ["status", "updated_at"],
                "properties": {
                    "status": { "type": "string", "enum": values },
                    "updated_at": { "type": "string", "format": "date-time", "maxLength": DATETIME_CHARS, "description": "When the record last changed." },
                },
            }),
        );
        let mut answers = responses(
            "200",
            json_response(&format!("The {noun}'s state."), schema_ref(&status_name)),
            &[400, 401, 403, 404, 500],
        );
        let mut parameters = Vec::new();
        conditional_status(r, &mut parameters, &mut answers);
        let mut op = Map::new();
        op.insert(
            "get".into(),
            json!({
                "operationId": format!("get{model}Status"),
                "summary": format!("The state of {}", a(&noun)),
                "description": format!("{} Poll it with `If-None-Match`: 304 while the state has not changed.", crate::access::who_may(service, r, &r.access.read, crate::access::Reach::Item)),
                "tags": [name],
                "security": security(service, &r.access.read),
                "parameters": parameters,
                "responses": answers,
            }),
        );
        op.insert("parameters".into(), id);
        let path = format!("{item}/status");
        added.push(path.clone());
        paths.insert(path, Value::Object(op));
    }
    added
}
