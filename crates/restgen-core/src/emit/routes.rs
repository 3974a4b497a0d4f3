//! `src/generated/routes.rs`: the axum router, every resource mounted with its input types
//! and the service's hooks.

use super::names::type_name;
use super::resources::static_ident;
use super::rust::RustFile;
use crate::model::{Operation, Service, WriteOp};
use quote::{format_ident, quote};

pub(crate) fn emit(service: &Service) -> RustFile<'static> {
    let merges = service.resources.iter().map(|r| {
        let spec = static_ident(r);
        let name = &r.name.value;
        let input = |op: WriteOp, verb: &str| {
            if r.has(op.operation()) {
                let ident = format_ident!("{verb}{}", type_name(name));
                quote!(super::models::#ident)
            } else {
                quote!(())
            }
        };
        let (c, rep, p) = (input(WriteOp::Create, "Create"), input(WriteOp::Replace, "Replace"), input(WriteOp::Patch, "Patch"));
        let hook = |op: Operation, with_id: bool| {
            if !r.has(op) {
                return quote!(::core::option::Option::None);
            }
            let method = format_ident!("before_{}_{name}", op.word());
            if op == Operation::Delete {
                quote!(::core::option::Option::Some({ let h = hooks.clone(); ::std::sync::Arc::new(move |id: &str| h.#method(id)) }))
            } else if with_id {
                quote!(::core::option::Option::Some({ let h = hooks.clone(); ::std::sync::Arc::new(move |id: &str, input: &mut _| h.#method(id, input)) }))
            } else {
                quote!(::core::option::Option::Some({ let h = hooks.clone(); ::std::sync::Arc::new(move |input: &mut _| h.#method(input)) }))
            }
        };
        let (bc, br, bp, bd) =
            (hook(Operation::Create, false), hook(Operation::Replace, true), hook(Operation::Patch, true), hook(Operation::Delete, true));
        let transition = r.states.as_ref().filter(|s| !s.transitions.is_empty()).map(|_| {
            let method = format_ident!("before_transition_{name}");
            let record = format_ident!("{}", type_name(name));
            quote! {
                before_transition: ::core::option::Option::Some(::restgen::routes::transition_rule::<super::models::#record>({
                    let h = hooks.clone();
                    move |id: &str, transition: &str, record: &super::models::#record| h.#method(id, transition, record)
                })),
            }
        });
        quote! {
            .merge(::restgen::routes::resource::<#c, #rep, #p>(
                &super::resources::#spec,
                base,
                ::restgen::routes::Hooks { before_create: #bc, before_replace: #br, before_patch: #bp, before_delete: #bd, #transition ..::core::default::Default::default() },
            ))
        }
    });
    let head = quote! {
        //! The routes of every resource.

        /// Every resource route under `base`, with `hooks` around its writes; the runtime
        /// adds `/healthz` and the shared middleware.
        pub fn router<H: super::hooks::Hooks>(base: &str, hooks: ::std::sync::Arc<H>) -> ::restgen::__private::axum::Router<::restgen::store::Store> {
            ::restgen::__private::axum::Router::new() #(#merges)*
        }
    };
    RustFile::whole(head)
}
