//! Bounds the runtime keeps and the OpenAPI document states, defined once for both: the
//! limits of problem answers, API keys and request headers, the longest text forms of
//! values, and the lengths of what a list request writes (the cursor it issues, and so the
//! longest it accepts, and the `Link` to the next page), computed from the model; and the
//! probes a load balancer asks.

use crate::model::{Field, FieldKind, FieldType, IdKind, Resource, Service};

/// The probes, at the origin (never under the base path or a version): liveness, which
/// asks nothing of the database, and readiness, which does.
pub const LIVENESS_PATH: &str = "/healthz";
pub const READINESS_PATH: &str = "/readyz";
/// Where a service serves its OpenAPI document, and the file it is generated into (without
/// the `/`): the newest version's (`None`) or version `n`'s, in OpenAPI 3.1 or, for the
/// tools that read no other, 3.0.3: `/openapi.json`, `/openapi.v2.json`,
/// `/openapi.3.0.json`, `/openapi.v2.3.0.json`.
pub fn document_path(version: Option<u32>, openapi_3_0: bool) -> String {
    let version = version.map(|n| format!(".v{n}")).unwrap_or_default();
    let dialect = if openapi_3_0 { ".3.0" } else { "" };
    format!("/openapi{version}{dialect}.json")
}

/// The reference page a person reads in a browser (`api.docs`), at the origin beside
/// `/openapi.json`: the newest version's here, each version's at `/docs/v{n}`.
pub const DOCS_PATH: &str = "/docs";
/// How long readiness waits for the database before it answers 503.
pub const READY_WITHIN_SECONDS: u64 = 2;

/// The most `errors` one problem answer lists (its `detail` counts them all).
pub const MAX_FIELD_ERRORS: usize = 50;
/// The longest problem `detail`, in characters: it can quote the request, so it is cut.
pub const MAX_DETAIL: usize = 1024;
/// The longest `errors[].field` and `errors[].message`, in characters.
pub const MAX_FIELD: usize = 256;
pub const MAX_MESSAGE: usize = 512;
/// Where the metrics listener (`<SERVICE>_METRICS_BIND`) serves Prometheus its scrape.
pub const METRICS_PATH: &str = "/metrics";
/// The longest request id (`X-Request-Id`, a problem's `request_id`) a service takes from
/// a trusted proxy, in bytes: enough for a UUID, a ULID or a load balancer's trace id with
/// its prefixes, and no more text in every log line than that.
pub const MAX_REQUEST_ID: usize = 200;
/// What a request id may hold: printable ASCII but space, `"` and `\`, so that it is one
/// token in a text log line (the runtime takes a proxy's id only when it matches).
pub const REQUEST_ID_PATTERN: &str = r#"^[!#-Z\[\]^-~]+$"#;
/// API keys one account may hold (a 409 beyond), and the longest name of one.
pub const MAX_API_KEYS: u32 = 100;
pub const MAX_API_KEY_NAME: usize = 100;
/// The longest `If-None-Match` taken, in characters (a 400 beyond).
pub const MAX_IF_NONE_MATCH: usize = 1024;
/// The longest `If-Match` taken, in characters (a 400 beyond).
pub const MAX_IF_MATCH: usize = 1024;
/// The longest `Idempotency-Key`, in characters.
pub const MAX_IDEMPOTENCY_KEY: usize = 255;
/// The longest `Location` a redirect from a former path writes: it keeps the request's
/// path and query, so a request that would exceed it is a 414.
pub const MAX_LOCATION: usize = 8192;
/// The longest text forms of values that are not free text: a UUID, a date, a datetime
/// and a decimal, in characters.
pub const UUID_CHARS: usize = 36;
pub const DATE_CHARS: usize = 10;
pub const DATETIME_CHARS: usize = 64;
pub const DECIMAL_CHARS: usize = 64;

/// The longest text form of a value of `kind` that is not free text (a ref's is its
/// target's id: [`UUID_CHARS`] for UUIDs).
pub fn longest_form(kind: FieldKind) -> Option<usize> {
    match kind {
        FieldKind::Uuid => Some(UUID_CHARS),
        FieldKind::Date => Some(DATE_CHARS),
        FieldKind::DateTime => Some(DATETIME_CHARS),
        FieldKind::Decimal => Some(DECIMAL_CHARS),
        _ => None,
    }
}

/// Characters of one JSON value of `field` as a record holds it, at most: text escaped
/// to `\uXXXX` (6 per character) at worst.
fn json_value(service: &Service, field: &Field) -> usize {
    let id = |kind: IdKind| if kind == IdKind::Uuid { 38 } else { 20 };
    let text = |chars: u64| 2 + 6 * chars as usize;
    match &field.ty.value {
        FieldType::Integer => 20,
        FieldType::Number => 32,
        FieldType::Boolean => 5,
        FieldType::Uuid => 38,
        FieldType::Date => 12,
        FieldType::DateTime | FieldType::Decimal => text(64),
        FieldType::Enum { values } => text(values.iter().map(|v| v.value.chars().count() as u64).max().unwrap_or(0)),
        FieldType::Ref { to } => service.resource(&to.value).map_or(38, |r| id(r.id)),
        _ => text(field.effective_max_length().unwrap_or(65_535)),
    }
}

/// The sort keys a list takes: `id`, `created_at` with timestamps, and fields marked `sort`.
fn sortable(r: &Resource) -> Vec<(String, Option<&Field>)> {
    let mut keys = vec![("id".to_owned(), None)];
    if r.timestamps {
        keys.push(("created_at".to_owned(), None));
    }
    keys.extend(r.fields.iter().filter(|f| f.sort.value).map(|f| (f.name.value.clone(), Some(f))));
    keys
}

/// The longest canonical `sort` value: every key once, the longer direction, commas.
fn sort_param(r: &Resource) -> usize {
    sortable(r).iter().map(|(name, _)| name.len() + "_desc".len() + 1).sum()
}

/// The longest cursor: base64url (unpadded) of `{"s":<sort>,"p":<parent>,"v":[<values>]}`
/// with every sortable column's value (a null is shorter than any bound), and for a
/// resource listed under parents the longest `"<parent>/<id>"` binding it to one.
pub fn cursor_max(service: &Service, r: &Resource) -> u32 {
    let id = if r.id == IdKind::Uuid { 38 } else { 20 };
    let within = r
        .nested_under
        .iter()
        .filter_map(|p| service.resource(&p.value))
        .map(|p| r#""p":"/","#.len() + p.name.value.len() + if p.id == IdKind::Uuid { 36 } else { 20 })
        .max()
        .unwrap_or(0);
    let values: usize = sortable(r)
        .iter()
        .map(|(name, field)| match field {
            Some(f) => json_value(service, f) + 1,
            None if name == "id" => id + 1,
            None => 2 + 64 + 1,
        })
        .sum();
    let json = 16 + 6 * sort_param(r) + within + values;
    u32::try_from(json.div_ceil(3) * 4).unwrap_or(u32::MAX)
}

/// Characters of a filter value as the runtime writes it back (canonical, within the
/// field's rules).
fn filter_chars(service: &Service, field: &Field) -> usize {
    match &field.ty.value {
        FieldType::Integer => 20,
        FieldType::Boolean => 5,
        FieldType::Uuid => 36,
        FieldType::Date => 10,
        FieldType::DateTime => 64,
        FieldType::Enum { values } => values.iter().map(|v| v.value.chars().count()).max().unwrap_or(0),
        FieldType::Ref { to } => service.resource(&to.value).map_or(36, |r| if r.id == IdKind::Uuid { 36 } else { 20 }),
        _ => field.effective_max_length().unwrap_or(65_535) as usize,
    }
}

/// The longest CSV answer (`text/csv`) of `r` holding `rows` records: the header row, and
/// each row with every visible column at its longest, every character of text a doubled
/// quote, the cell quoted and prefixed with `'` at worst.
pub fn csv_max(service: &Service, r: &Resource, rows: u32) -> usize {
    let id = |kind: IdKind| if kind == IdKind::Uuid { UUID_CHARS } else { 20 };
    let cell = |chars: usize| 2 * chars + 3;
    let mut header = "id".len();
    let mut row = id(r.id);
    if let Some(owner) = r.owner.as_ref().and_then(|o| service.resource(&o.value)) {
        header += ",owner_id".len();
        row += 1 + id(owner.id);
    }
    for f in r.fields.iter().filter(|f| !f.write_only) {
        header += 1 + cell(f.name.value.len());
        let chars = match &f.ty.value {
            FieldType::Number => 32,
            FieldType::Decimal => DECIMAL_CHARS,
            FieldType::Json | FieldType::Roles => json_value(service, f),
            _ => filter_chars(service, f),
        };
        row += 1 + cell(chars);
    }
    if r.timestamps {
        header += ",created_at,updated_at".len();
        row += 2 * (1 + DATETIME_CHARS);
    }
    header + 2 + rows as usize * (row + 2)
}

/// Characters of one query value once form-encoded: up to 12 per character (four UTF-8
/// bytes, each `%XX`).
fn encoded(chars: usize) -> usize {
    12 * chars
}

/// The longest `Link: <path?query>; rel="next"` of a list whose request path is at most
/// `path_len` long: every filter (each at its bound), the sort, the size, and the style's
/// paging parameter, canonical as the runtime writes them.
pub fn link_max(service: &Service, r: &Resource, path_len: usize) -> usize {
    let filters: usize = r
        .fields
        .iter()
        .filter(|f| f.filter.value)
        .map(|f| f.name.value.len() + 2 + encoded(filter_chars(service, f)))
        .sum();
    let sort = "sort=".len() + 1 + encoded(sort_param(r));
    let size = "per_page=".len() + 1 + 10;
    let paging = "cursor=".len() + (cursor_max(service, r) as usize).max(20);
    "<?>; rel=\"next\"".len() + path_len + filters + sort + size + paging
}

/// The most webhook subscriptions one account may have (409 beyond).
pub const MAX_WEBHOOKS: u32 = 100;

/// The longest URL a webhook subscription takes.
pub const MAX_WEBHOOK_URL: usize = 2048;

/// The longest `description` of a webhook subscription, in characters.
pub const MAX_WEBHOOK_DESCRIPTION: usize = 500;

/// The most deliveries `GET /webhooks/{id}/deliveries` lists: the newest.
pub const MAX_DELIVERIES: u32 = 100;

/// The longest `last_error` a delivery keeps, in characters.
pub const MAX_DELIVERY_ERROR: usize = 512;
