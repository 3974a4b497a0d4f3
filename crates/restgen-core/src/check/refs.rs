//! References between resources: `ref` fields, `owner`, `nested_under`.

use crate::diagnostics::{Diagnostics, codes, did_you_mean};
use crate::model::{FieldType, Resource, Service};
use crate::origin::Located;

pub(super) fn check(service: &Service, diags: &mut Diagnostics) {
    for resource in &service.resources {
        for field in &resource.fields {
            if let FieldType::Ref { to } = &field.ty.value {
                resource_exists(service, "`to`", to, diags);
            }
        }
        owner_is_principal(service, resource, diags);
        nested_parents_linked(service, resource, diags);
    }
}

/// A name that should be a resource of this service.
fn resource_exists(service: &Service, key: &str, name: &Located<String>, diags: &mut Diagnostics) -> bool {
    if service.resource(&name.value).is_some() {
        return true;
    }
    let hint = did_you_mean(&name.value, service.resources.iter().map(|r| r.name.value.as_str()))
        .map(|m| format!("did you mean `{m}`?"))
        .unwrap_or_else(|| {
            let all: Vec<&str> = service.resources.iter().map(|r| r.name.value.as_str()).collect();
            format!("resources: {}", all.join(", "))
        });
    diags
        .error(codes::UNKNOWN_RESOURCE, &name.origin, format!("{key} names unknown resource `{}`", name.value))
        .hint(hint);
    false
}

/// `owner` names the principal resource (the one `auth.principal` declares): records are
/// owned by accounts.
fn owner_is_principal(service: &Service, resource: &Resource, diags: &mut Diagnostics) {
    let Some(owner) = &resource.owner else { return };
    if !resource_exists(service, "`owner`", owner, diags) {
        return;
    }
    if let Some(principal) = service.auth.as_ref().and_then(|a| a.principal.as_ref())
        && principal.value != owner.value
    {
        diags
            .error(
                codes::OWNER_NOT_PRINCIPAL,
                &owner.origin,
                format!("`owner` is `{}` but the principal resource is `{}`", owner.value, principal.value),
            )
            .related(&principal.origin, "principal declared here")
            .hint("records are owned by accounts: name the principal resource");
    }
}

/// `nested_under: [user]` lists a parent's children, so something must tie a child to
/// its parent: `owner: user`, or a `ref` field to `user`.
fn nested_parents_linked(service: &Service, resource: &Resource, diags: &mut Diagnostics) {
    for (i, parent) in resource.nested_under.iter().enumerate() {
        if let Some(first) = resource.nested_under[..i].iter().find(|p| p.value == parent.value) {
            diags
                .error(
                    codes::DUPLICATE_ENTRY,
                    &parent.origin,
                    format!("`{}` is listed twice in nested_under", parent.value),
                )
                .related(&first.origin, "first listed here");
            continue;
        }
        if !resource_exists(service, "`nested_under`", parent, diags) {
            continue;
        }
        if parent.value == resource.name.value {
            diags.error(codes::NESTED_WITHOUT_LINK, &parent.origin, "a resource cannot be nested under itself");
            continue;
        }
        let by_owner = resource.owner.as_ref().is_some_and(|o| o.value == parent.value);
        let by_ref =
            resource.fields.iter().any(|f| matches!(&f.ty.value, FieldType::Ref { to } if to.value == parent.value));
        if !by_owner && !by_ref {
            diags
                .error(
                    codes::NESTED_WITHOUT_LINK,
                    &parent.origin,
                    format!("`{}` is nested under `{}` but nothing links the two", resource.name.value, parent.value),
                )
                .hint(format!("add `owner: {}` or a field `{{ type: ref, to: {} }}`", parent.value, parent.value));
        }
    }
}
