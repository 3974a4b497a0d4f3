//! One resource as `#[derive(Resource)]` expands it beside the user's struct: the enums its
//! fields declare, the allow-listed `Create`, `Replace` and `Patch` inputs, and
//! `impl restgen::Resource` with the spec, the input types and the tables. The same
//! emitters a generated crate is written by, on a model built from attributes; the struct
//! itself is the representation, so none is emitted.

use super::migrations::{self, Dialect};
use super::models::{self, Side};
use super::names::type_name;
use super::resources;
use crate::model::{Resource, Service, WriteOp};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// The items a derive adds beside `ty`, whose model is `resource` (lowered into `service`,
/// which holds it, stubs of the resources it names and the service facts it was lowered
/// with). `others` maps those resources' names to their Rust types.
pub fn resource(service: &Service, resource: &Resource, ty: &Ident, others: &[(String, syn::Path)]) -> TokenStream {
    let enums = models::enums(resource, Side::Service);
    let inputs = models::inputs(service, resource, Side::Service);
    let refer = |other: &Resource| match others.iter().find(|(name, _)| *name == other.name.value) {
        Some((_, path)) => (quote!(<#path as ::restgen::Resource>::SPEC), quote!(<#path as ::restgen::Resource>::PATH)),
        None => (quote!(::core::panic!("unknown resource")), quote!("")),
    };
    let spec = resources::spec_with(service, resource, &refer);
    let path = &resource.path.value;
    let spec_ident = resources::static_ident(resource);
    let name = &resource.name.value;
    let input = |op: WriteOp| {
        if resource.has(op.operation()) {
            let verb = match op {
                WriteOp::Create => "Create",
                WriteOp::Replace => "Replace",
                WriteOp::Patch => "Patch",
            };
            let ident = format_ident!("{verb}{}", type_name(name));
            quote!(#ident)
        } else {
            quote!(())
        }
    };
    let (create, replace, patch) = (input(WriteOp::Create), input(WriteOp::Replace), input(WriteOp::Patch));
    let (sqlite, _) = migrations::table_sql(service, resource, Dialect::Sqlite);
    let (postgres, postgres_foreign_keys) = migrations::table_sql(service, resource, Dialect::Postgres);
    quote! {
        #enums
        #inputs

        #[automatically_derived]
        impl ::restgen::Resource for #ty {
            const NAME: &'static str = #name;
            const PATH: &'static str = #path;
            const SPEC: &'static ::restgen::spec::ResourceSpec = {
                use ::restgen::spec::*;
                #spec
                &#spec_ident
            };
            type Create = #create;
            type Replace = #replace;
            type Patch = #patch;

            fn tables() -> ::restgen::store::Tables {
                ::restgen::store::Tables {
                    name: #name,
                    sqlite: #sqlite,
                    postgres: #postgres,
                    postgres_foreign_keys: #postgres_foreign_keys,
                }
            }
        }
    }
}
