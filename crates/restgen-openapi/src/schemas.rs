//! Schemas: a record as clients see it, the allow-listed inputs of each write, and list
//! envelopes.

use crate::NO_NUL;
use crate::access::FieldList;
use heck::ToUpperCamelCase;
use restgen_model::bounds;
use restgen_model::bounds::{DATETIME_CHARS, UUID_CHARS};
use restgen_model::model::*;
use restgen_model::query;
use serde_json::{Map, Value, json};

/// The JSON Schema of one field's value.
pub(crate) fn field_schema(service: &Service, f: &Field) -> Value {
    let mut s = match &f.ty.value {
        FieldType::String | FieldType::Text => json!({ "type": "string" }),
        FieldType::Password => json!({ "type": "string", "format": "password" }),
        FieldType::Integer => json!({ "type": "integer", "format": "int64", "minimum": i64::MIN, "maximum": i64::MAX }),
        FieldType::Number => json!({ "type": "number", "format": "double" }),
        FieldType::Decimal => json!({ "type": "string", "format": "decimal", "pattern": "^-?[0-9]+(\\.[0-9]+)?$" }),
        FieldType::Boolean => json!({ "type": "boolean" }),
        FieldType::Uuid => json!({ "type": "string", "format": "uuid" }),
        FieldType::Email => json!({ "type": "string", "format": "email" }),
        FieldType::Url => json!({ "type": "string", "format": "uri" }),
        FieldType::Date => json!({ "type": "string", "format": "date" }),
        FieldType::DateTime => json!({ "type": "string", "format": "date-time" }),
        FieldType::Enum { values } => {
            json!({ "type": "string", "enum": values.iter().map(|v| v.value.as_str()).collect::<Vec<_>>() })
        }
        FieldType::Json => json!({}),
        FieldType::Ref { to } => id_schema(service.resource(&to.value).map_or(IdKind::Uuid, |t| t.id)),
        FieldType::Roles => {
            let roles: Vec<&str> = service.auth.iter().flat_map(|a| a.roles.iter().map(|r| r.value.as_str())).collect();
            json!({ "type": "array", "uniqueItems": true, "maxItems": roles.len(), "items": { "type": "string", "enum": roles } })
        }
    };
    if let Some(v) = &f.min {
        s["minimum"] = number(v.value);
    }
    if let Some(v) = &f.max {
        s["maximum"] = number(v.value);
    }
    if let Some(v) = &f.min_length {
        s["minLength"] = json!(v.value);
    }
    // What the runtime enforces: text bounds, and the longest form of the other strings.
    let longest = match &f.ty.value {
        FieldType::Ref { .. } if s["type"] == "string" => Some(UUID_CHARS as u64),
        ty => bounds::longest_form(ty.kind()).map(|n| n as u64).or_else(|| f.effective_max_length()),
    };
    if let Some(n) = longest {
        s["maxLength"] = json!(n);
    }
    let text = s["type"] == "string" && !matches!(f.ty.value, FieldType::Decimal | FieldType::Uuid);
    match &f.pattern {
        Some(p) => s["pattern"] = json!(format!("^(?:{})$", p.value)),
        // Text is stored on PostgreSQL too, which holds no NUL character: refused on both.
        None if text => s["pattern"] = json!(NO_NUL),
        None => {}
    }
    if let Some(d) = &f.description {
        s["description"] = json!(d);
    }
    if f.nullable.value {
        nullable(&mut s);
    }
    s
}

/// `0` rather than `0.0` for whole bounds, as an integer field's bounds should read.
pub(crate) fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 { json!(v as i64) } else { json!(v) }
}

/// Admits `null` besides the schema's own values.
pub(crate) fn nullable(s: &mut Value) {
    match s.get("type").cloned() {
        Some(Value::String(t)) => {
            s["type"] = json!([t, "null"]);
            if let Some(Value::Array(values)) = s.get_mut("enum") {
                values.push(Value::Null);
            }
        }
        _ => {
            let inner = s.take();
            *s = json!({ "anyOf": [inner, { "type": "null" }] });
        }
    }
}

pub(crate) fn id_schema(kind: IdKind) -> Value {
    match kind {
        IdKind::Uuid => json!({ "type": "string", "format": "uuid", "maxLength": UUID_CHARS }),
        IdKind::Integer => json!({ "type": "integer", "format": "int64" }),
    }
}

/// `Order`, `OrderCreate`, ...
pub(crate) fn schema_name(r: &Resource, suffix: &str) -> String {
    format!("{}{suffix}", r.name.value.to_upper_camel_case())
}

/// The representation: every field but the write-only ones, always present.
pub(crate) fn representation(service: &Service, r: &Resource) -> Value {
    let mut props = Map::new();
    props.insert("id".into(), id_schema(r.id));
    if let Some(owner) = r.owner.as_ref().and_then(|o| service.resource(&o.value)) {
        props.insert("owner_id".into(), id_schema(owner.id));
    }
    let mut some_see = Vec::new();
    for f in r.fields.iter().filter(|f| !f.write_only && f.ty.value != FieldType::Password) {
        let mut s = field_schema(service, f);
        // Stored values may be null where the column is optional.
        if f.optional() && !f.nullable.value {
            nullable(&mut s);
        }
        if let Some(rules) = &f.read {
            crate::access::field_access(service, r, &mut s, (FieldList::Read, rules), "absent for anyone else");
            some_see.push(f.name.value.as_str());
        }
        props.insert(f.name.value.clone(), s);
    }
    if r.timestamps {
        props.insert(
            "created_at".into(),
            json!({ "type": "string", "format": "date-time", "maxLength": DATETIME_CHARS }),
        );
        props.insert(
            "updated_at".into(),
            json!({ "type": "string", "format": "date-time", "maxLength": DATETIME_CHARS }),
        );
    }
    if r.links.value {
        props.insert("_links".into(), links(service, r));
    }
    // A field only some callers may read is absent from the others' representations.
    let required: Vec<&String> = props.keys().filter(|k| !some_see.contains(&k.as_str())).collect();
    let mut s = json!({ "type": "object", "required": required, "properties": props });
    if let Some(d) = &r.description {
        s["description"] = json!(d);
    }
    s
}

/// `_links` (`links: true`): `self`, and where they exist `collection`, one per parent
/// (the list of such records under it), `status`, and one per transition (present only
/// while it is open to the caller, with `method: POST`).
fn links(service: &Service, r: &Resource) -> Value {
    let id = |kind: IdKind| if kind == IdKind::Uuid { 36 } else { 20 };
    // The base path, a version prefix (`/v` and up to ten digits), the longest path to
    // the record or under a parent, and the longest last segment.
    let parents: Vec<&Resource> = r.nested_under.iter().filter_map(|p| service.resource(&p.value)).collect();
    let deepest = parents.iter().map(|p| p.path.value.len() + 1 + id(p.id)).max().unwrap_or(0);
    let segment = r.states.iter().flat_map(|s| &s.transitions).map(|t| t.name.value.len()).max().unwrap_or(0).max(6);
    let max = service.api.base_path.value.len() + 12 + r.path.value.len() + (1 + id(r.id)).max(deepest) + 1 + segment;
    let href = json!({ "type": "string", "format": "uri-reference", "maxLength": max });
    let link = json!({ "type": "object", "required": ["href"], "properties": { "href": href } });
    let action = json!({ "type": "object", "required": ["href", "method"], "properties": {
        "href": href, "method": { "const": "POST" } } });
    let mut props = Map::new();
    props.insert("self".into(), link.clone());
    if r.has(Operation::List) {
        props.insert("collection".into(), link.clone());
        for p in &parents {
            props.insert(p.name.value.clone(), link.clone());
        }
    }
    if let Some(states) = &r.states {
        if r.status_endpoint.value {
            props.insert("status".into(), link.clone());
        }
        for t in &states.transitions {
            props.insert(t.name.value.clone(), action.clone());
        }
    }
    json!({
        "type": "object",
        "description": "Links from this record (HAL): itself, the lists it is in, its status, and each transition open now to the caller, which is absent while it is not.",
        "required": ["self"],
        "properties": props,
    })
}

/// The allow-listed input of one write operation.
pub(crate) fn input(service: &Service, r: &Resource, op: WriteOp) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for f in r.fields.iter().filter(|f| r.settable_in(f, op)) {
        let mut s = field_schema(service, f);
        if let Some(rules) = &f.write {
            let refused = if r.unknown_fields == UnknownFields::Reject { "refused (400)" } else { "ignored" };
            crate::access::field_access(
                service,
                r,
                &mut s,
                (FieldList::Write, rules),
                &format!("{refused} from anyone else"),
            );
        }
        props.insert(f.name.value.clone(), s);
        // Required of the callers who may set it; the runtime says so to them.
        let must = match op {
            WriteOp::Create => f.required.value && f.default.is_none() && f.write.is_none(),
            WriteOp::Replace => f.required.value && f.write.is_none(),
            WriteOp::Patch => false,
        };
        if must {
            required.push(f.name.value.clone());
        }
    }
    let mut s = json!({
        "type": "object",
        "additionalProperties": r.unknown_fields == UnknownFields::Ignore,
        "properties": props,
    });
    if !required.is_empty() {
        s["required"] = json!(required);
    }
    s
}

/// The collection's answer: the envelope around the representations.
pub(crate) fn list_schema(service: &Service, r: &Resource, item: Value) -> Value {
    let items = json!({ "type": "array", "maxItems": r.pagination.max_size.value, "items": item });
    let key = match &r.envelope.value {
        Envelope::Bare => return items,
        Envelope::Key(k) => k.clone(),
    };
    let mut props = Map::new();
    props.insert(key.clone(), items);
    props.insert("has_more".into(), json!({ "type": "boolean" }));
    match r.pagination.style {
        PageStyle::Page => {
            props.insert(query::PAGE.into(), json!({ "type": "integer", "format": "int64", "minimum": 1 }));
            props.insert(query::PER_PAGE.into(), json!({ "type": "integer", "format": "int32", "minimum": 1 }));
        }
        PageStyle::Offset => {
            props.insert(query::OFFSET.into(), json!({ "type": "integer", "format": "int64", "minimum": 0 }));
            props.insert(query::LIMIT.into(), json!({ "type": "integer", "format": "int32", "minimum": 1 }));
        }
        PageStyle::Cursor => {
            props.insert(
                "next_cursor".into(),
                json!({ "type": ["string", "null"], "maxLength": bounds::cursor_max(service, r) }),
            );
        }
    }
    let required: Vec<&String> = props.keys().collect();
    json!({ "type": "object", "required": required, "properties": props })
}

/// A path parameter holding an id of `kind`.
pub(crate) fn path_param(name: &str, kind: IdKind) -> Value {
    let whose = name.strip_suffix("_id").unwrap_or(name).replace('_', " ");
    json!({ "name": name, "in": "path", "required": true, "description": format!("The {whose}'s id."), "schema": id_schema(kind) })
}
