//! Semantic checks on the model. They run whichever front-end built the model, collect
//! every problem in one pass and never stop at the first.

mod auth;
mod collections;
mod field_access;
mod fields;
mod names;
mod paths;
mod pending;
mod refs;
mod settings;
mod states;
mod versions;

use crate::diagnostics::Diagnostics;
use crate::model::{Resource, Service};

/// Runs every check on `service`, appending what it finds to `diags`.
pub fn check(service: &Service, diags: &mut Diagnostics) {
    names::check(service, diags);
    fields::check(service, diags);
    for r in &service.resources {
        field_access::resource(r, diags);
    }
    refs::check(service, diags);
    auth::check(service, diags);
    paths::check(service, diags);
    states::check(service, diags);
    versions::check(service, diags);
    collections::check(service, diags);
    settings::check(service, diags);
    pending::check(service, diags);
}

/// The checks that need only one resource: what the derive front-end runs on a resource
/// it sees alone (references to other resources are checked by the compiler there).
/// `service` holds the resource and the service facts it was lowered with.
pub fn check_resource(service: &Service, resource: &Resource, diags: &mut Diagnostics) {
    names::resource(resource, diags);
    fields::resource(service, resource, diags);
    field_access::resource(resource, diags);
    paths::resource(resource, diags);
    states::resource(resource, diags);
    collections::resource(resource, diags);
    settings::resource(resource, diags);
    auth::resource(resource, diags);
    versions::resource(resource, diags);
    pending::resource(resource, diags);
}

/// The checks of a body type that is not a resource (`#[derive(Input)]`): its fields'.
pub fn check_input(service: &Service, resource: &Resource, diags: &mut Diagnostics) {
    names::fields(resource, diags);
    fields::resource(service, resource, diags);
}

/// Field names every resource has already, set by the server.
pub const RESERVED_FIELDS: [&str; 4] = ["id", "owner_id", "created_at", "updated_at"];
