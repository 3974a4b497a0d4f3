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

/// What `#[derive(Input)]` adds beside `ty`, a body type whose model is `resource` (one
/// create operation, the struct's fields): the enums its fields declare and
/// `impl restgen::Payload`, reading the settable fields through the same allow-listed
/// input a resource's create has and giving every other field its default.
/// `optional[i]` says whether the struct's field `i` is an `Option`.
pub fn input(service: &Service, resource: &Resource, ty: &Ident, optional: &[bool]) -> TokenStream {
    let enums = models::enums(resource, Side::Service);
    let settable = models::input(service, resource, WriteOp::Create, Side::Service);
    let settable_ident = format_ident!("Create{}", type_name(&resource.name.value));
    let specs = resource
        .fields
        .iter()
        .filter(|f| resource.settable_in(f, WriteOp::Create))
        .map(|f| resources::field(service, resource, f));
    let inits = resource.fields.iter().zip(optional).map(|(f, &is_option)| {
        let ident = super::field_ident(&f.name.value);
        let default = default_value(f);
        let value = if !resource.settable_in(f, WriteOp::Create) {
            match default {
                Some(d) if is_option => quote!(::core::option::Option::Some(#d)),
                Some(d) => d,
                None => quote!(::core::default::Default::default()),
            }
        } else {
            let given = quote!(settable.#ident);
            match (f.required.value, f.nullable.value, is_option) {
                // Required: the type says it all.
                (true, _, _) => given,
                // Optional and never null: absent takes the default.
                (false, false, true) => match default {
                    Some(d) => quote!(#given.or_else(|| ::core::option::Option::Some(#d))),
                    None => given,
                },
                (false, false, false) => match default {
                    Some(d) => quote!(#given.unwrap_or_else(|| #d)),
                    None => quote!(#given.unwrap_or_default()),
                },
                // Optional and nullable: absent takes the default, null is none.
                (false, true, _) => {
                    let absent = match default {
                        Some(d) => quote!(::core::option::Option::Some(#d)),
                        None => quote!(::core::option::Option::None),
                    };
                    quote!(match #given {
                        ::restgen::Patch::Absent => #absent,
                        ::restgen::Patch::Null => ::core::option::Option::None,
                        ::restgen::Patch::Value(v) => ::core::option::Option::Some(v),
                    })
                }
            }
        };
        quote!(#ident: #value)
    });
    quote! {
        #enums

        const _: () = {
            #settable

            #[automatically_derived]
            impl ::restgen::Payload for #ty {
                const FIELDS: &'static [::restgen::spec::FieldSpec] = {
                    use ::restgen::spec::*;
                    &[#(#specs),*]
                };
                type Settable = #settable_ident;

                fn from_settable(settable: Self::Settable) -> Self {
                    #ty { #(#inits),* }
                }
            }
        };
    }
}

/// A field's default as a Rust expression of its type, when it has one.
fn default_value(field: &crate::model::Field) -> Option<TokenStream> {
    use crate::model::{DefaultValue, FieldType};
    Some(match &field.default.as_ref()?.value {
        DefaultValue::Now if field.ty.value == FieldType::Date => {
            quote!(::restgen::__private::chrono::Utc::now().date_naive())
        }
        DefaultValue::Now => quote!(::restgen::__private::chrono::Utc::now()),
        DefaultValue::Value(v) => {
            let text = v.to_string();
            quote!(::restgen::__private::serde_json::from_str(#text).expect("the default fits its field, as the derive checked"))
        }
    })
}
