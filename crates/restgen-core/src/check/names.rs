//! Names that become Rust identifiers, crate names and JSON keys.

use crate::diagnostics::{Diagnostics, codes};
use crate::model::{Resource, Service};
use crate::origin::Origin;

/// Rust keywords that cannot even be raw identifiers, so no field may take them.
const UNUSABLE: [&str; 4] = ["self", "super", "crate", "extern"];

pub(super) fn check(service: &Service, diags: &mut Diagnostics) {
    service_name(service, diags);
    for resource in &service.resources {
        self::resource(resource, diags);
    }
}

pub(super) fn resource(resource: &Resource, diags: &mut Diagnostics) {
    snake_name("resource", &resource.name.value, &resource.name.origin, diags);
    for field in &resource.fields {
        reserved_field(&field.name.value, &field.name.origin, diags);
    }
    fields(resource, diags);
    if let Some(states) = &resource.states {
        for t in &states.transitions {
            snake_name("transition", &t.name.value, &t.name.origin, diags);
        }
    }
}

pub(super) fn fields(resource: &Resource, diags: &mut Diagnostics) {
    for field in &resource.fields {
        snake_name("field", &field.name.value, &field.name.origin, diags);
    }
}

/// The service name becomes a crate name: `shop`, `my-shop` or `my_shop`, not `MyShop`.
fn service_name(service: &Service, diags: &mut Diagnostics) {
    let name = &service.name.value;
    let mut parts = name.split(['-', '_']);
    let ok = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && parts.all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    if !ok {
        diags
            .error(
                codes::BAD_NAME,
                &service.name.origin,
                format!("service name `{name}` is not lower snake or kebab case"),
            )
            .label("used as the crate and binary name")
            .hint(format!("write it as `{}`", to_snake(name).replace('_', "-")));
    }
}

/// Resource, field and transition names are snake case: they become Rust identifiers,
/// path segments and JSON keys, and must read the same in all three.
fn snake_name(what: &str, name: &str, origin: &Origin, diags: &mut Diagnostics) {
    let ok = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.contains("__")
        && !name.ends_with('_');
    if !ok {
        diags
            .error(codes::BAD_NAME, origin, format!("{what} name `{name}` is not snake case"))
            .hint(format!("write it as `{}`", to_snake(name)));
    } else if UNUSABLE.contains(&name) {
        diags.error(codes::BAD_NAME, origin, format!("{what} name `{name}` is a reserved word in Rust"));
    }
}

/// `id`, `owner_id`, `created_at` and `updated_at` are set by the server on every
/// resource; a field of that name would shadow them.
fn reserved_field(name: &str, origin: &Origin, diags: &mut Diagnostics) {
    if super::RESERVED_FIELDS.contains(&name) {
        diags
            .error(codes::RESERVED_FIELD, origin, format!("field name `{name}` is reserved"))
            .label("set by the server on every resource")
            .hint("`id`, `owner_id`, `created_at` and `updated_at` exist already; choose another name");
    }
}

fn to_snake(name: &str) -> String {
    use heck::ToSnakeCase;
    let s = name.to_snake_case();
    if s.is_empty() { "name".to_owned() } else { s }
}
