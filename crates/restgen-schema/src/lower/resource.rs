//! Lowering one resource, with the service's defaults.

use super::read::Cx;
use super::{field, pagination, rate_limit};
use crate::yaml::Node;
use restgen_core::diagnostics::codes;
use restgen_core::model::*;
use restgen_core::origin::{Located, Origin};
use restgen_core::vocabulary as keys;
use std::time::Duration;

/// What a resource inherits from the service.
pub(super) struct Defaults<'a> {
    pub auth: Option<&'a Auth>,
    pub pagination: &'a Pagination,
}

pub(super) fn resource(cx: &mut Cx, name: Located<String>, node: &Node, defaults: &Defaults) -> Option<Resource> {
    let what = format!("resource `{}`", name.value);
    let m = cx.map(node, &what, &keys::RESOURCE)?;
    let origin = name.origin.clone();
    let text = |cx: &mut Cx, key: &str| m.get(key).and_then(|n| cx.string(n, &format!("`{key}`")));
    let flag = |cx: &mut Cx, key: &str, default: bool| {
        m.get(key)
            .and_then(|n| cx.bool(n, &format!("`{key}`")))
            .unwrap_or_else(|| Located::new(default, origin.clone()))
    };

    let path = text(cx, "path").unwrap_or_else(|| {
        cx.diags
            .error(codes::MISSING_KEY, &origin, format!("{what} needs a `path`"))
            .hint(format!("add `path: /{}s`, the collection's plural noun", name.value));
        Located::new(format!("/{}s", name.value), origin.clone())
    });
    let operations = match m.get("operations") {
        Some(n) => {
            let mut ops: Vec<Operation> = cx.words_of(n, "operation").into_iter().map(|o| o.value).collect();
            ops.sort();
            ops
        }
        None => Operation::ALL.to_vec(),
    };
    let owner = text(cx, "owner");
    let states = m.get("states").and_then(|n| states(cx, n));
    let mut fields: Vec<Field> = match m.get("fields") {
        Some(n) => cx
            .named_map(n, "`fields`")
            .into_iter()
            .filter_map(|(fname, fnode)| field::field(cx, fname, fnode))
            .collect(),
        None => Vec::new(),
    };
    // A record starts in the initial state: that is the state field's default.
    if let Some(s) = &states
        && let Some(f) = fields.iter_mut().find(|f| f.name.value == s.field.value && f.default.is_none())
        && f.ty.value.values().iter().any(|v| v.value == s.initial.value)
    {
        f.default = Some(Located::new(DefaultValue::Value(s.initial.value.clone().into()), s.initial.origin.clone()));
    }
    let id = m.get("id").and_then(|n| cx.word_of(n, "id kind")).map_or(IdKind::DEFAULT, |i| i.value);
    let access = access(cx, m.get("access"), owner.is_some(), defaults.auth, &origin);
    let not_owned =
        m.get("not_owned").and_then(|n| cx.word_of(n, "`not_owned` answer")).map_or(NotOwned::DEFAULT, |v| v.value);
    let pagination = match m.get("pagination") {
        Some(n) => pagination(cx, n, defaults.pagination),
        None => defaults.pagination.clone(),
    };
    let envelope = match text(cx, "envelope") {
        Some(e) if e.value == Envelope::BARE => Located::new(Envelope::Bare, e.origin),
        Some(e) => Located::new(Envelope::Key(e.value), e.origin),
        None => Located::new(Envelope::Key(Envelope::DEFAULT_KEY.to_owned()), origin.clone()),
    };
    let mut formats = Located::new(vec![Format::Json], origin.clone());
    if let Some(n) = m.get("formats") {
        formats.origin = n.origin.clone();
        for f in cx.words_of::<Format>(n, "format") {
            if !formats.value.contains(&f.value) {
                formats.value.push(f.value);
            }
        }
    }
    let cache = m.get("cache").and_then(|n| cache(cx, n));
    let unknown_fields = m
        .get("unknown_fields")
        .and_then(|n| cx.word_of(n, "`unknown_fields` policy"))
        .map_or(UnknownFields::DEFAULT, |v| v.value);
    let list = |cx: &mut Cx, key: &str| m.get(key).map(|n| cx.strings(n, &format!("`{key}`"))).unwrap_or_default();
    let nested_under = list(cx, "nested_under");
    let former_paths = list(cx, "former_paths");
    let events = list(cx, "events");
    let gate = gate(cx, m.get("since"), m.get("until"));
    Some(Resource {
        renamed_from: text(cx, "renamed_from"),
        description: text(cx, "description").map(|d| d.value),
        path,
        operations,
        fields,
        id,
        timestamps: flag(cx, "timestamps", true).value,
        owner,
        nested_under,
        access,
        not_owned,
        pagination,
        envelope,
        formats,
        cache,
        unknown_fields,
        former_paths,
        require_if_match: flag(cx, "require_if_match", false),
        states,
        status_endpoint: flag(cx, "status_endpoint", false),
        events,
        links: flag(cx, "links", false),
        feed: flag(cx, "feed", false),
        rate_limit: m.get("rate_limit").and_then(|n| rate_limit(cx, n, defaults.auth.is_some())),
        gate,
        name,
        origin,
    })
}

/// `access`, each key defaulting as the format says: without auth everyone; with an owner
/// the owner; otherwise any signed-in caller. Admins (`admin_roles`) may do everything
/// whatever the lists say, so the defaults need not name them.
fn access(cx: &mut Cx, node: Option<&Node>, owned: bool, auth: Option<&Auth>, origin: &Origin) -> Access {
    let default = |at: &Origin| -> Vec<Located<AccessRule>> {
        let rule = match auth {
            None => AccessRule::Anyone,
            Some(_) if owned => AccessRule::Owner,
            Some(_) => AccessRule::Authenticated,
        };
        vec![Located::new(rule, at.clone())]
    };
    let at = node.map_or(origin, |n| &n.origin).clone();
    let mut access =
        Access { create: default(&at), read: default(&at), write: default(&at), delete: default(&at), origin: at };
    let Some(m) = node.and_then(|n| cx.map(n, "`access`", &keys::ACCESS)) else { return access };
    for (key, slot) in [
        ("create", &mut access.create),
        ("read", &mut access.read),
        ("write", &mut access.write),
        ("delete", &mut access.delete),
    ] {
        let Some(n) = m.get(key) else { continue };
        let words = cx.strings(n, &format!("`access.{key}`"));
        *slot = words.into_iter().map(|s| Located::new(AccessRule::from_word(&s.value), s.origin)).collect();
    }
    access
}

fn cache(cx: &mut Cx, node: &Node) -> Option<Cache> {
    let m = cx.map(node, "`cache`", &keys::CACHE)?;
    let max_age = match m.get("max_age") {
        Some(n) => cx.duration(n, "`max_age`").map_or(Duration::ZERO, |d| d.value),
        None => {
            cx.missing(m.origin, "max_age", "`cache`");
            Duration::ZERO
        }
    };
    let visibility = match m.get("visibility") {
        Some(n) => {
            cx.word_of(n, "cache visibility").unwrap_or_else(|| Located::new(Visibility::DEFAULT, n.origin.clone()))
        }
        None => Located::new(Visibility::DEFAULT, node.origin.clone()),
    };
    Some(Cache { max_age, visibility, origin: node.origin.clone() })
}

fn states(cx: &mut Cx, node: &Node) -> Option<States> {
    let m = cx.map(node, "`states`", &keys::STATES)?;
    let required = |cx: &mut Cx, key: &str| {
        let v = m.get(key).and_then(|n| cx.string(n, &format!("`states.{key}`")));
        if m.get(key).is_none() {
            cx.missing(m.origin, key, "`states`");
        }
        v
    };
    let field = required(cx, "field");
    let initial = required(cx, "initial");
    let transitions = match m.get("transitions") {
        Some(n) => cx
            .named_map(n, "`transitions`")
            .into_iter()
            .filter_map(|(name, tnode)| transition(cx, name, tnode))
            .collect(),
        None => {
            cx.missing(m.origin, "transitions", "`states`");
            Vec::new()
        }
    };
    Some(States { field: field?, initial: initial?, transitions, origin: node.origin.clone() })
}

fn transition(cx: &mut Cx, name: Located<String>, node: &Node) -> Option<Transition> {
    let what = format!("transition `{}`", name.value);
    let m = cx.map(node, &what, &keys::TRANSITION)?;
    let from = match m.get("from") {
        // `from: pending` is read as `from: [pending]`.
        Some(n) if matches!(n.kind, crate::yaml::NodeKind::Scalar { .. }) => {
            cx.string(n, "`from`").into_iter().collect()
        }
        Some(n) => cx.strings(n, "`from`"),
        // Reported by the checks, which also see models built by hand.
        None => Vec::new(),
    };
    let to = match m.get("to") {
        Some(n) => cx.string(n, "`to`")?,
        None => {
            cx.missing(m.origin, "to", &what);
            return None;
        }
    };
    let roles = m.get("roles").map(|n| cx.strings(n, "`roles`")).unwrap_or_default();
    Some(Transition { name, from, to, roles, origin: node.origin.clone() })
}

pub(super) fn gate(cx: &mut Cx, since: Option<&Node>, until: Option<&Node>) -> Gate {
    Gate {
        since: since.and_then(|n| cx.u32_at_least(n, "`since`", 0)),
        until: until.and_then(|n| cx.u32_at_least(n, "`until`", 0)),
    }
}
