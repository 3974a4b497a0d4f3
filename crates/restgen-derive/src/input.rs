//! `#[derive(Input)]`: a request body that is not a resource (a sign-up or a login form).
//! Its fields are read like a create's: the ones marked settable from the client, checked
//! by their rules; the others never from the client, holding their defaults.

use proc_macro2::TokenStream;

pub(crate) fn expand(input: &syn::DeriveInput) -> syn::Result<TokenStream> {
    let (service, resource, optional, rust) = crate::lower::lower_input(input)?;
    Ok(restgen_core::emit::derived::input(&service, &resource, &input.ident, &optional, &rust))
}
