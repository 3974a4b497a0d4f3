//! Lowering `auth`.

use super::read::Cx;
use crate::yaml::Node;
use restgen_core::diagnostics::codes;
use restgen_core::model::*;
use restgen_core::origin::Located;
use restgen_core::vocabulary as keys;

pub(super) fn auth(cx: &mut Cx, node: &Node, service: &str) -> Option<Auth> {
    let m = cx.map(node, "`auth`", &keys::AUTH)?;
    let origin = node.origin.clone();
    let schemes = match m.get("schemes") {
        Some(n) => cx.words_of(n, "scheme"),
        None => vec![Located::new(Scheme::DEFAULT, origin.clone())],
    };
    let has = |s: Scheme| schemes.iter().any(|x| x.value == s);
    let principal = m.get("principal").and_then(|n| cx.string(n, "`principal`"));

    let mut login =
        Login { path: Located::new(Login::PATH.to_owned(), origin.clone()), identifier: None, origin: origin.clone() };
    if let Some(n) = m.get("login")
        && let Some(lm) = cx.map(n, "`login`", &keys::LOGIN)
    {
        login.origin = n.origin.clone();
        if let Some(p) = lm.get("path").and_then(|n| cx.string(n, "`login.path`")) {
            login.path = p;
        }
        login.identifier = lm.get("identifier").and_then(|n| cx.string(n, "`identifier`"));
    }

    let mut jwt = Jwt {
        algorithm: Located::new(JwtAlgorithm::DEFAULT, origin.clone()),
        secret_env: Located::new(service_env_name(service, "JWT_SECRET"), origin.clone()),
        private_key_env: None,
        public_key_env: None,
        ttl: Located::new(Jwt::TTL, origin.clone()),
        issuer: None,
        audience: None,
        origin: origin.clone(),
    };
    if let Some((key, n)) = m.entry("jwt") {
        if !has(Scheme::Bearer) {
            cx.diags
                .error(codes::AUTH_CONFIG, &key.origin, "`jwt` settings, but the `bearer` scheme is not enabled")
                .hint("add `bearer` to `auth.schemes`, or remove `jwt`");
        }
        if let Some(jm) = cx.map(n, "`jwt`", &keys::JWT) {
            jwt.origin = n.origin.clone();
            if let Some(a) = jm.get("algorithm").and_then(|n| cx.word_of(n, "JWT algorithm")) {
                jwt.algorithm = a;
            }
            if let Some(s) = jm.get("secret_env").and_then(|n| cx.string(n, "`secret_env`")) {
                // Whether it was written, which the model cannot tell from the default.
                if jwt.algorithm.value != JwtAlgorithm::Hs256 {
                    cx.diags.error(
                        codes::AUTH_CONFIG,
                        &s.origin,
                        "`secret_env` is for HS256; RS256 and ES256 use key files",
                    );
                }
                jwt.secret_env = s;
            }
            jwt.private_key_env = jm.get("private_key_env").and_then(|n| cx.string(n, "`private_key_env`"));
            jwt.public_key_env = jm.get("public_key_env").and_then(|n| cx.string(n, "`public_key_env`"));
            if let Some(t) = jm.get("ttl").and_then(|n| cx.duration(n, "`ttl`")) {
                jwt.ttl = t;
            }
            jwt.issuer = jm.get("issuer").and_then(|n| cx.string(n, "`issuer`")).map(|s| s.value);
            jwt.audience = jm.get("audience").and_then(|n| cx.string(n, "`audience`")).map(|s| s.value);
        }
    }

    let mut api_key =
        ApiKey { header: Located::new(ApiKey::HEADER.to_owned(), origin.clone()), query: None, origin: origin.clone() };
    if let Some((key, n)) = m.entry("api_key") {
        if !has(Scheme::ApiKey) {
            cx.diags
                .error(codes::AUTH_CONFIG, &key.origin, "`api_key` settings, but the `api_key` scheme is not enabled")
                .hint("add `api_key` to `auth.schemes`, or remove these settings");
        }
        if let Some(am) = cx.map(n, "`api_key`", &keys::API_KEY) {
            api_key.origin = n.origin.clone();
            if let Some(h) = am.get("header").and_then(|n| cx.string(n, "`header`")) {
                api_key.header = h;
            }
            api_key.query = am.get("query").and_then(|n| cx.string(n, "`query`"));
        }
    }

    let roles = m.get("roles").map(|n| cx.strings(n, "`roles`")).unwrap_or_default();
    let default_role = m.get("default_role").and_then(|n| cx.string(n, "`default_role`"));
    let admin_roles = m.get("admin_roles").map(|n| cx.strings(n, "`admin_roles`")).unwrap_or_default();
    Some(Auth { schemes, principal, login, jwt, api_key, roles, default_role, admin_roles, origin })
}
