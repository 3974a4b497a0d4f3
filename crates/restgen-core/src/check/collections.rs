//! How collections and responses behave: pagination, envelopes, caching, CORS.

use crate::diagnostics::{Diagnostics, codes};
use crate::model::{AccessRule, Envelope, PageStyle, Pagination, Service, Visibility};

pub(super) fn check(service: &Service, diags: &mut Diagnostics) {
    page_sizes(&service.pagination, diags);
    for r in &service.resources {
        // Inherited sizes repeat the service's problems at the same place; the collector
        // drops such repeats.
        resource(r, diags);
    }
    cors_origins(service, diags);
}

pub(super) fn resource(resource: &crate::model::Resource, diags: &mut Diagnostics) {
    page_sizes(&resource.pagination, diags);
    envelope_is_a_plain_key(resource, diags);
    cursor_needs_envelope(resource, diags);
    public_cache_only_on_public_data(resource, diags);
}

/// Sizes are at least 1, and the default page fits under the maximum.
fn page_sizes(p: &Pagination, diags: &mut Diagnostics) {
    if p.default_size.value == 0 {
        diags.error(codes::BAD_PAGINATION, &p.default_size.origin, "`default_size` must be at least 1");
    }
    if p.max_size.value == 0 {
        diags.error(codes::BAD_PAGINATION, &p.max_size.origin, "`max_size` must be at least 1");
    }
    if p.default_size.value > p.max_size.value {
        diags
            .error(
                codes::BAD_PAGINATION,
                &p.default_size.origin,
                format!("`default_size` {} is above `max_size` {}", p.default_size.value, p.max_size.value),
            )
            .related(&p.max_size.origin, "`max_size` set here");
    }
}

/// Lists go under a key clients can name in any language: `data`, `results`, `rows`.
fn envelope_is_a_plain_key(resource: &crate::model::Resource, diags: &mut Diagnostics) {
    if let Envelope::Key(key) = &resource.envelope.value
        && !crate::predicates::is_plain_key(key)
    {
        diags
            .error(
                codes::INVALID_VALUE,
                &resource.envelope.origin,
                format!("envelope key `{key}` is not a plain JSON key"),
            )
            .hint("use `bare`, `data`, `results`, or a name of letters, digits and `_`");
    }
}

/// Cursor pages always carry `has_more`, which a bare JSON array has no room for.
fn cursor_needs_envelope(resource: &crate::model::Resource, diags: &mut Diagnostics) {
    if resource.pagination.style == PageStyle::Cursor && resource.envelope.value == Envelope::Bare {
        diags
            .error(
                codes::BAD_PAGINATION,
                &resource.envelope.origin,
                format!("`{}` pages by cursor, which needs an envelope for `has_more`", resource.name.value),
            )
            .hint("use `envelope: data`, or another pagination style");
    }
}

/// A shared cache serves one caller's response to the next: only for data anyone may read.
fn public_cache_only_on_public_data(resource: &crate::model::Resource, diags: &mut Diagnostics) {
    let Some(cache) = &resource.cache else { return };
    if cache.visibility.value != Visibility::Public {
        return;
    }
    let anyone_reads = resource.access.read.iter().any(|r| r.value == AccessRule::Anyone);
    if resource.owner.is_some() || !anyone_reads || !resource.shown_alike() {
        let why = if resource.owner.is_some() {
            "is owned"
        } else if !anyone_reads {
            "is readable only by signed-in callers"
        } else {
            "shows some fields only to some callers (`read`)"
        };
        diags
            .error(
                codes::CACHE_PUBLIC_PRIVATE,
                &cache.visibility.origin,
                format!("`{}` {why}, so a shared cache must not store it", resource.name.value),
            )
            .hint("use `visibility: private`");
    }
}

/// `"*"` admits every origin and so stands alone; the others are `scheme://host[:port]`.
fn cors_origins(service: &Service, diags: &mut Diagnostics) {
    let Some(cors) = &service.cors else { return };
    for o in &cors.allowed_origins {
        if o.value == "*" {
            if cors.allowed_origins.len() > 1 {
                diags.error(
                    codes::BAD_CORS,
                    &o.origin,
                    "`\"*\"` admits every origin and cannot be combined with others",
                );
            }
            continue;
        }
        let ok = (o.value.starts_with("http://") || o.value.starts_with("https://"))
            && !o.value.trim_start_matches("https://").trim_start_matches("http://").contains('/');
        if !ok {
            diags
                .error(codes::BAD_CORS, &o.origin, format!("`{}` is not an origin", o.value))
                .hint("an origin is `scheme://host[:port]` with no path, e.g. `https://app.example.com`");
        }
    }
}
