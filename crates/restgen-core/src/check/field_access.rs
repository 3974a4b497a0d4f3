//! A field's `read` and `write`: each says something the runtime can honour. The words
//! themselves (declared roles, `owner` on an owned resource, auth present) are checked
//! with the resource's own access lists in `auth`.

use crate::diagnostics::{Diagnostics, codes};
use crate::model::{AccessRule, Field, FieldType, Resource, WriteOp};
use crate::origin::Located;

pub(super) fn resource(resource: &Resource, diags: &mut Diagnostics) {
    for field in &resource.fields {
        if let Some(read) = &field.read {
            read_shown(resource, field, read, diags);
        }
        if let Some(write) = &field.write {
            write_settable(resource, field, write, diags);
            required_of_every_creator(resource, field, write, diags);
        }
    }
}

/// `read` hides a field from some callers: one never shown (write-only) has nothing to
/// hide, and the lifecycle's state is what `status`, transitions and `_links` show.
///   password: { type: password, read: [admin] }        # rejected
///   status: { type: enum, values: [a, b], read: [hr] } # rejected where `states.field` is status
fn read_shown(resource: &Resource, field: &Field, read: &[Located<AccessRule>], diags: &mut Diagnostics) {
    let at = read.first().map_or(&field.origin, |r| &r.origin);
    let name = &field.name.value;
    if field.write_only || field.ty.value == FieldType::Password {
        diags
            .error(codes::FIELD_ACCESS, at, format!("`read` on `{name}`, which is write-only and never shown"))
            .hint("drop `read`; who may set it is `write`");
    }
    if resource.state_field() == Some(name.as_str()) {
        diags
            .error(
                codes::FIELD_ACCESS,
                at,
                format!("`read` on `{name}`, the lifecycle's state, which `status`, transitions and `_links` show"),
            )
            .hint("gate the transitions with `roles`, or hide the record with `access.read`");
    }
}

/// `write` narrows who may set a field a client sets: on one no client sets it says
/// nothing, and `roles` only admins ever set.
///   note: { type: text, write: [hr] }                  # rejected: not settable
fn write_settable(resource: &Resource, field: &Field, write: &[Located<AccessRule>], diags: &mut Diagnostics) {
    let at = write.first().map_or(&field.origin, |r| &r.origin);
    let name = &field.name.value;
    if field.ty.value == FieldType::Roles {
        diags
            .error(codes::FIELD_ACCESS, at, format!("`write` on `{name}`: a `roles` field is set by admins only"))
            .hint("drop `write`");
        return;
    }
    if !WriteOp::ALL.into_iter().any(|op| resource.settable_in(field, op)) {
        diags
            .error(codes::FIELD_ACCESS, at, format!("`write` on `{name}`, which no client sets"))
            .hint("add `settable`, or drop `write`");
    }
}

/// A required field without a default is the creator's to give: every caller
/// `access.create` admits must be one `write` admits, or their creates could not be made.
///   salary: { type: integer, required: true, settable: true, write: [hr] }   # rejected
///   where `access.create` is [authenticated]; fine with create: [hr] or a default
fn required_of_every_creator(
    resource: &Resource,
    field: &Field,
    write: &[Located<AccessRule>],
    diags: &mut Diagnostics,
) {
    if !field.required.value || field.default.is_some() || !resource.settable_in(field, WriteOp::Create) {
        return;
    }
    let owned = resource.owner.is_some();
    let admits = |rule: &AccessRule| write.iter().any(|w| w.value == *rule);
    let covered = |creator: &AccessRule| {
        admits(creator)
            || admits(&AccessRule::Anyone)
            // An owned record is created by a signed-in caller, whose it becomes.
            || ((admits(&AccessRule::Authenticated) || (owned && admits(&AccessRule::Owner)))
                && (owned || *creator != AccessRule::Anyone))
    };
    let Some(left_out) = resource.access.create.iter().find(|c| !covered(&c.value)) else { return };
    let at = write.first().map_or(&field.origin, |r| &r.origin);
    diags
        .error(
            codes::FIELD_ACCESS,
            at,
            format!(
                "`{}` is required at create, but `write` does not admit `{}`, whom `access.create` admits",
                field.name.value,
                left_out.value.word()
            ),
        )
        .related(&left_out.origin, "admitted to create here")
        .hint("give the field a `default`, or admit every creator in `write`");
}
