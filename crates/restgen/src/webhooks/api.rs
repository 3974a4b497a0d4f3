//! `/webhooks`: subscriptions, each owned by the caller who made it (admins see and change
//! every one; a service without auth has them open to anyone), and their deliveries.
//!
//! | request | answer |
//! |---|---|
//! | `POST /webhooks` `{url, events, description?}` | 201 with its `secret` |
//! | `GET /webhooks` | the caller's, newest first |
//! | `GET`, `PATCH`, `DELETE /webhooks/{webhook_id}` | one (`GET` with its current `secret`); `enabled: true` re-enables |
//! | `GET /webhooks/{webhook_id}/deliveries` | the newest deliveries with their attempts |
//! | `POST /webhooks/{webhook_id}/deliveries/{delivery_id}/resend` | 202: due again now |

use super::Webhooks;
use crate::body::HeadersAndBody;
use crate::caller::Caller;
use crate::current;
use crate::problem::{FieldError, Problem};
use crate::store::Store;
use crate::store::outbox::{DeliveryRow, WebhookRow};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{OriginalUri, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use restgen_model::bounds::{MAX_DELIVERIES, MAX_WEBHOOK_DESCRIPTION};
use restgen_wire::webhook::{Delivery, Webhook, WebhookWithSecret};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub(crate) fn routes(webhooks: Arc<Webhooks>, base: &str) -> Router<Store> {
    use axum::routing::{get, post};
    let w = webhooks;
    let (w1, w2, w3, w4, w5, w6, w7) = (w.clone(), w.clone(), w.clone(), w.clone(), w.clone(), w.clone(), w);
    Router::new()
        .route(
            &format!("{base}/webhooks"),
            post(
                move |State(store): State<Store>,
                      caller: Caller,
                      OriginalUri(uri): OriginalUri,
                      HeadersAndBody { headers, body }: HeadersAndBody| async move {
                    current::operation("", "create_webhook");
                    create(&w1, &store, &caller, uri.path(), &headers, body).await
                },
            )
            .get(move |State(store): State<Store>, caller: Caller| async move {
                current::operation("", "list_webhooks");
                list(&w2, &store, &caller).await
            }),
        )
        .route(
            &format!("{base}/webhooks/{{webhook_id}}"),
            get(move |State(store): State<Store>, caller: Caller, Path(id): Path<String>| async move {
                current::operation("", "get_webhook");
                let row = owned(&w3, &store, &caller, &id).await?;
                Ok::<_, Problem>(axum::Json(shown(&row, Some(w3.secret(&row.id)))).into_response())
            })
            .patch(
                move |State(store): State<Store>,
                      caller: Caller,
                      Path(id): Path<String>,
                      HeadersAndBody { headers, body }: HeadersAndBody| async move {
                    current::operation("", "update_webhook");
                    update(&w4, &store, &caller, &id, &headers, body).await
                },
            )
            .delete(move |State(store): State<Store>, caller: Caller, Path(id): Path<String>| async move {
                current::operation("", "delete_webhook");
                owned(&w5, &store, &caller, &id).await?;
                store.delete_webhook(&id).await?;
                Ok::<_, Problem>(StatusCode::NO_CONTENT.into_response())
            }),
        )
        .route(
            &format!("{base}/webhooks/{{webhook_id}}/deliveries"),
            get(move |State(store): State<Store>, caller: Caller, Path(id): Path<String>| async move {
                current::operation("", "list_deliveries");
                owned(&w6, &store, &caller, &id).await?;
                let data: Vec<Value> = store.deliveries(&id, MAX_DELIVERIES).await?.iter().map(delivery).collect();
                Ok::<_, Problem>(axum::Json(json!({ "data": data })).into_response())
            }),
        )
        .route(
            &format!("{base}/webhooks/{{webhook_id}}/deliveries/{{delivery_id}}/resend"),
            post(move |State(store): State<Store>, caller: Caller, Path((id, delivery_id)): Path<(String, String)>| async move {
                current::operation("", "resend_delivery");
                owned(&w7, &store, &caller, &id).await?;
                let gone = || Problem::not_found("no delivery with this id for this webhook");
                store.delivery(&id, &delivery_id).await?.ok_or_else(gone)?;
                store.resend(&delivery_id, w7.clock.now()).await?;
                store.signals.outbox.notify_one();
                let row = store.delivery(&id, &delivery_id).await?.ok_or_else(gone)?;
                Ok::<_, Problem>((StatusCode::ACCEPTED, axum::Json(delivery(&row))).into_response())
            }),
        )
}

/// Who may hold subscriptions: anyone signed in where the service has auth, anyone at
/// all where it has none.
fn subscriber(w: &Webhooks, caller: &Caller) -> Result<Option<String>, Problem> {
    match (w.auth, caller.id()) {
        (None, _) => Ok(None),
        (Some(_), Some(id)) => Ok(Some(id.to_owned())),
        (Some(_), None) => Err(caller.unauthorized()),
    }
}

/// The subscription `id`, when the caller may see it: its owner, or an admin. Anyone
/// else gets the 404 of a missing one.
async fn owned(w: &Webhooks, store: &Store, caller: &Caller, id: &str) -> Result<WebhookRow, Problem> {
    let me = subscriber(w, caller)?;
    let missing = || Problem::not_found("no webhook with this id");
    let row = store.webhook(id).await?.ok_or_else(missing)?;
    if w.auth.is_some() && !caller.is_admin() && row.owner_id != me {
        return Err(missing());
    }
    Ok(row)
}

async fn list(w: &Webhooks, store: &Store, caller: &Caller) -> Result<Response, Problem> {
    let me = subscriber(w, caller)?;
    let rows = store.webhooks(me.as_deref(), super::MAX_WEBHOOKS).await?;
    let data: Vec<Value> = rows.iter().map(|r| shown(r, None)).collect();
    Ok(axum::Json(json!({ "data": data })).into_response())
}

async fn create(
    w: &Webhooks,
    store: &Store,
    caller: &Caller,
    path: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let owner = subscriber(w, caller)?;
    let mut object = crate::body::object(headers, body, false)?;
    let mut errors = Vec::new();
    let url = match object.remove("url") {
        Some(v) => url(w, &v, &mut errors).await,
        None => {
            errors.push(error("url", "is required"));
            None
        }
    };
    let events = match object.remove("events") {
        Some(v) => events(w, &v, &mut errors),
        None => {
            errors.push(error("events", "is required: the event types to receive"));
            None
        }
    };
    let description = object.remove("description").and_then(|v| description(&v, &mut errors));
    unknown(object, &mut errors);
    let (Some(url), Some(events), true) = (url, events, errors.is_empty()) else {
        return Err(Problem::validation(errors));
    };
    let now = store.now();
    let row = WebhookRow {
        id: format!("wh_{}", uuid::Uuid::now_v7().simple()),
        owner_id: owner,
        url,
        events,
        description: description.flatten(),
        enabled: true,
        disabled_reason: None,
        enabled_since: w.clock.now(),
        created_at: now.clone(),
        updated_at: now,
    };
    if !store.insert_webhook_below(&row, super::MAX_WEBHOOKS).await? {
        return Err(Problem::conflict(format!("an account may have at most {} webhooks", super::MAX_WEBHOOKS)));
    }
    let mut response = (StatusCode::CREATED, axum::Json(shown(&row, Some(w.secret(&row.id))))).into_response();
    let location = format!("{}/{}", path.trim_end_matches('/'), row.id);
    if let Ok(v) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    Ok(response)
}

async fn update(
    w: &Webhooks,
    store: &Store,
    caller: &Caller,
    id: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let mut row = owned(w, store, caller, id).await?;
    let mut object = crate::body::object(headers, body, true)?;
    let mut errors = Vec::new();
    if let Some(v) = object.remove("url")
        && let Some(url) = url(w, &v, &mut errors).await
    {
        row.url = url;
    }
    if let Some(v) = object.remove("events")
        && let Some(events) = events(w, &v, &mut errors)
    {
        row.events = events;
    }
    if let Some(v) = object.remove("description")
        && let Some(d) = description(&v, &mut errors)
    {
        row.description = d;
    }
    match object.remove("enabled") {
        Some(Value::Bool(enabled)) => {
            // Enabled again by its subscriber: the reason it stopped no longer holds, and
            // what happened while it was off is not sent now.
            if enabled && !row.enabled {
                row.disabled_reason = None;
                row.enabled_since = w.clock.now();
            }
            row.enabled = enabled;
        }
        Some(_) => errors.push(error("enabled", "must be true or false")),
        None => {}
    }
    unknown(object, &mut errors);
    if !errors.is_empty() {
        return Err(Problem::validation(errors));
    }
    row.updated_at = store.now();
    store.update_webhook(&row).await?;
    Ok(axum::Json(shown(&row, None)).into_response())
}

async fn url(w: &Webhooks, value: &Value, errors: &mut Vec<FieldError>) -> Option<String> {
    let Some(text) = value.as_str() else {
        errors.push(error("url", "must be a string"));
        return None;
    };
    match w.policy.check(text).await {
        Ok(url) => Some(url.to_string()),
        Err(why) => {
            errors.push(error("url", &why));
            None
        }
    }
}

fn events(w: &Webhooks, value: &Value, errors: &mut Vec<FieldError>) -> Option<Vec<String>> {
    let types = w.types();
    let Some(items) = value.as_array().filter(|a| !a.is_empty()) else {
        errors.push(error("events", &format!("must be a list of one or more of: {}", types.join(", "))));
        return None;
    };
    let mut out: Vec<String> = Vec::new();
    let before = errors.len();
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(t) if out.iter().any(|o| o == t) => errors.push(error(&format!("events[{i}]"), "is listed twice")),
            Some(t) if types.iter().any(|k| k == t) => out.push(t.to_owned()),
            _ => errors.push(error(
                &format!("events[{i}]"),
                &format!("is not an event of this service: {}", types.join(", ")),
            )),
        }
    }
    (errors.len() == before).then_some(out)
}

/// `Some(None)` clears it.
fn description(value: &Value, errors: &mut Vec<FieldError>) -> Option<Option<String>> {
    match value {
        Value::Null => Some(None),
        Value::String(s) if s.chars().count() <= MAX_WEBHOOK_DESCRIPTION && !s.contains('\0') => Some(Some(s.clone())),
        _ => {
            errors.push(error(
                "description",
                &format!("must be text of at most {MAX_WEBHOOK_DESCRIPTION} characters, or null"),
            ));
            None
        }
    }
}

fn unknown(object: Map<String, Value>, errors: &mut Vec<FieldError>) {
    errors.extend(object.keys().map(|k| error(k, "is not a field of a webhook")));
}

fn error(field: &str, message: &str) -> FieldError {
    FieldError { field: field.into(), message: message.into() }
}

/// A subscription as its subscriber sees it; `secret` where one subscription is made or read.
fn shown(row: &WebhookRow, secret: Option<String>) -> Value {
    let webhook = Webhook {
        id: row.id.clone(),
        url: row.url.clone(),
        events: row.events.clone(),
        description: row.description.clone(),
        enabled: row.enabled,
        disabled_reason: row.disabled_reason.clone(),
        created_at: row.created_at.clone(),
        updated_at: row.updated_at.clone(),
    };
    let shown = match secret {
        Some(secret) => serde_json::to_value(WebhookWithSecret { webhook, secret }),
        None => serde_json::to_value(webhook),
    };
    shown.expect("a subscription always serializes")
}

fn time(micros: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_micros(micros).map(crate::clock::format_time)
}

fn delivery(row: &DeliveryRow) -> Value {
    let delivery = Delivery {
        id: row.id.clone(),
        event_id: row.event_id.clone(),
        kind: row.kind.clone(),
        status: row.status.clone(),
        attempts: row.attempts,
        last_status: row.last_status.and_then(|s| u16::try_from(s).ok()),
        last_error: row.last_error.clone(),
        next_attempt_at: if row.status == "pending" { row.next_attempt_at.and_then(time) } else { None },
        history: serde_json::from_str(&row.history).unwrap_or_default(),
        created_at: time(row.created_at).unwrap_or_default(),
        updated_at: time(row.updated_at).unwrap_or_default(),
    };
    serde_json::to_value(delivery).expect("a delivery always serializes")
}
