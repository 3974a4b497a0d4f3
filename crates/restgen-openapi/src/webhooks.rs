//! Webhooks in the document: the subscription endpoints (`{base}/webhooks`, tag
//! `webhooks`) and, under OpenAPI 3.1's top-level `webhooks`, each event the service sends
//! with its payload and signature headers.

use crate::problems::responses;
use crate::schemas::schema_name;
use crate::security::signed_in;
use crate::{NO_NUL, json_body, json_response, schema_ref};
use restgen_model::bounds::{
    DATETIME_CHARS, MAX_DELIVERIES, MAX_DELIVERY_ERROR, MAX_WEBHOOK_DESCRIPTION, MAX_WEBHOOK_URL, MAX_WEBHOOKS,
};
use restgen_model::model::*;
use restgen_model::words::a_capitalized;
use restgen_wire::http;
use serde_json::{Map, Value, json};

/// Every event type the service publishes (`order.pay`), with its resource.
fn types(service: &Service) -> Vec<(String, &Resource)> {
    service
        .resources
        .iter()
        .flat_map(|r| r.events.iter().map(move |e| (format!("{}.{}", r.name.value, e.value), r)))
        .collect()
}

/// Whether the service has webhooks at all.
pub(crate) fn published(service: &Service) -> bool {
    service.resources.iter().any(|r| !r.events.is_empty())
}

/// Adds the subscription endpoints and their schemas.
pub(crate) fn paths(service: &Service, base: &str, paths: &mut Map<String, Value>, schemas: &mut Map<String, Value>) {
    let kinds: Vec<String> = types(service).into_iter().map(|(k, _)| k).collect();
    let id = |prefix: &str| json!({ "type": "string", "pattern": format!("^{prefix}_[0-9a-f]{{32}}$"), "maxLength": prefix.len() + 33 });
    let time = json!({ "type": "string", "format": "date-time", "maxLength": DATETIME_CHARS });
    let url = json!({ "type": "string", "format": "uri", "pattern": "^https?://", "maxLength": MAX_WEBHOOK_URL,
        "description": "Where events are posted: https (http only where the deployment allows it), no credentials, a host whose every address is public (checked now and at each delivery)." });
    let events = json!({ "type": "array", "minItems": 1, "maxItems": kinds.len(), "uniqueItems": true,
        "items": { "type": "string", "enum": kinds } });
    let description = json!({ "type": ["string", "null"], "maxLength": MAX_WEBHOOK_DESCRIPTION, "pattern": NO_NUL });
    let reason = json!({ "type": ["string", "null"], "maxLength": MAX_DELIVERY_ERROR + 160,
        "description": "Why deliveries stopped: a 410 from the endpoint, or a delivery whose attempts all failed." });
    let webhook_props = json!({
        "id": id("wh"), "url": url, "events": events, "description": description,
        "enabled": { "type": "boolean" }, "disabled_reason": reason, "created_at": time, "updated_at": time,
    });
    let required = ["id", "url", "events", "description", "enabled", "disabled_reason", "created_at", "updated_at"];
    schemas.insert("Webhook".into(), json!({ "type": "object", "required": required, "properties": webhook_props }));
    let mut created = webhook_props.clone();
    created["secret"] = json!({ "type": "string", "pattern": "^whsec_[A-Za-z0-9+/]{43}=$", "maxLength": 50,
        "description": "The subscription's signing secret (Standard Webhooks): in the answers of its making and of reading it alone, never in a list. After the service rotates its secret, reading the subscription gives the new one (deliveries carry both signatures meanwhile)." });
    let mut created_required = required.to_vec();
    created_required.push("secret");
    schemas.insert(
        "WebhookWithSecret".into(),
        json!({ "type": "object", "required": created_required, "properties": created }),
    );
    schemas.insert(
        "WebhookCreate".into(),
        json!({ "type": "object", "additionalProperties": false, "required": ["url", "events"],
            "properties": { "url": url, "events": events, "description": description } }),
    );
    schemas.insert(
        "WebhookPatch".into(),
        json!({ "type": "object", "additionalProperties": false,
            "properties": { "url": url, "events": events, "description": description,
                "enabled": { "type": "boolean", "description": "`false` pauses deliveries; `true` starts them again, for changes from now on." } } }),
    );
    let attempt = json!({ "type": "object", "required": ["attempt", "at", "status", "error", "duration_ms"], "properties": {
        "attempt": { "type": "integer", "format": "int64", "minimum": 1, "maximum": i64::MAX },
        "at": time,
        "status": { "type": ["integer", "null"], "format": "int32", "minimum": 100, "maximum": 599, "description": "The status the endpoint answered, if it answered." },
        "error": { "type": ["string", "null"], "maxLength": MAX_DELIVERY_ERROR },
        "duration_ms": { "type": "integer", "format": "int64", "minimum": 0, "maximum": i64::MAX },
    } });
    schemas.insert(
        "Delivery".into(),
        json!({ "type": "object",
            "required": ["id", "event_id", "type", "status", "attempts", "last_status", "last_error", "next_attempt_at", "history", "created_at", "updated_at"],
            "properties": {
                "id": id("dlv"),
                "event_id": { "type": "string", "pattern": "^msg_[0-9a-f]{32}$", "maxLength": 36, "description": "The `webhook-id` of every attempt." },
                "type": { "type": "string", "enum": types(service).into_iter().map(|(k, _)| k).collect::<Vec<_>>() },
                "status": { "type": "string", "enum": ["pending", "succeeded", "failed"] },
                "attempts": { "type": "integer", "format": "int64", "minimum": 0, "maximum": i64::MAX },
                "last_status": { "type": ["integer", "null"], "format": "int32", "minimum": 100, "maximum": 599 },
                "last_error": { "type": ["string", "null"], "maxLength": MAX_DELIVERY_ERROR },
                "next_attempt_at": { "type": ["string", "null"], "format": "date-time", "maxLength": DATETIME_CHARS, "description": "When a pending delivery is tried next." },
                "history": { "type": "array", "maxItems": 1000, "items": attempt },
                "created_at": time,
                "updated_at": time,
            } }),
    );
    let security = Value::Array(if service.auth.is_some() { signed_in(service) } else { Vec::new() });
    let tags = json!(["webhooks"]);
    let who = if service.auth.is_some() {
        "Any signed-in caller; a subscription is its maker's (admins see every one), and somebody else's answers 404."
    } else {
        "Open to anyone: the service has no auth."
    };
    let list = |what: &str, schema: &str, max: u32| {
        json_response(
            what,
            json!({ "type": "object", "required": ["data"], "properties": {
            "data": { "type": "array", "maxItems": max, "items": schema_ref(schema) } } }),
        )
    };
    let mut created_answer = json_response("The subscription, with its secret.", schema_ref("WebhookWithSecret"));
    created_answer["headers"] = json!({ "Location": { "description": "The subscription's URL.", "required": true,
        "schema": { "type": "string", "maxLength": base.len() + 48 } } });
    paths.insert(
        format!("{base}/webhooks"),
        json!({
            "post": {
                "operationId": "createWebhook", "summary": "Subscribe to events",
                "description": format!("{who} An account has at most {MAX_WEBHOOKS} subscriptions (409 beyond). Events of changes made from now on are delivered to `url` when the subscriber may read the record."),
                "tags": tags, "security": security, "requestBody": json_body(schema_ref("WebhookCreate")),
                "responses": responses("201", created_answer, &[400, 401, 409, 413, 415, 500]),
            },
            "get": {
                "operationId": "listWebhooks", "summary": "The caller's subscriptions, newest first",
                "description": who, "tags": tags, "security": security,
                "responses": responses("200", list("The subscriptions.", "Webhook", MAX_WEBHOOKS), &[401, 500]),
            },
        }),
    );
    let webhook_id = json!({ "name": "webhook_id", "in": "path", "required": true, "description": "The subscription's id.", "schema": id("wh") });
    paths.insert(
        format!("{base}/webhooks/{{webhook_id}}"),
        json!({
            "parameters": [webhook_id],
            "get": { "operationId": "getWebhook", "summary": "A subscription", "description": who, "tags": tags, "security": security,
                "responses": responses("200", json_response("The subscription, with its current secret.", schema_ref("WebhookWithSecret")), &[401, 404, 500]) },
            "patch": { "operationId": "updateWebhook", "summary": "Change a subscription, or pause or resume it", "description": who,
                "tags": tags, "security": security,
                "requestBody": { "required": true, "content": { (http::media::MERGE_PATCH): { "schema": schema_ref("WebhookPatch") } } },
                "responses": responses("200", json_response("The subscription as it now is.", schema_ref("Webhook")), &[400, 401, 404, 413, 415, 500]) },
            "delete": { "operationId": "deleteWebhook", "summary": "Unsubscribe", "description": who, "tags": tags, "security": security,
                "responses": responses("204", json!({ "description": "Deleted, with its deliveries." }), &[401, 404, 500]) },
        }),
    );
    paths.insert(
        format!("{base}/webhooks/{{webhook_id}}/deliveries"),
        json!({
            "parameters": [webhook_id],
            "get": { "operationId": "listWebhookDeliveries", "summary": format!("The newest {MAX_DELIVERIES} deliveries of a subscription, with their attempts"),
                "description": who, "tags": tags, "security": security,
                "responses": responses("200", list("The deliveries, newest first.", "Delivery", MAX_DELIVERIES), &[401, 404, 500]) },
        }),
    );
    paths.insert(
        format!("{base}/webhooks/{{webhook_id}}/deliveries/{{delivery_id}}/resend"),
        json!({
            "parameters": [webhook_id, { "name": "delivery_id", "in": "path", "required": true, "description": "The delivery's id.", "schema": id("dlv") }],
            "post": { "operationId": "resendWebhookDelivery", "summary": "Send a delivery again",
                "description": format!("{who} The delivery is due at once with a fresh round of attempts, under the same `webhook-id`."),
                "tags": tags, "security": security,
                "responses": responses("202", json_response("The delivery, pending.", schema_ref("Delivery")), &[401, 404, 500]) },
        }),
    );
}

/// OpenAPI 3.1's `webhooks`: each event the service posts to subscribers.
pub(crate) fn events(service: &Service) -> Value {
    let header = |name: &str, description: &str, schema: Value| json!({ "name": name, "in": "header", "required": true, "description": description, "schema": schema });
    let parameters = json!([
        header(
            http::WEBHOOK_ID.name,
            "The event's id, the same on every attempt: a receiver that keeps it sees a delivery that comes twice.",
            json!({ "type": "string", "pattern": "^msg_[0-9a-f]{32}$", "maxLength": 36 })
        ),
        header(
            http::WEBHOOK_TIMESTAMP.name,
            "Unix seconds of this attempt; refuse one far from your clock.",
            json!({ "type": "string", "pattern": "^[0-9]{1,19}$", "maxLength": 19 })
        ),
        header(
            http::WEBHOOK_SIGNATURE.name,
            "`v1,` and the base64 HMAC-SHA256 with the subscription's secret of `{webhook-id}.{webhook-timestamp}.{body}`; during a rotation of the service's secret, two, space-separated (Standard Webhooks).",
            json!({ "type": "string", "pattern": "^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$", "maxLength": 512 })
        ),
    ]);
    let mut out = Map::new();
    for (kind, r) in types(service) {
        let event = kind.split('.').nth(1).unwrap_or_default().to_owned();
        let what = match event.as_str() {
            "created" => format!("{} was created.", a_capitalized(&r.name.value)),
            "updated" => format!("{} was replaced or patched.", a_capitalized(&r.name.value)),
            "deleted" => format!("{} was deleted; `data` is the record as it was.", a_capitalized(&r.name.value)),
            t => format!("{} took the transition `{t}`.", a_capitalized(&r.name.value)),
        };
        let body = json!({ "type": "object", "required": ["type", "timestamp", "data"], "properties": {
            "type": { "const": kind },
            "timestamp": { "type": "string", "format": "date-time", "maxLength": DATETIME_CHARS },
            "data": schema_ref(&schema_name(r, "")),
        } });
        out.insert(
            kind.clone(),
            json!({ "post": {
                "operationId": format!("{}{}Event", r.name.value, heck::ToUpperCamelCase::to_upper_camel_case(event.as_str())),
                "summary": what,
                "description": format!("Posted to each subscription that lists this type and whose owner may read the record. Answer 2xx to acknowledge; anything else is retried ({}, ... up to `max_attempts`), and 410 unsubscribes.", restgen_wire::retries::described(4)),
                "tags": ["webhooks"],
                "parameters": parameters,
                "requestBody": json_body(body),
                "responses": { "200": { "description": "Received (any 2xx acknowledges it)." } },
            } }),
        );
    }
    Value::Object(out)
}
