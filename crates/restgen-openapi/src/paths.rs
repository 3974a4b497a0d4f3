//! Paths and operations: the probes `/healthz` and `/readyz`, sign-in and API keys, and
//! each resource's collection, item and nested lists with their parameters.

use crate::access::describe;
use crate::headers::{conditional, idempotency_key, if_match, write_errors};
use crate::problems::responses;
use crate::schemas::{field_schema, id_schema, input, list_schema, path_param, representation, schema_name};
use crate::security::{security, signed_in, token_max};
use crate::{NO_NUL, json_body, json_response, schema_ref};
use heck::ToUpperCamelCase;
use restgen_model::Located;
use restgen_model::bounds::{self, MAX_LOCATION};
use restgen_model::bounds::{DATETIME_CHARS, MAX_API_KEY_NAME, MAX_API_KEYS};
use restgen_model::model::*;
use restgen_model::query as names;
use restgen_model::words::a;
use restgen_wire::http;
use serde_json::{Map, Value, json};

/// The probes' paths: at the origin, never versioned, authenticated or rate limited.
pub(crate) const PROBES: [&str; 2] = [bounds::LIVENESS_PATH, bounds::READINESS_PATH];

/// The two probes a load balancer or orchestrator asks: liveness (`/healthz`, the process
/// serves) and readiness (`/readyz`, its database answers too).
pub(crate) fn probes() -> [(&'static str, Value); 2] {
    let answer = |status: &str| {
        json!({ (http::media::JSON): { "schema": {
            "type": "object", "required": ["status"], "properties": { "status": { "const": status } },
        } } })
    };
    let healthz = json!({
        "get": {
            "operationId": "healthz",
            "summary": "Whether the service process answers (liveness)",
            "description": format!("Always 200 while the process serves requests; the database is not asked, so an instance is not restarted because the database is down (see `{}`). Needs no credentials and ignores any; never rate limited, so a probe does not depend on other traffic.", bounds::READINESS_PATH),
            "tags": ["service"],
            "security": [],
            "responses": {
                "200": { "description": "The process serves requests.", "content": answer("ok") },
            },
        },
    });
    let readyz = json!({
        "get": {
            "operationId": "readyz",
            "summary": "Whether the service can serve requests: its database answers (readiness)",
            "description": format!("200 while the database answers within {} seconds, 503 otherwise: a load balancer sends an instance that answers 503 nothing until it answers 200 again. Needs no credentials and ignores any; never rate limited.", bounds::READY_WITHIN_SECONDS),
            "tags": ["service"],
            "security": [],
            "responses": {
                "200": { "description": "The service and its database answer.", "content": answer("ready") },
                "503": { "$ref": "#/components/responses/Error503" },
            },
        },
    });
    [(PROBES[0], healthz), (PROBES[1], readyz)]
}

pub(crate) fn auth_paths(
    service: &Service,
    auth: &Auth,
    base: &str,
    paths: &mut Map<String, Value>,
    schemas: &mut Map<String, Value>,
) {
    let Some(principal) = auth.principal.as_ref().and_then(|p| service.resource(&p.value)) else { return };
    if auth.has_scheme(Scheme::Bearer) {
        let identifier = auth.login.identifier.as_ref().map_or("identifier", |i| i.value.as_str());
        let password =
            principal.fields.iter().find(|f| f.ty.value == FieldType::Password).map_or("password", |f| &f.name.value);
        // As long as the account's own fields may be (the runtime refuses longer).
        let max_of = |name: &str| principal.field(name).and_then(|f| f.effective_max_length()).unwrap_or(255);
        schemas.insert(
            "Login".into(),
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": [identifier, "password"],
                "properties": {
                    identifier: { "type": "string", "maxLength": max_of(identifier) },
                    "password": { "type": "string", "format": "password", "maxLength": max_of(password) },
                },
            }),
        );
        schemas.insert(
            "Token".into(),
            json!({
                "type": "object",
                "required": ["access_token", "token_type", "expires_in"],
                "properties": {
                    "access_token": { "type": "string", "maxLength": token_max(auth) },
                    "token_type": { "const": "Bearer" },
                    "expires_in": {
                        "type": "integer", "format": "int64", "minimum": 1, "maximum": i64::MAX,
                        "description": "Seconds until the token expires.",
                    },
                },
            }),
        );
        let answers =
            responses("200", json_response("A bearer token.", schema_ref("Token")), &[400, 401, 413, 415, 500, 503]);
        paths.insert(
            format!("{base}{}", auth.login.path.value),
            json!({ "post": {
                "operationId": "login",
                "summary": format!("Sign in as {} and get a bearer token", a(&principal.name.value)),
                "description": "Needs no credentials. A wrong identifier and a wrong password get the same 401.",
                "tags": ["auth"],
                "security": [],
                "requestBody": json_body(schema_ref("Login")),
                "responses": answers,
            } }),
        );
    }
    if auth.has_scheme(Scheme::ApiKey) {
        let key_props = json!({
            "id": { "type": "string", "pattern": "^[0-9a-f]{32}$", "maxLength": 32 },
            "name": { "type": ["string", "null"], "maxLength": MAX_API_KEY_NAME, "pattern": NO_NUL },
            "prefix": { "type": "string", "description": "The first characters of the key.", "pattern": "^rk_[0-9a-f]{8}$", "maxLength": 11 },
            "created_at": { "type": "string", "format": "date-time", "maxLength": DATETIME_CHARS },
        });
        schemas.insert(
            "ApiKey".into(),
            json!({ "type": "object", "required": ["id", "name", "prefix", "created_at"], "properties": key_props }),
        );
        let mut created_props = key_props.clone();
        created_props["key"] = json!({
            "type": "string", "description": "The key; shown in this answer only.",
            "pattern": "^rk_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$", "maxLength": 79,
        });
        schemas.insert(
            "ApiKeyCreated".into(),
            json!({ "type": "object", "required": ["id", "name", "prefix", "created_at", "key"], "properties": created_props }),
        );
        let security = Value::Array(signed_in(service));
        let create_responses = responses(
            "201",
            json_response("The new key.", schema_ref("ApiKeyCreated")),
            &[400, 401, 409, 413, 415, 500],
        );
        let list_responses = responses(
            "200",
            json_response(
                "The caller's keys, newest first.",
                json!({ "type": "object", "required": ["data"], "properties": {
                    "data": { "type": "array", "maxItems": MAX_API_KEYS, "items": schema_ref("ApiKey") } } }),
            ),
            &[401, 500],
        );
        paths.insert(
            format!("{base}/auth/api-keys"),
            json!({
                "post": {
                    "operationId": "createApiKey",
                    "summary": "Create an API key for the caller",
                    "description": format!("Any signed-in caller, up to {MAX_API_KEYS} keys per account (409 beyond). The key is in this answer only; it is stored as a hash."),
                    "tags": ["auth"],
                    "security": security,
                    "requestBody": json_body(json!({
                        "type": "object", "additionalProperties": false,
                        "properties": { "name": { "type": ["string", "null"], "maxLength": MAX_API_KEY_NAME, "pattern": NO_NUL } },
                    })),
                    "responses": create_responses,
                },
                "get": {
                    "operationId": "listApiKeys",
                    "summary": "The caller's API keys",
                    "description": "Any signed-in caller; never shows the keys themselves.",
                    "tags": ["auth"],
                    "security": security,
                    "responses": list_responses,
                },
            }),
        );
        let revoke_responses = responses("204", json!({ "description": "Revoked." }), &[401, 404, 500]);
        paths.insert(
            format!("{base}/auth/api-keys/{{key_id}}"),
            json!({ "delete": {
                "operationId": "revokeApiKey",
                "summary": "Revoke one of the caller's API keys",
                "description": "The key's owner, or an admin; another caller's key answers 404.",
                "tags": ["auth"],
                "security": security,
                "parameters": [{ "name": "key_id", "in": "path", "required": true, "description": "The key's id.",
                    "schema": { "type": "string", "pattern": "^[0-9a-f]{32}$", "maxLength": 32 } }],
                "responses": revoke_responses,
            } }),
        );
    }
}

pub(crate) fn query(name: &str, description: &str, schema: Value) -> Value {
    json!({ "name": name, "in": "query", "required": false, "description": description, "schema": schema })
}

/// Filters, sort and paging parameters of a list.
pub(crate) fn list_parameters(service: &Service, r: &Resource) -> Vec<Value> {
    let mut out = filter_parameters(service, r);
    let mut sorts: Vec<String> = Vec::new();
    let sortable = ["id".to_owned()]
        .into_iter()
        .chain(r.timestamps.then(|| "created_at".to_owned()))
        .chain(r.fields.iter().filter(|f| f.sort.value).map(|f| f.name.value.clone()));
    for name in sortable {
        sorts.push(format!("{name}_asc"));
        sorts.push(format!("{name}_desc"));
    }
    let mut sort_text = "Sort keys, most significant first, comma separated (the parameter repeated, `sort=a&sort=b`, is the same list); ties are broken by id. Leave it out for the default order (an empty `sort=` is a 400).".to_owned();
    for f in r.fields.iter().filter(|f| f.sort.value && f.read.is_some()) {
        sort_text.push_str(&format!(" Sorting by `{}`: {}", f.name.value, hidden_query("only", &f.name.value)));
    }
    let mut sort = query(
        names::SORT,
        &sort_text,
        json!({ "type": "array", "minItems": 1, "maxItems": sorts.len() / 2, "items": { "type": "string", "enum": sorts } }),
    );
    sort["style"] = json!("form");
    sort["explode"] = json!(false);
    out.push(sort);
    // Sizes above the maximum are clamped, not refused: the schema says what is served.
    let size = json!({ "type": "integer", "format": "int64", "minimum": 1, "maximum": i64::MAX,
        "default": r.pagination.default_size.value });
    match r.pagination.style {
        PageStyle::Page => {
            out.push(query(
                names::PAGE,
                "The page, from 1.",
                json!({ "type": "integer", "format": "int64", "minimum": 1, "maximum": i64::MAX, "default": 1 }),
            ));
            out.push(query(names::PER_PAGE, "Records per page; larger values are clamped.", size));
        }
        PageStyle::Offset => {
            out.push(query(names::LIMIT, "Records per page; larger values are clamped.", size));
            out.push(query(
                names::OFFSET,
                "Records to skip.",
                json!({ "type": "integer", "format": "int64", "minimum": 0, "maximum": i64::MAX, "default": 0 }),
            ));
        }
        PageStyle::Cursor => {
            out.push(query(names::LIMIT, "Records per page; larger values are clamped.", size));
            out.push(query(
                names::CURSOR,
                "The `next_cursor` of the previous page of this very list (the same parent, the same `sort`); not with `starting_after`. Empty means the first page.",
                json!({ "type": "string", "maxLength": bounds::cursor_max(service, r) }),
            ));
            out.push(query(
                names::STARTING_AFTER,
                "The id of the last record seen, one of this list's; not with `cursor`.",
                id_schema(r.id),
            ));
        }
    }
    out
}

/// The filter parameters of a list (and of its feed): one per `filter` field.
pub(crate) fn filter_parameters(service: &Service, r: &Resource) -> Vec<Value> {
    let mut out = Vec::new();
    for f in r.fields.iter().filter(|f| f.filter.value) {
        // A query parameter holds a value, never null.
        let mut value_only = f.clone();
        value_only.nullable.value = false;
        let mut s = field_schema(service, &value_only);
        if let Some(o) = s.as_object_mut() {
            o.remove("description");
        }
        let mut text = format!("Only the {} whose `{}` equals this.", r.plural_noun(), f.name.value);
        if f.read.is_some() {
            text.push_str(&format!(" {}", hidden_query("Only", &f.name.value)));
        }
        out.push(query(&f.name.value, &text, s));
    }
    out
}

/// Adds the paths and schemas of `r`; returns the paths added.
pub(crate) fn resource_paths(
    service: &Service,
    r: &Resource,
    base: &str,
    paths: &mut Map<String, Value>,
    schemas: &mut Map<String, Value>,
) -> Vec<String> {
    let mut added = Vec::new();
    let name = &r.name.value;
    let (noun, plural) = (r.noun(), r.plural_noun());
    let model = schema_name(r, "");
    schemas.insert(model.clone(), representation(service, r));
    let tags = json!([name]);
    let link = |path_len: usize| {
        json!({ "Link": { "description": "`<...>; rel=\"next\"` while more records follow.",
            "schema": { "type": "string", "maxLength": bounds::link_max(service, r, path_len) } } })
    };

    let mut collection = Map::new();
    if r.has(Operation::List) {
        let mut ok = json_response(&format!("A page of {plural}."), list_schema(service, r, schema_ref(&model)));
        ok["headers"] = link(base.len() + r.path.value.len());
        let mut answers = responses("200", ok, &[400, 401, 403, 500]);
        let mut parameters = list_parameters(service, r);
        conditional(service, r, r.pagination.max_size.value, &mut parameters, &mut answers);
        collection.insert(
            "get".into(),
            json!({
                "operationId": format!("list{model}"),
                "summary": format!("List {plural}"),
                "tags": tags,
                "security": security(service, &r.access.read),
                "parameters": parameters,
                "responses": answers,
            }),
        );
    }
    if r.has(Operation::Create) {
        // `{base}{path}/{id}`: a UUID has 36 characters, an i64 at most 19 digits.
        let location_max = base.len() + r.path.value.len() + 1 + if r.id == IdKind::Uuid { 36 } else { 19 };
        let input_name = schema_name(r, "Create");
        schemas.insert(input_name.clone(), input(service, r, WriteOp::Create));
        let mut created = json_response(&format!("The new {name}."), schema_ref(&model));
        created["headers"] = json!({
            "Location": { "description": "The new record's URL.", "required": true, "schema": { "type": "string", "maxLength": location_max } },
            "ETag": { "$ref": "#/components/headers/ETag" },
            (http::IDEMPOTENT_REPLAYED.name): {
                "description": "`true` when this is the answer kept for an earlier request with the same `Idempotency-Key`.",
                "schema": { "type": "string", "enum": ["true"], "maxLength": 4 },
            },
        });
        let answers = responses("201", created, &[400, 401, 403, 409, 413, 415, 422, 500, 502, 504]);
        collection.insert(
            "post".into(),
            json!({
                "operationId": format!("create{model}"),
                "summary": format!("Create {}", a(&noun)),
                "tags": tags,
                "security": security(service, &r.access.create),
                "parameters": [idempotency_key()],
                "requestBody": json_body(schema_ref(&input_name)),
                "responses": answers,
            }),
        );
    }

    let id_param = r.id_param();
    let mut item = Map::new();
    let item_errors: &[u16] = &[400, 401, 403, 404, 500];
    if r.has(Operation::Get) {
        let mut answers = responses("200", json_response(&format!("The {name}."), schema_ref(&model)), item_errors);
        let mut parameters = Vec::new();
        conditional(service, r, 1, &mut parameters, &mut answers);
        item.insert(
            "get".into(),
            json!({
                "operationId": format!("get{model}"),
                "summary": format!("Get {}", a(&noun)),
                "tags": tags,
                "security": security(service, &r.access.read),
                "parameters": parameters,
                "responses": answers,
            }),
        );
    }
    for (op, method, verb) in [(WriteOp::Replace, "put", "replace"), (WriteOp::Patch, "patch", "update")] {
        if !r.has(op.operation()) {
            continue;
        }
        let suffix = if op == WriteOp::Replace { "Replace" } else { "Patch" };
        let input_name = schema_name(r, suffix);
        schemas.insert(input_name.clone(), input(service, r, op));
        let mut stored = json_response(&format!("The {name} as stored."), schema_ref(&model));
        stored["headers"] = json!({ "ETag": { "$ref": "#/components/headers/ETag" } });
        let answers =
            responses("200", stored, &write_errors(r, &[400, 401, 403, 404, 409, 413, 415, 422, 500, 502, 504]));
        let mut body = json_body(schema_ref(&input_name));
        if op == WriteOp::Patch {
            // JSON Merge Patch (RFC 7396) under its own media type. The service takes it as
            // plain JSON too, but a body listed under two media types makes generators
            // (openapi-python-client) treat it as optional: docs/openapi-lint.md.
            body["content"] = json!({ (http::media::MERGE_PATCH): { "schema": schema_ref(&input_name) } });
        }
        item.insert(
            method.into(),
            json!({
                "operationId": format!("{verb}{model}"),
                "summary": format!("{} {}", if op == WriteOp::Replace { "Replace" } else { "Update part of" }, a(&noun)),
                "tags": tags,
                "security": security(service, &r.access.write),
                "parameters": [if_match(r)],
                "requestBody": body,
                "responses": answers,
            }),
        );
    }
    if r.has(Operation::Delete) {
        let answers = responses(
            "204",
            json!({ "description": "Deleted." }),
            &write_errors(r, &[400, 401, 403, 404, 409, 422, 500, 502, 504]),
        );
        item.insert(
            "delete".into(),
            json!({
                "operationId": format!("delete{model}"),
                "summary": format!("Delete {}", a(&noun)),
                "tags": tags,
                "security": security(service, &r.access.delete),
                "parameters": [if_match(r)],
                "responses": answers,
            }),
        );
    }
    describe(service, r, &mut collection, false);
    describe(service, r, &mut item, true);
    if !collection.is_empty() {
        let path = format!("{base}{}", r.path.value);
        added.push(path.clone());
        paths.insert(path, Value::Object(collection));
    }
    let item_path = format!("{base}{}/{{{id_param}}}", r.path.value);
    if !item.is_empty() {
        item.insert("parameters".into(), json!([path_param(&id_param, r.id)]));
        added.push(item_path.clone());
        paths.insert(item_path.clone(), Value::Object(item));
    }
    added.extend(crate::lifecycle::lifecycle_paths(service, r, &item_path, paths, schemas));

    if r.has(Operation::List) {
        for parent in r.nested_under.iter().filter_map(|p| service.resource(&p.value)) {
            let parent_param = parent.id_param();
            let mut parameters = vec![path_param(&parent_param, parent.id)];
            parameters.extend(list_parameters(service, r));
            let mut ok = json_response(
                &format!("A page of the {}'s {plural}.", parent.noun()),
                list_schema(service, r, schema_ref(&model)),
            );
            let parent_id = if parent.id == IdKind::Uuid { 36 } else { 20 };
            ok["headers"] = link(base.len() + parent.path.value.len() + 1 + parent_id + r.path.value.len());
            let mut answers = responses("200", ok, &[400, 401, 403, 404, 500]);
            conditional(service, r, r.pagination.max_size.value, &mut parameters, &mut answers);
            let mut nested = Map::new();
            nested.insert(
                "get".into(),
                json!({
                    "operationId": format!("list{model}Of{}", schema_name(parent, "")),
                    "summary": format!("List the {plural} of {}", a(&parent.noun())),
                    "tags": tags,
                    "security": security(service, &r.access.read),
                    "parameters": parameters,
                    "responses": answers,
                }),
            );
            describe(service, r, &mut nested, false);
            // The parent is held to its own rules first, as reading it would be (where
            // anybody may read it, that refuses nobody).
            let open = service.auth.is_none() || parent.access.read.iter().any(|r| r.value == AccessRule::Anyone);
            if let (false, Some(text)) = (open, nested["get"]["description"].as_str()) {
                let parent = parent.noun();
                let text = format!(
                    "{text} The {plural} of {} the caller may not read answer as reading that {parent} would.",
                    a(&parent)
                );
                nested["get"]["description"] = json!(text);
            }
            let path = format!("{base}{}/{{{parent_param}}}{}", parent.path.value, r.path.value);
            added.push(path.clone());
            paths.insert(path, Value::Object(nested));
        }
    }
    for former in &r.former_paths {
        added.extend(former_paths(service, r, base, &former.value, &model, &tags, paths));
    }
    added
}

/// A former collection path: every operation the current paths have, deprecated, answering
/// 301 (GET) or 308 (the others, so the method and body survive) with `Location` at the
/// same place under the current path, the query kept.
fn former_paths(
    service: &Service,
    r: &Resource,
    base: &str,
    former: &str,
    model: &str,
    tags: &Value,
    paths: &mut Map<String, Value>,
) -> Vec<String> {
    let from =
        former.trim_start_matches('/').split(['/', '-', '_']).map(|w| w.to_upper_camel_case()).collect::<String>();
    let current = format!("{base}{}", r.path.value);
    let id_param = r.id_param();
    // The longest Location: the current path, an id, and a query as long as a request may be.
    let moved = |status: &str, errors: &[u16]| {
        let (code, why) = if status == "301" {
            ("301", "Moved permanently: the same request, at `Location`.")
        } else {
            ("308", "Moved permanently: repeat the request, with the same method and body, at `Location`.")
        };
        let answer = json!({
            "description": why,
            "headers": { "Location": {
                "description": format!("The same place under `{current}`, the query kept."),
                "required": true,
                "schema": { "type": "string", "format": "uri-reference", "maxLength": MAX_LOCATION },
            } },
        });
        responses(code, answer, errors)
    };
    // The caller is held to the operation's rules before being sent on (401, 403).
    let operation = |verb: &str, status: &str, rules: &[Located<AccessRule>], errors: &[u16]| {
        json!({
            "operationId": format!("{verb}{model}From{from}"),
            "summary": format!("Moved to {current}"),
            "description": format!("`{base}{former}` is a former path of `{current}`; every request under it is redirected there."),
            "deprecated": true,
            "tags": tags,
            "security": security(service, rules),
            "responses": moved(status, errors),
        })
    };
    let mut out = Vec::new();
    let mut collection = Map::new();
    for (method, op, verb, status, rules) in [
        ("get", Operation::List, "list", "301", &r.access.read),
        ("post", Operation::Create, "create", "308", &r.access.create),
    ] {
        if r.has(op) {
            collection.insert(method.into(), operation(verb, status, rules, &[401, 403, 414, 500]));
        }
    }
    let mut item = Map::new();
    for (method, op, verb, status, rules) in [
        ("get", Operation::Get, "get", "301", &r.access.read),
        ("put", Operation::Replace, "replace", "308", &r.access.write),
        ("patch", Operation::Patch, "update", "308", &r.access.write),
        ("delete", Operation::Delete, "delete", "308", &r.access.delete),
    ] {
        if r.has(op) {
            // An id that cannot exist is not sent on: 404, as at the current path.
            item.insert(method.into(), operation(verb, status, rules, &[401, 403, 404, 414, 500]));
        }
    }
    if !collection.is_empty() {
        let path = format!("{base}{former}");
        out.push(path.clone());
        paths.insert(path, Value::Object(collection));
    }
    if !item.is_empty() {
        item.insert("parameters".into(), json!([path_param(&id_param, r.id)]));
        let path = format!("{base}{former}/{{{id_param}}}");
        out.push(path.clone());
        paths.insert(path, Value::Object(item));
    }
    out
}

/// What a filter or sort on a field with `read` says: it is taken only from callers who
/// see the field on every record the list could show them.
fn hidden_query(lead: &str, field: &str) -> String {
    format!(
        "{lead} for callers who see `{field}` on every record of the list (its `read` admits them for all, or they list only their own): for anyone else it is a 400, as for a field that does not exist."
    )
}
