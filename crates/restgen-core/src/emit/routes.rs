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
        let (c, rep, p) =
            (input(WriteOp::Create, "Create"), input(WriteOp::Replace, "Replace"), input(WriteOp::Patch, "Patch"));
        let method = |op: Operation| {
            if r.has(op) {
                let method = format_ident!("before_{}_{name}", op.word());
                quote!(Some(H::#method))
            } else {
                quote!(None)
            }
        };
        let (bc, br, bp, bd) = (
            method(Operation::Create),
            method(Operation::Replace),
            method(Operation::Patch),
            method(Operation::Delete),
        );
        let transition = match r.states.as_ref().filter(|s| !s.transitions.is_empty()) {
            Some(_) => {
                let method = format_ident!("before_transition_{name}");
                quote!(Some(H::#method))
            }
            None => quote!(None),
        };
        let record = format_ident!("{}", type_name(name));
        quote! {
            .merge(::restgen::routes::resource::<#c, #rep, #p>(
                &super::resources::#spec,
                base,
                ::restgen::routes::Hooks::of::<H, super::models::#record>(&hooks, ::restgen::routes::HookMethods {
                    before_create: #bc,
                    before_replace: #br,
                    before_patch: #bp,
                    before_delete: #bd,
                    before_transition: #transition,
                }),
            ))
        }
    });
    // Each resource's hooks are the methods of `H` it has, or `None`: the `use` below keeps
    // them one line each (the only names it brings in, and models are named by path).
    let head = quote! {
        //! The routes of every resource.

        /// Every resource route under `base`, with `hooks` around its writes; the runtime
        /// adds the probes and the shared middleware.
        pub fn router<H: super::hooks::Hooks>(base: &str, hooks: ::std::sync::Arc<H>) -> ::restgen::__private::axum::Router<::restgen::store::Store> {
            use ::core::option::Option::{None, Some};
            ::restgen::__private::axum::Router::new() #(#merges)*
        }
    };
    RustFile::whole(head)
}
