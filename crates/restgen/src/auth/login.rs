//! `POST {login.path}`: identifier and password in, a bearer token out.

use super::Authenticator;
use crate::body::{self, HeadersAndBody};
use crate::problem::{FieldError, Problem};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;

pub(super) fn routes<S: Clone + Send + Sync + 'static>(auth: Arc<Authenticator>, path: &str) -> Router<S> {
    Router::new().route(
        path,
        axum::routing::post(move |HeadersAndBody { headers, body }: HeadersAndBody| async move {
            crate::current::operation("", "login");
            login(&auth, &headers, body).await
        }),
    )
}

async fn login(
    auth: &Authenticator,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let principal = auth.spec.principal.as_ref().ok_or_else(Problem::internal)?;
    let object = body::object(headers, body, false)?;
    let mut errors = Vec::new();
    let mut text = |name: &str| match object.get(name) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            errors.push(FieldError { field: name.into(), message: "must be a string".into() });
            None
        }
        None => {
            errors.push(FieldError { field: name.into(), message: "is required".into() });
            None
        }
    };
    let (identifier, password) = (text(principal.identifier), text("password"));
    for key in object.keys() {
        if key != principal.identifier && key != "password" {
            errors.push(FieldError { field: key.clone(), message: "is not a login field".into() });
        }
    }
    // Bounded like the account's own fields (the document says so), which also keeps
    // Argon2 from hashing a megabyte-long password.
    for (name, value) in [(principal.identifier, &identifier), (principal.password, &password)] {
        let max = principal.resource.field(name).and_then(|f| f.max_length);
        if let (Some(max), Some(v)) = (max, value)
            && v.chars().count() as u64 > max
        {
            errors.push(FieldError { field: name.into(), message: format!("must be at most {max} characters long") });
        }
    }
    let (Some(identifier), Some(password), true) = (identifier, password, errors.is_empty()) else {
        return Err(Problem::validation(errors));
    };
    if !auth.tokens.can_issue() {
        return Err(Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "this instance verifies tokens but does not issue them",
        ));
    }
    // One answer for an unknown identifier and a wrong password, in comparable time.
    let Some(record) = auth.check_password(&identifier, &password).await? else {
        return Err(auth.invalid(None, "the identifier or password is wrong"));
    };
    let who = auth.principal_of(&record);
    let token = auth.tokens.issue(who.id, who.roles).ok_or_else(Problem::internal)?;
    let mut response = axum::Json(json!({
        "access_token": token,
        "token_type": "Bearer",
        "expires_in": auth.tokens.ttl_seconds(),
    }))
    .into_response();
    // Tokens must not be cached by anything on the way (RFC 6749 §5.1).
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
