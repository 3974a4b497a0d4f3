//! References between resources: `ref` fields, `owner`, `nested_under`.

use crate::diagnostics::{Diagnostics, codes, did_you_mean};
use crate::model::{AccessRule, Field, FieldType, Resource, Service, WriteOp};
use crate::origin::Located;

pub(super) fn check(service: &Service, diags: &mut Diagnostics) {
    for resource in &service.resources {
        for field in &resource.fields {
            if let FieldType::Ref { to } = &field.ty.value
                && resource_exists(service, "`to`", to, diags)
            {
                names_only_self(service, resource, field, to, diags);
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

/// A ref names only a record its caller may read. A ref to the accounts, which a plain
/// account reads only its own of, lets such a caller name only itself: almost never what
/// a field others set (a message's `recipient_id`) is for, so a warning where a write open
/// to plain accounts may set it.
fn names_only_self(
    service: &Service,
    resource: &Resource,
    field: &Field,
    to: &Located<String>,
    diags: &mut Diagnostics,
) {
    let Some(auth) = &service.auth else { return };
    let Some(principal) = service.principal() else { return };
    if principal.name.value != to.value {
        return;
    }
    let admin = |role: &String| auth.admin_roles.iter().any(|a| &a.value == role);
    // Any rule but an admin's role lets a plain account in.
    let plain = |rules: &[Located<AccessRule>]| {
        rules.iter().any(|r| !matches!(&r.value, AccessRule::Role(role) if admin(role)))
    };
    let reads_all = principal.access.read.iter().any(|r| match &r.value {
        AccessRule::Anyone | AccessRule::Authenticated => true,
        AccessRule::Role(role) => !admin(role),
        AccessRule::Owner => false,
    });
    let set_by_plain = (resource.settable_in(field, WriteOp::Create) && plain(&resource.access.create))
        || ((resource.settable_in(field, WriteOp::Replace) || resource.settable_in(field, WriteOp::Patch))
            && plain(&resource.access.write));
    if reads_all || !set_by_plain {
        return;
    }
    diags
        .warning(
            codes::REF_NAMES_ONLY_SELF,
            &to.origin,
            format!(
                "`{}` can name only the caller's own `{}`: a plain account reads no other",
                field.name.value, to.value
            ),
        )
        .hint(format!(
            "let signed-in callers read accounts (`read: [authenticated]` on `{}`), or leave the field to admins",
            to.value
        ));
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
