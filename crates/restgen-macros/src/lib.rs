//! `#[derive(Resource)]` and `#[derive(Input)]`. This crate only hands the input to
//! `restgen-derive`, which parses, checks and emits on `proc_macro2` (and so is tested
//! without a compiler in the loop). Use them through the runtime crate: `restgen::Resource`.

use proc_macro::TokenStream;

/// A resource served by restgen: the struct is its representation; `#[resource(...)]` and
/// `#[field(...)]` say what a schema's resource and fields would (see restgen's README).
#[proc_macro_derive(Resource, attributes(resource, field))]
pub fn derive_resource(input: TokenStream) -> TokenStream {
    restgen_derive::resource(input.into()).into()
}

/// A request body that is not a resource (a sign-up or login form): only fields marked
/// `#[field(settable)]` are taken from a client.
#[proc_macro_derive(Input, attributes(field))]
pub fn derive_input(input: TokenStream) -> TokenStream {
    restgen_derive::input(input.into()).into()
}

/// An enum of a field's values, written by hand: each unit variant is one value (its name
/// in snake case, or `#[value = "..."]`). Brings `restgen::Enum`, serde's traits and
/// `Display`; a resource's field of this type lists the same `#[field(values(...))]`.
#[proc_macro_derive(Enum, attributes(value))]
pub fn derive_enum(input: TokenStream) -> TokenStream {
    restgen_derive::enumeration(input.into()).into()
}
