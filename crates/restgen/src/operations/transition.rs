//! Lifecycles' operations: a state field only named transitions move (`POST
//! {item}/{transition}`), and the status endpoint that lets a client poll it cheaply (`GET
//! {item}/status`).

use crate::caller::Caller;
use crate::conditional;
use crate::context::RequestContext;
use crate::hooks::TransitionRule;
use crate::lifecycle::{may_take, state_of, wrong_state};
use crate::operations;
use crate::problem::Problem;
use crate::spec::{Format, ResourceSpec, TransitionSpec};
use crate::store::{Record, SqlValue, StoreError};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;

/// `POST {item}/{transition}`: the record moves to `t.to` when it stands in one of
/// `t.from`, the caller may write it and holds one of the transition's roles. Judged and
/// written in one step, so of two transitions racing on one record only one can start
/// from the state both read; `If-Match` is held at the same moment.
pub async fn transition(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    id: &str,
    t: &'static TransitionSpec,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    hook: Option<&TransitionRule>,
) -> Result<Response, Problem> {
    let (store, caller, view) = (&cx.store, &cx.caller, &cx.view);
    let lifecycle = spec.lifecycle.as_ref().ok_or_else(Problem::internal)?;
    view.admits(spec)?;
    no_input(spec, headers, body)?;
    // Whether the caller holds the role is known before the record is read: a refused
    // caller learns nothing of it.
    crate::access::collection(spec.access.write, caller)?;
    if !may_take(t, caller) {
        let roles = t.roles.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(" or ");
        return Err(caller_refused(caller, format!("`{}` is for callers with the role {roles}", t.name)));
    }
    let (key, record) = operations::authorized(spec, spec.access.write, store, caller, id).await?;
    let condition = operations::precondition(spec, cx, headers, &operations::representation(spec, cx, record.clone()))?;
    if !t.starts_from(state_of(lifecycle, &record)) {
        return Err(wrong_state(spec, lifecycle, t, &record, caller));
    }
    if let Some(rule) = hook {
        rule(id, t.name, &record)?;
    }
    let mut values = vec![(lifecycle.field, SqlValue::Text(Some(t.to.to_owned())))];
    if spec.timestamps {
        values.push(("updated_at", SqlValue::Text(Some(store.now()))));
    }
    let admit_condition = operations::admit(spec, cx, &condition);
    let admit = |r: &Record| t.starts_from(state_of(lifecycle, r)) && admit_condition(r);
    let record = match store.update_if(spec, &key, values, &admit, Some(t.name)).await {
        Err(StoreError::Changed(now)) if !t.starts_from(state_of(lifecycle, &now)) => {
            return Err(wrong_state(spec, lifecycle, t, &now, caller));
        }
        Err(StoreError::Changed(now)) => return Err(operations::changed(spec, cx, *now)),
        Err(StoreError::NotFound) => return Err(operations::missing(spec)),
        other => other?,
    };
    Ok(conditional::tagged(StatusCode::OK, view, &operations::representation(spec, cx, record)))
}

/// 401 for nobody, 403 with `detail` for a caller who is somebody.
fn caller_refused(caller: &Caller, detail: String) -> Problem {
    if caller.is_authenticated() { Problem::forbidden(detail) } else { caller.unauthorized() }
}

/// A transition takes no input: an empty body or `{}`. Anything else would be ignored,
/// so where the resource refuses unknown fields it is refused, naming them.
fn no_input(spec: &ResourceSpec, headers: &HeaderMap, body: Result<Bytes, BytesRejection>) -> Result<(), Problem> {
    match &body {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => return Ok(()),
        _ => {}
    }
    let object = crate::body::object(headers, body, false)?;
    if spec.reject_unknown && !object.is_empty() {
        let errors = object
            .keys()
            .map(|k| crate::problem::FieldError {
                field: k.clone(),
                message: "is not taken: a transition has no input".into(),
            })
            .collect();
        return Err(Problem::validation(errors));
    }
    Ok(())
}

/// `GET {item}/status`: `{status, updated_at}` of a record the caller may read, with a
/// strong `ETag` and `Cache-Control: no-cache`, so a client polling with `If-None-Match`
/// is answered 304 until the state changes.
pub async fn status(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    id: &str,
    headers: &HeaderMap,
) -> Result<Response, Problem> {
    let (store, caller, view) = (&cx.store, &cx.caller, &cx.view);
    let lifecycle = spec.lifecycle.as_ref().ok_or_else(Problem::internal)?;
    view.admits(spec)?;
    crate::negotiate::choose_among(&[Format::Json], view, headers)?;
    let (_, record) = operations::authorized(spec, spec.access.read, store, caller, id).await?;
    let mut body = serde_json::Map::new();
    body.insert("status".into(), Value::from(state_of(lifecycle, &record)));
    if let Some(updated) = record.get("updated_at") {
        body.insert("updated_at".into(), updated.clone());
    }
    let bytes = serde_json::to_vec(&body).map_err(|_| Problem::internal())?;
    let cache = restgen_model::model::status_cache_control(spec.cache_control);
    conditional::read_as(view, headers, view.json_type(), bytes, cache, HeaderMap::new())
}
