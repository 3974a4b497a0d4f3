//! Headers: `ETag` and conditional reads, `Idempotency-Key` on creates, CORS.

use restgen_model::bounds::{MAX_IDEMPOTENCY_KEY, MAX_IF_MATCH, MAX_IF_NONE_MATCH};
use restgen_model::model::*;
use restgen_wire::http;
use serde_json::{Map, Value, json};

/// With `cors`, every answer (errors and preflights included) carries
/// `Access-Control-Allow-Origin` for an allowed `Origin`: a shared header, documented on
/// each response.
pub(crate) fn cors_headers(doc: &mut Value, cors: &Cors) -> Value {
    let any = cors.allowed_origins.iter().any(|o| o.value == "*");
    let longest = cors.allowed_origins.iter().map(|o| o.value.len()).max().unwrap_or(1);
    let description = if any {
        "`*` on answers to cross-origin requests: every origin may read them."
    } else {
        "The request's `Origin`, on answers to requests from an allowed origin; absent otherwise."
    };
    let values: Vec<&str> =
        if any { vec!["*"] } else { cors.allowed_origins.iter().map(|o| o.value.as_str()).collect() };
    let components = doc["components"].as_object_mut().expect("components is an object");
    let headers = components.entry("headers").or_insert_with(|| json!({}));
    headers["Access-Control-Allow-Origin"] =
        json!({ "description": description, "schema": { "type": "string", "enum": values, "maxLength": longest } });
    let header = json!({ "$ref": "#/components/headers/Access-Control-Allow-Origin" });
    if let Some(Value::Object(shared)) = doc["components"].get_mut("responses") {
        shared.values_mut().for_each(|r| allow_origin(r, &header));
    }
    header
}

/// `Access-Control-Allow-Origin` (`header`, the reference [`cors_headers`] returns) on
/// every answer of every operation of the path `item`.
pub(crate) fn cors_item(item: &mut Value, header: &Value) {
    for op in item.as_object_mut().into_iter().flat_map(|i| i.values_mut()) {
        if let Some(Value::Object(responses)) = op.get_mut("responses") {
            responses.values_mut().for_each(|r| allow_origin(r, header));
        }
    }
}

fn allow_origin(response: &mut Value, header: &Value) {
    if let Some(r) = response.as_object_mut().filter(|r| !r.contains_key("$ref")) {
        let headers = r.entry("headers").or_insert_with(|| json!({}));
        headers["Access-Control-Allow-Origin"] = header.clone();
    }
}

/// `Idempotency-Key` on a create (`restgen::idempotency`).
pub(crate) fn idempotency_key() -> Value {
    json!({
        "name": http::IDEMPOTENCY_KEY.name,
        "in": "header",
        "description": "A key of the caller's choosing (a UUID, say) that makes retrying safe: the first answer to it is kept for 24 hours and given again, with `Idempotent-Replayed: true`, to every request with the same key and body. The same key with another body is a 422; while the first request runs, a retry is a 409.",
        "schema": { "type": "string", "pattern": "^[!-~]+$", "minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY },
    })
}

/// A strong tag of the representation's bytes: 128 bits of SHA-256 in base64url.
pub(crate) fn etag_header() -> Value {
    json!({
        "description": "A strong tag of this representation; send it in `If-None-Match` to get 304 while it is current.",
        "required": true,
        "schema": { "type": "string", "pattern": "^\"[A-Za-z0-9_-]{22}\"$", "maxLength": 24 },
    })
}

/// The headers of a read: its tag and the resource's `Cache-Control`.
pub(crate) fn read_headers(r: &Resource) -> Map<String, Value> {
    let mut headers = Map::new();
    headers.insert("ETag".into(), json!({ "$ref": "#/components/headers/ETag" }));
    if r.formats.value.len() > 1 {
        headers.insert(
            "Vary".into(),
            json!({ "description": "Names `accept`: the answer depends on `Accept`, which picks the representation (CORS may name more).", "required": true,
                    "schema": { "type": "string", "pattern": "(^|[ ,])accept([ ,]|$)", "maxLength": 256 } }),
        );
    }
    let cache = r.cache_control();
    headers.insert(
        "Cache-Control".into(),
        json!({ "description": "How long caches may keep the answer, and who may.", "required": true,
                "schema": { "type": "string", "enum": [cache], "maxLength": cache.len() } }),
    );
    headers
}

/// A read of `rows` records at most: its representations (JSON, and CSV where the resource
/// offers it, chosen by `Accept`; 406 when none is acceptable), `If-None-Match` and the
/// 304 it may bring.
pub(crate) fn conditional(
    service: &Service,
    r: &Resource,
    rows: u32,
    parameters: &mut Vec<Value>,
    answers: &mut Value,
) {
    parameters.push(if_none_match());
    if let Some(ok) = answers.get_mut("200") {
        if r.formats.value.contains(&Format::Csv) {
            ok["content"]["text/csv"] = json!({ "schema": {
                "type": "string",
                "maxLength": restgen_model::bounds::csv_max(service, r, rows),
                "description": "RFC 4180: a header row of the fields in declared order, then one row per record; nulls empty, nested values as JSON text, text a spreadsheet would run as a formula prefixed with `'`. A list's next page is in `Link`.",
            } });
        }
        let headers = ok.as_object_mut().expect("an answer").entry("headers").or_insert_with(|| json!({}));
        for (k, v) in read_headers(r) {
            headers[k] = v;
        }
    }
    answers["406"] = json!({ "$ref": "#/components/responses/Error406" });
    answers["304"] = json!({
        "description": "The representation the caller holds (named in `If-None-Match`) is current; no body.",
        "headers": Value::Object(read_headers(r)),
    });
}

/// A status endpoint's read: JSON only, its tag, `Cache-Control: no-cache` (private where
/// reading needs credentials), `If-None-Match` and the 304 it may bring.
pub(crate) fn conditional_status(r: &Resource, parameters: &mut Vec<Value>, answers: &mut Value) {
    parameters.push(if_none_match());
    let cache = status_cache_control(&r.cache_control());
    let headers = json!({
        "ETag": { "$ref": "#/components/headers/ETag" },
        "Cache-Control": { "description": "Caches must ask again before each use.", "required": true,
            "schema": { "type": "string", "enum": [cache], "maxLength": cache.len() } },
    });
    answers["200"]["headers"] = headers.clone();
    answers["406"] = json!({ "$ref": "#/components/responses/Error406" });
    answers["304"] = json!({ "description": "The state the caller holds (named in `If-None-Match`) is current; no body.", "headers": headers });
}

fn if_none_match() -> Value {
    json!({
        "name": "If-None-Match",
        "in": "header",
        "description": "`*` or entity tags of representations the caller holds; 304 when one is current. A value that is neither names no representation and is ignored.",
        "schema": { "type": "string", "maxLength": MAX_IF_NONE_MATCH },
    })
}

/// `If-Match` on a write (PUT, PATCH, DELETE): required where the resource says
/// `require_if_match`.
pub(crate) fn if_match(r: &Resource) -> Value {
    let required = r.require_if_match.value;
    json!({
        "name": "If-Match",
        "in": "header",
        "required": required,
        "description": format!(
            "The `ETag` of the record as the caller read it (or `*`: as it stands): the write happens only if the record is still that one, else 412 with its current `ETag`. The check and the write are one step, so of writers holding the same tag one wins. A value that is not `*` or a list of entity tags names no version: 412. {}",
            if required { "This resource takes no write without it: 428." } else { "Without it, the write is unconditional." }
        ),
        "schema": { "type": "string", "maxLength": MAX_IF_MATCH },
    })
}

/// The conditional-write answers of a write: 412 always, 428 where the condition is required.
pub(crate) fn write_errors(r: &Resource, errors: &[u16]) -> Vec<u16> {
    let mut out = errors.to_vec();
    out.push(412);
    if r.require_if_match.value {
        out.push(428);
    }
    out.sort_unstable();
    out
}

/// A deprecated version's document: every operation of its resources (login, API keys and
/// the probes are no version's) marked deprecated, and every answer of them documenting
/// `Deprecation`, `Sunset` (where the version has one) and the `Link` to its successor.
/// Adds the shared 410 answer to `doc` and returns what [`deprecate`] marks each path with.
pub(crate) fn deprecation(doc: &mut Value, v: &ApiVersion) -> Deprecated {
    let mut headers = Map::new();
    if v.deprecated.is_some() {
        headers.insert(
            http::DEPRECATION.name.into(),
            json!({
                "description": "`@<unix seconds>`: when this version was, or will be, deprecated (RFC 9745).",
                "required": true,
                "schema": { "type": "string", "pattern": "^@[0-9]{1,19}$", "maxLength": 20 },
            }),
        );
    }
    if v.sunset.is_some() {
        headers.insert(http::SUNSET.name.into(), json!({
            "description": "The HTTP date from which this version answers 410 (RFC 8594).",
            "required": true,
            "schema": { "type": "string", "pattern": "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$", "maxLength": 29 },
        }));
    }
    headers.insert("Link".into(), json!({
        "description": "`<...>; rel=\"successor-version\"`: the same place in the version that succeeds this one (a list's `rel=\"next\"` may come beside it).",
        "required": true,
        "schema": { "type": "string", "pattern": "^<[^>]*>; rel=\"successor-version\"$", "maxLength": 16384 },
    }));
    if v.sunset.is_some() {
        doc["components"]["responses"]["Error410"] = json!({
            "description": "This version reached its sunset; the `Link` names its successor.",
            "content": { (http::media::PROBLEM): { "schema": { "$ref": "#/components/schemas/Problem" } } },
            "headers": headers.clone(),
        });
    }
    Deprecated { headers, sunset: v.sunset.is_some() }
}

/// What a deprecated version marks each of its resources' paths with.
pub(crate) struct Deprecated {
    headers: Map<String, Value>,
    sunset: bool,
}

/// Marks every operation of a resource's path `item` deprecated, with the headers on each
/// of its answers (and the 410 after the sunset).
pub(crate) fn deprecate(item: &mut Value, d: &Deprecated) {
    for op in item.as_object_mut().into_iter().flat_map(|i| i.values_mut()).filter_map(Value::as_object_mut) {
        if !op.contains_key("responses") {
            continue;
        }
        op.insert("deprecated".into(), json!(true));
        let responses = op.get_mut("responses").and_then(Value::as_object_mut).expect("checked");
        if d.sunset {
            responses.insert("410".into(), json!({ "$ref": "#/components/responses/Error410" }));
        }
        for response in responses.values_mut().filter_map(Value::as_object_mut) {
            if response.contains_key("$ref") {
                continue;
            }
            let h = response.entry("headers").or_insert_with(|| json!({}));
            for (name, header) in &d.headers {
                if name != "Link" || h.get("Link").is_none() {
                    h[name] = header.clone();
                }
            }
        }
    }
}
