//! The six operations, once for every resource: generated routes instantiate them with
//! the resource's spec and input types.

mod collection;
mod create;
mod patch;
mod refs;
mod replace;
mod transition;

pub use collection::list;
pub use create::create;
pub(crate) use create::insert;
pub use patch::patch;
use refs::{missing_ref, refs_of, refs_readable};
pub use replace::replace;
pub use transition::{status, transition};

use crate::access::{self, Scope};
use crate::caller::Caller;
use crate::conditional::{self, Precondition};
use crate::context::RequestContext;
use crate::csv_format;
use crate::hooks::{ComputeRule, CreateRule, DeleteRule, UpdateRule};
use crate::list;
use crate::negotiate;
use crate::outlined::Boxed;
use crate::problem::{FieldError, Problem};
use crate::settable::{self, Write};
use crate::spec::{DefaultValue as FieldDefault, FieldKind, FieldSpec, Format, IdKind, ResourceSpec, Target};
use crate::store::{Record, Rows, SqlValue, Store, StoreError};
use crate::validate;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The business rules a write runs: the operation's own on its typed input, and the
/// resource's compute rule on the record.
pub struct Rules<'a, T: ?Sized> {
    pub before: Option<&'a T>,
    pub compute: Option<&'a ComputeRule>,
}

pub async fn get(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    id: &str,
    headers: &HeaderMap,
) -> Result<Response, Problem> {
    let (store, caller, view) = (&cx.store, &cx.caller, &cx.view);
    view.admits(spec)?;
    let format = negotiate::choose(spec, view, headers)?;
    let (_, row) = authorized_row(spec, spec.access.read, store, caller, id).await?;
    let bytes = match (format, &row, from_row(spec, cx)) {
        (Format::Json, Row::Read(rows), Some(shown)) => {
            serde_json::to_vec(&rows.first_json(spec, &shown)).map_err(|_| Problem::internal())?
        }
        _ => {
            let record = representation(spec, cx, row.record(spec)?);
            match format {
                Format::Json => serde_json::to_vec(&record).map_err(|_| Problem::internal())?,
                Format::Csv => csv_format::csv(spec, view, caller, std::slice::from_ref(&record))?,
            }
        }
    };
    conditional::read(spec, view, headers, format, bytes, HeaderMap::new())
}

/// A record's row, and its record where the caller's access needed it read.
enum Row {
    Read(Rows),
    Record(Record),
}

impl Row {
    fn record(self, spec: &ResourceSpec) -> Result<Record, Problem> {
        match self {
            Row::Record(record) => Ok(record),
            Row::Read(rows) => Ok(rows.record(spec)?),
        }
    }
}

/// The record an item operation acts on, once the caller is admitted to it: refused
/// callers learn nothing of whether it exists.
pub(crate) async fn authorized(
    spec: &'static ResourceSpec,
    rules: &[crate::spec::Rule],
    store: &Store,
    caller: &Caller,
    id: &str,
) -> Result<(SqlValue, Record), Problem> {
    let (key, row) = authorized_row(spec, rules, store, caller, id).await?;
    Ok((key, row.record(spec)?))
}

/// [`authorized`], the record left in its row unless the caller's access needed it read.
async fn authorized_row(
    spec: &'static ResourceSpec,
    rules: &[crate::spec::Rule],
    store: &Store,
    caller: &Caller,
    id: &str,
) -> Result<(SqlValue, Row), Problem> {
    // Before the lookup, so that refused callers learn nothing of the record.
    let scope = access::collection(rules, caller)?;
    let key = parse_id(spec, id)?;
    let rows = match store.get_row(spec, &key).await {
        Err(StoreError::NotFound) => return Err(missing(spec)),
        other => other?,
    };
    if scope == Scope::All {
        return Ok((key, Row::Read(rows)));
    }
    let record = Row::Read(rows).record(spec)?;
    access::record(spec, scope, caller, &record)?;
    Ok((key, Row::Record(record)))
}

/// The record a replace or a patch of two steps writes, as read before its body.
struct Found<'h> {
    key: SqlValue,
    stored: Record,
    /// Its representation to this request.
    current: Record,
    /// The request's `If-Match`, which it meets.
    condition: Precondition<'h>,
}

/// The record `id`, which the caller may write, and the request's precondition held
/// against it ([`precondition`]). Compiled in the runtime ([`Boxed`]).
fn found<'a>(
    spec: &'static ResourceSpec,
    cx: &'a RequestContext,
    id: &'a str,
    headers: &'a HeaderMap,
) -> Boxed<'a, Result<Found<'a>, Problem>> {
    Box::pin(async move {
        let (key, stored) = authorized(spec, spec.access.write, &cx.store, &cx.caller, id).await?;
        let current = representation(spec, cx, stored.clone());
        let condition = precondition(spec, cx, headers, &current)?;
        Ok(Found { key, stored, current, condition })
    })
}

/// The end of a replace or a patch of two steps: the refs it names readable by the caller,
/// `values` written where the request's condition still holds, the record answered.
async fn rewritten(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    found: &Found<'_>,
    values: Vec<(&'static str, SqlValue)>,
    refs: &Record,
) -> Result<Response, Problem> {
    refs_readable(spec, &cx.store, &cx.caller, refs).await?;
    let record = update(spec, cx, &found.key, values, &found.condition, refs).await?;
    Ok(conditional::tagged(StatusCode::OK, &cx.view, &representation(spec, cx, record)))
}

/// The write's `If-Match`, held first against the record as read (so a stale write is a
/// 412 before its body is even looked at, as RFC 9110 §13.2.2 orders it) and then again,
/// atomically, where the write happens.
pub(crate) fn precondition<'h>(
    spec: &ResourceSpec,
    cx: &RequestContext,
    headers: &'h HeaderMap,
    current: &Record,
) -> Result<Precondition<'h>, Problem> {
    let condition = Precondition::of(headers, spec.require_if_match)?;
    if condition.is_some() {
        let tag = conditional::tag_of(&cx.view, current);
        if !condition.admits(tag.as_ref()) {
            return Err(Problem::precondition_failed(tag));
        }
    }
    Ok(condition)
}

/// What a conditional write asks of the record as it stands: the tag of its
/// representation is one the condition names.
pub(crate) fn admit<'a>(
    spec: &'a ResourceSpec,
    cx: &'a RequestContext,
    condition: &'a Precondition<'_>,
) -> impl Fn(&Record) -> bool + Send + Sync + 'a {
    move |record: &Record| {
        condition.admits(conditional::tag_of(&cx.view, &representation(spec, cx, record.clone())).as_ref())
    }
}

/// A record whose condition failed where the write happens: 412 with its current tag.
pub(crate) fn changed(spec: &ResourceSpec, cx: &RequestContext, record: Record) -> Problem {
    Problem::precondition_failed(conditional::tag_of(&cx.view, &representation(spec, cx, record)))
}

/// Writes `values`: unconditionally without `If-Match`, else checked and written in one
/// step, so of writers holding the same tag exactly one wins and the others get 412.
async fn update(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    id: &SqlValue,
    values: Vec<(&'static str, SqlValue)>,
    condition: &Precondition<'_>,
    refs: &Record,
) -> Result<Record, Problem> {
    let store = &cx.store;
    // A patch that changes nothing writes nothing, and so publishes nothing.
    let event = (!values.is_empty()).then_some("updated");
    let written = if condition.is_some() {
        match store.update_if(spec, id, values, &admit(spec, cx, condition), event).await {
            Err(StoreError::Changed(record)) => return Err(changed(spec, cx, *record)),
            Err(StoreError::NotFound) => return Err(missing(spec)),
            other => other,
        }
    } else {
        store.update(spec, id, values, event).await
    };
    match written {
        Err(refused @ StoreError::MissingRef { .. }) => Err(missing_ref(spec, store, refs, None, refused).await),
        other => Ok(other?),
    }
}

/// The columns a replace or patch writes: the changes, and what the resource's computed
/// fields become on the record they make.
async fn changed_values(
    spec: &'static ResourceSpec,
    stored_record: &Record,
    changes: Record,
    compute: Option<&ComputeRule>,
) -> Result<Vec<(&'static str, SqlValue)>, Problem> {
    let mut after = match compute {
        None => changes,
        Some(rule) => {
            let mut after = changes.clone();
            let mut record = stored_record.clone();
            record.extend(changes.clone());
            let before: Record =
                spec.fields.iter().filter_map(|f| Some((f.name, record.get(f.name)?.clone()))).collect();
            let computed = computed(spec, rule, record, &before)?;
            for f in spec.fields {
                // A stored password is its hash: never written back unless it changed.
                let changed = computed.get(f.name) != stored_record.get(f.name) && f.kind != FieldKind::Password;
                if (changed || changes.contains_key(f.name))
                    && let Some(v) = computed.get(f.name)
                {
                    after.insert(f.name, v.clone());
                }
            }
            after
        }
    };
    let mut values = Vec::new();
    for f in spec.fields {
        if let Some(v) = after.take(f.name) {
            values.push((f.name, stored(f, v).await?));
        }
    }
    Ok(values)
}

/// Runs the resource's compute rule on `record` (the whole record about to be stored) and
/// returns its fields as the rule left them, each still within its field's rules; `before`
/// holds the fields as they were, so only what the rule changed is checked again.
fn computed(spec: &ResourceSpec, rule: &ComputeRule, mut record: Record, before: &Record) -> Result<Record, Problem> {
    rule(&mut record)?;
    let fields: Record = spec.fields.iter().filter_map(|f| Some((f.name, record.get(f.name)?.clone()))).collect();
    let changed: Record =
        fields.iter().filter(|(k, v)| before.get(k) != Some(*v)).map(|(k, v)| (k.to_owned(), v.clone())).collect();
    let errors = validate::fields(spec.fields, &changed);
    if !errors.is_empty() {
        let mut p = Problem::validation(errors);
        p.status = StatusCode::UNPROCESSABLE_ENTITY;
        p.title = "Unprocessable Entity";
        return Err(p);
    }
    Ok(fields)
}

pub async fn delete(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    id: &str,
    headers: &HeaderMap,
    hook: Option<&DeleteRule>,
) -> Result<Response, Problem> {
    let (store, caller, view) = (&cx.store, &cx.caller, &cx.view);
    // The rule sees only records that exist, the caller may delete, and the condition
    // admits.
    view.admits(spec)?;
    let (key, record) = authorized(spec, spec.access.delete, store, caller, id).await?;
    let condition = precondition(spec, cx, headers, &representation(spec, cx, record))?;
    if let Some(h) = hook {
        h(id)?;
    }
    let deleted = if condition.is_some() {
        store.delete_if(spec, &key, &admit(spec, cx, &condition), Some("deleted")).await
    } else {
        store.delete(spec, &key, Some("deleted")).await
    };
    match deleted {
        Err(StoreError::NotFound) => Err(missing(spec)),
        Err(StoreError::Changed(record)) => Err(changed(spec, cx, *record)),
        other => Ok(other.map(|()| StatusCode::NO_CONTENT.into_response())?),
    }
}

/// The answer for a record that does not exist, the same as for one that is hidden.
pub(crate) fn missing(spec: &ResourceSpec) -> Problem {
    Problem::not_found(format!("no {} with this id", spec.name))
}

/// The value a field takes when a create or replace does not give one.
fn default_of(f: &FieldSpec, now: &str) -> Value {
    match f.default {
        Some(FieldDefault::Now) if f.kind == FieldKind::Date => Value::from(&now[..10]),
        Some(FieldDefault::Now) => Value::from(now),
        Some(FieldDefault::Value(text)) => serde_json::from_str(text).unwrap_or(Value::Null),
        None if f.kind == FieldKind::Roles => Value::Array(Vec::new()),
        None => Value::Null,
    }
}

/// The column value of a field: passwords hashed (on the bounded hashers), datetimes in
/// one sortable form.
async fn stored(f: &FieldSpec, v: Value) -> Result<SqlValue, Problem> {
    match (f.kind, v) {
        (FieldKind::Password, Value::String(p)) => Ok(SqlValue::Text(Some(crate::password::hash_bounded(p).await?))),
        // One form per address, so the unique index and every lookup see one account.
        (FieldKind::Email, Value::String(e)) => match crate::email::canonical(&e) {
            Some(canonical) => Ok(SqlValue::Text(Some(canonical))),
            None => Err(Problem::validation(vec![FieldError {
                field: f.name.into(),
                message: "is not an e-mail address: its domain is not a valid domain name".into(),
            }])),
        },
        (FieldKind::DateTime, Value::String(t)) => {
            let parsed = chrono::DateTime::parse_from_rfc3339(&t).map_err(|_| {
                Problem::validation(vec![FieldError {
                    field: f.name.into(),
                    message: "is not an RFC 3339 datetime".into(),
                }])
            })?;
            Ok(SqlValue::Text(Some(crate::clock::format_time(parsed.with_timezone(&chrono::Utc)))))
        }
        (_, v) => Ok(SqlValue::from_owned_json(f, v)),
    }
}

pub(crate) fn parse_id(spec: &ResourceSpec, text: &str) -> Result<SqlValue, Problem> {
    // An id that cannot exist names no record: 404, like any other missing one.
    SqlValue::id(spec.id, text).ok_or_else(|| Problem::not_found(format!("no {} with this id", spec.name)))
}

/// The answer to a write, `status` with the record as written and its tag: written as
/// JSON straight from its row where its representation depends on nothing else.
fn written(spec: &ResourceSpec, cx: &RequestContext, status: StatusCode, row: Rows) -> Result<Response, Problem> {
    Ok(match from_row(spec, cx) {
        Some(shown) => conditional::tagged(status, &cx.view, &row.first_json(spec, &shown)),
        None => conditional::tagged(status, &cx.view, &representation(spec, cx, row.record(spec)?)),
    })
}

/// Which of `spec`'s fields a representation shows the caller in the request's version,
/// where it can be written as JSON straight from the record's row; `None` where it
/// depends on more than the row (its `_links` depend on the caller, a field the caller
/// sees only on their own records on whose the record is), so the record is read and made
/// a [`representation`].
fn from_row(spec: &ResourceSpec, cx: &RequestContext) -> Option<Vec<bool>> {
    if spec.links {
        return None;
    }
    let shown = |f: &FieldSpec| match access::field(f.read, &cx.caller) {
        _ if !cx.view.shows(f) => Some(false),
        Some(Scope::All) => Some(true),
        Some(Scope::Own) => None,
        None => Some(false),
    };
    spec.fields.iter().map(shown).collect()
}

/// The record as the caller sees it in the request's version: write-only fields, those
/// the version lacks and those the caller may not read removed; its `_links` where the
/// resource has them (they depend on the caller, as what is open to them does, so the tag
/// does too).
pub(crate) fn representation(spec: &ResourceSpec, cx: &RequestContext, mut record: Record) -> Record {
    let hidden: Vec<&str> = spec
        .fields
        .iter()
        .filter(|f| !cx.view.shows(f) || !access::reads(spec, f, &cx.caller, &record))
        .map(|f| f.name)
        .collect();
    for name in hidden {
        record.shift_remove(name);
    }
    if spec.links {
        crate::links::add(spec, cx, &mut record);
    }
    record
}

#[cfg(test)]
mod tests {

    #[test]
    fn times_are_written_fixed_width_to_the_microsecond_in_utc() {
        use chrono::{TimeZone, Utc};
        let at = |secs: i64, nanos: u32| crate::clock::format_time(Utc.timestamp_opt(secs, nanos).unwrap());
        assert_eq!(at(1_795_366_509, 123_456_789), "2026-11-22T16:55:09.123456Z");
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(1_795_366_509, 999), "2026-11-22T16:55:09.000000Z", "truncated, not rounded");
        // Text order is time order.
        let times: Vec<String> = [(5, 0), (5, 1_000), (6, 0), (100_000, 0)].iter().map(|&(s, n)| at(s, n)).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1] && w[0].len() == w[1].len()), "{times:?}");
    }
}
