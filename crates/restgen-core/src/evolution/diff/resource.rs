//! The changes of one resource: its paths, operations, paging, envelope, formats, caching,
//! access rules and transitions.

use super::field::fields;
use super::{Class, Cx};
use crate::model::*;
use crate::origin::Located;
use std::collections::BTreeSet;

pub(super) fn resource(cx: &mut Cx, o: &Resource, n: &Resource) {
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

pub(super) fn envelope(e: &Envelope) -> String {
    match e {
        Envelope::Bare => "bare".into(),
        Envelope::Key(k) => format!("under `{k}`"),
    }
}

pub(super) fn not_owned(n: NotOwned) -> &'static str {
    match n {
        NotOwned::Forbidden => "403",
        NotOwned::NotFound => "404",
    }
}

/// Whether `rules` let in whoever `rule` lets in.
pub(super) fn covers(rules: &[Located<AccessRule>], rule: &AccessRule) -> bool {
    rules.iter().any(|r| {
        r.value == *rule
            || r.value == AccessRule::Anyone
            || (r.value == AccessRule::Authenticated && *rule != AccessRule::Anyone)
    })
}

pub(super) fn access(cx: &mut Cx, o: &Resource, n: &Resource) {
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

pub(super) fn transitions(cx: &mut Cx, o: &Resource, n: &Resource) {
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
