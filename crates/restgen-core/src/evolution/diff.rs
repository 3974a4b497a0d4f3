//! What a schema change does to the clients of each version already served: every change
//! to resources, fields, operations, transitions, access and paths, classified breaking
//! or compatible (or a security change, where access widens), by the rules of
//! `docs/evolution.md`. Each served version is compared as it shows itself (fields gated
//! out of it are not in it), so a breaking change confined to a new version is not one.

use super::pairing::{Partner, partner};
use crate::diagnostics::Diagnostics;
use crate::model::*;
use crate::origin::{Located, Origin};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// A client of the version may fail: it needs a new version.
    Breaking,
    /// Who may do what widened: deliberate, or a hole.
    Security,
    /// Clients of the version go on working.
    Compatible,
}

impl Class {
    pub fn word(self) -> &'static str {
        match self {
            Class::Breaking => "breaking",
            Class::Security => "security",
            Class::Compatible => "compatible",
        }
    }
}

/// One change, in the versions it lands in.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub class: Class,
    /// A stable name of the kind of change: `field-removed`.
    pub kind: &'static str,
    /// The resource it is in (the new name), or `""` for the API as a whole.
    pub resource: String,
    pub message: String,
    /// Where it was in the old schema, and is in the new one (`Unknown` where it is not).
    pub before: Origin,
    pub after: Origin,
    /// The served versions it lands in; empty for an unversioned API.
    pub versions: Vec<u32>,
}

/// Every change between two schemas.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// The versions the old schema serves (empty: unversioned).
    pub served: Vec<u32>,
    pub changes: Vec<Change>,
}

impl Report {
    pub fn count(&self, class: Class) -> usize {
        self.changes.iter().filter(|c| c.class == class).count()
    }
}

/// The changes from `old` to `new`.
pub fn diff(old: &Service, new: &Service) -> Report {
    let served: Vec<u32> = old.version_numbers().collect();
    let mut changes: Vec<Change> = Vec::new();
    if served.is_empty() {
        compare(old, new, None, &mut changes);
        return Report { served, changes };
    }
    let declared: Vec<u32> = new.version_numbers().collect();
    for v in &served {
        if !declared.contains(v) {
            let before = old.api.versions.iter().find(|x| x.number.value == *v).map(|x| x.number.origin.clone());
            changes.push(Change {
                class: Class::Breaking,
                kind: "version-removed",
                resource: String::new(),
                message: format!("version {v} is no longer served"),
                before: before.unwrap_or_default(),
                after: Origin::Unknown,
                versions: vec![*v],
            });
            continue;
        }
        let mut here = Vec::new();
        compare(&old.at_version(*v), &new.at_version(*v), Some(*v), &mut here);
        for c in here {
            // One change seen in several versions is reported once, with all of them.
            match changes.iter_mut().find(|x| x.kind == c.kind && x.resource == c.resource && x.message == c.message) {
                Some(x) => x.versions.push(*v),
                None => changes.push(c),
            }
        }
    }
    for v in declared.iter().filter(|v| !served.contains(v)) {
        let after = new.api.versions.iter().find(|x| x.number.value == *v).map(|x| x.number.origin.clone());
        changes.push(Change {
            class: Class::Compatible,
            kind: "version-added",
            resource: String::new(),
            message: format!("version {v} is added"),
            before: Origin::Unknown,
            after: after.unwrap_or_default(),
            versions: Vec::new(),
        });
    }
    Report { served, changes }
}

/// Collects changes of one version (`None`: the unversioned API).
struct Cx<'a> {
    out: &'a mut Vec<Change>,
    version: Option<u32>,
    resource: String,
    /// Resources renamed, old name to new: a ref to one is the same ref.
    renamed: &'a BTreeMap<String, String>,
}

impl Cx<'_> {
    fn push(&mut self, class: Class, kind: &'static str, message: String, before: &Origin, after: &Origin) {
        self.out.push(Change {
            class,
            kind,
            resource: self.resource.clone(),
            message,
            before: before.clone(),
            after: after.clone(),
            versions: self.version.into_iter().collect(),
        });
    }
}

fn compare(old: &Service, new: &Service, version: Option<u32>, out: &mut Vec<Change>) {
    // Renames are judged (and reported) by `restgen generate`; here they only pair.
    let mut quiet = Diagnostics::new();
    let mut continued = BTreeSet::new();
    let mut pairs = Vec::new();
    let mut renamed = BTreeMap::new();
    for r in &new.resources {
        let p = partner(
            "resource",
            &r.name.value,
            r.renamed_from.as_ref(),
            &|n| old.resource(n).is_some(),
            &|n| new.resource(n).is_some(),
            &mut quiet,
        );
        let o = p.old_name(&r.name.value).and_then(|n| old.resource(n));
        if let Some(o) = o {
            renamed.insert(o.name.value.clone(), r.name.value.clone());
        }
        pairs.push((r, o));
    }
    for (r, o) in pairs {
        let mut cx = Cx { out, version, resource: r.name.value.clone(), renamed: &renamed };
        match o {
            None => cx.push(
                Class::Compatible,
                "resource-added",
                format!("resource `{}` is added at {}", r.name.value, r.path.value),
                &Origin::Unknown,
                &r.name.origin,
            ),
            Some(o) => {
                continued.insert(o.name.value.clone());
                if o.name.value != r.name.value {
                    cx.push(
                        Class::Compatible,
                        "resource-renamed",
                        format!(
                            "resource `{}` is renamed `{}`: the wire is the same, the names of its types in the OpenAPI document and generated clients change",
                            o.name.value, r.name.value
                        ),
                        &o.name.origin,
                        &r.name.origin,
                    );
                }
                resource(&mut cx, o, r);
            }
        }
    }
    for o in old.resources.iter().filter(|o| !continued.contains(&o.name.value)) {
        let mut cx = Cx { out, version, resource: o.name.value.clone(), renamed: &renamed };
        cx.push(
            Class::Breaking,
            "resource-removed",
            format!("resource `{}` at {} is removed", o.name.value, o.path.value),
            &o.name.origin,
            &Origin::Unknown,
        );
    }
}

fn resource(cx: &mut Cx, o: &Resource, n: &Resource) {
    let (before, after) = (&o.name.origin, &n.name.origin);
    if o.path.value != n.path.value {
        let redirected = n.former_paths.iter().any(|p| p.value == o.path.value);
        let (class, kind, how) = if redirected {
            (Class::Compatible, "path-moved", "; the old path redirects (`former_paths`)")
        } else {
            (Class::Breaking, "path-changed", "; requests to the old one find nothing")
        };
        cx.push(
            class,
            kind,
            format!("the path changes from {} to {}{how}", o.path.value, n.path.value),
            &o.path.origin,
            &n.path.origin,
        );
    }
    for p in &o.former_paths {
        if !n.former_paths.iter().any(|x| x.value == p.value) && n.path.value != p.value {
            cx.push(
                Class::Breaking,
                "former-path-dropped",
                format!("former path {} no longer redirects", p.value),
                &p.origin,
                after,
            );
        }
    }
    if o.id != n.id {
        cx.push(
            Class::Breaking,
            "id-type-changed",
            format!("ids are {} instead of {}", n.id.word(), o.id.word()),
            before,
            after,
        );
    }
    for op in Operation::ALL {
        match (o.has(op), n.has(op)) {
            (true, false) => cx.push(
                Class::Breaking,
                "operation-removed",
                format!("operation `{}` is removed", op.word()),
                before,
                after,
            ),
            (false, true) => cx.push(
                Class::Compatible,
                "operation-added",
                format!("operation `{}` is added", op.word()),
                before,
                after,
            ),
            _ => {}
        }
    }
    if o.pagination.style != n.pagination.style {
        cx.push(
            Class::Breaking,
            "pagination-changed",
            format!("lists page by {} instead of {}", n.pagination.style.word(), o.pagination.style.word()),
            &o.pagination.origin,
            &n.pagination.origin,
        );
    }
    if n.pagination.max_size.value < o.pagination.max_size.value {
        cx.push(
            Class::Breaking,
            "page-size-narrowed",
            format!("the largest page is {} instead of {}", n.pagination.max_size.value, o.pagination.max_size.value),
            &o.pagination.origin,
            &n.pagination.origin,
        );
    }
    if o.envelope.value != n.envelope.value {
        cx.push(
            Class::Breaking,
            "envelope-changed",
            format!("lists come {} instead of {}", envelope(&n.envelope.value), envelope(&o.envelope.value)),
            &o.envelope.origin,
            &n.envelope.origin,
        );
    }
    for f in &o.formats.value {
        if !n.formats.value.contains(f) {
            cx.push(
                Class::Breaking,
                "format-removed",
                format!("format `{}` is no longer offered", f.word()),
                &o.formats.origin,
                &n.formats.origin,
            );
        }
    }
    for f in &n.formats.value {
        if !o.formats.value.contains(f) {
            cx.push(
                Class::Compatible,
                "format-added",
                format!("format `{}` is offered", f.word()),
                &o.formats.origin,
                &n.formats.origin,
            );
        }
    }
    access(cx, o, n);
    if o.not_owned != n.not_owned {
        cx.push(
            Class::Breaking,
            "not-owned-changed",
            format!("another's record answers {} instead of {}", not_owned(n.not_owned), not_owned(o.not_owned)),
            before,
            after,
        );
    }
    if o.unknown_fields == UnknownFields::Ignore && n.unknown_fields == UnknownFields::Reject {
        cx.push(
            Class::Breaking,
            "unknown-fields-rejected",
            "a field not settable is refused (400) instead of dropped".into(),
            before,
            after,
        );
    }
    if !o.require_if_match.value && n.require_if_match.value {
        cx.push(
            Class::Breaking,
            "if-match-required",
            "writes need `If-Match` (428 without)".into(),
            &o.require_if_match.origin,
            &n.require_if_match.origin,
        );
    }
    if o.status_endpoint.value && !n.status_endpoint.value {
        cx.push(
            Class::Breaking,
            "status-endpoint-removed",
            "the status endpoint is removed".into(),
            &o.status_endpoint.origin,
            &n.status_endpoint.origin,
        );
    }
    if o.links.value && !n.links.value {
        cx.push(
            Class::Breaking,
            "links-removed",
            "records no longer carry `_links`".into(),
            &o.links.origin,
            &n.links.origin,
        );
    }
    for e in &o.events {
        if !n.events.iter().any(|x| x.value == e.value) {
            cx.push(
                Class::Breaking,
                "event-removed",
                format!("event `{}` is no longer published", e.value),
                &e.origin,
                after,
            );
        }
    }
    for e in &n.events {
        if !o.events.iter().any(|x| x.value == e.value) {
            cx.push(Class::Compatible, "event-added", format!("event `{}` is published", e.value), before, &e.origin);
        }
    }
    transitions(cx, o, n);
    fields(cx, o, n);
}

fn envelope(e: &Envelope) -> String {
    match e {
        Envelope::Bare => "bare".into(),
        Envelope::Key(k) => format!("under `{k}`"),
    }
}

fn not_owned(n: NotOwned) -> &'static str {
    match n {
        NotOwned::Forbidden => "403",
        NotOwned::NotFound => "404",
    }
}

/// Whether `rules` let in whoever `rule` lets in.
fn covers(rules: &[Located<AccessRule>], rule: &AccessRule) -> bool {
    rules.iter().any(|r| {
        r.value == *rule
            || r.value == AccessRule::Anyone
            || (r.value == AccessRule::Authenticated && *rule != AccessRule::Anyone)
    })
}

fn access(cx: &mut Cx, o: &Resource, n: &Resource) {
    for ((key, old), (_, new)) in o.access.lists().into_iter().zip(n.access.lists()) {
        let lost: Vec<&str> = old.iter().filter(|r| !covers(new, &r.value)).map(|r| r.value.word()).collect();
        let gained: Vec<&str> = new.iter().filter(|r| !covers(old, &r.value)).map(|r| r.value.word()).collect();
        let (at_old, at_new) =
            (old.first().map_or(&o.access.origin, |r| &r.origin), new.first().map_or(&n.access.origin, |r| &r.origin));
        if !lost.is_empty() {
            cx.push(
                Class::Breaking,
                "access-narrowed",
                format!("`{key}` no longer admits {}", lost.join(", ")),
                at_old,
                at_new,
            );
        }
        if !gained.is_empty() {
            cx.push(
                Class::Security,
                "access-widened",
                format!("`{key}` now admits {}: check that they should see or change these records", gained.join(", ")),
                at_old,
                at_new,
            );
        }
    }
}

fn transitions(cx: &mut Cx, o: &Resource, n: &Resource) {
    let none = Vec::new();
    let olds = o.states.as_ref().map_or(&none, |s| &s.transitions);
    let news = n.states.as_ref().map_or(&none, |s| &s.transitions);
    for t in olds {
        let Some(m) = news.iter().find(|x| x.name.value == t.name.value) else {
            cx.push(
                Class::Breaking,
                "transition-removed",
                format!("transition `{}` is removed", t.name.value),
                &t.name.origin,
                &n.name.origin,
            );
            continue;
        };
        let lost: Vec<&str> =
            t.from.iter().filter(|f| !m.from.iter().any(|x| x.value == f.value)).map(|f| f.value.as_str()).collect();
        if !lost.is_empty() {
            cx.push(
                Class::Breaking,
                "transition-narrowed",
                format!("transition `{}` no longer starts from {}", t.name.value, lost.join(", ")),
                &t.name.origin,
                &m.name.origin,
            );
        }
        if t.to.value != m.to.value {
            cx.push(
                Class::Breaking,
                "transition-changed",
                format!("transition `{}` leads to {} instead of {}", t.name.value, m.to.value, t.to.value),
                &t.to.origin,
                &m.to.origin,
            );
        }
        let roles = |t: &Transition| t.roles.iter().map(|r| r.value.clone()).collect::<BTreeSet<_>>();
        if !roles(m).is_empty() && (roles(t).is_empty() || !roles(m).is_superset(&roles(t))) {
            cx.push(
                Class::Breaking,
                "transition-restricted",
                format!("transition `{}` is open to fewer roles", t.name.value),
                &t.name.origin,
                &m.name.origin,
            );
        }
    }
    for t in news.iter().filter(|t| !olds.iter().any(|x| x.name.value == t.name.value)) {
        cx.push(
            Class::Compatible,
            "transition-added",
            format!("transition `{}` is added", t.name.value),
            &o.name.origin,
            &t.name.origin,
        );
    }
}

fn fields(cx: &mut Cx, o: &Resource, n: &Resource) {
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
fn field(cx: &mut Cx, (or, o): (&Resource, &Field), (nr, n): (&Resource, &Field)) {
    let name = &n.name.value;
    let renamed = cx.renamed;
    let mut push = |class: Class, kind: &'static str, message: String, before: &Origin, after: &Origin| {
        cx.push(class, kind, format!("field `{name}`: {message}"), before, after);
    };
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
fn bounds(push: &mut impl FnMut(Class, &'static str, String, &Origin, &Origin), o: &Field, n: &Field) {
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

/// The report for people: changes grouped by resource, each with where it was and is.
pub fn render(report: &Report, old_name: &str, new_name: &str) -> String {
    let mut out = String::new();
    let served = if report.served.is_empty() {
        "unversioned".to_owned()
    } else {
        report.served.iter().map(|v| format!("v{v}")).collect::<Vec<_>>().join(", ")
    };
    out.push_str(&format!("{old_name} -> {new_name} (served: {served})\n"));
    if report.changes.is_empty() {
        out.push_str("\nno changes to the API\n");
        return out;
    }
    let mut groups: Vec<&str> = Vec::new();
    for c in &report.changes {
        if !groups.contains(&c.resource.as_str()) {
            groups.push(&c.resource);
        }
    }
    for group in groups {
        out.push_str(&format!("\n{}\n", if group.is_empty() { "(the API)" } else { group }));
        let mut changes: Vec<&Change> = report.changes.iter().filter(|c| c.resource == group).collect();
        changes.sort_by_key(|c| c.class);
        for c in changes {
            let versions = if c.versions.is_empty() {
                String::new()
            } else {
                format!(" [{}]", c.versions.iter().map(|v| format!("v{v}")).collect::<Vec<_>>().join(", "))
            };
            out.push_str(&format!("  {:<10}{versions} {} ({})\n", c.class.word(), c.message, c.kind));
            let place = |o: &Origin| o.file_pos().map(|p| format!("{}:{}:{}", p.file, p.line, p.column));
            let places: Vec<String> = [("was", place(&c.before)), ("now", place(&c.after))]
                .into_iter()
                .filter_map(|(w, p)| p.map(|p| format!("{w} {p}")))
                .collect();
            if !places.is_empty() {
                out.push_str(&format!("              {}\n", places.join(", ")));
            }
        }
    }
    let breaking = report.count(Class::Breaking);
    out.push_str(&format!(
        "\n{breaking} breaking, {} security, {} compatible\n",
        report.count(Class::Security),
        report.count(Class::Compatible)
    ));
    if breaking > 0 {
        out.push_str(
            "breaking changes land in versions already served: make them in a new version (declare it, gate fields with `since`/`until`), or keep what clients rely on\n",
        );
    }
    out
}

/// The report as JSON, for tools.
pub fn render_json(report: &Report) -> String {
    let place = |o: &Origin| match o.file_pos() {
        Some(p) => serde_json::json!({ "file": &*p.file, "line": p.line, "column": p.column }),
        None => serde_json::Value::Null,
    };
    let changes: Vec<serde_json::Value> = report
        .changes
        .iter()
        .map(|c| {
            serde_json::json!({
                "class": c.class,
                "kind": c.kind,
                "resource": c.resource,
                "message": c.message,
                "versions": c.versions,
                "before": place(&c.before),
                "after": place(&c.after),
            })
        })
        .collect();
    let value = serde_json::json!({
        "served": report.served,
        "changes": changes,
        "breaking": report.count(Class::Breaking),
        "security": report.count(Class::Security),
        "compatible": report.count(Class::Compatible),
    });
    let mut text = serde_json::to_string_pretty(&value).expect("JSON serializes");
    text.push('\n');
    text
}
