//! `src/generated/hooks.rs`: the trait a service's own `src/hooks.rs` implements.

use super::names::type_name;
use super::rust::RustFile;
use crate::model::{Operation, Service};
use quote::{format_ident, quote};
use restgen_model::words::article;

/// `hooks.rs`: the trait a service's `src/hooks.rs` implements, one method per resource
/// and write, each defaulting to "allow unchanged" (and telling the runtime so, which
/// spares the write a second conversion and check of its input).
pub(crate) fn emit(service: &Service) -> RustFile<'static> {
    let methods = service.resources.iter().flat_map(|r| {
        let name = r.name.value.clone();
        [Operation::Create, Operation::Replace, Operation::Patch, Operation::Delete].into_iter().filter(move |op| r.has(*op)).map(move |op| {
            let method = format_ident!("before_{}_{name}", op.word());
            let verb = match op {
                Operation::Create => "created",
                Operation::Replace => "replaced",
                Operation::Patch => "patched",
                _ => "deleted",
            };
            let doc = if op == Operation::Delete {
                format!(" Before {} `{name}` record is {verb}: refuse with a problem to keep it (422 for a business rule).", article(&name))
            } else {
                format!(" Before {} `{name}` record is {verb}: change the input, or refuse with a problem (422 for a business rule).", article(&name))
            };
            let input = format_ident!("{}{}", match op { Operation::Create => "Create", Operation::Replace => "Replace", _ => "Patch" }, type_name(&name));
            match op {
                Operation::Create => quote! {
                    #[doc = #doc]
                    fn #method(&self, input: &mut super::models::#input) -> ::core::result::Result<(), ::restgen::Problem> {
                        ::restgen::__private::unchanged(input);
                        ::core::result::Result::Ok(())
                    }
                },
                Operation::Delete => quote! {
                    #[doc = #doc]
                    fn #method(&self, _id: &str) -> ::core::result::Result<(), ::restgen::Problem> { ::core::result::Result::Ok(()) }
                },
                _ => quote! {
                    #[doc = #doc]
                    fn #method(&self, _id: &str, input: &mut super::models::#input) -> ::core::result::Result<(), ::restgen::Problem> {
                        ::restgen::__private::unchanged(input);
                        ::core::result::Result::Ok(())
                    }
                },
            }
        })
    });
    let transitions = service.resources.iter().filter(|r| r.states.as_ref().is_some_and(|s| !s.transitions.is_empty())).map(|r| {
        let name = &r.name.value;
        let method = format_ident!("before_transition_{name}");
        let record = format_ident!("{}", type_name(name));
        let doc = format!(" Before {} `{name}` record takes a transition (`transition` names it), with the record as stored: refuse with a problem to keep it where it is (422 for a business rule).", article(name));
        quote! {
            #[doc = #doc]
            fn #method(&self, _id: &str, _transition: &str, _record: &super::models::#record) -> ::core::result::Result<(), ::restgen::Problem> { ::core::result::Result::Ok(()) }
        }
    });
    let head = quote! {
        //! The business-rule hooks of this service. Implement the ones you need in
        //! `src/hooks.rs`; every method not implemented lets the write through unchanged.

        /// Rules run before each write, after the input has been checked against the schema.
        pub trait Hooks: Send + Sync + 'static {
            #(#methods)*
            #(#transitions)*
        }
    };
    RustFile::whole(head)
}
