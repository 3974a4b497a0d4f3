//! API keys: created by `POST /auth/api-keys` (the key is in that answer only), listed by
//! `GET`, revoked by `DELETE /auth/api-keys/{id}`. A key is `rk_<id>_<secret>`; storage
//! holds the SHA-256 of the secret, compared in constant time.

use super::{Authenticator, Caller};
use crate::body::{self, HeadersAndBody};
use crate::problem::{FieldError, Problem};
use crate::spec::IdKind;
use crate::store::{ApiKeyRow, SqlValue, Store, StoreError};
use axum::Router;
use axum::body::Bytes;
use axum::extract::Path;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use subtle::ConstantTimeEq;

const PREFIX: &str = "rk_";
/// Hex digits of the id part (a UUID without dashes).
const ID_LEN: usize = 32;
const MAX_NAME: usize = restgen_model::bounds::MAX_API_KEY_NAME;
/// Keys one account may hold at once (the OpenAPI document's bound on the list).
pub const MAX_KEYS: u32 = restgen_model::bounds::MAX_API_KEYS;

pub(super) fn routes<S: Clone + Send + Sync + 'static>(auth: Arc<Authenticator>, base: &str) -> Router<S> {
    let (a, b, c) = (auth.clone(), auth.clone(), auth);
    Router::new()
        .route(
            &format!("{base}/auth/api-keys"),
            axum::routing::post(move |caller: Caller, HeadersAndBody { headers, body }: HeadersAndBody| async move {
                crate::current::operation("", "create_api_key");
                create(&a, &caller, &headers, body).await
            })
            .get(move |caller: Caller| async move {
                crate::current::operation("", "list_api_keys");
                list(&b, &caller).await
            }),
        )
        .route(
            &format!("{base}/auth/api-keys/{{id}}"),
            axum::routing::delete(move |caller: Caller, Path(id): Path<String>| async move {
                crate::current::operation("", "revoke_api_key");
                revoke(&c, &caller, &id).await
            }),
        )
}

/// The owner and the id of `key` when it is a valid, unrevoked key.
pub(super) async fn verify(store: &Store, owner: IdKind, key: &str) -> Result<Option<(SqlValue, String)>, Problem> {
    let Some((id, secret)) = split(key) else { return Ok(None) };
    let row = store.api_key(id, owner).await?;
    let given = hash(secret);
    // Compared even when no row matched, so an unknown id costs the same.
    let stored = row.as_ref().map_or("", |r| r.secret_hash.as_str());
    let equal: bool = given.as_bytes().ct_eq(stored.as_bytes()).into();
    Ok(row.filter(|_| equal).map(|r| (r.owner_id, r.id)))
}

fn split(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix(PREFIX)?;
    let (id, secret) = (rest.get(..ID_LEN)?, rest.get(ID_LEN..)?.strip_prefix('_')?);
    (id.bytes().all(|b| b.is_ascii_hexdigit()) && !secret.is_empty()).then_some((id, secret))
}

fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn owner_of(auth: &Authenticator, caller: &Caller) -> Result<(SqlValue, IdKind), Problem> {
    let kind = auth.spec.principal.as_ref().map_or(IdKind::Uuid, |p| p.resource.id);
    let id = caller.id_value(kind).ok_or_else(|| caller.unauthorized())?;
    Ok((id, kind))
}

async fn create(
    auth: &Authenticator,
    caller: &Caller,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let (owner_id, _) = owner_of(auth, caller)?;
    let object = body::object(headers, body, false)?;
    let mut errors = Vec::new();
    let name = match object.get("name") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) if s.chars().count() > MAX_NAME => {
            errors.push(FieldError { field: "name".into(), message: format!("must be at most {MAX_NAME} characters") });
            String::new()
        }
        // PostgreSQL text holds no NUL, so neither database takes one.
        Some(Value::String(s)) if s.contains('\0') => {
            errors.push(FieldError { field: "name".into(), message: "must not contain NUL characters".into() });
            String::new()
        }
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            errors.push(FieldError { field: "name".into(), message: "must be a string".into() });
            String::new()
        }
    };
    for key in object.keys().filter(|k| *k != "name") {
        errors.push(FieldError { field: key.clone(), message: "is not a field of an API key".into() });
    }
    if !errors.is_empty() {
        return Err(Problem::validation(errors));
    }
    let id = uuid::Uuid::now_v7().simple().to_string();
    let secret = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(super::random_bytes(32));
    let key = format!("{PREFIX}{id}_{secret}");
    let row = ApiKeyRow {
        id: id.clone(),
        owner_id,
        name,
        prefix: key[..PREFIX.len() + 8].to_owned(),
        secret_hash: hash(&secret),
        created_at: auth.store.now(),
    };
    match auth.store.insert_api_key(&row, MAX_KEYS).await {
        Err(StoreError::MissingRef { .. }) => return Err(super::account_gone(caller)),
        Ok(false) => {
            return Err(Problem::new(
                StatusCode::CONFLICT,
                format!("this account holds {MAX_KEYS} API keys already; revoke one first"),
            ));
        }
        other => {
            other?;
        }
    }
    let mut body = describe(&row);
    body["key"] = Value::from(key);
    let mut response = (StatusCode::CREATED, axum::Json(body)).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

async fn list(auth: &Authenticator, caller: &Caller) -> Result<Response, Problem> {
    let (owner_id, kind) = owner_of(auth, caller)?;
    let rows = auth.store.api_keys_of(owner_id, kind, MAX_KEYS).await?;
    Ok(axum::Json(json!({ "data": rows.iter().map(describe).collect::<Vec<_>>() })).into_response())
}

async fn revoke(auth: &Authenticator, caller: &Caller, id: &str) -> Result<Response, Problem> {
    let (owner_id, _) = owner_of(auth, caller)?;
    // Admins may revoke any key; others only their own, and somebody else's is "not found".
    let owner = (!caller.is_admin()).then_some(owner_id);
    match auth.store.delete_api_key(id, owner).await {
        Ok(()) => Ok(StatusCode::NO_CONTENT.into_response()),
        Err(StoreError::NotFound) => Err(Problem::not_found("no API key with this id")),
        Err(e) => Err(e.into()),
    }
}

/// An API key as listed: never the key itself.
fn describe(row: &ApiKeyRow) -> Value {
    json!({ "id": row.id, "name": row.name, "prefix": row.prefix, "created_at": row.created_at })
}
