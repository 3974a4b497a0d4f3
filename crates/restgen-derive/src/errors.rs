//! Every problem of one derive, collected: reading goes on past a bad attribute so a
//! build reports them all, each on its own tokens.

use proc_macro2::Span;
use std::fmt::Display;

#[derive(Default)]
pub(crate) struct Errors(Vec<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        self.0.push(error);
    }

    pub fn at(&mut self, span: Span, message: impl Display) {
        self.0.push(syn::Error::new(span, message));
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
