//! Lowering: the attributes and Rust types of one struct into the model both front-ends
//! share, every default applied as the YAML front-end applies it. A resource seen alone
//! knows nothing of the service around it, so the service facts it needs come from a
//! [`Context`]; other resources it names (`owner`, `ref`, `nested_under`) enter the model
//! as stubs that carry only what the struct says of them (their id type), and the
//! compiler checks the rest against their own derives.

mod fields;
mod resource;
mod service;

pub(crate) use fields::rust_types;

use crate::attr::{self, Sp};
use crate::errors::{Errors, text};
use crate::ty;
use fields::{StructFields, field};
use heck::ToSnakeCase;
use proc_macro2::Span;
use restgen_core::diagnostics::{codes, did_you_mean};
use restgen_core::model::*;
use restgen_core::origin::{DeriveSpan, Located, Origin};
use restgen_core::words::Word;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

/// The service facts a resource seen alone is lowered with: what a schema's top level
/// would say. A derived service authenticates its callers and pages with the schema
/// format's defaults, unless told otherwise.
#[derive(Clone, Debug)]
pub struct Context {
    /// Whether callers sign in; without, access defaults to `anyone`.
    pub auth: bool,
    /// Paging for resources that declare none.
    pub pagination: Pagination,
    /// The roles callers may hold, where a service declares them in one place (a
    /// derived service declares them at run time, on its `App`).
    pub roles: Vec<String>,
}

impl Default for Context {
    fn default() -> Self {
        Context { auth: true, pagination: Pagination::default(), roles: Vec::new() }
    }
}

pub use restgen_core::emit::derived::Named;

/// A derived resource: the model, the service it was lowered into (holding it, stubs of
/// the resources it names, and the context's facts), and the Rust paths of those others.
pub struct Lowered {
    pub service: Service,
    pub resource: Resource,
    pub others: Vec<Named>,
    /// What the struct's Rust types say beyond the model.
    pub rust: RustTypes,
    /// What the checks warn of, shown where the expansion compiles.
    pub warnings: Vec<crate::check::Warning>,
}

pub use restgen_core::emit::derived::{OwnEnum, RustTypes};

fn at(span: Span) -> Origin {
    Origin::Span(DeriveSpan::new(span))
}

fn located<T>(sp: Sp<T>) -> Located<T> {
    Located::new(sp.value, at(sp.span))
}

/// The resource name of a type path: `Customer` and `crate::CustomerAccount` name
/// `customer` and `customer_account`.
fn resource_name(path: &syn::Path) -> String {
    path.segments.last().map_or_else(String::new, |s| s.ident.to_string().to_snake_case())
}

/// One of the words of `W`, or an error listing them.
fn choose<W: Word>(word: &Sp<String>, what: &str, errors: &mut Errors) -> Option<W> {
    if let Some(v) = W::from_word(&word.value) {
        return Some(v);
    }
    let names = W::WORDS;
    let hint = match did_you_mean(&word.value, names.iter().copied()) {
        Some(m) => format!("did you mean `{m}`?"),
        None => format!("expected one of: {}", names.join(", ")),
    };
    errors.at(codes::INVALID_VALUE, word.span, format!("unknown {what} `{}`; {hint}", word.value));
    None
}

/// Lowers `input`, a struct with `#[derive(Resource)]`, and runs the checks a resource
/// seen alone allows; every problem found, each at its span.
pub fn lower_resource(input: &DeriveInput, cx: &Context) -> syn::Result<Lowered> {
    let mut errors = Errors::default();
    let mut lowered = lower(input, cx, &mut errors);
    if let Some(l) = &mut lowered {
        l.warnings = crate::check::run(&l.service, &l.resource, &mut errors);
    }
    errors.finish()?;
    lowered.ok_or_else(|| {
        syn::Error::new(input.ident.span(), text(codes::DERIVE_SHAPE, "this struct could not be read as a resource"))
    })
}

fn lower(input: &DeriveInput, cx: &Context, errors: &mut Errors) -> Option<Lowered> {
    if !input.generics.params.is_empty() {
        errors.at(
            codes::DERIVE_SHAPE,
            input.generics.span(),
            "a resource cannot be generic: its table and routes are one per type",
        );
    }
    let Some(fields) = named_fields(input) else {
        errors.at(
            codes::DERIVE_SHAPE,
            input.ident.span(),
            "`#[derive(Resource)]` needs a struct with named fields: one per field of the resource",
        );
        return None;
    };
    let before = errors.len();
    let attrs = attr::resource(&input.attrs, errors);
    let attrs_misread = errors.len() > before;
    let origin = at(input.ident.span());
    let name = attrs
        .name
        .clone()
        .map_or_else(|| Located::new(input.ident.to_string().to_snake_case(), origin.clone()), located);
    let path = match attrs.path.clone() {
        Some(p) => located(p),
        None => {
            if !attrs_misread {
                errors.at(
                    codes::MISSING_KEY,
                    input.ident.span(),
                    format!("a resource needs a collection path: add `#[resource(path = \"/{}s\")]`", name.value),
                );
            }
            Located::new(format!("/{}s", name.value), origin.clone())
        }
    };
    let read = StructFields::read(input, fields, &name.value, errors);
    let owner = attrs.owner.as_ref().map(|p| Located::new(resource_name(p), at(p.span())));
    read.check_owner(&attrs, owner.as_ref(), errors);
    let resource = resource::resource(input, &attrs, cx, &read, name, path, errors);
    let (others, stubs) = service::others(&resource, &attrs, &read);
    let identifier = attrs.principal.as_ref().and_then(|p| service::principal_fields(p, &resource, errors));
    let principal = match attrs.principal {
        Some(_) => Some(resource.name.value.clone()),
        None => owner.map(|o| o.value),
    };
    let mut service = service::surrounding_service(cx, principal, &resource, stubs);
    if let Some(auth) = &mut service.auth {
        auth.login.identifier = identifier;
    }
    let rust = rust_types(fields, &resource);
    Some(Lowered { service, resource, others, rust, warnings: Vec::new() })
}

/// The named fields of a struct; `None` for anything else.
fn named_fields(input: &DeriveInput) -> Option<&Punctuated<syn::Field, syn::Token![,]>> {
    match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => Some(&named.named),
            _ => None,
        },
        _ => None,
    }
}

/// Lowers `input`, a struct with `#[derive(Input)]`: a body type whose fields are a
/// create's, and whether each struct field is an `Option`.
pub fn lower_input(input: &DeriveInput) -> syn::Result<(Service, Resource, Vec<bool>, RustTypes)> {
    let mut errors = Errors::default();
    let Some(fields) = named_fields(input) else {
        return Err(syn::Error::new(
            input.ident.span(),
            text(codes::DERIVE_SHAPE, "`#[derive(Input)]` needs a struct with named fields"),
        ));
    };
    if !input.generics.params.is_empty() {
        errors.at(codes::DERIVE_SHAPE, input.generics.span(), "a body type cannot be generic");
    }
    let name = input.ident.to_string().to_snake_case();
    let mut model_fields = Vec::new();
    let mut optional = Vec::new();
    for f in fields {
        let Some(ident) = &f.ident else { continue };
        let fname = ident.to_string().trim_start_matches("r#").to_owned();
        let read = ty::read(&f.ty);
        let is_option = read.optional;
        let fa = attr::field(&f.attrs, &mut errors);
        if let Some(r) = &fa.reference {
            errors.at(
                codes::KEY_NOT_FOR_TYPE,
                r.span(),
                "a body type names no other resource: an id field is a plain `Uuid` or `i64`",
            );
            continue;
        }
        if let Some(field) = field(&fname, ident.span(), &name, &f.ty, read, fa, &mut errors) {
            model_fields.push(field);
            optional.push(is_option);
        }
    }
    let mut resource = Resource::with_defaults(&name, IdKind::DEFAULT);
    resource.operations = vec![Operation::Create];
    resource.fields = model_fields;
    resource.origin = at(input.ident.span());
    let service =
        service::surrounding_service(&Context { auth: false, ..Context::default() }, None, &resource, Vec::new());
    let mut diags = restgen_core::Diagnostics::new();
    restgen_core::check::check_input(&service, &resource, &mut diags);
    crate::check::report(&diags, &mut errors);
    errors.finish()?;
    let rust = rust_types(fields, &resource);
    Ok((service, resource, optional, rust))
}
