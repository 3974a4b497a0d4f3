//! List requests: filters, sorts and the three pagination styles, and the envelopes and
//! `Link` headers of their answers.

use crate::context::RequestContext;
use crate::problem::{FieldError, Problem};
use crate::spec::{Envelope, FieldKind, FieldSpec, Format, IdKind, PageStyle, ResourceSpec};
use crate::store::{Filter, ListQuery, Page, Record, SortKey, SqlValue};
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use restgen_wire::query;
use serde_json::{Value, json};

/// A parsed list request.
#[derive(Debug)]
pub struct ListRequest {
    pub query: ListQuery,
    /// `starting_after`: resolved to a cursor once the record is loaded.
    pub starting_after: Option<String>,
    /// The page number (page style).
    pub page: u64,
    /// The `sort` parameter, canonical (part of every cursor).
    pub sort_param: String,
    /// How many of `query.filters` the request named (the caller's scope may add more).
    pub named_filters: usize,
    /// The parent whose children are listed (`within`), part of every cursor.
    pub within: Option<String>,
}

/// What binds a cursor to the children of one parent: `vehicle/7`.
pub fn within(parent: &str, id: &SqlValue) -> String {
    format!("{parent}/{}", canonical(id).unwrap_or_default())
}

/// Parses the query of a list of `spec`: the whole collection, or the children of the
/// parent `within` names. Filters and sorts are on the fields `queries` admits (those the
/// version has and the caller sees); any other is unknown.
pub fn parse(
    spec: &ResourceSpec,
    queries: &dyn Fn(&FieldSpec) -> bool,
    params: &[(String, String)],
    within: Option<String>,
) -> Result<ListRequest, Problem> {
    let mut errors = Vec::new();
    let mut filters = Vec::new();
    let mut size: Option<u32> = None;
    let mut page: u64 = 1;
    let mut offset: u64 = 0;
    let mut cursor: Option<String> = None;
    let mut starting_after: Option<String> = None;
    let mut sort_param = String::new();
    let style = spec.pagination.style;
    let size_key = if style == PageStyle::Page { query::PER_PAGE } else { query::LIMIT };
    let max_cursor = spec.pagination.max_cursor as usize;
    let mut seen: Vec<&str> = Vec::new();
    for (key, value) in params {
        let mut bad = |message: String| errors.push(FieldError { field: key.clone(), message });
        // `sort` is an array: `sort=a,b` and `sort=a&sort=b` (what generated clients send)
        // are one list. The array the document describes has no empty key, so `sort=`
        // names none.
        if key == query::SORT {
            if value.trim().is_empty() {
                bad("is empty: leave it out for the default order".into());
            } else if sort_param.is_empty() {
                sort_param = value.clone();
            } else {
                sort_param = format!("{sort_param},{value}");
            }
            continue;
        }
        // Every other parameter is one value, as the OpenAPI document says.
        if seen.contains(&key.as_str()) {
            bad("is given more than once".into());
            continue;
        }
        seen.push(key);
        // Paging numbers are 64-bit signed integers, as the OpenAPI document says; sizes
        // above the resource's `max_size` are clamped.
        let whole = |v: &str| v.parse::<u64>().ok().filter(|n| *n <= i64::MAX as u64);
        match key.as_str() {
            k if k == size_key => match whole(value) {
                Some(0) | None => bad(format!("must be a whole number from 1 to {}", i64::MAX)),
                Some(n) => size = Some(n.min(u64::from(spec.pagination.max_size)) as u32),
            },
            query::PAGE if style == PageStyle::Page => match whole(value) {
                Some(0) | None => bad(format!("must be a whole number from 1 to {}", i64::MAX)),
                Some(n) => page = n,
            },
            query::OFFSET if style == PageStyle::Offset => match whole(value) {
                Some(n) => offset = n,
                None => bad(format!("must be a whole number from 0 to {}", i64::MAX)),
            },
            // An empty cursor is no cursor (the first page), as an empty form field is.
            query::CURSOR if style == PageStyle::Cursor && value.is_empty() => {}
            query::CURSOR if style == PageStyle::Cursor && value.len() > max_cursor => {
                bad(format!("is longer than {max_cursor} characters"))
            }
            query::CURSOR if style == PageStyle::Cursor => cursor = Some(value.clone()),
            query::STARTING_AFTER if style == PageStyle::Cursor => starting_after = Some(value.clone()),
            name => match spec.fields.iter().find(|f| f.name == name && f.filter && queries(f)) {
                Some(f) => match filter_value(f, value) {
                    Ok(v) => filters.push(Filter { column: f.name, value: v }),
                    Err(message) => bad(message),
                },
                None => bad("is not a filter, sort or paging parameter of this list".into()),
            },
        }
    }
    let sort = match sort_keys(spec, queries, &sort_param) {
        Ok((keys, named)) => {
            // Written back canonically: what cursors carry and `Link` repeats.
            sort_param = canonical_sort(&keys[..named]);
            keys
        }
        Err(e) => {
            errors.push(e);
            Vec::new()
        }
    };
    if cursor.is_some() && starting_after.is_some() {
        errors.push(FieldError {
            field: query::CURSOR.into(),
            message: "cannot be combined with `starting_after`".into(),
        });
    }
    let limit = size.unwrap_or(spec.pagination.default_size);
    let page_start = match (style, &cursor) {
        (PageStyle::Cursor, Some(token)) => match decode_cursor(spec, &sort, &sort_param, within.as_deref(), token) {
            Ok(values) => Page::After(values),
            Err(message) => {
                errors.push(FieldError { field: query::CURSOR.into(), message });
                Page::Offset(0)
            }
        },
        (PageStyle::Page, _) => Page::Offset((page - 1).saturating_mul(u64::from(limit))),
        (PageStyle::Offset, _) => Page::Offset(offset),
        (PageStyle::Cursor, None) => Page::Offset(0),
    };
    if !errors.is_empty() {
        return Err(Problem::validation(errors));
    }
    let named_filters = filters.len();
    Ok(ListRequest {
        query: ListQuery { filters, sort, page: page_start, limit },
        starting_after,
        page,
        sort_param,
        named_filters,
        within,
    })
}

/// The filters of a change feed of `spec`: each parameter one of the list's filters, on
/// a field `queries` admits, as the list reads it; the list's paging and sorting mean
/// nothing to a feed.
pub(crate) fn feed_filters(
    spec: &ResourceSpec,
    queries: &dyn Fn(&FieldSpec) -> bool,
    params: &[(String, String)],
) -> Result<Vec<Filter>, Problem> {
    let mut errors = Vec::new();
    let mut filters: Vec<Filter> = Vec::new();
    for (key, value) in params {
        let mut bad = |message: String| errors.push(FieldError { field: key.clone(), message });
        match spec.fields.iter().find(|f| f.name == key && f.filter && queries(f)) {
            Some(f) if filters.iter().any(|other| other.column == f.name) => bad("is given more than once".into()),
            Some(f) => match filter_value(f, value) {
                Ok(v) => filters.push(Filter { column: f.name, value: v }),
                Err(message) => bad(message),
            },
            None => bad("is not a filter of this feed".into()),
        }
    }
    if errors.is_empty() { Ok(filters) } else { Err(Problem::validation(errors)) }
}

/// Whether `record` holds what `filter` asks for, as the list's query would find it.
pub(crate) fn matches(spec: &ResourceSpec, filter: &Filter, record: &Record) -> bool {
    column_value(spec, filter.column, record.get(filter.column).unwrap_or(&Value::Null)) == filter.value
}

/// The keys the request named (not the id appended to break ties), without spaces or
/// repeats.
fn canonical_sort(keys: &[SortKey]) -> String {
    let keys: Vec<String> =
        keys.iter().map(|k| format!("{}_{}", k.column, if k.descending { "desc" } else { "asc" })).collect();
    keys.join(",")
}

/// `sort=city_asc,created_at_desc`: fields marked `sort`, plus `id` and `created_at`.
/// The id always ends the keys, so the order is total and cursors are stable.
/// Returns the keys, and how many of them the request named.
fn sort_keys(
    spec: &ResourceSpec,
    queries: &dyn Fn(&FieldSpec) -> bool,
    param: &str,
) -> Result<(Vec<SortKey>, usize), FieldError> {
    let mut keys = Vec::new();
    // No `sort` is the default order; an empty key among others (`sort=a_asc,`) names nothing.
    let parts: Vec<&str> = if param.is_empty() { Vec::new() } else { param.split(',').map(str::trim).collect() };
    if parts.iter().any(|p| p.is_empty()) {
        return Err(FieldError { field: query::SORT.into(), message: "lists an empty key".into() });
    }
    let sorts = |f: &&FieldSpec| f.sort && queries(f);
    // As many keys as there are sortable fields, as the OpenAPI document says.
    let sortable = 1 + usize::from(spec.timestamps) + spec.fields.iter().filter(sorts).count();
    if parts.len() > sortable {
        return Err(FieldError { field: query::SORT.into(), message: format!("lists more than {sortable} keys") });
    }
    for part in parts {
        let (name, descending) = if let Some(n) = part.strip_suffix("_desc") {
            (n, true)
        } else if let Some(n) = part.strip_suffix("_asc") {
            (n, false)
        } else {
            return Err(FieldError {
                field: query::SORT.into(),
                message: format!("`{part}` must end in `_asc` or `_desc`"),
            });
        };
        let column: Option<(&'static str, bool, bool)> = match name {
            "id" => Some(("id", false, false)),
            "created_at" if spec.timestamps => Some(("created_at", false, false)),
            other => spec
                .fields
                .iter()
                .filter(sorts)
                .find(|f| f.name == other)
                .map(|f| (f.name, f.optional, f.kind == FieldKind::Decimal)),
        };
        match column {
            // A later key on a column already sorted by can never change the order: it
            // is redundant, not wrong, and dropped.
            Some((c, _, _)) if keys.iter().any(|k: &SortKey| k.column == c) => {}
            Some((column, nullable, numeric)) => keys.push(SortKey { column, descending, nullable, numeric }),
            None => {
                return Err(FieldError {
                    field: query::SORT.into(),
                    message: format!("`{name}` is not a sortable field of this list"),
                });
            }
        }
    }
    let named = keys.len();
    if !keys.iter().any(|k| k.column == "id") {
        // The tie-breaker runs the way the first key does, so one index on (key, id) can
        // serve the whole order, read forwards or backwards.
        let descending = keys.first().is_some_and(|k| k.descending);
        keys.push(SortKey { column: "id", descending, nullable: false, numeric: false });
    }
    Ok((keys, named))
}

/// A filter's value, parsed as its field's type and held to the field's rules: a value
/// no record could hold is refused, not searched for.
fn filter_value(f: &FieldSpec, text: &str) -> Result<SqlValue, String> {
    if text.contains('\0') {
        return Err("may not contain NUL characters".into());
    }
    let (kind, ref_kind, values) = (f.kind, f.to.map(|(_, k)| k), f.values);
    match kind {
        FieldKind::Integer => {
            let n: i64 = text.parse().map_err(|_| "must be a whole number".to_owned())?;
            crate::validate::value(f, &Value::from(n))?;
            Ok(SqlValue::Int(Some(n)))
        }
        FieldKind::String | FieldKind::Text | FieldKind::Email | FieldKind::Url => {
            crate::validate::value(f, &Value::String(text.to_owned()))?;
            // Addresses are stored in canonical form: `Ann@EXAMPLE.com` finds `ann@example.com`.
            if kind == FieldKind::Email {
                let canonical = crate::email::canonical(text).ok_or("is not an e-mail address")?;
                return Ok(SqlValue::Text(Some(canonical)));
            }
            Ok(SqlValue::Text(Some(text.into())))
        }
        FieldKind::Boolean => match text {
            "true" => Ok(SqlValue::Bool(Some(true))),
            "false" => Ok(SqlValue::Bool(Some(false))),
            _ => Err("must be `true` or `false`".into()),
        },
        FieldKind::Enum if !values.contains(&text) => Err(format!("must be one of: {}", values.join(", "))),
        FieldKind::Ref => SqlValue::id(ref_kind.unwrap_or(IdKind::Uuid), text).ok_or_else(|| "is not an id".into()),
        FieldKind::Uuid => SqlValue::id(IdKind::Uuid, text).ok_or_else(|| "is not a UUID".into()),
        FieldKind::Date => chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .map(|d| SqlValue::Text(Some(d.format("%Y-%m-%d").to_string())))
            .map_err(|_| "is not a date (YYYY-MM-DD)".into()),
        FieldKind::DateTime => chrono::DateTime::parse_from_rfc3339(text)
            .map(|t| SqlValue::Text(Some(crate::clock::format_time(t.with_timezone(&chrono::Utc)))))
            .map_err(|_| "is not an RFC 3339 datetime".into()),
        _ => Ok(SqlValue::Text(Some(text.into()))),
    }
}

/// The sort-key values of a record, in key order: where the next page starts.
pub fn cursor_values(spec: &ResourceSpec, sort: &[SortKey], record: &Record) -> Vec<SqlValue> {
    sort.iter().map(|k| column_value(spec, k.column, record.get(k.column).unwrap_or(&Value::Null))).collect()
}

fn column_value(spec: &ResourceSpec, column: &str, v: &Value) -> SqlValue {
    match (column, spec.field(column)) {
        ("id", _) if spec.id == IdKind::Integer => SqlValue::Int(v.as_i64()),
        (_, Some(f)) => SqlValue::from_json(f, v),
        _ => SqlValue::Text(v.as_str().map(str::to_owned)),
    }
}

/// Cursors are opaque to clients: the sort they were made under, the parent whose
/// children they page through (nested lists), and the last row's sort-key values. A
/// cursor from another sort or another list is refused rather than misread.
fn encode_cursor(sort_param: &str, within: Option<&str>, sort: &[SortKey], record: &Record) -> String {
    let values: Vec<&Value> = sort.iter().map(|k| record.get(k.column).unwrap_or(&Value::Null)).collect();
    let token = match within {
        Some(parent) => json!({ "s": sort_param, "p": parent, "v": values }),
        None => json!({ "s": sort_param, "v": values }),
    };
    URL_SAFE_NO_PAD.encode(token.to_string())
}

fn decode_cursor(
    spec: &ResourceSpec,
    sort: &[SortKey],
    sort_param: &str,
    within: Option<&str>,
    token: &str,
) -> Result<Vec<SqlValue>, String> {
    let bad = || "is not a cursor this list issued".to_owned();
    let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    if v["p"].as_str() != within {
        return Err("was issued for another list".into());
    }
    if v["s"].as_str() != Some(sort_param) {
        return Err("was issued for another `sort`".into());
    }
    let values = v["v"].as_array().filter(|a| a.len() == sort.len()).ok_or_else(bad)?;
    Ok(sort.iter().zip(values).map(|(k, v)| column_value(spec, k.column, v)).collect())
}

/// The answer: the envelope of the resource, `has_more`, and `Link: rel="next"`; as CSV,
/// the records alone, the next page only in `Link`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn respond(
    spec: &ResourceSpec,
    cx: &RequestContext,
    uri: &Uri,
    request: &HeaderMap,
    format: Format,
    req: &ListRequest,
    items: Items,
    more: bool,
) -> Result<Response, Problem> {
    let (view, limit) = (&cx.view, req.query.limit);
    let next_cursor = match (spec.pagination.style, more) {
        (PageStyle::Cursor, true) => {
            items.last(spec)?.map(|last| encode_cursor(&req.sort_param, req.within.as_deref(), &req.query.sort, &last))
        }
        _ => None,
    };
    let next_params: Option<Vec<(String, String)>> = more.then(|| {
        // Rebuilt from the parsed request, never echoed: canonical values, so the link is
        // as bounded as the OpenAPI document says.
        let mut params: Vec<(String, String)> = req.query.filters[..req.named_filters]
            .iter()
            .filter_map(|f| Some((f.column.to_owned(), canonical(&f.value)?)))
            .collect();
        if !req.sort_param.is_empty() {
            params.push((query::SORT.into(), req.sort_param.clone()));
        }
        let size_key = if spec.pagination.style == PageStyle::Page { query::PER_PAGE } else { query::LIMIT };
        params.push((size_key.into(), limit.to_string()));
        match (spec.pagination.style, &req.query.page) {
            (PageStyle::Page, _) => params.push((query::PAGE.into(), (req.page + 1).to_string())),
            (PageStyle::Offset, Page::Offset(o)) => {
                params.push((query::OFFSET.into(), (o + u64::from(limit)).to_string()))
            }
            _ => params.push((query::CURSOR.into(), next_cursor.clone().unwrap_or_default())),
        }
        params
    });
    let mut headers = HeaderMap::new();
    if let Some(params) = next_params {
        let query = form_urlencoded::Serializer::new(String::new()).extend_pairs(&params).finish();
        let link = format!("<{}?{query}>; rel=\"next\"", uri.path());
        if let Ok(v) = HeaderValue::from_str(&link) {
            headers.insert(header::LINK, v);
        }
    }
    if format == Format::Csv {
        // The columns are the fields a representation shows, so rows read as stored
        // records make the same table.
        let bytes = match &items {
            Items::Records(records) => crate::csv_format::csv(spec, view, &cx.caller, records)?,
            Items::Rows(rows, _) => crate::csv_format::csv(
                spec,
                view,
                &cx.caller,
                &rows.records(spec).map_err(crate::store::StoreError::from)?,
            )?,
        };
        return crate::conditional::read(spec, view, request, format, bytes, headers);
    }
    let bytes = match &items {
        Items::Records(records) => page_json(spec, req, records, more, next_cursor),
        Items::Rows(rows, shown) => page_json(spec, req, &rows.json(spec, shown), more, next_cursor),
    }
    .map_err(|_| Problem::internal())?;
    crate::conditional::read(spec, view, request, format, bytes, headers)
}

/// The page as JSON: its items bare, or in the resource's envelope with the paging members.
fn page_json(
    spec: &ResourceSpec,
    req: &ListRequest,
    items: &impl serde::Serialize,
    more: bool,
    next_cursor: Option<String>,
) -> serde_json::Result<Vec<u8>> {
    let limit = req.query.limit;
    match spec.envelope {
        Envelope::Bare => serde_json::to_vec(items),
        Envelope::Key(key) => {
            let paging = match (spec.pagination.style, &req.query.page) {
                (PageStyle::Page, _) => Paging::Page { page: req.page, per_page: limit },
                (PageStyle::Offset, Page::Offset(o)) => Paging::Offset { offset: *o, limit },
                _ => Paging::Cursor(next_cursor),
            };
            serde_json::to_vec(&Enveloped { key, items, more, paging })
        }
    }
}

/// A page's records: representations read from their rows, or the rows themselves with
/// the fields their representation shows, written as JSON straight from them (making and
/// dropping a record and its JSON values for each row was a large share of a page's work).
pub(crate) enum Items {
    Records(Vec<Record>),
    /// The rows, and which of the spec's fields the representation shows.
    Rows(crate::store::Rows, Vec<bool>),
}

impl Items {
    /// The last item's record (where a cursor's next page starts).
    fn last(&self, spec: &ResourceSpec) -> Result<Option<Record>, Problem> {
        match self {
            Items::Records(records) => Ok(records.last().cloned()),
            Items::Rows(rows, _) => Ok(rows.last(spec).map_err(crate::store::StoreError::from)?),
        }
    }
}

/// A page in its envelope: the records under the resource's key first, then the paging
/// members; serialized as it stands, neither the records nor the paging members copied
/// into JSON objects first.
struct Enveloped<'a, T> {
    key: &'a str,
    items: &'a T,
    more: bool,
    paging: Paging,
}

/// Where the next page starts, as the pagination style says it.
enum Paging {
    Page { page: u64, per_page: u32 },
    Offset { offset: u64, limit: u32 },
    Cursor(Option<String>),
}

impl<T: serde::Serialize> serde::Serialize for Enveloped<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let members = match self.paging {
            Paging::Page { .. } | Paging::Offset { .. } => 4,
            Paging::Cursor(_) => 3,
        };
        let mut map = serializer.serialize_map(Some(members))?;
        map.serialize_entry(self.key, self.items)?;
        map.serialize_entry("has_more", &self.more)?;
        match &self.paging {
            Paging::Page { page, per_page } => {
                map.serialize_entry(query::PAGE, page)?;
                map.serialize_entry(query::PER_PAGE, per_page)?;
            }
            Paging::Offset { offset, limit } => {
                map.serialize_entry(query::OFFSET, offset)?;
                map.serialize_entry(query::LIMIT, limit)?;
            }
            Paging::Cursor(next) => map.serialize_entry("next_cursor", next)?,
        }
        map.end()
    }
}

/// A filter value as text, the way a request writes it.
fn canonical(value: &SqlValue) -> Option<String> {
    match value {
        SqlValue::Text(t) => t.clone(),
        SqlValue::Int(n) => n.map(|n| n.to_string()),
        SqlValue::Float(f) => f.map(|f| f.to_string()),
        SqlValue::Bool(b) => b.map(|b| b.to_string()),
    }
}

/// The query parameters of a request, decoded.
pub fn query_pairs(uri: &Uri) -> Vec<(String, String)> {
    form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()).into_owned().collect()
}

#[cfg(test)]
mod tests {
    use super::{Enveloped, Paging};

    fn written(paging: Paging) -> String {
        let items = [1, 2];
        serde_json::to_string(&Enveloped { key: "data", items: &items, more: true, paging }).unwrap()
    }

    #[test]
    fn an_envelope_holds_the_items_first_then_the_members_of_its_style() {
        assert_eq!(
            written(Paging::Page { page: 2, per_page: 20 }),
            r#"{"data":[1,2],"has_more":true,"page":2,"per_page":20}"#
        );
        assert_eq!(
            written(Paging::Offset { offset: 40, limit: 20 }),
            r#"{"data":[1,2],"has_more":true,"offset":40,"limit":20}"#
        );
        assert_eq!(
            written(Paging::Cursor(Some("abc".into()))),
            r#"{"data":[1,2],"has_more":true,"next_cursor":"abc"}"#
        );
        assert_eq!(written(Paging::Cursor(None)), r#"{"data":[1,2],"has_more":true,"next_cursor":null}"#);
    }
}
