//! One resource as `#[derive(Resource)]` expands it beside the user's struct: the enums its
//! fields declare, the allow-listed `Create`, `Replace` and `Patch` inputs, and
//! `impl restgen::Resource` with the spec, the input types and the model. The same
//! emitters a generated crate is written by, on a model built from attributes; the struct
//! itself is the representation, so none is emitted.

use super::models::{self, Side};
use super::names::type_name;
use super::resources;
use crate::model::{Field, FieldType, Resource, Service, WriteOp};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// Another resource a derived one names (`owner`, `ref`, `nested_under`): its name in the
/// model, its Rust type, and the id type the naming struct holds for it, when it holds one.
#[derive(Clone)]
pub struct Named {
    pub name: String,
    pub path: syn::Path,
    pub id: Option<crate::model::IdKind>,
}

/// Compile-time proof that each type named is the resource the model says: its derive's
/// name and id type. A misspelt type is the compiler's error at the attribute; a type of
/// another resource, or of another id type, fails these assertions there.
fn named_checks(others: &[Named]) -> TokenStream {
    let checks = others.iter().map(|o| {
        let (path, name) = (&o.path, &o.name);
        let span = syn::spanned::Spanned::span(path);
        let message = format!("this type is not the `{name}` resource; name the struct whose resource is `{name}`");
        let id = o.id.map(|kind| {
            let (variant, what) = match kind {
                crate::model::IdKind::Uuid => (quote!(Uuid), "Uuid"),
                crate::model::IdKind::Integer => (quote!(Integer), "i64"),
            };
            let message = format!("`{name}` records are not named by {what} ids: hold the id type of `{name}`");
            quote::quote_spanned! {span=>
                const _: () = ::core::assert!(
                    ::core::matches!(<#path as ::restgen::Resource>::ID_KIND, ::restgen::spec::IdKind::#variant),
                    #message
                );
            }
        });
        quote::quote_spanned! {span=>
            const _: () = ::core::assert!(
                ::restgen::__private::same(<#path as ::restgen::Resource>::NAME, #name),
                #message
            );
            #id
        }
    });
    quote!(#(#checks)*)
}

/// An `enum` field whose type is an enum of the user's (`#[derive(restgen::Enum)]`)
/// rather than the one the derive declares for it.
#[derive(Clone)]
pub struct OwnEnum {
    pub field: String,
    pub ty: syn::Type,
}

/// What a derived struct's Rust types say beyond the model, for the code emitted beside
/// it to hold the same types.
#[derive(Clone, Default)]
pub struct RustTypes {
    /// Enum fields whose type is the user's.
    pub enums: Vec<OwnEnum>,
    /// Date and datetime fields held as the `time` crate's types (chrono's otherwise).
    pub times: Vec<String>,
}

impl RustTypes {
    /// The type the struct gives `field` where the model's type would name another: the
    /// user's enum, or the `time` crate's date or datetime.
    pub(crate) fn own_type(&self, field: &Field) -> Option<TokenStream> {
        if let Some(OwnEnum { ty, .. }) = self.enums.iter().find(|o| o.field == field.name.value) {
            return Some(quote!(#ty));
        }
        match field.ty.value {
            FieldType::Date if self.is_time(field) => Some(quote!(::restgen::__private::time::Date)),
            FieldType::DateTime if self.is_time(field) => Some(quote!(::restgen::__private::time::OffsetDateTime)),
            _ => None,
        }
    }

    /// Whether the struct holds `field` as a `time` type.
    pub(crate) fn is_time(&self, field: &Field) -> bool {
        self.times.contains(&field.name.value)
    }
}

/// The enums and allow-listed inputs of `resource`: the code a client's body lands in,
/// the same from a schema or from a derive for the same model.
pub fn inputs(service: &Service, resource: &Resource) -> TokenStream {
    inputs_with(service, resource, &RustTypes::default())
}

fn inputs_with(service: &Service, resource: &Resource, rust: &RustTypes) -> TokenStream {
    let enums = enums(resource, &rust.enums);
    let inputs = models::inputs(service, resource, Side::Service, rust);
    quote!(#enums #inputs)
}

/// The enum of each `enum` field: declared from its values, or, for an enum of the
/// user's (which the inputs name as the struct does), a compile-time proof that its
/// variants are the values the model holds.
fn enums(resource: &Resource, own: &[OwnEnum]) -> TokenStream {
    let enums = resource.fields.iter().filter(|f| matches!(f.ty.value, FieldType::Enum { .. })).map(|f| {
        let Some(OwnEnum { ty, .. }) = own.iter().find(|o| o.field == f.name.value) else {
            return models::enum_item(resource, f, Side::Service);
        };
        let values: Vec<&str> = f.ty.value.values().iter().map(|v| v.value.as_str()).collect();
        let message = format!(
            "the variants of this enum are not the values of `{}.{}` ({}, in this order)",
            resource.name.value,
            f.name.value,
            values.join(", ")
        );
        quote::quote_spanned! {syn::spanned::Spanned::span(ty)=>
            const _: () = ::core::assert!(
                ::restgen::__private::same_values(<#ty as ::restgen::Enum>::VALUES, &[#(#values),*]),
                #message
            );
        }
    });
    quote!(#(#enums)*)
}

/// The spec the runtime's shared operations (the handlers) follow for `resource`,
/// reaching the resources it names through their derives (`others` maps names to types).
pub fn spec(service: &Service, resource: &Resource, others: &[Named]) -> TokenStream {
    let refer = |other: &Resource| match others.iter().find(|o| o.name == other.name.value) {
        Some(Named { path, .. }) => {
            (quote!(<#path as ::restgen::Resource>::SPEC), quote!(<#path as ::restgen::Resource>::PATH))
        }
        None => (quote!(::core::panic!("unknown resource")), quote!("")),
    };
    resources::spec_with(service, resource, &refer)
}

/// The items a derive adds beside `ty`, whose model is `resource` (lowered into `service`,
/// which holds it, stubs of the resources it names and the service facts it was lowered
/// with). `others` maps those resources' names to their Rust types; `rust` says which
/// fields hold types of the user's or of the `time` crate.
pub fn resource(service: &Service, resource: &Resource, ty: &Ident, others: &[Named], rust: &RustTypes) -> TokenStream {
    let inputs = inputs_with(service, resource, rust);
    let spec = spec(service, resource, others);
    let checks = named_checks(others);
    let path = &resource.path.value;
    let paging = quote::format_ident!("{}", resource.pagination.style.variant());
    let paging = quote!(::restgen::wire::Paging::#paging);
    let envelope = match &resource.envelope.value {
        crate::model::Envelope::Bare => quote!(::core::option::Option::None),
        crate::model::Envelope::Key(k) => quote!(::core::option::Option::Some(#k)),
    };
    let id_kind = {
        let v = quote::format_ident!("{}", resource.id.variant());
        quote!(::restgen::spec::IdKind::#v)
    };
    let spec_ident = resources::static_ident(resource);
    let model = serde_json::to_string(resource).expect("a model is plain data");
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
    // What this resource uses of the runtime (its events, formats, password fields); the
    // service's sign-in is the `App`'s, in the runtime.
    let alone = Service { resources: vec![resource.clone()], auth: None, ..service.clone() };
    let requires = super::service::required(&alone);
    let principal = service.auth.as_ref().and_then(|a| a.principal.as_ref()).is_some_and(|p| p.value == *name);
    let principal_impl = principal.then(|| {
        let identifier =
            service.auth.as_ref().and_then(|a| a.login.identifier.as_ref()).map_or("", |i| i.value.as_str());
        let password =
            resource.fields.iter().find(|f| f.ty.value == FieldType::Password).map_or("", |f| f.name.value.as_str());
        let roles = match resource.fields.iter().find(|f| f.ty.value == FieldType::Roles) {
            Some(f) => {
                let n = &f.name.value;
                quote!(::core::option::Option::Some(#n))
            }
            None => quote!(::core::option::Option::None),
        };
        quote! {
            #[automatically_derived]
            impl ::restgen::Principal for #ty {
                const IDENTIFIER: &'static str = #identifier;
                const PASSWORD: &'static str = #password;
                const ROLES: ::core::option::Option<&'static str> = #roles;
            }
        }
    });
    quote! {
        #inputs
        #(#requires)*

        #[automatically_derived]
        impl ::restgen::Resource for #ty {
            const NAME: &'static str = #name;
            const PATH: &'static str = #path;
            const ID_KIND: ::restgen::spec::IdKind = #id_kind;
            const MODEL: &'static str = #model;
            const SPEC: &'static ::restgen::spec::ResourceSpec = {
                use ::restgen::spec::*;
                #spec
                &#spec_ident
            };
            type Create = #create;
            type Replace = #replace;
            type Patch = #patch;
        }

        #[automatically_derived]
        impl ::restgen::Endpoint for #ty {
            const PATH: &'static str = #path;
            const PAGING: ::restgen::wire::Paging = #paging;
            const ENVELOPE: ::core::option::Option<&'static str> = #envelope;
            type Create = #create;
            type Replace = #replace;
            type Patch = #patch;
        }

        #principal_impl
        #checks
    }
}

/// What `#[derive(Input)]` adds beside `ty`, a body type whose model is `resource` (one
/// create operation, the struct's fields): the enums its fields declare and
/// `impl restgen::Payload`, reading the settable fields through the same allow-listed
/// input a resource's create has and giving every other field its default.
/// `optional[i]` says whether the struct's field `i` is an `Option`.
pub fn input(service: &Service, resource: &Resource, ty: &Ident, optional: &[bool], rust: &RustTypes) -> TokenStream {
    let enums = enums(resource, &rust.enums);
    let settable = models::input(service, resource, WriteOp::Create, Side::Service, rust);
    let settable_ident = format_ident!("Create{}", type_name(&resource.name.value));
    // Its fields' patterns are checked as a resource's are.
    let requires = crate::features::patterns(std::slice::from_ref(resource)).map(super::service::require);
    let specs = resource
        .fields
        .iter()
        .filter(|f| resource.settable_in(f, WriteOp::Create))
        .map(|f| resources::field(service, resource, f, None));
    let inits = resource.fields.iter().zip(optional).map(|(f, &is_option)| {
        let ident = super::field_ident(&f.name.value);
        let default = default_value(f, rust.is_time(f));
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
        #requires
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

/// A field's default as a Rust expression of its type (of the `time` crate's where `time`
/// says so), when it has one.
fn default_value(field: &crate::model::Field, time: bool) -> Option<TokenStream> {
    use crate::model::{DefaultValue, FieldType};
    Some(match &field.default.as_ref()?.value {
        DefaultValue::Now if time && field.ty.value == FieldType::Date => {
            quote!(::restgen::__private::time::OffsetDateTime::now_utc().date())
        }
        DefaultValue::Now if time => quote!(::restgen::__private::time::OffsetDateTime::now_utc()),
        DefaultValue::Value(v) if time => {
            let text = v.to_string();
            quote!(::restgen::time::deserialize(&mut ::restgen::__private::serde_json::Deserializer::from_str(#text)).expect("the default fits its field, as the derive checked"))
        }
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

/// What `#[derive(Enum)]` adds beside `ty`, a hand-written enum whose unit `variants` are
/// the values given with them: `impl restgen::Enum`, and `Display` and serde's traits in
/// terms of it, so the enum is its value on the wire; the runtime's `string_enum!` writes
/// them.
pub fn enumeration(ty: &Ident, variants: &[(&Ident, &str)]) -> TokenStream {
    let (variants, values): (Vec<&Ident>, Vec<&str>) = variants.iter().copied().unzip();
    quote! {
        ::restgen::string_enum!(@derived #ty { #( #variants = #values ),* });
    }
}
