//! The changes of a resource's fields: each field added, removed or changed, its type,
//! settability, bounds and visibility.

use super::{Class, Cx};
use crate::diagnostics::Diagnostics;
use crate::evolution::pairing::{Partner, partner};
use crate::model::*;
use crate::origin::{Located, Origin};
use std::collections::BTreeSet;

pub(super) fn fields(cx: &mut Cx, o: &Resource, n: &Resource) {
    let mut quiet = Diagnostics::new();
    let mut continued = BTreeSet::new();
    for f in &n.fields {
        let p = partner(
            "field",
            &f.name.value,
            f.renamed_from.as_ref(),
            &|x| o.field(x).is_some(),
            &|x| n.field(x).is_some(),
            &mut quiet,
        );
        let Some(old) = p.old_name(&f.name.value).and_then(|x| o.field(x)) else {
            let required = f.required.value && f.settable.value.create;
            let (class, kind, what) = if required {
                (Class::Breaking, "required-field-added", "a create must now send it")
            } else {
                (Class::Compatible, "field-added", "optional")
            };
            cx.push(class, kind, format!("field `{}` is added ({what})", f.name.value), &o.name.origin, &f.name.origin);
            continue;
        };
        continued.insert(old.name.value.clone());
        if let Partner::Renamed(from) = &p {
            cx.push(
                Class::Breaking,
                "field-renamed",
                format!("field `{from}` is renamed `{}`: clients read and send the old name", f.name.value),
                &old.name.origin,
                &f.name.origin,
            );
        }
        field(cx, (o, old), (n, f));
    }
    for f in o.fields.iter().filter(|f| !continued.contains(&f.name.value)) {
        cx.push(
            Class::Breaking,
            "field-removed",
            format!("field `{}` is removed", f.name.value),
            &f.name.origin,
            &n.name.origin,
        );
    }
}

/// One field continued: `(resource, field)` before and now.
pub(super) fn field(cx: &mut Cx, (or, o): (&Resource, &Field), (nr, n): (&Resource, &Field)) {
    let name = &n.name.value;
    let (renamed, admins) = (cx.renamed, cx.admins);
    let mut push = |class: Class, kind: &'static str, message: String, before: &Origin, after: &Origin| {
        cx.push(class, kind, format!("field `{name}`: {message}"), before, after);
    };
    access(&mut push, admins, (or, o), (nr, n));
    let (ot, nt) = (&o.ty.value, &n.ty.value);
    let retargeted = matches!((ot, nt), (FieldType::Ref { to: a }, FieldType::Ref { to: b })
        if renamed.get(&a.value).unwrap_or(&a.value) != &b.value);
    if ot.kind() != nt.kind() || retargeted {
        push(
            Class::Breaking,
            "type-changed",
            format!("the type changes from {} to {}", ot.keyword(), nt.keyword()),
            &o.ty.origin,
            &n.ty.origin,
        );
    } else if let (FieldType::Enum { values: a }, FieldType::Enum { values: b }) = (ot, nt) {
        let removed: Vec<&str> =
            a.iter().filter(|v| !b.iter().any(|x| x.value == v.value)).map(|v| v.value.as_str()).collect();
        let added: Vec<&str> =
            b.iter().filter(|v| !a.iter().any(|x| x.value == v.value)).map(|v| v.value.as_str()).collect();
        if !removed.is_empty() {
            push(
                Class::Breaking,
                "enum-value-removed",
                format!("values {} are removed", removed.join(", ")),
                &o.ty.origin,
                &n.ty.origin,
            );
        }
        if !added.is_empty() {
            push(
                Class::Compatible,
                "enum-value-added",
                format!("values {} are added (a client that matches every value meets a new one)", added.join(", ")),
                &o.ty.origin,
                &n.ty.origin,
            );
        }
    }
    let creatable = nr.settable_in(n, WriteOp::Create);
    if !o.required.value && n.required.value && creatable {
        push(
            Class::Breaking,
            "field-required",
            "a create must now send it".into(),
            &o.required.origin,
            &n.required.origin,
        );
    }
    if o.required.value && !n.required.value {
        push(
            Class::Compatible,
            "field-optional",
            "a create may leave it out".into(),
            &o.required.origin,
            &n.required.origin,
        );
    }
    if !o.nullable.value && n.nullable.value {
        push(
            Class::Breaking,
            "field-nullable",
            "answers may carry null".into(),
            &o.nullable.origin,
            &n.nullable.origin,
        );
    }
    if o.nullable.value && !n.nullable.value && WriteOp::ALL.into_iter().any(|op| nr.settable_in(n, op)) {
        push(Class::Breaking, "field-not-nullable", "null is refused".into(), &o.nullable.origin, &n.nullable.origin);
    }
    let lost: Vec<&str> = WriteOp::ALL
        .into_iter()
        .filter(|op| or.settable_in(o, *op) && !nr.settable_in(n, *op))
        .map(|op| op.operation().word())
        .collect();
    let gained: Vec<&str> = WriteOp::ALL
        .into_iter()
        .filter(|op| !or.settable_in(o, *op) && nr.settable_in(n, *op))
        .map(|op| op.operation().word())
        .collect();
    if !lost.is_empty() {
        push(
            Class::Breaking,
            "field-no-longer-settable",
            format!("no longer settable in {}", lost.join(", ")),
            &o.settable.origin,
            &n.settable.origin,
        );
    }
    if !gained.is_empty() {
        push(
            Class::Compatible,
            "field-settable",
            format!("now settable in {}", gained.join(", ")),
            &o.settable.origin,
            &n.settable.origin,
        );
    }
    if !o.write_only && n.write_only {
        push(
            Class::Breaking,
            "field-hidden",
            "no longer in answers (write-only)".into(),
            &o.name.origin,
            &n.name.origin,
        );
    }
    if o.write_only && !n.write_only {
        push(
            Class::Security,
            "field-exposed",
            "now in answers, where it was write-only".into(),
            &o.name.origin,
            &n.name.origin,
        );
    }
    // Per owner (on an owned resource, unless `global`), or across the whole table.
    let scope = |r: &Resource, f: &Field| f.unique.value.then_some(r.owner.is_some() && !f.unique_global);
    match (scope(or, o), scope(nr, n)) {
        (None, Some(_)) => push(
            Class::Breaking,
            "unique-added",
            "a value another record holds is now refused (409)".into(),
            &o.unique.origin,
            &n.unique.origin,
        ),
        (Some(true), Some(false)) => push(
            Class::Breaking,
            "unique-across-owners",
            "unique across owners, where it was per owner: a value another account's record holds is now refused \
             (409), which discloses it to the caller"
                .into(),
            &o.unique.origin,
            &n.unique.origin,
        ),
        (Some(false), Some(true)) => push(
            Class::Compatible,
            "unique-per-owner",
            "unique per owner, where it was across owners: a value only another account's record holds is now taken"
                .into(),
            &o.unique.origin,
            &n.unique.origin,
        ),
        _ => {}
    }
    if ot.kind() == nt.kind() {
        bounds(&mut push, o, n);
    }
    for (what, was, is, ro, rn) in [
        ("filter", o.filter.value, n.filter.value, &o.filter.origin, &n.filter.origin),
        ("sort", o.sort.value, n.sort.value, &o.sort.origin, &n.sort.origin),
    ] {
        match (was, is) {
            (true, false) => push(
                Class::Breaking,
                if what == "filter" { "filter-removed" } else { "sort-removed" },
                format!("lists no longer {what} by it"),
                ro,
                rn,
            ),
            (false, true) => push(
                Class::Compatible,
                if what == "filter" { "filter-added" } else { "sort-added" },
                format!("lists may {what} by it"),
                ro,
                rn,
            ),
            _ => {}
        }
    }
    let default = |f: &Field| f.default.as_ref().map(|d| d.value.clone());
    if default(o) != default(n) && default(o).is_some() {
        let (ro, rn) = (
            o.default.as_ref().map_or(&o.name.origin, |d| &d.origin),
            n.default.as_ref().map_or(&n.name.origin, |d| &d.origin),
        );
        push(Class::Breaking, "default-changed", "a create that leaves it out gets another value".into(), ro, rn);
    }
}

/// Bounds tightened refuse values accepted before; loosened, they accept more.
pub(super) fn bounds(push: &mut impl FnMut(Class, &'static str, String, &Origin, &Origin), o: &Field, n: &Field) {
    let mut tighter = Vec::new();
    let mut looser = Vec::new();
    let lower = |a: Option<f64>, b: Option<f64>, what: &str, t: &mut Vec<String>, l: &mut Vec<String>| match (a, b) {
        (a, Some(b)) if a.is_none_or(|a| b > a) => t.push(format!("{what} {b}")),
        (Some(a), b) if b.is_none_or(|b| b < a) => {
            l.push(format!("{what} {}", b.map_or("none".into(), |b| b.to_string())))
        }
        _ => {}
    };
    let upper = |a: Option<f64>, b: Option<f64>, what: &str, t: &mut Vec<String>, l: &mut Vec<String>| match (a, b) {
        (a, Some(b)) if a.is_none_or(|a| b < a) => t.push(format!("{what} {b}")),
        (Some(a), b) if b.is_none_or(|b| b > a) => {
            l.push(format!("{what} {}", b.map_or("none".into(), |b| b.to_string())))
        }
        _ => {}
    };
    lower(o.min.as_ref().map(|m| m.value), n.min.as_ref().map(|m| m.value), "min", &mut tighter, &mut looser);
    upper(o.max.as_ref().map(|m| m.value), n.max.as_ref().map(|m| m.value), "max", &mut tighter, &mut looser);
    let len = |f: Option<&Located<u64>>| f.map(|m| m.value as f64);
    lower(len(o.min_length.as_ref()), len(n.min_length.as_ref()), "min_length", &mut tighter, &mut looser);
    let max_len = |f: &Field| f.effective_max_length().map(|m| m as f64);
    upper(max_len(o), max_len(n), "max_length", &mut tighter, &mut looser);
    let pattern = |f: &Field| f.pattern.as_ref().map(|p| p.value.clone());
    match (pattern(o), pattern(n)) {
        (a, Some(b)) if a.as_ref() != Some(&b) => tighter.push(format!("pattern {b}")),
        (Some(_), None) => looser.push("no pattern".into()),
        _ => {}
    }
    if !tighter.is_empty() {
        push(
            Class::Breaking,
            "bounds-tightened",
            format!("bounds tightened: {}", tighter.join(", ")),
            &o.name.origin,
            &n.name.origin,
        );
    }
    if !looser.is_empty() {
        push(
            Class::Compatible,
            "bounds-loosened",
            format!("bounds loosened: {}", looser.join(", ")),
            &o.name.origin,
            &n.name.origin,
        );
    }
}

/// A field's `read` and `write` against the callers they admit, a field without one
/// admitting whoever its record's own rules do: a caller who loses a field is broken, one
/// who gains it is a security change to review.
fn access(
    push: &mut impl FnMut(Class, &'static str, String, &Origin, &Origin),
    admins: &[String],
    (or, o): (&Resource, &Field),
    (nr, n): (&Resource, &Field),
) {
    let lists = [
        ("read", "see", &o.read, &n.read, &or.access.read, &nr.access.read),
        ("write", "set", &o.write, &n.write, &or.access.write, &nr.access.write),
    ];
    for (key, verb, old, new, old_record, new_record) in lists {
        if old.is_none() && new.is_none() {
            continue;
        }
        let (old, new) = (old.as_deref().unwrap_or(old_record), new.as_deref().unwrap_or(new_record));
        let at =
            |rules: &[Located<AccessRule>], field: &Field| rules.first().map_or(&field.origin, |r| &r.origin).clone();
        let (at_old, at_new) = (at(old, o), at(new, n));
        // An admin role reaches the field whatever the list says.
        let missing = |from: &[Located<AccessRule>], to: &[Located<AccessRule>]| -> Vec<String> {
            from.iter()
                .filter(|r| !matches!(&r.value, AccessRule::Role(role) if admins.contains(role)))
                .filter(|r| !super::resource::covers(to, &r.value))
                .map(|r| r.value.word().to_owned())
                .collect()
        };
        let (lost, gained) = (missing(old, new), missing(new, old));
        if !lost.is_empty() {
            let message = format!("`{key}` no longer admits {}: they can no longer {verb} it", lost.join(", "));
            push(Class::Breaking, "field-access-narrowed", message, &at_old, &at_new);
        }
        if !gained.is_empty() {
            let message = format!("`{key}` now admits {}: check that they should {verb} it", gained.join(", "));
            push(Class::Security, "field-access-widened", message, &at_old, &at_new);
        }
    }
}
