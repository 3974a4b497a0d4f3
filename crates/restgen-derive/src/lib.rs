//! The derive front-end of restgen, on `proc_macro2` only so that it is tested without a
//! compiler in the loop. Stages, one module each, as in serde_derive: `attr` parses
//! `#[resource(...)]` and `#[field(...)]`, `ty` reads a field's Rust type, `lower` builds
//! the one model both front-ends share, `check` runs restgen-core's checks on it (their
//! errors land on the attribute that caused them), and restgen-core's emitters write the
//! code. A bad attribute never stops the others from being read: every error is
//! reported in one build.

mod attr;
mod check;
mod enumeration;
mod errors;
mod input;
mod lower;
mod ty;

pub use check::Warning;
pub use lower::{Context, Lowered, Named, OwnEnum, RustTypes, lower_resource};

use proc_macro2::TokenStream;
use quote::quote;

/// `#[derive(Resource)]`: the model of the struct, checked, emitted as its enums, inputs
/// and `impl restgen::Resource`.
pub fn resource(input: TokenStream) -> TokenStream {
    restgen_core::origin::DeriveSpan::forget_all();
    let input = match syn::parse2::<syn::DeriveInput>(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let ident = input.ident.clone();
    match lower_resource(&input, &Context::default()) {
        Ok(l) => {
            let expansion = restgen_core::emit::derived::resource(&l.service, &l.resource, &ident, &l.others, &l.rust);
            let warnings = check::tokens(&l.warnings);
            quote!(#expansion #warnings)
        }
        Err(errors) => {
            let errors = errors.to_compile_error();
            // The impl stays out, so the errors above are all the user sees about it.
            quote!(#errors)
        }
    }
}

/// `#[derive(Input)]`: a body type that takes only the fields marked settable.
pub fn input(input: TokenStream) -> TokenStream {
    restgen_core::origin::DeriveSpan::forget_all();
    let input = match syn::parse2::<syn::DeriveInput>(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    input::expand(&input).unwrap_or_else(|e| e.to_compile_error())
}

/// `#[derive(Enum)]`: a hand-written enum whose unit variants are a field's values.
pub fn enumeration(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<syn::DeriveInput>(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    enumeration::expand(&input).unwrap_or_else(|e| e.to_compile_error())
}
