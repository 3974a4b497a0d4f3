//! `models.rs`: per resource its representation and the `Create`, `Replace` and `Patch`
//! inputs holding only the fields a client may set in that operation. The allow-list
//! exists by construction: a field that is not settable has no place to land.

use super::derived::RustTypes;
use super::names::{field_ident, type_ident, type_name, variant_idents};
use super::rust::RustFile;
use crate::model::{Field, FieldType, IdKind, Resource, Service, UnknownFields, WriteOp};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// Which crate the emitted code reaches its runtime through: the same models are emitted
/// for the service and for its client, so the two agree on every shape by construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// The service, on the runtime crate `restgen`.
    Service,
    /// The generated client, on `restgen_client`.
    Client,
}

impl Side {
    pub(crate) fn root(self) -> TokenStream {
        match self {
            Side::Service => quote!(::restgen),
            Side::Client => quote!(::restgen_client),
        }
    }

    /// The root as written inside attribute strings.
    fn root_str(self) -> &'static str {
        match self {
            Side::Service => "::restgen",
            Side::Client => "::restgen_client",
        }
    }

    fn serde(self) -> String {
        format!("{}::__private::serde", self.root_str())
    }

    /// The serde derives, named by path so they need nothing in scope.
    fn derives(self) -> TokenStream {
        let root = self.root();
        quote!(#root::__private::serde::Serialize, #root::__private::serde::Deserialize)
    }
}

pub(crate) fn emit(service: &Service, side: Side) -> RustFile<'_> {
    let roles = roles_enum(service, side);
    let head = quote! {
        //! Resource representations and their allow-listed inputs.

        #roles
    };
    RustFile::new(head, service.resources.iter().map(move |r| resource(service, r, side)))
}

/// `Role`, the roles of `auth.roles`, when a `roles` field needs a type.
fn roles_enum(service: &Service, side: Side) -> TokenStream {
    let Some(auth) = &service.auth else { return quote!() };
    let uses_roles = service.resources.iter().flat_map(|r| &r.fields).any(|f| f.ty.value == FieldType::Roles);
    if !uses_roles || auth.roles.is_empty() {
        return quote!();
    }
    let values: Vec<&str> = auth.roles.iter().map(|r| r.value.as_str()).collect();
    string_enum(&format_ident!("Role"), "A role declared in `auth.roles`.", &values, side)
}

/// A Rust enum whose variants serialize as the given strings, with `restgen::Enum` (the
/// client crate's re-export of it on that side) as a hand-written enum has it; the
/// runtime's `string_enum!` writes its impls.
pub(crate) fn string_enum(name: &proc_macro2::Ident, doc: &str, values: &[&str], side: Side) -> TokenStream {
    let serde = side.serde();
    let root = side.root();
    let derives = side.derives();
    let variants = variant_idents(values.iter().copied());
    let doc = self::doc(doc);
    quote! {
        #doc
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, #derives)]
        #[serde(crate = #serde)]
        pub enum #name {
            #( #[serde(rename = #values)] #variants, )*
        }

        #root::string_enum!(#name { #( #variants = #values ),* });
    }
}

fn resource(service: &Service, resource: &Resource, side: Side) -> TokenStream {
    let enums = enums(resource, side);
    let representation = representation(service, resource, side);
    let inputs = inputs(service, resource, side, &RustTypes::default());
    quote! {
        #enums
        #representation
        #inputs
    }
}

/// The enum type of each `enum` field (`OrderStatus` for `order.status`).
pub(crate) fn enums(resource: &Resource, side: Side) -> TokenStream {
    let enums = resource.fields.iter().filter(|f| matches!(f.ty.value, FieldType::Enum { .. }));
    let enums = enums.map(|f| enum_item(resource, f, side));
    quote!(#(#enums)*)
}

/// The enum type of one `enum` field.
pub(crate) fn enum_item(resource: &Resource, field: &Field, side: Side) -> TokenStream {
    let values: Vec<&str> = field.ty.value.values().iter().map(|v| v.value.as_str()).collect();
    let doc = format!("Values of `{}.{}`.", resource.name.value, field.name.value);
    string_enum(&enum_ident(resource, field), &doc, &values, side)
}

/// The `Create`, `Replace` and `Patch` inputs of the operations the resource offers.
/// `rust` names the fields a derived struct holds in types of its own (an enum of the
/// user's, the `time` crate's), which its inputs hold alike.
pub(crate) fn inputs(service: &Service, resource: &Resource, side: Side, rust: &RustTypes) -> TokenStream {
    let inputs = WriteOp::ALL
        .into_iter()
        .filter(|op| resource.has(op.operation()))
        .map(|op| input(service, resource, op, side, rust));
    quote!(#(#inputs)*)
}

pub(crate) fn enum_ident(resource: &Resource, field: &Field) -> proc_macro2::Ident {
    format_ident!("{}{}", type_name(&resource.name.value), type_name(&field.name.value))
}

/// The record as clients see it: server-controlled fields included, write-only ones not.
fn representation(service: &Service, resource: &Resource, side: Side) -> TokenStream {
    let serde = side.serde();
    let root = side.root();
    let name = type_ident(&resource.name.value);
    let doc = resource
        .description
        .clone()
        .unwrap_or_else(|| format!("A record of the `{}` resource, as clients see it.", resource.name.value));
    let id = id_type(resource.id, side);
    let owner = resource.owner.as_ref().map(|o| {
        let ty = service.resource(&o.value).map_or(quote!(#root::__private::uuid::Uuid), |p| id_type(p.id, side));
        quote! {
            /// The account that owns this record; set from the caller at create.
            pub owner_id: #ty,
        }
    });
    let fields = resource.fields.iter().filter(|f| !hidden(f)).map(|f| {
        let ident = field_ident(&f.name.value);
        let ty = value_type(service, resource, f, side);
        // A field some versions lack is absent from their representations, one some
        // callers may not read from theirs.
        let gated = f.gate.since.is_some() || f.gate.until.is_some() || f.read.is_some();
        let ty = if f.optional() || gated { quote!(::core::option::Option<#ty>) } else { ty };
        let absent = gated.then(|| quote!(#[serde(default, skip_serializing_if = "::core::option::Option::is_none")]));
        let doc = doc_attr(f);
        quote! { #doc #absent pub #ident: #ty, }
    });
    let timestamps = resource.timestamps.then(|| {
        let ts = datetime(side);
        quote! {
            /// When the record was created.
            pub created_at: #ts,
            /// When the record last changed.
            pub updated_at: #ts,
        }
    });
    let links = resource.links.value.then(|| {
        quote! {
            /// Links from this record: itself, its lists, its status, and each transition
            /// open now to the caller (absent while it is not).
            #[serde(rename = "_links", default, skip_serializing_if = "::std::collections::BTreeMap::is_empty")]
            pub links: #root::Links,
        }
    });
    let doc = self::doc(&doc);
    let derives = side.derives();
    quote! {
        #doc
        #[derive(Clone, Debug, PartialEq, #derives)]
        #[serde(crate = #serde)]
        pub struct #name {
            pub id: #id,
            #owner
            #(#fields)*
            #timestamps
            #links
        }
    }
}

/// The body of one write operation: only the fields settable in it.
pub(crate) fn input(service: &Service, resource: &Resource, op: WriteOp, side: Side, rust: &RustTypes) -> TokenStream {
    let serde = side.serde();
    let verb = match op {
        WriteOp::Create => "Create",
        WriteOp::Replace => "Replace",
        WriteOp::Patch => "Patch",
    };
    let name = format_ident!("{verb}{}", type_name(&resource.name.value));
    let doc = match op {
        WriteOp::Create => {
            format!("Input of the `{}` create operation: only the fields a client may set there.", resource.name.value)
        }
        WriteOp::Replace => format!(
            "Input of the `{}` replace operation: every field a client may set there; an omitted one is cleared.",
            resource.name.value
        ),
        WriteOp::Patch => format!(
            "Input of the `{}` patch operation (JSON Merge Patch): absent fields stay, `null` clears a nullable one.",
            resource.name.value
        ),
    };
    let deny = (resource.unknown_fields == UnknownFields::Reject).then(|| quote!(#[serde(deny_unknown_fields)]));
    let default = (op == WriteOp::Patch).then(|| quote!(Default,));
    let settable: Vec<&Field> = resource.fields.iter().filter(|f| resource.settable_in(f, op)).collect();
    let fields = settable.iter().map(|f| {
        let ident = field_ident(&f.name.value);
        let doc = doc_attr(f);
        let value = rust.own_type(f).unwrap_or_else(|| value_type(service, resource, f, side));
        let (ty, attrs) = input_field(f, op, value, side, rust.is_time(f));
        quote! { #doc #attrs pub #ident: #ty, }
    });
    let doc = self::doc(&doc);
    let derives = side.derives();
    // A password never shows in `Debug` (logs, panics): such an input says `***` for it.
    let secret = |f: &Field| f.ty.value == FieldType::Password;
    let (debug, debug_impl) = if settable.iter().any(|f| secret(f)) {
        let root = side.root();
        let shown = settable.iter().map(|f| {
            let (ident, key) = (field_ident(&f.name.value), &f.name.value);
            if secret(f) { quote!(.field(#key, &#root::redact::Redacted)) } else { quote!(.field(#key, &self.#ident)) }
        });
        let key = name.to_string();
        let debug_impl = quote! {
            impl ::core::fmt::Debug for #name {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.debug_struct(#key) #(#shown)* .finish()
                }
            }
        };
        (None, Some(debug_impl))
    } else {
        (Some(quote!(Debug,)), None)
    };
    quote! {
        #doc
        #[derive(Clone, #debug #default PartialEq, #derives)]
        #[serde(crate = #serde)]
        #deny
        pub struct #name {
            #(#fields)*
        }
        #debug_impl
    }
}

/// The Rust type and serde attributes of one input field.
///
/// | field                         | create / replace                | patch            |
/// |-------------------------------|---------------------------------|------------------|
/// | required, not nullable        | `T`                             | `Option<T>`, null rejected |
/// | required, nullable            | `Option<T>`, must be present    | `Patch<T>`       |
/// | optional, not nullable        | `Option<T>`, null rejected      | `Option<T>`, null rejected |
/// | optional, nullable            | `Patch<T>` (absent = default)   | `Patch<T>`       |
///
/// A `time` type (a derived struct's), whose serde form is not the wire's, is read and
/// written through the `restgen::time` adapter of each shape instead.
fn input_field(field: &Field, op: WriteOp, value: TokenStream, side: Side, time: bool) -> (TokenStream, TokenStream) {
    let root = side.root();
    let path = |name: &str| format!("{}::{name}", side.root_str());
    let is_absent = path("Patch::is_absent");
    // How serde reads a present value: `plain` (restgen's input helper) or the `time` adapter.
    let read = |plain: &str, adapter: &str| {
        if time {
            let adapter = path(adapter);
            quote!(with = #adapter)
        } else {
            let plain = path(plain);
            quote!(deserialize_with = #plain)
        }
    };
    // A required field only some may set is required of them by the runtime, and left
    // out by the others.
    let required = field.required.value && op != WriteOp::Patch && field.write.is_none();
    let nullable = field.nullable.value;
    let option = quote!(::core::option::Option<#value>);
    let patch = quote!(#root::Patch<#value>);
    match (required, nullable) {
        (true, false) if time => {
            let adapter = path("time");
            (value, quote!(#[serde(with = #adapter)]))
        }
        (true, false) => (value, quote!()),
        (true, true) => {
            let read = read("input::nullable", "time::option");
            (option, quote!(#[serde(#read)]))
        }
        (false, false) => {
            let read = read("input::not_null", "time::not_null");
            (option, quote!(#[serde(default, #read, skip_serializing_if = "::core::option::Option::is_none")]))
        }
        (false, true) if time => {
            let adapter = path("time::patch");
            (patch, quote!(#[serde(default, with = #adapter, skip_serializing_if = #is_absent)]))
        }
        (false, true) => (patch, quote!(#[serde(default, skip_serializing_if = #is_absent)])),
    }
}

/// Fields that never appear in a response.
fn hidden(field: &Field) -> bool {
    field.write_only || field.ty.value == FieldType::Password
}

fn doc_attr(field: &Field) -> TokenStream {
    match &field.description {
        Some(d) => doc(d),
        None => quote!(),
    }
}

/// A doc attribute printed as `/// text`.
fn doc(text: &str) -> TokenStream {
    let text = format!(" {text}");
    quote!(#[doc = #text])
}

pub(crate) fn id_type(kind: IdKind, side: Side) -> TokenStream {
    let root = side.root();
    match kind {
        IdKind::Uuid => quote!(#root::__private::uuid::Uuid),
        IdKind::Integer => quote!(i64),
    }
}

fn datetime(side: Side) -> TokenStream {
    let root = side.root();
    quote!(#root::__private::chrono::DateTime<#root::__private::chrono::Utc>)
}

/// The Rust type of a field's value (before nullability).
pub(crate) fn value_type(service: &Service, resource: &Resource, field: &Field, side: Side) -> TokenStream {
    let root = side.root();
    match &field.ty.value {
        FieldType::String | FieldType::Text | FieldType::Email | FieldType::Url | FieldType::Password => {
            quote!(::std::string::String)
        }
        FieldType::Integer => quote!(i64),
        FieldType::Number => quote!(f64),
        FieldType::Decimal => quote!(#root::__private::rust_decimal::Decimal),
        FieldType::Boolean => quote!(bool),
        FieldType::Uuid => quote!(#root::__private::uuid::Uuid),
        FieldType::Date => quote!(#root::__private::chrono::NaiveDate),
        FieldType::DateTime => datetime(side),
        FieldType::Enum { .. } => {
            let ident = enum_ident(resource, field);
            quote!(#ident)
        }
        FieldType::Json => quote!(#root::__private::serde_json::Value),
        FieldType::Ref { to } => {
            service.resource(&to.value).map_or(quote!(#root::__private::uuid::Uuid), |t| id_type(t.id, side))
        }
        FieldType::Roles => {
            if service.auth.as_ref().is_some_and(|a| !a.roles.is_empty()) {
                quote!(::std::vec::Vec<Role>)
            } else {
                quote!(::std::vec::Vec<::std::string::String>)
            }
        }
    }
}
