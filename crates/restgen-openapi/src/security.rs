//! Security schemes, each operation's requirement (none where `access` says `anyone`),
//! and the challenges of a 401.

use restgen_model::Located;
use restgen_model::model::*;
use serde_json::{Map, Value, json};

/// The longest `WWW-Authenticate` the runtime sends (`restgen::auth::unauthorized`): a
/// challenge per scheme, the bearer one with `error="invalid_token"`.
pub(crate) fn challenges(service: &Service) -> String {
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

pub(crate) fn security_schemes(auth: &Auth) -> Value {
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
pub(crate) fn signed_in(service: &Service) -> Vec<Value> {
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
pub(crate) fn security(service: &Service, rules: &[Located<AccessRule>]) -> Value {
    if service.auth.is_none() {
        return json!([]);
    }
    let mut options = signed_in(service);
    if rules.iter().any(|r| r.value == AccessRule::Anyone) {
        options.insert(0, json!({}));
    }
    Value::Array(options)
}

/// The longest token the runtime issues: a JWT whose header, claims (`sub` an id, the
/// roles, `iss`, `aud`, times) and signature (at most an RSA-4096 one) are all bounded.
pub(crate) fn token_max(auth: &Auth) -> usize {
    let roles: usize = auth.roles.iter().map(|r| r.value.len() + 3).sum();
    let text = |t: &Option<String>| t.as_ref().map_or(0, |t| t.len() * 6 + 8);
    let claims = 160 + roles * 6 + text(&auth.jwt.issuer) + text(&auth.jwt.audience);
    let b64 = |n: usize| n.div_ceil(3) * 4;
    b64(64) + 1 + b64(claims) + 1 + b64(512)
}
