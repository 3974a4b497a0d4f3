//! `openapi.json`: the OpenAPI 3.1 document of the service, from the same model the code
//! comes from: every path and operation the service serves, the allow-listed request
//! shapes per operation, the response shapes with their envelopes, the problem+json
//! errors, the headers, and the security schemes.

mod rate;

use crate::bounds::{
    DATETIME_CHARS, MAX_API_KEY_NAME, MAX_API_KEYS, MAX_DETAIL, MAX_FIELD, MAX_FIELD_ERRORS, MAX_IDEMPOTENCY_KEY,
    MAX_IF_NONE_MATCH, MAX_MESSAGE, UUID_CHARS,
};
use crate::model::*;
use heck::ToUpperCamelCase;
use serde_json::{Map, Value, json};

/// The document as pretty JSON text, ending in a newline.
pub fn render(service: &Service) -> String {
    let mut text = serde_json::to_string_pretty(&document(service)).unwrap_or_default();
    text.push('\n');
    text
}

pub fn document(service: &Service) -> Value {
    let base = service.api.base_path.value.as_str();
    let mut paths = Map::new();
    let mut schemas = Map::new();
    schemas.insert("Problem".into(), problem_schema());
    paths.insert("/healthz".into(), healthz());
    if let Some(auth) = &service.auth {
        auth_paths(service, auth, base, &mut paths, &mut schemas);
    }
    let per_resource: Vec<(String, Vec<String>)> = service
        .resources
        .iter()
        .map(|r| (r.name.value.clone(), resource_paths(service, r, base, &mut paths, &mut schemas)))
        .collect();
    let limited = rate::limited_paths(service, &per_resource, &paths);
    let version = service.api.versions.last().map_or_else(|| "1".to_owned(), |v| v.number.value.to_string());
    let mut info = json!({
        "title": service.title.clone().unwrap_or_else(|| service.name.value.clone()),
        "version": version,
    });
    if let Some(d) = &service.description {
        info["description"] = json!(d);
    }
    let mut tags = vec![json!({ "name": "service", "description": "The service itself." })];
    if service.auth.is_some() {
        tags.push(json!({ "name": "auth", "description": "Signing in and API keys." }));
    }
    for r in &service.resources {
        let description = r.description.clone().unwrap_or_else(|| format!("The {} collection.", r.path.value));
        tags.push(json!({ "name": r.name.value, "description": description }));
    }
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": info,
        "servers": [{
            "url": "/",
            "description": "The instance serving this document, whichever environment it runs in (local, staging or production).",
            "x-internal": false,
        }],
        "tags": tags,
        "paths": paths,
        "components": { "schemas": schemas, "responses": error_responses(service) },
    });
    if let Some(auth) = &service.auth {
        doc["components"]["securitySchemes"] = security_schemes(auth);
    }
    if !service.resources.is_empty() {
        doc["components"]["headers"] = json!({ "ETag": etag_header() });
    }
    rate::document(&mut doc, service, &limited);
    if let Some(cors) = &service.cors {
        cors_headers(&mut doc, cors);
    }
    doc
}

/// With `cors`, every answer (errors and preflights included) carries
/// `Access-Control-Allow-Origin` for an allowed `Origin`: a shared header, documented on
/// each response.
fn cors_headers(doc: &mut Value, cors: &crate::model::Cors) {
    let any = cors.allowed_origins.iter().any(|o| o.value == "*");
    let longest = cors.allowed_origins.iter().map(|o| o.value.len()).max().unwrap_or(1);
    let description = if any {
        "`*` on answers to cross-origin requests: every origin may read them."
    } else {
        "The request's `Origin`, on answers to requests from an allowed origin; absent otherwise."
    };
    let values: Vec<&str> =
        if any { vec!["*"] } else { cors.allowed_origins.iter().map(|o| o.value.as_str()).collect() };
    let components = doc["components"].as_object_mut().expect("components is an object");
    let headers = components.entry("headers").or_insert_with(|| json!({}));
    headers["Access-Control-Allow-Origin"] =
        json!({ "description": description, "schema": { "type": "string", "enum": values, "maxLength": longest } });
    let header = json!({ "$ref": "#/components/headers/Access-Control-Allow-Origin" });
    let add = |response: &mut Value| {
        if let Some(r) = response.as_object_mut().filter(|r| !r.contains_key("$ref")) {
            let headers = r.entry("headers").or_insert_with(|| json!({}));
            headers["Access-Control-Allow-Origin"] = header.clone();
        }
    };
    if let Some(Value::Object(paths)) = doc.get_mut("paths") {
        for item in paths.values_mut().filter_map(Value::as_object_mut) {
            for op in item.values_mut().filter_map(|op| op.get_mut("responses")).filter_map(Value::as_object_mut) {
                op.values_mut().for_each(add);
            }
        }
    }
    if let Some(Value::Object(shared)) = doc["components"].get_mut("responses") {
        shared.values_mut().for_each(add);
    }
}

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// Text the runtime stores: PostgreSQL holds no NUL character, so it is refused on both.
const NO_NUL: &str = "^[^\\u0000]*$";

fn problem_schema() -> Value {
    let max_errors = MAX_FIELD_ERRORS;
    json!({
        "type": "object",
        "description": "An RFC 9457 problem: every error answer has this shape.",
        "required": ["type", "title", "status", "detail"],
        "properties": {
            "type": { "type": "string", "format": "uri-reference", "maxLength": 256 },
            "title": { "type": "string", "maxLength": 64 },
            "status": { "type": "integer", "format": "int32", "minimum": 100, "maximum": 599 },
            "detail": { "type": "string", "maxLength": MAX_DETAIL },
            "errors": {
                "type": "array",
                "maxItems": max_errors,
                "description": "One entry per invalid input, naming it.",
                "items": {
                    "type": "object",
                    "required": ["field", "message"],
                    "properties": {
                        "field": { "type": "string", "maxLength": MAX_FIELD },
                        "message": { "type": "string", "maxLength": MAX_MESSAGE },
                    },
                },
            },
        },
    })
}

/// The error answers, shared by every operation through `$ref`.
fn error_responses(service: &Service) -> Value {
    let mut out = Map::new();
    for (status, what) in [
        ("400", "The request is malformed or breaks a rule; `errors` names each field."),
        ("401", "Credentials are missing or invalid."),
        ("403", "The caller may not do this."),
        ("404", "No such record."),
        (
            "409",
            "A unique value is taken, a per-account limit is reached, or a request with the same `Idempotency-Key` is still running.",
        ),
        ("413", "The body is larger than the service accepts."),
        ("415", "The body is not JSON."),
        ("422", "A business rule refused the input, or an `Idempotency-Key` was used before with another body."),
        ("500", "The service failed; the fault is logged."),
        ("503", "The request took too long, or the service is not ready."),
    ] {
        let mut response = json!({
            "description": what,
            "content": { "application/problem+json": { "schema": schema_ref("Problem") } },
        });
        if status == "401" {
            let longest = challenges(service).len();
            response["headers"] = json!({
                "WWW-Authenticate": {
                    "description": "A challenge for each accepted scheme.",
                    "schema": { "type": "string", "maxLength": longest },
                },
            });
        }
        if status == "503" && service.limits.max_in_flight.is_some() {
            response["headers"] = json!({
                "Retry-After": {
                    "description": "Seconds to wait, when the service sheds load (`limits.max_in_flight`).",
                    "schema": { "type": "integer", "format": "int32", "minimum": 0, "maximum": 86400 },
                },
            });
        }
        out.insert(format!("Error{status}"), response);
    }
    Value::Object(out)
}

/// The longest `WWW-Authenticate` the runtime sends (`restgen::auth::unauthorized`): a
/// challenge per scheme, the bearer one with `error="invalid_token"`.
fn challenges(service: &Service) -> String {
    let realm = &service.name.value;
    let Some(auth) = &service.auth else { return "Bearer realm=\"api\", error=\"invalid_token\"".to_owned() };
    let mut out = Vec::new();
    if auth.has_scheme(Scheme::Bearer) {
        out.push(format!("Bearer realm=\"{realm}\", error=\"invalid_token\""));
    }
    if auth.has_scheme(Scheme::Basic) {
        out.push(format!("Basic realm=\"{realm}\", charset=\"UTF-8\""));
    }
    if auth.has_scheme(Scheme::ApiKey) {
        out.push(format!("ApiKey realm=\"{realm}\", header=\"{}\"", auth.api_key.header.value));
    }
    out.join(", ")
}

/// An operation's `responses`: its success answer, and the shared error answers.
fn responses(status: &str, ok: Value, errors: &[u16]) -> Value {
    let mut out = Map::new();
    out.insert(status.into(), ok);
    for s in errors {
        out.insert(s.to_string(), json!({ "$ref": format!("#/components/responses/Error{s}") }));
    }
    Value::Object(out)
}

fn healthz() -> Value {
    json!({
        "get": {
            "operationId": "healthz",
            "summary": "Whether the service and its database answer",
            "description": "200 while the database answers, 503 otherwise. Needs no credentials and ignores any; never rate limited, so a load balancer's probe does not depend on other traffic.",
            "tags": ["service"],
            "security": [],
            "responses": {
                "200": {
                    "description": "The service is up.",
                    "content": { "application/json": { "schema": {
                        "type": "object", "required": ["status"], "properties": { "status": { "const": "ok" } },
                    } } },
                },
                "503": { "$ref": "#/components/responses/Error503" },
            },
        },
    })
}

fn security_schemes(auth: &Auth) -> Value {
    let mut out = Map::new();
    if auth.has_scheme(Scheme::Bearer) {
        out.insert(
            "bearer".into(),
            json!({
                "type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                "description": format!(
                    "A JWT from the login endpoint, verified as RFC8725 recommends: only {} is accepted, \
                     and `exp`, `iat` and `sub` are required.",
                    match auth.jwt.algorithm.value {
                        JwtAlgorithm::Hs256 => "HS256",
                        JwtAlgorithm::Rs256 => "RS256",
                        JwtAlgorithm::Es256 => "ES256",
                    }
                ),
            }),
        );
    }
    if auth.has_scheme(Scheme::Basic) {
        out.insert("basic".into(), json!({ "type": "http", "scheme": "basic" }));
    }
    if auth.has_scheme(Scheme::ApiKey) {
        out.insert("apiKey".into(), json!({ "type": "apiKey", "in": "header", "name": auth.api_key.header }));
        if let Some(q) = &auth.api_key.query {
            out.insert("apiKeyQuery".into(), json!({ "type": "apiKey", "in": "query", "name": q.value }));
        }
    }
    Value::Object(out)
}

/// Every scheme the service accepts, each on its own.
fn signed_in(service: &Service) -> Vec<Value> {
    let Some(auth) = &service.auth else { return Vec::new() };
    let mut out = Vec::new();
    if auth.has_scheme(Scheme::Bearer) {
        out.push(json!({ "bearer": [] }));
    }
    if auth.has_scheme(Scheme::Basic) {
        out.push(json!({ "basic": [] }));
    }
    if auth.has_scheme(Scheme::ApiKey) {
        out.push(json!({ "apiKey": [] }));
        if auth.api_key.query.is_some() {
            out.push(json!({ "apiKeyQuery": [] }));
        }
    }
    out
}

/// The `security` of an operation with these rules: none needed for `anyone`.
fn security(service: &Service, rules: &[crate::Located<AccessRule>]) -> Value {
    if service.auth.is_none() {
        return json!([]);
    }
    let mut options = signed_in(service);
    if rules.iter().any(|r| r.value == AccessRule::Anyone) {
        options.insert(0, json!({}));
    }
    Value::Array(options)
}

fn json_body(schema: Value) -> Value {
    json!({ "required": true, "content": { "application/json": { "schema": schema } } })
}

fn json_response(description: &str, schema: Value) -> Value {
    json!({ "description": description, "content": { "application/json": { "schema": schema } } })
}

/// The longest token the runtime issues: a JWT whose header, claims (`sub` an id, the
/// roles, `iss`, `aud`, times) and signature (at most an RSA-4096 one) are all bounded.
fn token_max(auth: &Auth) -> usize {
    let roles: usize = auth.roles.iter().map(|r| r.value.len() + 3).sum();
    let text = |t: &Option<String>| t.as_ref().map_or(0, |t| t.len() * 6 + 8);
    let claims = 160 + roles * 6 + text(&auth.jwt.issuer) + text(&auth.jwt.audience);
    let b64 = |n: usize| n.div_ceil(3) * 4;
    b64(64) + 1 + b64(claims) + 1 + b64(512)
}

fn auth_paths(
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
                "summary": format!("Sign in as a {} and get a bearer token", principal.name.value),
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
                "parameters": [{ "name": "key_id", "in": "path", "required": true,
                    "schema": { "type": "string", "pattern": "^[0-9a-f]{32}$", "maxLength": 32 } }],
                "responses": revoke_responses,
            } }),
        );
    }
}

/// Who may call each operation of `ops` (a path item), as its `description`.
fn describe(service: &Service, r: &Resource, ops: &mut Map<String, Value>) {
    for (method, op) in ops.iter_mut() {
        let rules = match method.as_str() {
            "post" => &r.access.create,
            "get" => &r.access.read,
            "put" | "patch" => &r.access.write,
            _ => &r.access.delete,
        };
        let who: Vec<String> = rules
            .iter()
            .map(|rule| match &rule.value {
                AccessRule::Anyone => "anyone".to_owned(),
                AccessRule::Authenticated => "any signed-in caller".to_owned(),
                AccessRule::Owner if r.owner.is_none() => "the account itself".to_owned(),
                AccessRule::Owner => "the record's owner".to_owned(),
                AccessRule::Role(role) => format!("callers with the `{role}` role"),
            })
            .collect();
        // Admins may do everything, whatever the lists say (said unless the list
        // admits every signed-in caller anyway).
        let everyone = rules.iter().any(|r| matches!(r.value, AccessRule::Anyone | AccessRule::Authenticated));
        let admins: Vec<String> = service
            .auth
            .iter()
            .flat_map(|a| &a.admin_roles)
            .filter(|role| !everyone && !rules.iter().any(|r| r.value == AccessRule::Role(role.value.clone())))
            .map(|role| format!("callers with the `{}` role", role.value))
            .collect();
        let who = [who, admins].concat();
        let mut text = if service.auth.is_some() { format!("Allowed to {}.", who.join(", ")) } else { String::new() };
        if r.owner.is_some() && service.auth.is_some() {
            let hidden = if r.not_owned == NotOwned::NotFound { "404, as if it did not exist" } else { "403" };
            text.push_str(&format!(" Somebody else's record answers {hidden}."));
        }
        if text.is_empty() {
            text = "Open to anyone: the service has no auth.".to_owned();
        }
        op["description"] = json!(text.trim());
    }
}

/// The JSON Schema of one field's value.
fn field_schema(service: &Service, f: &Field) -> Value {
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
        ty => crate::bounds::longest_form(ty.kind()).map(|n| n as u64).or_else(|| f.effective_max_length()),
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
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 { json!(v as i64) } else { json!(v) }
}

/// Admits `null` besides the schema's own values.
fn nullable(s: &mut Value) {
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

fn id_schema(kind: IdKind) -> Value {
    match kind {
        IdKind::Uuid => json!({ "type": "string", "format": "uuid", "maxLength": UUID_CHARS }),
        IdKind::Integer => json!({ "type": "integer", "format": "int64" }),
    }
}

/// `Order`, `OrderCreate`, ...
fn schema_name(r: &Resource, suffix: &str) -> String {
    format!("{}{suffix}", r.name.value.to_upper_camel_case())
}

/// The representation: every field but the write-only ones, always present.
fn representation(service: &Service, r: &Resource) -> Value {
    let mut props = Map::new();
    props.insert("id".into(), id_schema(r.id));
    if let Some(owner) = r.owner.as_ref().and_then(|o| service.resource(&o.value)) {
        props.insert("owner_id".into(), id_schema(owner.id));
    }
    for f in r.fields.iter().filter(|f| !f.write_only && f.ty.value != FieldType::Password) {
        let mut s = field_schema(service, f);
        // Stored values may be null where the column is optional.
        if f.optional() && !f.nullable.value {
            nullable(&mut s);
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
    let required: Vec<&String> = props.keys().collect();
    let mut s = json!({ "type": "object", "required": required, "properties": props });
    if let Some(d) = &r.description {
        s["description"] = json!(d);
    }
    s
}

/// The allow-listed input of one write operation.
fn input(service: &Service, r: &Resource, op: WriteOp) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for f in r.fields.iter().filter(|f| r.settable_in(f, op)) {
        props.insert(f.name.value.clone(), field_schema(service, f));
        let must = match op {
            WriteOp::Create => f.required.value && f.default.is_none(),
            WriteOp::Replace => f.required.value,
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
fn list_schema(service: &Service, r: &Resource, item: Value) -> Value {
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
            props.insert("page".into(), json!({ "type": "integer", "format": "int64", "minimum": 1 }));
            props.insert("per_page".into(), json!({ "type": "integer", "format": "int32", "minimum": 1 }));
        }
        PageStyle::Offset => {
            props.insert("offset".into(), json!({ "type": "integer", "format": "int64", "minimum": 0 }));
            props.insert("limit".into(), json!({ "type": "integer", "format": "int32", "minimum": 1 }));
        }
        PageStyle::Cursor => {
            props.insert(
                "next_cursor".into(),
                json!({ "type": ["string", "null"], "maxLength": crate::bounds::cursor_max(service, r) }),
            );
        }
    }
    let required: Vec<&String> = props.keys().collect();
    json!({ "type": "object", "required": required, "properties": props })
}

fn query(name: &str, description: &str, schema: Value) -> Value {
    json!({ "name": name, "in": "query", "required": false, "description": description, "schema": schema })
}

/// Filters, sort and paging parameters of a list.
fn list_parameters(service: &Service, r: &Resource) -> Vec<Value> {
    let mut out = Vec::new();
    for f in r.fields.iter().filter(|f| f.filter.value) {
        // A query parameter holds a value, never null.
        let mut value_only = f.clone();
        value_only.nullable.value = false;
        let mut s = field_schema(service, &value_only);
        if let Some(o) = s.as_object_mut() {
            o.remove("description");
        }
        out.push(query(&f.name.value, &format!("Only records whose `{}` equals this.", f.name.value), s));
    }
    let mut sorts: Vec<String> = Vec::new();
    let sortable = ["id".to_owned()]
        .into_iter()
        .chain(r.timestamps.then(|| "created_at".to_owned()))
        .chain(r.fields.iter().filter(|f| f.sort.value).map(|f| f.name.value.clone()));
    for name in sortable {
        sorts.push(format!("{name}_asc"));
        sorts.push(format!("{name}_desc"));
    }
    let mut sort = query(
        "sort",
        "Sort keys, most significant first, comma separated; ties are broken by id.",
        json!({ "type": "array", "maxItems": sorts.len() / 2, "items": { "type": "string", "enum": sorts } }),
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
                "page",
                "The page, from 1.",
                json!({ "type": "integer", "format": "int64", "minimum": 1, "maximum": i64::MAX, "default": 1 }),
            ));
            out.push(query("per_page", "Records per page; larger values are clamped.", size));
        }
        PageStyle::Offset => {
            out.push(query("limit", "Records per page; larger values are clamped.", size));
            out.push(query(
                "offset",
                "Records to skip.",
                json!({ "type": "integer", "format": "int64", "minimum": 0, "maximum": i64::MAX, "default": 0 }),
            ));
        }
        PageStyle::Cursor => {
            out.push(query("limit", "Records per page; larger values are clamped.", size));
            out.push(query(
                "cursor",
                "The `next_cursor` of the previous page of this very list (the same parent, the same `sort`); not with `starting_after`. Empty means the first page.",
                json!({ "type": "string", "maxLength": crate::bounds::cursor_max(service, r) }),
            ));
            out.push(query(
                "starting_after",
                "The id of the last record seen, one of this list's; not with `cursor`.",
                id_schema(r.id),
            ));
        }
    }
    out
}

fn path_param(name: &str, kind: IdKind) -> Value {
    json!({ "name": name, "in": "path", "required": true, "schema": id_schema(kind) })
}

/// `Idempotency-Key` on a create (`restgen::idempotency`).
fn idempotency_key() -> Value {
    json!({
        "name": "Idempotency-Key",
        "in": "header",
        "description": "A key of the caller's choosing (a UUID, say) that makes retrying safe: the first answer to it is kept for 24 hours and given again, with `Idempotent-Replayed: true`, to every request with the same key and body. The same key with another body is a 422; while the first request runs, a retry is a 409.",
        "schema": { "type": "string", "pattern": "^[!-~]+$", "minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY },
    })
}

/// A strong tag of the representation's bytes: 128 bits of SHA-256 in base64url.
fn etag_header() -> Value {
    json!({
        "description": "A strong tag of this representation; send it in `If-None-Match` to get 304 while it is current.",
        "required": true,
        "schema": { "type": "string", "pattern": "^\"[A-Za-z0-9_-]{22}\"$", "maxLength": 24 },
    })
}

/// The headers of a read: its tag and the resource's `Cache-Control`.
fn read_headers(r: &Resource) -> Map<String, Value> {
    let mut headers = Map::new();
    headers.insert("ETag".into(), json!({ "$ref": "#/components/headers/ETag" }));
    let cache = r.cache_control();
    headers.insert(
        "Cache-Control".into(),
        json!({ "description": "How long caches may keep the answer, and who may.", "required": true,
                "schema": { "type": "string", "enum": [cache], "maxLength": cache.len() } }),
    );
    headers
}

/// `If-None-Match` on a read, and the 304 it may bring.
fn conditional(r: &Resource, parameters: &mut Vec<Value>, answers: &mut Value) {
    parameters.push(json!({
        "name": "If-None-Match",
        "in": "header",
        "description": "`*` or entity tags of representations the caller holds; 304 when one is current. A value that is neither names no representation and is ignored.",
        "schema": { "type": "string", "maxLength": MAX_IF_NONE_MATCH },
    }));
    if let Some(ok) = answers.get_mut("200") {
        let headers = ok.as_object_mut().expect("an answer").entry("headers").or_insert_with(|| json!({}));
        for (k, v) in read_headers(r) {
            headers[k] = v;
        }
    }
    answers["304"] = json!({
        "description": "The representation the caller holds (named in `If-None-Match`) is current; no body.",
        "headers": Value::Object(read_headers(r)),
    });
}

/// Adds the paths and schemas of `r`; returns the paths added.
fn resource_paths(
    service: &Service,
    r: &Resource,
    base: &str,
    paths: &mut Map<String, Value>,
    schemas: &mut Map<String, Value>,
) -> Vec<String> {
    let mut added = Vec::new();
    let name = &r.name.value;
    let model = schema_name(r, "");
    schemas.insert(model.clone(), representation(service, r));
    let tags = json!([name]);
    let link = |path_len: usize| {
        json!({ "Link": { "description": "`<...>; rel=\"next\"` while more records follow.",
            "schema": { "type": "string", "maxLength": crate::bounds::link_max(service, r, path_len) } } })
    };

    let mut collection = Map::new();
    if r.has(Operation::List) {
        let mut ok = json_response(
            &format!("A page of {}.", r.path.value.trim_start_matches('/')),
            list_schema(service, r, schema_ref(&model)),
        );
        ok["headers"] = link(base.len() + r.path.value.len());
        let mut answers = responses("200", ok, &[400, 401, 403, 500]);
        let mut parameters = list_parameters(service, r);
        conditional(r, &mut parameters, &mut answers);
        collection.insert(
            "get".into(),
            json!({
                "operationId": format!("list{model}"),
                "summary": format!("List {}", r.path.value.trim_start_matches('/')),
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
            "Idempotent-Replayed": {
                "description": "`true` when this is the answer kept for an earlier request with the same `Idempotency-Key`.",
                "schema": { "type": "string", "enum": ["true"], "maxLength": 4 },
            },
        });
        let answers = responses("201", created, &[400, 401, 403, 409, 413, 415, 422, 500]);
        collection.insert(
            "post".into(),
            json!({
                "operationId": format!("create{model}"),
                "summary": format!("Create a {name}"),
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
        conditional(r, &mut parameters, &mut answers);
        item.insert(
            "get".into(),
            json!({
                "operationId": format!("get{model}"),
                "summary": format!("Get a {name}"),
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
        let answers = responses("200", stored, &[400, 401, 403, 404, 409, 413, 415, 422, 500]);
        let media = if op == WriteOp::Patch { "application/merge-patch+json" } else { "application/json" };
        let mut body = json_body(schema_ref(&input_name));
        if op == WriteOp::Patch {
            // JSON Merge Patch (RFC 7396), sent as plain JSON or under its own media type.
            body["content"][media] = json!({ "schema": schema_ref(&input_name) });
        }
        item.insert(
            method.into(),
            json!({
                "operationId": format!("{verb}{model}"),
                "summary": format!("{} a {name}", if op == WriteOp::Replace { "Replace" } else { "Update part of" }),
                "tags": tags,
                "security": security(service, &r.access.write),
                "requestBody": body,
                "responses": answers,
            }),
        );
    }
    if r.has(Operation::Delete) {
        let answers = responses("204", json!({ "description": "Deleted." }), &[400, 401, 403, 404, 409, 422, 500]);
        item.insert(
            "delete".into(),
            json!({
                "operationId": format!("delete{model}"),
                "summary": format!("Delete a {name}"),
                "tags": tags,
                "security": security(service, &r.access.delete),
                "responses": answers,
            }),
        );
    }
    describe(service, r, &mut collection);
    describe(service, r, &mut item);
    if !collection.is_empty() {
        let path = format!("{base}{}", r.path.value);
        added.push(path.clone());
        paths.insert(path, Value::Object(collection));
    }
    if !item.is_empty() {
        item.insert("parameters".into(), json!([path_param(&id_param, r.id)]));
        let path = format!("{base}{}/{{{id_param}}}", r.path.value);
        added.push(path.clone());
        paths.insert(path, Value::Object(item));
    }

    if r.has(Operation::List) {
        for parent in r.nested_under.iter().filter_map(|p| service.resource(&p.value)) {
            let parent_param = parent.id_param();
            let mut parameters = vec![path_param(&parent_param, parent.id)];
            parameters.extend(list_parameters(service, r));
            let mut ok = json_response(
                &format!("A page of the {}'s {}.", parent.name.value, r.path.value.trim_start_matches('/')),
                list_schema(service, r, schema_ref(&model)),
            );
            let parent_id = if parent.id == IdKind::Uuid { 36 } else { 20 };
            ok["headers"] = link(base.len() + parent.path.value.len() + 1 + parent_id + r.path.value.len());
            let mut answers = responses("200", ok, &[400, 401, 403, 404, 500]);
            conditional(r, &mut parameters, &mut answers);
            let mut nested = Map::new();
            nested.insert(
                "get".into(),
                json!({
                    "operationId": format!("list{model}Of{}", schema_name(parent, "")),
                    "summary": format!("List the {} of a {}", r.path.value.trim_start_matches('/'), parent.name.value),
                    "tags": tags,
                    "security": security(service, &r.access.read),
                    "parameters": parameters,
                    "responses": answers,
                }),
            );
            describe(service, r, &mut nested);
            let path = format!("{base}{}/{{{parent_param}}}{}", parent.path.value, r.path.value);
            added.push(path.clone());
            paths.insert(path, Value::Object(nested));
        }
    }
    added
}
