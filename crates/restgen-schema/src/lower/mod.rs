//! Lowering: the node tree of a schema file into the model, applying every default so
//! the model holds resolved facts only. Problems are collected, and lowering goes on past
//! them so one run reports as much as it can.

mod auth;
mod field;
pub(crate) mod read;
mod resource;

use crate::yaml::Node;
use read::Cx;
use restgen_core::diagnostics::codes;
use restgen_core::model::*;
use restgen_core::origin::{Located, Origin};
use restgen_core::vocabulary as keys;
use std::time::Duration;

pub(crate) fn service(cx: &mut Cx, root: &Node) -> Option<Service> {
    let m = cx.map(root, "the schema", &keys::SERVICE)?;
    let name = match m.get("service") {
        Some(n) => cx.string(n, "`service`"),
        None => {
            cx.diags
                .error(codes::MISSING_KEY, m.origin, "the schema needs `service`, the name of the generated crate")
                .hint("add `service: shop` at the top");
            None
        }
    }
    .unwrap_or_else(|| Located::new("service".into(), m.origin.clone()));
    let text = |cx: &mut Cx, key: &str| m.get(key).and_then(|n| cx.string(n, &format!("`{key}`"))).map(|s| s.value);
    let title = text(cx, "title");
    let description = text(cx, "description");
    let api = api(cx, m.get("api"), &name.value, root);
    let auth = m.get("auth").and_then(|n| auth::auth(cx, n, &name.value));
    let rate_limit = m.get("rate_limit").and_then(|n| rate_limit(cx, n, auth.is_some()));
    let pagination = match m.get("pagination") {
        Some(n) => pagination(cx, n, &Pagination { origin: n.origin.clone(), ..Pagination::default() }),
        None => Pagination { origin: root.origin.clone(), ..Pagination::default() },
    };
    let webhooks = webhooks(cx, m.get("webhooks"), &name.value, &root.origin);
    let cors = m.get("cors").and_then(|n| cors(cx, n));
    let trusted_proxies = m.get("trusted_proxies").map(|n| cx.strings(n, "`trusted_proxies`")).unwrap_or_default();
    let proxy_header =
        m.get("proxy_header").and_then(|n| cx.word_of(n, "`proxy_header`")).map_or(ProxyHeader::DEFAULT, |w| w.value);
    let limits = m.get("limits").map(|n| limits(cx, n)).unwrap_or_default();
    let defaults = resource::Defaults { auth: auth.as_ref(), pagination: &pagination };
    let resources = match m.get("resources") {
        Some(n) => cx
            .named_map(n, "`resources`")
            .into_iter()
            .filter_map(|(rname, node)| resource::resource(cx, rname, node, &defaults))
            .collect(),
        None => Vec::new(),
    };
    Some(Service {
        name,
        title,
        description,
        api,
        auth,
        rate_limit,
        pagination,
        webhooks,
        cors,
        trusted_proxies,
        proxy_header,
        limits,
        resources,
        origin: root.origin.clone(),
    })
}

fn api(cx: &mut Cx, node: Option<&Node>, service: &str, root: &Node) -> Api {
    let origin = node.map_or(&root.origin, |n| &n.origin).clone();
    let mut api = Api {
        base_path: Located::new(String::new(), origin.clone()),
        versions: Vec::new(),
        versioning: Vec::new(),
        vendor: service.to_owned(),
        docs: Api::DOCS,
        origin,
    };
    let Some(m) = node.and_then(|n| cx.map(n, "`api`", &keys::API)) else { return api };
    if let Some(p) = m.get("base_path").and_then(|n| cx.string(n, "`base_path`")) {
        api.base_path = p;
    }
    if let Some(n) = m.get("versions") {
        api.versions = cx.seq(n, "`versions`").iter().filter_map(|v| version(cx, v)).collect();
    }
    match m.get("versioning") {
        Some(n) => api.versioning = cx.words_of(n, "versioning"),
        None if !api.versions.is_empty() => api.versioning = vec![Located::new(Versioning::Path, api.origin.clone())],
        None => {}
    }
    if let Some(v) = m.get("vendor").and_then(|n| cx.string(n, "`vendor`")) {
        api.vendor = v.value;
    }
    if let Some(docs) = m.get("docs").and_then(|n| cx.bool(n, "`docs`")) {
        api.docs = docs.value;
    }
    api
}

/// `{ version: 2, deprecated: ..., sunset: ... }`, or just `2`.
fn version(cx: &mut Cx, node: &Node) -> Option<ApiVersion> {
    if let crate::yaml::NodeKind::Scalar { .. } = node.kind {
        let number = cx.u32_at_least(node, "a version", 0)?;
        return Some(ApiVersion { number, deprecated: None, sunset: None, origin: node.origin.clone() });
    }
    let m = cx.map(node, "a version", &keys::VERSION)?;
    let Some(number) = m.get("version") else {
        cx.missing(m.origin, "version", "a version");
        return None;
    };
    let number = cx.u32_at_least(number, "`version`", 0)?;
    Some(ApiVersion {
        number,
        deprecated: m.get("deprecated").and_then(|n| cx.timestamp(n, "`deprecated`")),
        sunset: m.get("sunset").and_then(|n| cx.timestamp(n, "`sunset`")),
        origin: node.origin.clone(),
    })
}

pub(crate) fn rate_limit(cx: &mut Cx, node: &Node, has_auth: bool) -> Option<RateLimit> {
    let m = cx.map(node, "`rate_limit`", &keys::RATE_LIMIT)?;
    let algo = match m.get("algorithm") {
        Some(n) => cx.word_of(n, "rate limit algorithm")?,
        None => Located::new(RateAlgorithmKind::DEFAULT, node.origin.clone()),
    };
    let (own, other) = algo.value.settings();
    for key in other {
        if let Some((k, _)) = m.entry(key) {
            cx.diags.error(
                codes::KEY_NOT_FOR_TYPE,
                &k.origin,
                format!("`{key}` does not apply to this algorithm; it takes {}", own.join(" and ")),
            );
        }
    }
    let need = |cx: &mut Cx, key: &str| {
        let n = m.get(key);
        if n.is_none() {
            cx.missing(m.origin, key, "this rate limit algorithm");
        }
        n
    };
    // What is missing or unreadable is reported here; the values are judged by the checks,
    // on whichever front-end's model (a stand-in of 1 keeps them from repeating it).
    let algorithm = match algo.value {
        bucket @ (RateAlgorithmKind::TokenBucket | RateAlgorithmKind::LeakyBucket) => {
            let token = bucket == RateAlgorithmKind::TokenBucket;
            let per_second_key = if token { "refill_per_second" } else { "leak_per_second" };
            let capacity = need(cx, "capacity").and_then(|n| cx.u32_at_least(n, "`capacity`", 0));
            let per_second = need(cx, per_second_key).and_then(|n| cx.number(n, &format!("`{per_second_key}`")));
            let (capacity, per_second) = (capacity.map_or(1, |c| c.value), per_second.map_or(1.0, |r| r.value));
            if token {
                RateAlgorithm::TokenBucket { capacity, refill_per_second: per_second }
            } else {
                RateAlgorithm::LeakyBucket { capacity, leak_per_second: per_second }
            }
        }
        window => {
            let limit = need(cx, "limit").and_then(|n| cx.u32_at_least(n, "`limit`", 0)).map_or(1, |l| l.value);
            let window_len =
                need(cx, "window").and_then(|n| cx.duration(n, "`window`")).map_or(Duration::from_secs(1), |w| w.value);
            if window == RateAlgorithmKind::FixedWindow {
                RateAlgorithm::FixedWindow { limit, window: window_len }
            } else {
                RateAlgorithm::SlidingWindow { limit, window: window_len }
            }
        }
    };
    let default_key = RateKey::default_for(has_auth);
    let key = match m.get("key") {
        Some(n) => cx.word_of(n, "rate limit key").unwrap_or_else(|| Located::new(default_key, n.origin.clone())),
        None => Located::new(default_key, node.origin.clone()),
    };
    Some(RateLimit { algorithm, key, origin: node.origin.clone() })
}

/// Pagination over `base`: each key given overrides the inherited one.
pub(crate) fn pagination(cx: &mut Cx, node: &Node, base: &Pagination) -> Pagination {
    let mut p = Pagination { origin: node.origin.clone(), ..base.clone() };
    let Some(m) = cx.map(node, "`pagination`", &keys::PAGINATION) else { return p };
    if let Some(n) = m.get("style")
        && let Some(style) = cx.word_of::<PageStyle>(n, "pagination style")
    {
        p.style = style.value;
    }
    if let Some(s) = m.get("default_size").and_then(|n| cx.u32_at_least(n, "`default_size`", 0)) {
        p.default_size = s;
    }
    if let Some(s) = m.get("max_size").and_then(|n| cx.u32_at_least(n, "`max_size`", 0)) {
        p.max_size = s;
    }
    p
}

fn webhooks(cx: &mut Cx, node: Option<&Node>, service: &str, root: &Origin) -> Webhooks {
    let mut w = Webhooks {
        origin: node.map_or(root, |n| &n.origin).clone(),
        ..Webhooks::with_defaults(Webhooks::default_secret_env(service))
    };
    let Some(m) = node.and_then(|n| cx.map(n, "`webhooks`", &keys::WEBHOOKS)) else { return w };
    if let Some(s) = m.get("secret_env").and_then(|n| cx.string(n, "`secret_env`")) {
        w.secret_env = s;
    }
    if let Some(n) = m.get("max_attempts").and_then(|n| cx.u32_at_least(n, "`max_attempts`", 0)) {
        w.max_attempts = n.value;
    }
    if let Some(t) = m.get("timeout").and_then(|n| cx.duration(n, "`timeout`")) {
        w.timeout = t.value;
    }
    w
}

fn cors(cx: &mut Cx, node: &Node) -> Option<Cors> {
    let m = cx.map(node, "`cors`", &keys::CORS)?;
    let allowed_origins = match m.get("allowed_origins") {
        Some(n) => cx.strings(n, "`allowed_origins`"),
        None => {
            cx.missing(m.origin, "allowed_origins", "`cors`");
            Vec::new()
        }
    };
    let max_age = m.get("max_age").and_then(|n| cx.duration(n, "`max_age`")).map(|d| d.value);
    Some(Cors { allowed_origins, max_age, origin: node.origin.clone() })
}

fn limits(cx: &mut Cx, node: &Node) -> Limits {
    let mut l = Limits::default();
    let Some(m) = cx.map(node, "`limits`", &keys::LIMITS) else { return l };
    if let Some(s) = m.get("max_body_bytes").and_then(|n| cx.size(n, "`max_body_bytes`")) {
        l.max_body_bytes = s.value;
    }
    if let Some(t) = m.get("request_timeout").and_then(|n| cx.duration(n, "`request_timeout`")) {
        l.request_timeout = t;
    }
    if let Some(n) = m.get("max_in_flight").and_then(|n| cx.u32_at_least(n, "`max_in_flight`", 0)) {
        l.max_in_flight = Some(n);
    }
    l
}
