//! restgen-core's checks on a derived resource: the ones a resource seen alone allows
//! (references to other resources are checked by the compiler, through their derives).
//! Each problem becomes a compile error at the span of the attribute it is about.

use crate::errors::Errors;
use restgen_core::diagnostics::{Diagnostics, Severity};
use restgen_core::model::{Resource, Service};
use restgen_core::origin::Origin;

pub(crate) fn run(service: &Service, resource: &Resource, errors: &mut Errors) {
    let mut diags = Diagnostics::new();
    restgen_core::check::check_resource(service, resource, &mut diags);
    report(&diags, errors);
}

/// Each error among `diags` as a compile error at its span.
pub(crate) fn report(diags: &Diagnostics, errors: &mut Errors) {
    for d in diags.iter().filter(|d| d.severity == Severity::Error) {
        let span = match &d.origin {
            Origin::Span(s) => *s,
            _ => proc_macro2::Span::call_site(),
        };
        let mut message = d.message.clone();
        if let Some(hint) = &d.hint {
            message.push_str("; ");
            message.push_str(hint);
        }
        errors.at(span, message);
    }
}
