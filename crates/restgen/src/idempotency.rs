//! `Idempotency-Key` on creates (draft-ietf-httpapi-idempotency-key-header): the first
//! answer to a key is kept for 24 hours and given again, unchanged, to every retry, so a
//! client that lost an answer can retry without creating twice. The same key with
//! another body is a 422; a retry while the first request still runs is a 409.
//!
//! Keys belong to a caller and a path: one account's key never answers another's
//! request. Answers are kept in the database (both kinds), so they survive a restart
//! and every instance gives the same one.

use crate::caller::Caller;
use crate::clock::Clock;
use crate::problem::{FieldError, Problem};
use crate::store::{KeyRecord, Store};
use axum::body::Bytes;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::future::{BoxFuture, Either};
use restgen_wire::http;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// How long an answer is kept.
pub const KEPT_FOR: Duration = Duration::from_secs(24 * 60 * 60);
/// The longest key taken (the OpenAPI document states the same).
pub const MAX_KEY: usize = restgen_model::bounds::MAX_IDEMPOTENCY_KEY;

pub(crate) const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static(http::IDEMPOTENCY_KEY.lowercase);
/// Marks an answer given again for a retry.
const REPLAYED: HeaderName = HeaderName::from_static(http::IDEMPOTENT_REPLAYED.lowercase);
/// The answer headers kept with the body: the ones a create answers with.
const KEPT_HEADERS: [HeaderName; 3] = [header::CONTENT_TYPE, header::LOCATION, header::ETAG];
/// Times a request tries again when the key's row changes under it.
const MAX_TRIES: usize = 4;
/// How often kept answers past their time are dropped (microseconds).
const SWEEP_EVERY: i64 = 60_000_000;

/// What the service's settings say about keys: the clock, and when a reservation whose
/// request never finished may be taken over.
#[derive(Clone, Debug)]
pub struct IdempotencySettings {
    pub clock: Clock,
    /// A request runs at most `limits.request_timeout`: a reservation older than that
    /// belongs to a request that was stopped or lost with its process.
    pub abandoned_after: Duration,
}

impl Default for IdempotencySettings {
    fn default() -> Self {
        IdempotencySettings { clock: Clock::System, abandoned_after: Duration::from_secs(31) }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for IdempotencySettings {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        // Given to a request with a key (`router_service`); one without passes `once` straight through.
        Ok(parts.extensions.get::<IdempotencySettings>().cloned().unwrap_or_default())
    }
}

/// What a key's row says of a request that carries it.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    /// The answer is kept: give it again.
    Answered,
    /// The key was first used with another body.
    OtherBody,
    /// The first request with the key is still running.
    Running,
    /// The first request stopped without an answer: this one may run instead.
    Abandoned,
    /// Kept past its time: as if the key were new.
    Expired,
}

fn judge(record: &KeyRecord, fingerprint: &str, now: i64, abandoned_after: i64) -> Found {
    if record.expires_at <= now {
        Found::Expired
    } else if record.fingerprint != fingerprint {
        Found::OtherBody
    } else if record.status.is_some() {
        Found::Answered
    } else if now - record.started_at >= abandoned_after {
        Found::Abandoned
    } else {
        Found::Running
    }
}

/// Runs `create` once per key: the first request with an `Idempotency-Key` runs and its
/// answer is kept, unless it is a server fault (a retry must run again); the others get
/// that answer. Requests without a key, or whose body could not be read, just run.
///
/// Not an `async fn`: one would hold `create` beside the store's futures for the keys,
/// tens of kilobytes that every request (with a key or not) copies as its future moves;
/// `create` runs as it is, and the keyed path is a future of its own on the heap.
pub(crate) fn once<'a, F>(
    store: &'a Store,
    idempotency_settings: &'a IdempotencySettings,
    caller: &'a Caller,
    path: &'a str,
    headers: &'a HeaderMap,
    body: Option<&'a Bytes>,
    create: F,
) -> Either<F, BoxFuture<'a, Result<Response, Problem>>>
where
    F: Future<Output = Result<Response, Problem>> + Send + 'a,
{
    match (headers.get(IDEMPOTENCY_KEY), body) {
        (Some(key), Some(body)) => {
            Either::Right(Box::pin(keyed(store, idempotency_settings, caller, path, key, body, create)))
        }
        _ => Either::Left(create),
    }
}

/// [`once`] for a request with a key and a body.
async fn keyed(
    store: &Store,
    idempotency_settings: &IdempotencySettings,
    caller: &Caller,
    path: &str,
    key: &HeaderValue,
    body: &Bytes,
    create: impl Future<Output = Result<Response, Problem>>,
) -> Result<Response, Problem> {
    let key = valid_key(key)?;
    let scope = hex(&Sha256::new()
        .chain_update(caller.id().unwrap_or("-"))
        .chain_update([0])
        .chain_update(path)
        .chain_update([0])
        .chain_update(key)
        .finalize());
    let fingerprint = hex(&Sha256::digest(body));
    let abandoned_after = i64::try_from(idempotency_settings.abandoned_after.as_micros()).unwrap_or(i64::MAX);
    let kept_for = i64::try_from(KEPT_FOR.as_micros()).unwrap_or(i64::MAX);
    sweep(store, idempotency_settings.clock.now());
    for _ in 0..MAX_TRIES {
        let now = idempotency_settings.clock.now();
        if store.reserve_key(&scope, &fingerprint, now, now + kept_for).await? {
            return run(store, &scope, create).await;
        }
        let Some(record) = store.key(&scope).await? else { continue };
        match judge(&record, &fingerprint, now, abandoned_after) {
            Found::Answered => return Ok(replay(&record)),
            Found::OtherBody => {
                return Err(invalid_key(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "was used with another request body; send a new key for a new request",
                ));
            }
            Found::Running => {
                return Err(invalid_key(
                    StatusCode::CONFLICT,
                    "belongs to a request that is still running; retry when it has finished",
                )
                .with_header(header::RETRY_AFTER, HeaderValue::from_static("1")));
            }
            Found::Abandoned => {
                if store.retake_key(&scope, record.started_at, now).await? {
                    return run(store, &scope, create).await;
                }
            }
            Found::Expired => {
                store.expire_keys(Some(&scope), now).await?;
            }
        }
    }
    Err(invalid_key(StatusCode::CONFLICT, "is in use by concurrent requests; retry shortly")
        .with_header(header::RETRY_AFTER, HeaderValue::from_static("1")))
}

/// Runs the request that holds the reservation and keeps its answer.
async fn run(
    store: &Store,
    scope: &str,
    create: impl Future<Output = Result<Response, Problem>>,
) -> Result<Response, Problem> {
    let response = create.await.unwrap_or_else(IntoResponse::into_response);
    let status = response.status();
    if status.is_server_error() {
        release(store, scope).await;
        return Ok(response);
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        release(store, scope).await;
        return Err(Problem::internal());
    };
    let kept: Map<String, Value> = KEPT_HEADERS
        .iter()
        .filter_map(|name| Some((name.as_str().to_owned(), Value::from(parts.headers.get(name)?.to_str().ok()?))))
        .collect();
    let text = String::from_utf8_lossy(&bytes);
    if let Err(e) = store.complete_key(scope, status.as_u16(), &Value::Object(kept).to_string(), &text).await {
        // The record is stored; the answer is the caller's all the same. A retry finds
        // the reservation abandoned after the request timeout and runs again.
        tracing::error!(error = %e, "idempotency: cannot keep the answer");
    }
    Ok(Response::from_parts(parts, axum::body::Body::from(bytes)))
}

async fn release(store: &Store, scope: &str) {
    if let Err(e) = store.release_key(scope).await {
        tracing::error!(error = %e, "idempotency: cannot release a key");
    }
}

/// The kept answer, marked as given again.
fn replay(record: &KeyRecord) -> Response {
    let status = record.status.and_then(|s| u16::try_from(s).ok()).and_then(|s| StatusCode::from_u16(s).ok());
    let mut response = (status.unwrap_or(StatusCode::OK), record.body.clone().unwrap_or_default()).into_response();
    let headers = response.headers_mut();
    let kept: Map<String, Value> =
        record.headers.as_deref().and_then(|h| serde_json::from_str(h).ok()).unwrap_or_default();
    for (name, value) in kept {
        if let (Ok(name), Some(Ok(value))) = (HeaderName::try_from(name), value.as_str().map(HeaderValue::from_str)) {
            headers.insert(name, value);
        }
    }
    headers.insert(REPLAYED, HeaderValue::from_static("true"));
    crate::current::replayed();
    response
}

/// A key is 1 to 255 visible ASCII characters (a UUID, say).
fn valid_key(value: &HeaderValue) -> Result<&str, Problem> {
    let bytes = value.as_bytes();
    if bytes.is_empty() || bytes.len() > MAX_KEY || !bytes.iter().all(|b| (0x21..=0x7e).contains(b)) {
        return Err(invalid_key(
            StatusCode::BAD_REQUEST,
            &format!("must be 1 to {MAX_KEY} visible ASCII characters, such as a UUID"),
        ));
    }
    value.to_str().map_err(|_| Problem::internal())
}

fn invalid_key(status: StatusCode, message: &str) -> Problem {
    let mut p = Problem::new(status, format!("`Idempotency-Key` {message}"));
    p.errors.push(FieldError { field: http::IDEMPOTENCY_KEY.name.into(), message: message.into() });
    p
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Drops kept answers past their time, at most once a minute per process, off the
/// request's path.
fn sweep(store: &Store, now: i64) {
    static LAST: AtomicI64 = AtomicI64::new(0);
    let last = LAST.load(Ordering::Relaxed);
    if now - last < SWEEP_EVERY || LAST.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err() {
        return;
    }
    let store = store.clone();
    let within = Duration::from_micros(SWEEP_EVERY.unsigned_abs());
    crate::store::sweep("idempotency: cannot drop expired answers", within, async move {
        store.expire_keys(None, now).await
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(status: Option<i64>) -> KeyRecord {
        KeyRecord { fingerprint: "f".into(), status, headers: None, body: None, started_at: 1_000, expires_at: 100_000 }
    }

    #[test]
    fn a_key_is_answered_running_abandoned_or_expired() {
        assert_eq!(judge(&record(Some(201)), "f", 2_000, 500), Found::Answered);
        assert_eq!(judge(&record(Some(201)), "g", 2_000, 500), Found::OtherBody);
        assert_eq!(judge(&record(None), "g", 1_200, 500), Found::OtherBody, "another body, even while running");
        assert_eq!(judge(&record(None), "f", 1_200, 500), Found::Running);
        assert_eq!(judge(&record(None), "f", 1_500, 500), Found::Abandoned);
        assert_eq!(judge(&record(Some(201)), "g", 100_000, 500), Found::Expired, "an expired key is new");
    }

    #[test]
    fn keys_are_visible_ascii_up_to_255() {
        for good in ["0", "5f2b9c1e-7d3a-4b8e-9f10-2a3b4c5d6e7f", &"k".repeat(255)] {
            assert!(valid_key(&HeaderValue::from_str(good).unwrap()).is_ok(), "{good}");
        }
        for bad in ["", "a b", &"k".repeat(256)] {
            let e = valid_key(&HeaderValue::from_str(bad).unwrap()).unwrap_err();
            assert_eq!((e.status, e.errors[0].field.as_str()), (StatusCode::BAD_REQUEST, "Idempotency-Key"));
        }
    }

    #[test]
    fn a_replay_is_the_kept_answer_marked_as_such() {
        let kept = KeyRecord {
            status: Some(201),
            headers: Some(r#"{"location":"/api/orders/1","content-type":"application/json"}"#.into()),
            body: Some(r#"{"id":1}"#.into()),
            ..record(None)
        };
        let r = replay(&kept);
        assert_eq!(r.status(), StatusCode::CREATED);
        assert_eq!(r.headers()["location"], "/api/orders/1");
        assert_eq!(r.headers()["content-type"], "application/json");
        assert_eq!(r.headers()["idempotent-replayed"], "true");
    }
}
