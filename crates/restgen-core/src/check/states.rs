//! Lifecycles and what they publish: `states`, `status_endpoint`, `events` and `feed`.

use crate::diagnostics::{Diagnostics, codes, did_you_mean};
use crate::model::{FieldType, Operation, Resource, Service, States};
use crate::origin::Located;
use std::collections::BTreeSet;

/// Events every resource may publish besides its transitions.
pub const CRUD_EVENTS: [&str; 3] = ["created", "updated", "deleted"];

pub(super) fn check(service: &Service, diags: &mut Diagnostics) {
    for r in &service.resources {
        resource(r, diags);
        transitions_clear_of_children(service, r, diags);
    }
}

/// A transition is `POST {item}/{name}`; a resource nested under this one lists its
/// records at `{item}{child path}`: the two must not be one path. With `links`, each
/// transition is a relation of `_links` beside `self`, `collection` and the parents'.
fn transitions_clear_of_children(service: &Service, resource: &Resource, diags: &mut Diagnostics) {
    let Some(states) = &resource.states else { return };
    if resource.links.value {
        let parents = resource.nested_under.iter().map(|p| p.value.as_str());
        let taken: Vec<&str> = ["self", "collection"].into_iter().chain(parents).collect();
        for t in states.transitions.iter().filter(|t| taken.contains(&t.name.value.as_str())) {
            diags
                .error(
                    codes::PATH_CLASH,
                    &t.name.origin,
                    format!("transition `{}` clashes with the `_links` relation of that name", t.name.value),
                )
                .related(&resource.links.origin, "links declared here")
                .hint("rename the transition");
        }
    }
    let children = service.resources.iter().filter(|c| c.nested_under.iter().any(|p| p.value == resource.name.value));
    for child in children {
        let segment = child.path.value.trim_start_matches('/');
        if let Some(t) = states.transitions.iter().find(|t| t.name.value == segment) {
            diags
                .error(
                    codes::PATH_CLASH,
                    &t.name.origin,
                    format!(
                        "transition `{segment}` clashes with the `{}` records nested under `{}`",
                        child.name.value, resource.name.value
                    ),
                )
                .related(&child.path.origin, "nested collection's path")
                .hint("rename the transition");
        }
    }
}

pub(super) fn resource(resource: &Resource, diags: &mut Diagnostics) {
    if let Some(states) = &resource.states {
        // Reachability means little while states are misnamed: report those first.
        if let Some(values) = state_values(resource, states, diags)
            && values_known(states, &values, diags)
        {
            all_reachable(resource, states, diags);
        }
        transition_names_free(resource, states, diags);
    }
    status_needs_states(resource, diags);
    events_known(resource, diags);
    feed_needs_list(resource, diags);
}

/// The feed shows each caller what their list would: without a list, nobody's reach is
/// defined, and its filters are the list's.
fn feed_needs_list(resource: &Resource, diags: &mut Diagnostics) {
    if resource.feed.value && !resource.operations.contains(&Operation::List) {
        diags
            .error(
                codes::FEED_WITHOUT_LIST,
                &resource.feed.origin,
                format!("`feed: true` on `{}`, which has no `list` operation", resource.name.value),
            )
            .hint("add `list` to `operations`, or drop `feed`");
    }
}

/// `states.field` names an `enum` field of the resource; its values are the states.
fn state_values<'a>(resource: &'a Resource, states: &States, diags: &mut Diagnostics) -> Option<Vec<&'a str>> {
    let Some(field) = resource.field(&states.field.value) else {
        let hint = did_you_mean(&states.field.value, resource.fields.iter().map(|f| f.name.value.as_str()))
            .map(|m| format!("did you mean `{m}`?"));
        diags
            .error(
                codes::UNKNOWN_FIELD,
                &states.field.origin,
                format!("`states.field` names unknown field `{}`", states.field.value),
            )
            .hint_opt(hint);
        return None;
    };
    match &field.ty.value {
        FieldType::Enum { values } => Some(values.iter().map(|v| v.value.as_str()).collect()),
        other => {
            diags
                .error(
                    codes::STATES_NOT_ENUM,
                    &states.field.origin,
                    format!(
                        "state field `{}` is {}, not an enum",
                        field.name.value,
                        restgen_model::words::a(other.keyword())
                    ),
                )
                .related(&field.ty.origin, "type declared here");
            None
        }
    }
}

/// `initial`, every `from` and every `to` are values of the state enum.
fn values_known(states: &States, values: &[&str], diags: &mut Diagnostics) -> bool {
    let mut all_known = true;
    let named = std::iter::once(("`initial`", &states.initial)).chain(
        states
            .transitions
            .iter()
            .flat_map(|t| t.from.iter().map(|f| ("`from`", f)).chain(std::iter::once(("`to`", &t.to)))),
    );
    for (key, state) in named {
        if !values.contains(&state.value.as_str()) {
            all_known = false;
            let hint = did_you_mean(&state.value, values.iter().copied())
                .map(|m| format!("did you mean `{m}`?"))
                .unwrap_or_else(|| format!("states: {}", values.join(", ")));
            diags
                .error(codes::UNKNOWN_STATE, &state.origin, format!("{key} names unknown state `{}`", state.value))
                .hint(hint);
        }
    }
    all_known
}

/// Every state can be reached from `initial` through the transitions; a state nothing
/// leads to is dead data.
///   values: [pending, paid, lost]; transitions only reach paid   # rejected: `lost`
fn all_reachable(resource: &Resource, states: &States, diags: &mut Diagnostics) {
    let Some(field) = resource.field(&states.field.value) else { return };
    let mut reached: BTreeSet<&str> = BTreeSet::from([states.initial.value.as_str()]);
    loop {
        let before = reached.len();
        for t in &states.transitions {
            if t.from.iter().any(|f| reached.contains(f.value.as_str())) {
                reached.insert(&t.to.value);
            }
        }
        if reached.len() == before {
            break;
        }
    }
    for value in field.ty.value.values() {
        if !reached.contains(value.value.as_str()) {
            diags
                .error(
                    codes::UNREACHABLE_STATE,
                    &value.origin,
                    format!("state `{}` cannot be reached from `{}`", value.value, states.initial.value),
                )
                .related(&states.initial.origin, "initial state")
                .hint("add a transition whose `to` is this state, or remove the value");
        }
    }
}

/// Transitions become `POST {item}/{name}`: they must not take the status endpoint's place.
fn transition_names_free(resource: &Resource, states: &States, diags: &mut Diagnostics) {
    for t in &states.transitions {
        if t.name.value == "status" && resource.status_endpoint.value {
            diags.error(codes::PATH_CLASH, &t.name.origin, "transition `status` clashes with the status endpoint");
        }
        // The client's methods are `{transition}_{resource}`, beside `get_{resource}` and
        // the others; metrics and traces name the operation that answered by the same word.
        if ["create", "get", "replace", "update", "patch", "delete", "list"].contains(&t.name.value.as_str()) {
            diags
                .error(
                    codes::BAD_NAME,
                    &t.name.origin,
                    format!("transition `{}` takes the name of an operation", t.name.value),
                )
                .hint("name it for what it does to the record: `approve`, `archive`");
        }
        // The feed's stream and a former path's redirect are operations of the resource in
        // metrics and traces, named so.
        let (feed, redirects) = (resource.feed.value, !resource.former_paths.is_empty());
        if (t.name.value == "changes" && feed) || (t.name.value == "redirect" && redirects) {
            let what = if feed && t.name.value == "changes" { "change feed" } else { "former paths' redirect" };
            diags
                .error(
                    codes::BAD_NAME,
                    &t.name.origin,
                    format!("transition `{}` takes the name the {what} is counted and traced by", t.name.value),
                )
                .hint("name it for what it does to the record: `approve`, `archive`");
        }
        if t.from.is_empty() {
            diags.error(codes::MISSING_KEY, &t.origin, format!("transition `{}` has no `from` states", t.name.value));
        }
    }
}

/// `status_endpoint` reports the state field and when it changed, so it needs `states` and
/// timestamps.
fn status_needs_states(resource: &Resource, diags: &mut Diagnostics) {
    if resource.status_endpoint.value && resource.states.is_some() && !resource.timestamps {
        diags
            .error(
                codes::STATUS_WITHOUT_TIMESTAMPS,
                &resource.status_endpoint.origin,
                format!(
                    "`{}` has a status endpoint but no timestamps: the status reports `updated_at`",
                    resource.name.value
                ),
            )
            .hint("drop `timestamps: false`, or drop `status_endpoint`");
    }
    if resource.status_endpoint.value && resource.states.is_none() {
        diags
            .error(
                codes::STATUS_WITHOUT_STATES,
                &resource.status_endpoint.origin,
                format!("`{}` has a status endpoint but no `states`", resource.name.value),
            )
            .hint("declare `states: { field, initial, transitions }`, or drop `status_endpoint`");
    }
}

/// Events are `created`, `updated`, `deleted` or the name of a transition, each once.
fn events_known(resource: &Resource, diags: &mut Diagnostics) {
    let transitions: Vec<&str> =
        resource.states.iter().flat_map(|s| s.transitions.iter().map(|t| t.name.value.as_str())).collect();
    let known = || CRUD_EVENTS.iter().copied().chain(transitions.iter().copied());
    for (i, event) in resource.events.iter().enumerate() {
        if let Some(first) = resource.events[..i].iter().find(|e: &&Located<String>| e.value == event.value) {
            diags
                .error(codes::DUPLICATE_ENTRY, &event.origin, format!("event `{}` is listed twice", event.value))
                .related(&first.origin, "first listed here");
        } else if !known().any(|k| k == event.value) {
            let hint = did_you_mean(&event.value, known())
                .map(|m| format!("did you mean `{m}`?"))
                .unwrap_or_else(|| format!("events: {}", known().collect::<Vec<_>>().join(", ")));
            diags
                .error(
                    codes::UNKNOWN_EVENT,
                    &event.origin,
                    format!(
                        "event `{}` is neither a CRUD event nor a transition of `{}`",
                        event.value, resource.name.value
                    ),
                )
                .hint(hint);
        }
    }
}
