//! Every problem of one derive, collected: reading goes on past a bad attribute so a
//! build reports them all, each on its own tokens.

use proc_macro2::Span;
use restgen_core::diagnostics::Code;
use std::fmt::Display;

#[derive(Default)]
pub(crate) struct Errors(Vec<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        self.0.push(error);
    }

    /// An error at `span` with its code (`restgen check`'s, listed in docs/diagnostics.md).
    pub fn at(&mut self, code: Code, span: Span, message: impl Display) {
        self.0.push(syn::Error::new(span, text(code, &message.to_string())));
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The value of `result`, or `None` with its error kept.
    pub fn ok<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    /// All of them as one error (each still at its own span), `Ok` when there are none.
    pub fn finish(self) -> syn::Result<()> {
        let mut errors = self.0.into_iter();
        let Some(mut first) = errors.next() else { return Ok(()) };
        for e in errors {
            first.combine(e);
        }
        Err(first)
    }
}

/// `message [restgen E0005]; help`: a problem as the derive words it, its code between what
/// is wrong and the help (which follows the first `; `), as `restgen check` shows both.
pub(crate) fn text(code: Code, message: &str) -> String {
    match message.split_once("; ") {
        Some((what, help)) => format!("{what} [restgen {}]; {help}", code.id),
        None => format!("{message} [restgen {}]", code.id),
    }
}
