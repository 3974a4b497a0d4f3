//! API versions and the `since`/`until` gates on resources and fields.

use crate::diagnostics::{Diagnostics, codes};
use crate::model::{Gate, Resource, Service};

pub(super) fn check(service: &Service, diags: &mut Diagnostics) {
    versions_ascending(service, diags);
    for r in &service.resources {
        resource(r, diags);
        gate_declared(service, &r.gate, diags);
        for field in &r.fields {
            gate_declared(service, &field.gate, diags);
        }
    }
}

/// The gates of one resource and its fields, as far as they can be judged without the
/// versions the service declares.
pub(super) fn resource(resource: &Resource, diags: &mut Diagnostics) {
    gate_ordered(&resource.gate, diags);
    for field in &resource.fields {
        gate_ordered(&field.gate, diags);
        required_gated(field, diags);
    }
}

/// Storage is shared by every version: a record created in a version without the field
/// gets its default, so the field cannot be required.
///   note: { type: text, required: true, since: 2 }   # v1 creates could not give it
fn required_gated(field: &crate::model::Field, diags: &mut Diagnostics) {
    let gate = field.gate.since.as_ref().or(field.gate.until.as_ref());
    if let Some(bound) = gate
        && field.required.value
    {
        diags
            .error(
                codes::REQUIRED_GATED,
                &field.required.origin,
                format!(
                    "`{}` is required but gated by version: a version without it could not give it",
                    field.name.value
                ),
            )
            .related(&bound.origin, "gated here")
            .hint("make it optional, with a `default` where every record needs a value");
    }
}

/// Versions are listed oldest first, each once; a sunset comes after the deprecation.
fn versions_ascending(service: &Service, diags: &mut Diagnostics) {
    let versions = &service.api.versions;
    for (i, v) in versions.iter().enumerate() {
        if let Some(prev) = i.checked_sub(1).map(|p| &versions[p])
            && v.number.value <= prev.number.value
        {
            let what =
                if v.number.value == prev.number.value { "is listed twice" } else { "comes after a newer version" };
            diags
                .error(codes::VERSION_ORDER, &v.number.origin, format!("version {} {what}", v.number.value))
                .related(&prev.number.origin, "previous version")
                .hint("list versions oldest first, each once");
        }
        if v.number.value == 0 {
            diags.error(codes::INVALID_VALUE, &v.number.origin, "versions start at 1");
        }
        if let (Some(dep), Some(sunset)) = (&v.deprecated, &v.sunset)
            && sunset.value < dep.value
        {
            diags
                .error(
                    codes::VERSION_ORDER,
                    &sunset.origin,
                    format!("version {} sunsets before it is deprecated", v.number.value),
                )
                .related(&dep.origin, "deprecated here");
        }
    }
}

/// `since` and `until` name declared versions.
///   since: 3   # rejected when api.versions lists only 1 and 2
fn gate_declared(service: &Service, gate: &Gate, diags: &mut Diagnostics) {
    let declared: Vec<u32> = service.version_numbers().collect();
    for (key, bound) in [("since", &gate.since), ("until", &gate.until)] {
        if let Some(b) = bound
            && b.value > 0
            && !declared.contains(&b.value)
        {
            let hint = if declared.is_empty() {
                "declare versions in `api.versions`".to_owned()
            } else {
                format!("declared versions: {}", declared.iter().map(u32::to_string).collect::<Vec<_>>().join(", "))
            };
            diags
                .error(codes::UNDECLARED_VERSION, &b.origin, format!("`{key}` names undeclared version {}", b.value))
                .hint(hint);
        }
    }
}

/// Versions count from 1, and `since` comes before `until`.
///   since: 2, until: 2   # no version has it
fn gate_ordered(gate: &Gate, diags: &mut Diagnostics) {
    for (key, bound) in [("since", &gate.since), ("until", &gate.until)] {
        if let Some(b) = bound
            && b.value == 0
        {
            diags.error(codes::INVALID_VALUE, &b.origin, format!("`{key}` names version 0; versions start at 1"));
        }
    }
    if let (Some(since), Some(until)) = (&gate.since, &gate.until)
        && since.value >= until.value
    {
        diags
            .error(
                codes::EMPTY_VERSION_RANGE,
                &since.origin,
                format!("`since` {} is not before `until` {}: no version has it", since.value, until.value),
            )
            .related(&until.origin, "`until` set here");
    }
}
