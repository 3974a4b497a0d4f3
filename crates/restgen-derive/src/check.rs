//! restgen-core's checks on a derived resource: the ones a resource seen alone allows
//! (references to other resources are checked by the compiler, through their derives).
//! Each problem lands at the span of the attribute it is about, with its code: an error
//! as a compile error, a warning as a compiler warning ([`Warning`]).

use crate::errors::Errors;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use restgen_core::diagnostics::{Diagnostic, Diagnostics, Severity};
use restgen_core::model::{Resource, Service};
use restgen_core::origin::Origin;

/// A warning of the checks, to be shown where the derive's output is compiled.
#[derive(Clone, Debug)]
pub struct Warning {
    pub span: Span,
    pub message: String,
}

/// Runs the checks; errors go to `errors`, warnings are returned.
pub(crate) fn run(service: &Service, resource: &Resource, errors: &mut Errors) -> Vec<Warning> {
    let mut diags = Diagnostics::new();
    restgen_core::check::check_resource(service, resource, &mut diags);
    report(&diags, errors);
    diags
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| Warning { span: span(d), message: message(d) })
        .collect()
}

/// Each error among `diags` as a compile error at its span.
pub(crate) fn report(diags: &Diagnostics, errors: &mut Errors) {
    for d in diags.iter().filter(|d| d.severity == Severity::Error) {
        errors.push(syn::Error::new(span(d), message(d)));
    }
}

fn span(d: &Diagnostic) -> Span {
    match &d.origin {
        Origin::Span(s) => s.span(),
        _ => Span::call_site(),
    }
}

/// The message as `restgen check` words it, with its code (listed in docs/diagnostics.md)
/// and its help.
fn message(d: &Diagnostic) -> String {
    let message = format!("{} [restgen {}]", d.message, d.code.id);
    match &d.hint {
        Some(hint) => format!("{message}; {hint}"),
        None => message,
    }
}

/// The warnings as items whose compilation shows each at its span. A derive cannot warn
/// directly on stable Rust; the use of a `#[deprecated]` constant, spanned at the
/// attribute, makes the compiler print the note there. (The `proc-macro-warning` crate does
/// the same, on syn 2; this workspace is on syn 3.) `#[allow(deprecated)]` on the
/// enclosing module silences them.
pub fn tokens(warnings: &[Warning]) -> TokenStream {
    let items = warnings.iter().enumerate().map(|(i, w)| {
        let name = format_ident!("restgen_warning_{i}");
        let note = &w.message;
        // The use must carry the attribute's span itself: rustc shows no deprecation
        // warning at a span of the derive's own.
        let used = format_ident!("restgen_warning_{i}", span = w.span);
        quote! {
            const _: () = {
                #[deprecated(note = #note)]
                #[allow(non_upper_case_globals)]
                const #name: () = ();
                #used
            };
        }
    });
    quote!(#(#items)*)
}
