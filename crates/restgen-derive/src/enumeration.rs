//! `#[derive(Enum)]`: a hand-written enum as the values of a field. Each unit variant is
//! one value, its name in snake case unless `#[value = "..."]` says otherwise. Read and
//! checked here; restgen-core emits the impls (the wire form and the list of values in
//! terms of `restgen::Enum`, so they cannot disagree).

use crate::errors::{Errors, text};
use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use restgen_core::diagnostics::codes;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Expr, ExprLit, Fields, Lit, Meta};

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let Data::Enum(data) = &input.data else {
        return Err(syn::Error::new(
            input.ident.span(),
            text(codes::DERIVE_SHAPE, "`#[derive(Enum)]` needs an enum: its unit variants are a field's values"),
        ));
    };
    if !input.generics.params.is_empty() {
        errors.at(codes::DERIVE_SHAPE, input.generics.span(), "an enum of values cannot be generic");
    }
    if data.variants.is_empty() {
        errors.at(
            codes::DERIVE_SHAPE,
            input.ident.span(),
            "an enum of values needs at least one variant: a field needs a value to hold",
        );
    }
    let mut variants = Vec::new();
    let mut values: Vec<(String, proc_macro2::Span)> = Vec::new();
    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            errors.at(
                codes::DERIVE_SHAPE,
                variant.fields.span(),
                format!("`{}` holds data; a value is a unit variant (`{}`)", variant.ident, variant.ident),
            );
            continue;
        }
        let Some((value, span)) = value(variant, &mut errors) else { continue };
        if let Some((_, first)) = values.iter().find(|(v, _)| *v == value) {
            let mut error =
                syn::Error::new(span, text(codes::DUPLICATE_ENTRY, &format!("the value `{value}` is given twice")));
            error.combine(syn::Error::new(*first, format!("`{value}` is first given here")));
            errors.push(error);
            continue;
        }
        variants.push(&variant.ident);
        values.push((value, span));
    }
    errors.finish()?;

    let variants: Vec<(&syn::Ident, &str)> = variants.into_iter().zip(values.iter().map(|(v, _)| v.as_str())).collect();
    Ok(restgen_core::emit::derived::enumeration(&input.ident, &variants))
}

/// A variant's value: `#[value = "..."]`, or its name in snake case.
fn value(variant: &syn::Variant, errors: &mut Errors) -> Option<(String, proc_macro2::Span)> {
    let mut given = None;
    for attr in variant.attrs.iter().filter(|a| a.path().is_ident("value")) {
        let text = match &attr.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s),
                _ => None,
            },
            _ => None,
        };
        let Some(text) = text else {
            errors.at(codes::WRONG_TYPE, attr.span(), "a variant's value is a string: `#[value = \"on_hold\"]`");
            return None;
        };
        if given.is_some() {
            errors.at(codes::DUPLICATE_KEY, attr.span(), "`#[value]` is given twice: a variant has one value");
            return None;
        }
        if text.value().is_empty() {
            errors.at(codes::INVALID_VALUE, text.span(), "a value cannot be empty");
            return None;
        }
        given = Some((text.value(), text.span()));
    }
    Some(given.unwrap_or_else(|| (variant.ident.to_string().to_snake_case(), variant.ident.span())))
}
