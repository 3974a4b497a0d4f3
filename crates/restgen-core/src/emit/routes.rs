//! `routes.rs` and `migrations.rs`: the resource routes with their input types, and the
//! SQL the service applies at start.

use super::migrations::{self, Dialect};
use super::names::type_name;
use super::resources::static_ident;
use super::rust::RustFile;
use crate::model::{Operation, Service, WriteOp};
use quote::{format_ident, quote};

pub(crate) fn routes(service: &Service) -> RustFile {
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
        quote! {
            .merge(::restgen::routes::resource::<#c, #rep, #p>(
                &super::resources::#spec,
                base,
                ::restgen::routes::Hooks { before_create: #bc, before_replace: #br, before_patch: #bp, before_delete: #bd, ..::core::default::Default::default() },
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
    RustFile { head, sections: Vec::new() }
}

/// `hooks.rs`: the trait a service's `src/hooks.rs` implements, one method per resource
/// and write, each defaulting to "allow unchanged".
pub(crate) fn hooks(service: &Service) -> RustFile {
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
                format!(" Before a `{name}` record is {verb}: refuse with a problem to keep it (422 for a business rule).")
            } else {
                format!(" Before a `{name}` record is {verb}: change the input, or refuse with a problem (422 for a business rule).")
            };
            let input = format_ident!("{}{}", match op { Operation::Create => "Create", Operation::Replace => "Replace", _ => "Patch" }, type_name(&name));
            match op {
                Operation::Create => quote! {
                    #[doc = #doc]
                    fn #method(&self, _input: &mut super::models::#input) -> ::core::result::Result<(), ::restgen::Problem> { ::core::result::Result::Ok(()) }
                },
                Operation::Delete => quote! {
                    #[doc = #doc]
                    fn #method(&self, _id: &str) -> ::core::result::Result<(), ::restgen::Problem> { ::core::result::Result::Ok(()) }
                },
                _ => quote! {
                    #[doc = #doc]
                    fn #method(&self, _id: &str, _input: &mut super::models::#input) -> ::core::result::Result<(), ::restgen::Problem> { ::core::result::Result::Ok(()) }
                },
            }
        })
    });
    let head = quote! {
        //! The business-rule hooks of this service. Implement the ones you need in
        //! `src/hooks.rs`; every method not implemented lets the write through unchanged.

        /// Rules run before each write, after the input has been checked against the schema.
        pub trait Hooks: Send + Sync + 'static {
            #(#methods)*
        }
    };
    RustFile { head, sections: Vec::new() }
}

pub(crate) fn migrations(service: &Service) -> RustFile {
    let sqlite = migrations::sql(service, Dialect::Sqlite);
    let postgres = migrations::sql(service, Dialect::Postgres);
    let head = quote! {
        //! The database schema the service applies at start (also written to
        //! `migrations/` for reading).

        /// In order; each applied once, in a transaction.
        pub static MIGRATIONS: &[::restgen::store::MigrationSpec] = &[::restgen::store::MigrationSpec {
            version: 1,
            description: "initial schema",
            sqlite: #sqlite,
            postgres: #postgres,
        }];
    };
    RustFile { head, sections: Vec::new() }
}

/// The SQL files written beside the crate, one per dialect.
pub(crate) fn sql_files(service: &Service, source_name: &str) -> [(&'static str, String); 2] {
    let header = format!(
        "-- @generated by restgen from {source_name}. Do not edit: change the schema and run `restgen generate`.\n\n"
    );
    [
        ("migrations/sqlite/0001_initial.sql", format!("{header}{}", migrations::sql(service, Dialect::Sqlite))),
        ("migrations/postgres/0001_initial.sql", format!("{header}{}", migrations::sql(service, Dialect::Postgres))),
    ]
}
