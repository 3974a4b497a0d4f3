//! The OpenAPI document of an [`App`](super::App): the models its resources' derives
//! carry, placed in the service the App's settings describe, through the one emitter a
//! generated service's document comes from (restgen-model). So a derived service
//! documents itself as a generated one does, from the same facts.

use super::Accounts;
use crate::serve::CorsSpec;
use crate::spec::{RateSpec, VersioningSpec};
use restgen_model::model;
use restgen_model::{Located, Origin};
use std::time::Duration;

/// What an App says beside its resources, as a schema's top level would.
pub(super) struct Settings<'a> {
    pub name: &'static str,
    pub title: Option<&'static str>,
    pub description: Option<&'static str>,
    pub base_path: &'static str,
    pub auth: Option<&'a Accounts>,
    pub rate_limit: Option<&'a RateSpec>,
    pub cors: Option<&'a CorsSpec>,
    pub trusted_proxies: &'static [&'static str],
    pub proxy_header: crate::spec::ProxyHeader,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    pub max_in_flight: Option<usize>,
    pub versioning: Option<&'static VersioningSpec>,
    pub docs: bool,
}

/// The document as pretty JSON, from each mounted resource's model (`Resource::MODEL`),
/// and with versions each version's.
pub(super) fn render(service: &model::Service) -> (String, Vec<(u32, String)>) {
    (restgen_openapi::render(service), restgen_openapi::render_versions(service))
}

/// The service's model, from each mounted resource's (`Resource::MODEL`).
pub(super) fn model(settings: &Settings<'_>, models: &[&'static str]) -> model::Service {
    let resources = models
        .iter()
        .map(|m| serde_json::from_str(m).expect("a derive's model reads back with the runtime it was built for"))
        .collect();
    service(settings, resources)
}

fn bare<T>(value: T) -> Located<T> {
    Located::bare(value)
}

fn service(s: &Settings<'_>, resources: Vec<model::Resource>) -> model::Service {
    model::Service {
        name: bare(s.name.to_owned()),
        title: s.title.map(str::to_owned),
        description: s.description.map(str::to_owned),
        api: api(s),
        auth: s.auth.map(|a| auth(s.name, a)),
        rate_limit: s.rate_limit.map(rate_limit),
        // Each derived resource carries its own paging, resolved by its derive.
        pagination: model::Pagination::default(),
        webhooks: model::Webhooks::with_defaults(String::new()),
        cors: s.cors.map(|c| model::Cors {
            allowed_origins: c.allowed_origins.iter().map(|o| bare((*o).to_owned())).collect(),
            max_age: c.max_age,
            origin: Origin::Unknown,
        }),
        trusted_proxies: s.trusted_proxies.iter().map(|p| bare((*p).to_owned())).collect(),
        proxy_header: s.proxy_header,
        limits: model::Limits {
            max_body_bytes: s.max_body_bytes as u64,
            request_timeout: bare(s.request_timeout),
            max_in_flight: s.max_in_flight.map(|n| bare(u32::try_from(n).unwrap_or(u32::MAX))),
        },
        resources,
        origin: Origin::Unknown,
    }
}

fn api(s: &Settings<'_>) -> model::Api {
    let Some(v) = s.versioning else {
        return model::Api {
            base_path: bare(s.base_path.to_owned()),
            versions: Vec::new(),
            versioning: Vec::new(),
            vendor: s.name.to_owned(),
            docs: s.docs,
            origin: Origin::Unknown,
        };
    };
    let versions = v
        .versions
        .iter()
        .map(|v| model::ApiVersion {
            number: bare(v.number),
            deprecated: v.deprecated.map(bare),
            sunset: v.sunset.map(bare),
            origin: Origin::Unknown,
        })
        .collect();
    let schemes = [
        (v.path, model::Versioning::Path),
        (v.header, model::Versioning::Header),
        (v.media_type, model::Versioning::MediaType),
    ];
    model::Api {
        base_path: bare(s.base_path.to_owned()),
        versions,
        versioning: schemes.into_iter().filter(|(on, _)| *on).map(|(_, scheme)| bare(scheme)).collect(),
        vendor: v.vendor.to_owned(),
        docs: s.docs,
        origin: Origin::Unknown,
    }
}

fn auth(service: &str, a: &Accounts) -> model::Auth {
    let strings = |list: &[&str]| list.iter().map(|r| bare((*r).to_owned())).collect();
    model::Auth {
        schemes: a.schemes.iter().copied().map(bare).collect(),
        principal: Some(bare(a.principal.name.to_owned())),
        login: model::Login {
            path: bare(a.login_path.to_owned()),
            identifier: Some(bare(a.identifier.to_owned())),
            origin: Origin::Unknown,
        },
        jwt: model::Jwt {
            algorithm: bare(model::JwtAlgorithm::Hs256),
            secret_env: bare(format!("{}_JWT_SECRET", crate::settings::env_prefix(service))),
            private_key_env: None,
            public_key_env: None,
            ttl: bare(a.ttl),
            issuer: a.issuer.map(str::to_owned),
            audience: a.audience.map(str::to_owned),
            origin: Origin::Unknown,
        },
        api_key: model::ApiKey { header: bare(a.api_key_header.to_owned()), query: None, origin: Origin::Unknown },
        roles: strings(a.roles),
        default_role: a.default_role.map(|r| bare(r.to_owned())),
        admin_roles: strings(a.admin_roles),
        origin: Origin::Unknown,
    }
}

fn rate_limit(r: &RateSpec) -> model::RateLimit {
    model::RateLimit { algorithm: r.algorithm, key: bare(r.key), origin: Origin::Unknown }
}
