//! Keys the format accepts that generated services do not serve yet: a warning at each one
//! a schema uses, so nobody ships a schema believing a promise the service ignores. What is
//! pending is the vocabulary's to say (`Key::pending`); serving a key means removing its
//! note there, and the warning goes with it.

use crate::diagnostics::{Diagnostics, codes};
use crate::model::{Resource, Service};
use crate::origin::Origin;
use crate::vocabulary::{self, Table};

pub(super) fn check(service: &Service, diags: &mut Diagnostics) {
    // A schema that does not write `webhooks` has the defaults, at the top level's place.
    if service.webhooks.origin.file_pos().is_some() && service.webhooks.origin.file_pos() != service.origin.file_pos() {
        warn(&vocabulary::SERVICE, "webhooks", &service.webhooks.origin, diags);
    }
    for r in &service.resources {
        resource(r, diags);
    }
}

/// The resource's own keys and its fields': what the derive can judge of one resource.
pub(super) fn resource(r: &Resource, diags: &mut Diagnostics) {
    let table = &vocabulary::RESOURCE;
    if let Some(states) = &r.states {
        warn(table, "states", &states.origin, diags);
    }
    if r.status_endpoint.value {
        warn(table, "status_endpoint", &r.status_endpoint.origin, diags);
    }
    if let Some(first) = r.events.first() {
        warn(table, "events", &first.origin, diags);
    }
    if r.links.value {
        warn(table, "links", &r.links.origin, diags);
    }
}

/// A warning at `origin` that `key` of `table` is not served, when the vocabulary says so.
fn warn(table: &Table, key: &str, origin: &Origin, diags: &mut Diagnostics) {
    let Some(pending) = table.key(key).and_then(|k| k.pending) else { return };
    diags
        .warning(codes::NOT_SERVED, origin, format!("`{key}` is accepted but not served yet"))
        .hint(pending.to_owned());
}
