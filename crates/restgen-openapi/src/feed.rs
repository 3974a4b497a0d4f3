//! A resource's change feed: `GET {collection}/changes`, Server-Sent Events.

use crate::paths::filter_parameters;
use crate::problems::responses;
use crate::schemas::schema_name;
use crate::security::security;
use restgen_model::model::*;
use restgen_wire::{feed, http};
use serde_json::{Map, Value, json};

/// Adds the feed path of `r` under `collection` (its collection path); returns it.
pub(crate) fn feed_paths(
    service: &Service,
    r: &Resource,
    collection: &str,
    paths: &mut Map<String, Value>,
) -> Vec<String> {
    if !r.feed.value || !r.has(Operation::List) {
        return Vec::new();
    }
    let (noun, plural) = (r.noun(), r.plural_noun());
    let model = schema_name(r, "");
    let who = crate::access::who_may(service, r, &r.access.read, crate::access::Reach::List);
    // Credentials that expire or are revoked end a stream only where there are any.
    let signed = service.auth.is_some();
    let mut reasons = vec![format!("`{}` (too many events went unread)", feed::closed::BEHIND)];
    if signed {
        reasons.push(format!("`{}` (the bearer token)", feed::closed::EXPIRED));
        reasons.push(format!("`{}` (the account, the key or the right to read)", feed::closed::REVOKED));
    }
    reasons.push(format!("`{}` (the instance stops)", feed::closed::SHUTDOWN));
    reasons.push(format!("`{}` (the log could not be read)", feed::closed::UNAVAILABLE));
    let capped = if signed { "per caller" } else { "per client address" };
    let description = format!(
        "Every change to the {plural} the caller's list would show, as it happens, as Server-Sent Events \
         (`{media}`). {who} Each event's `id` is its position in the service's change log, and `data` one \
         JSON object: `{ready}` first (`{{}}`, its id where the stream starts), then `{created}` and \
         `{updated}` with the {noun} as the caller may see it (a `{model}`), `{deleted}` with `{{\"id\"}}` \
         alone. Reconnect with `{last}` set to the last id received to get every later change once, in order; \
         an id the log no longer keeps (or never gave) gets `{reset}` (`{{\"detail\"}}`): list the {plural} \
         again, then read on. The filters are the list's. Comments (`: keep-alive`) keep idle streams open. \
         The service ends a stream with `{closed}` (`{{\"reason\", \"detail\"}}`): {reasons}; resume where \
         the reason allows. Open streams are capped {capped} and per instance: 429 beyond.",
        reasons = reasons.join(", "),
        media = http::media::EVENT_STREAM,
        ready = feed::READY,
        created = feed::CREATED,
        updated = feed::UPDATED,
        deleted = feed::DELETED,
        reset = feed::RESET,
        closed = feed::CLOSED,
        last = http::LAST_EVENT_ID.name,
    );
    let mut parameters = filter_parameters(service, r);
    parameters.push(json!({
        "name": http::LAST_EVENT_ID.name,
        "in": "header",
        "required": false,
        "description": "The id of the last event received: the stream starts after it.",
        "schema": { "type": "string", "pattern": "^[0-9]{1,19}$", "maxLength": 19 },
    }));
    // No schema: a stream has no length to bound, and its events are described above.
    let ok = json!({
        "description": format!(
            "The stream of changes to {plural}: Server-Sent Events, `id`, `event` and `data` lines and a blank line after each."
        ),
        "content": { (http::media::EVENT_STREAM): {} },
    });
    let mut answers = responses("200", ok, &[400, 401, 403, 406, 500]);
    answers["429"] = json!({
        "description": "The caller, or the instance, has as many change streams open as it may.",
        "content": { (http::media::PROBLEM): { "schema": { "$ref": "#/components/schemas/Problem" } } },
        "headers": { "Retry-After": {
            "description": "Seconds to wait before opening another stream.",
            "required": true,
            "schema": { "type": "integer", "format": "int32", "minimum": 1, "maximum": i32::MAX },
        } },
    });
    let path = format!("{collection}{}", feed::PATH);
    paths.insert(
        path.clone(),
        json!({ "get": {
            "operationId": format!("changesOf{model}"),
            "summary": format!("Stream changes to {plural}"),
            "description": description,
            "tags": [r.name.value],
            "security": security(service, &r.access.read),
            "parameters": parameters,
            "responses": answers,
        } }),
    );
    vec![path]
}
