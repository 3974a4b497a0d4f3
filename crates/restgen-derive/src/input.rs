//! `#[derive(Input)]`: a request body that is not a resource.

pub(crate) fn expand(input: &syn::DeriveInput) -> syn::Result<proc_macro2::TokenStream> {
    Err(syn::Error::new(input.ident.span(), "`#[derive(Input)]` is being written"))
}
