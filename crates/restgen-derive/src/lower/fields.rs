//! A struct's fields, read: the ones the server sets (id, owner, timestamps) judged by
//! their Rust types, the rest lowered into the model's fields by their `#[field]`
//! attributes and types, each with whether the struct lets a record lack it.

use super::resource::gate;
use super::{OwnEnum, RustTypes, at, choose, located, resource_name};
use crate::attr::{self, DefaultAttr, FieldAttrs, ResourceAttrs, Sp};
use crate::errors::Errors;
use crate::ty::{self, Rust};
use proc_macro2::Span;
use restgen_core::diagnostics::codes;
use restgen_core::model::*;
use restgen_core::origin::Located;
use syn::spanned::Spanned;
use syn::{DeriveInput, Field as SynField};

/// What a resource struct's fields say.
pub(super) struct StructFields {
    pub id: IdKind,
    /// The owner column's id kind and where it is written.
    pub owner_id: Option<(IdKind, Span)>,
    pub timestamps: bool,
    /// The model's fields, each with whether a record may lack it (an `Option`, or an
    /// attribute misread) and where its type is written.
    pub fields: Vec<(Field, bool, Span)>,
    /// The resources its refs name: the name, the Rust path, the id kind.
    pub refs: Vec<(String, syn::Path, IdKind)>,
}

impl StructFields {
    /// Reads `fields` of `input`, the struct of resource `name`.
    pub fn read(
        input: &DeriveInput,
        fields: &syn::punctuated::Punctuated<SynField, syn::Token![,]>,
        name: &str,
        errors: &mut Errors,
    ) -> StructFields {
        let mut out =
            StructFields { id: IdKind::Uuid, owner_id: None, timestamps: false, fields: Vec::new(), refs: Vec::new() };
        let (mut seen_id, mut created_at, mut updated_at) = (false, None, None);
        for f in fields {
            let Some(ident) = &f.ident else { continue };
            let fname = ident.to_string().trim_start_matches("r#").to_owned();
            let read = ty::read(&f.ty);
            if restgen_core::check::RESERVED_FIELDS.contains(&fname.as_str()) {
                if let Some(a) = f.attrs.iter().find(|a| a.path().is_ident("field")) {
                    errors.at(
                        codes::RESERVED_FIELD,
                        a.span(),
                        format!("`{fname}` is set by the server; it takes no `#[field]`"),
                    );
                }
                match fname.as_str() {
                    "id" | "owner_id" => {
                        seen_id |= fname == "id";
                        let kind = match read.kind {
                            Rust::Uuid if !read.optional => IdKind::Uuid,
                            Rust::Integer if !read.optional => IdKind::Integer,
                            _ => {
                                errors.at(
                                    codes::RUST_TYPE,
                                    f.ty.span(),
                                    format!("`{fname}` is an id: `Uuid` or `i64`"),
                                );
                                continue;
                            }
                        };
                        if fname == "id" {
                            out.id = kind;
                        } else {
                            out.owner_id = Some((kind, f.ty.span()));
                        }
                    }
                    _ => {
                        if !matches!(read.kind, Rust::DateTime | Rust::TimeDateTime) || read.optional {
                            errors.at(
                                codes::RUST_TYPE,
                                f.ty.span(),
                                format!("`{fname}` is a timestamp: `DateTime<Utc>` or `time::OffsetDateTime`"),
                            );
                        }
                        time_on_the_wire(f, &read, &fname, errors);
                        if fname == "created_at" {
                            created_at = Some(ident.span());
                        } else {
                            updated_at = Some(ident.span());
                        }
                    }
                }
                continue;
            }
            let before = errors.len();
            let fa = attr::field(&f.attrs, errors);
            // A field whose attribute is wrong is not judged further on what it lacks: the
            // mistake is reported, not its consequences.
            let misread = errors.len() > before;
            if let Some(target) = &fa.reference {
                let kind = if read.kind == Rust::Integer { IdKind::Integer } else { IdKind::Uuid };
                out.refs.push((resource_name(target), target.clone(), kind));
            }
            let (optional, ty_span) = (read.optional || misread, f.ty.span());
            time_on_the_wire(f, &read, &fname, errors);
            if let Some(field) = field(&fname, ident.span(), name, &f.ty, read, fa, errors) {
                out.fields.push((field, optional, ty_span));
            }
        }
        if !seen_id {
            errors.at(
                codes::RUST_TYPE,
                input.ident.span(),
                "a resource holds its id: add `pub id: Uuid` (or `i64` for integer ids)",
            );
        }
        out.timestamps = match (created_at, updated_at) {
            (Some(_), Some(_)) => true,
            (None, None) => false,
            (Some(span), None) | (None, Some(span)) => {
                errors.at(
                    codes::RUST_TYPE,
                    span,
                    "timestamps come in pairs: hold both `created_at` and `updated_at`, or neither",
                );
                true
            }
        };
        out
    }

    /// Records owned by a resource hold its id in `owner_id`, and only those do.
    pub fn check_owner(&self, attrs: &ResourceAttrs, owner: Option<&Located<String>>, errors: &mut Errors) {
        match (owner, self.owner_id) {
            (Some(o), None) => errors.at(
                codes::RUST_TYPE,
                attrs.owner.as_ref().map_or(Span::call_site(), Spanned::span),
                format!(
                    "records owned by `{}` hold the owner's id: add `pub owner_id: Uuid` (the owner's id type)",
                    o.value
                ),
            ),
            (None, Some((_, span))) => errors.at(
                codes::RUST_TYPE,
                span,
                "`owner_id` is set from the caller for owned records: add `#[resource(owner = ...)]` or drop the field",
            ),
            _ => {}
        }
    }

    /// The model's fields, the state field given the lifecycle's initial state as its
    /// default. A value every record holds comes from the client at create (required) or
    /// from a default; a field a record may lack must be an `Option`. (A lifecycle that
    /// names no field leaves its state field without the default it meant to give: that
    /// mistake is reported by the checks, not this consequence of it.)
    pub fn settled(&self, states: Option<&States>, errors: &mut Errors) -> Vec<Field> {
        let mut fields = self.fields.clone();
        if let Some(s) = states
            && let Some((f, _, _)) =
                fields.iter_mut().find(|(f, _, _)| f.name.value == s.field.value && f.default.is_none())
            && f.ty.value.values().iter().any(|v| v.value == s.initial.value)
        {
            f.default =
                Some(Located::new(DefaultValue::Value(s.initial.value.clone().into()), s.initial.origin.clone()));
        }
        let lost_state = states.is_some_and(|s| !fields.iter().any(|(f, _, _)| f.name.value == s.field.value));
        for (f, optional, ty_span) in &fields {
            let stateful = lost_state && matches!(f.ty.value, FieldType::Enum { .. });
            if !optional && !stateful && !f.required.value && f.default.is_none() && f.ty.value != FieldType::Roles {
                errors.at(
                    codes::RUST_TYPE,
                    *ty_span,
                    format!(
                        "a record may lack `{}`: no client must send it and it has no default; make it `Option<...>`, \
                         give it a `default`, or make it settable at create",
                        f.name.value
                    ),
                );
            }
        }
        fields.into_iter().map(|(f, _, _)| f).collect()
    }
}

/// What the Rust types of `resource`'s fields say beyond the model: the enum fields whose
/// type is not the one the derive declares (`{Resource}{Field}`), hand-written enums the
/// expansion names instead; and the dates and datetimes held as the `time` crate's types.
pub(crate) fn rust_types(
    fields: &syn::punctuated::Punctuated<syn::Field, syn::Token![,]>,
    resource: &Resource,
) -> RustTypes {
    let struct_field = |name: &str| {
        fields.iter().find(|s| s.ident.as_ref().is_some_and(|i| i.to_string().trim_start_matches("r#") == name))
    };
    let enums = resource
        .fields
        .iter()
        .filter(|f| matches!(f.ty.value, FieldType::Enum { .. }))
        .filter_map(|f| {
            let declared = declared_enum(&resource.name.value, &f.name.value);
            let inner = ty::read(&struct_field(&f.name.value)?.ty).inner;
            (ty::name(inner).as_deref() != Some(declared.as_str()))
                .then(|| OwnEnum { field: f.name.value.clone(), ty: inner.clone() })
        })
        .collect();
    let times = resource
        .fields
        .iter()
        .filter(|f| struct_field(&f.name.value).is_some_and(|s| ty::read(&s.ty).kind.is_time()))
        .map(|f| f.name.value.clone())
        .collect();
    RustTypes { enums, times }
}

/// The enum the derive declares for `resource.field` (`OrderStatus`), as the emitters name it.
fn declared_enum(resource: &str, field: &str) -> String {
    use heck::ToUpperCamelCase;
    format!("{}{}", resource.to_upper_camel_case(), field.to_upper_camel_case())
}

/// A field of the `time` crate's types must be written as the wire writes dates and
/// datetimes, which serde does only when told: by a `#[serde(with = ...)]` of its own.
fn time_on_the_wire(field: &syn::Field, read: &ty::Read, fname: &str, errors: &mut Errors) {
    if !read.kind.is_time() {
        return;
    }
    // `with`, or both halves of it; serde's own parser judges the values.
    let mut keys = Vec::new();
    for a in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = a.parse_nested_meta(|meta| {
            if let Some(key) = meta.path.get_ident() {
                keys.push(key.to_string());
            }
            if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        });
    }
    let has = |k: &str| keys.iter().any(|key| key == k);
    let told = has("with") || (has("serialize_with") && has("deserialize_with"));
    if !told {
        let module = if read.optional { "restgen::time::option" } else { "restgen::time" };
        errors.at(
            codes::RUST_TYPE,
            field.ty.span(),
            format!(
                "`{fname}` holds a `time` type, which serde writes in `time`'s own form, not as RFC 3339 like \
                 the service: add `#[serde(with = \"{module}\")]` (and derive serde's traits on the struct, \
                 the record as hooks and clients read it)"
            ),
        );
    }
}

/// One struct field as a model field: its type from the Rust type and the attributes,
/// its flags, bounds and defaults.
pub(super) fn field(
    fname: &str,
    span: Span,
    resource: &str,
    rust_ty: &syn::Type,
    read: ty::Read,
    fa: FieldAttrs,
    errors: &mut Errors,
) -> Option<Field> {
    let origin = at(span);
    let ty_span = rust_ty.span();
    let fty = field_type(fname, resource, &read, &fa, ty_span, errors)?;
    let nullable = fa.nullable.clone().map_or_else(|| Located::new(read.optional, at(ty_span)), located);
    if nullable.value && !read.optional {
        errors.at(
            codes::RUST_TYPE,
            fa.nullable.as_ref().map_or(ty_span, |n| n.span),
            format!("`{fname}` may be null, so its type is `Option<...>`"),
        );
    }
    let settable = match (&fa.settable, fa.not_settable) {
        (Some(words), _) => {
            let mut s = Settable::NEVER;
            for w in &words.value {
                match choose(w, "operation `settable` applies to", errors) {
                    Some(WriteOp::Create) => s.create = true,
                    Some(WriteOp::Replace) => s.replace = true,
                    Some(WriteOp::Patch) => s.patch = true,
                    None => {}
                }
            }
            Located::new(s, at(words.span))
        }
        (None, Some(span)) => Located::new(Settable::NEVER, at(span)),
        (None, None) => Located::new(Settable::NEVER, origin.clone()),
    };
    let default = fa.default.clone().map(|d| {
        let value = match d.value {
            DefaultAttr::Now => DefaultValue::Now,
            DefaultAttr::Value(v) => DefaultValue::Value(v),
        };
        Located::new(value, at(d.span))
    });
    // A value a record must always hold comes from the client at create (required) or
    // from a default; a field the client may leave out is an `Option`.
    let required = match fa.required.clone() {
        Some(r) => located(r),
        None => Located::new(!read.optional && default.is_none() && settable.value.create, origin.clone()),
    };
    let flag = |v: &Option<Sp<bool>>| v.clone().map_or_else(|| Located::new(false, origin.clone()), located);
    let is_password = fty == FieldType::Password;
    Some(Field {
        name: Located::new(fname.to_owned(), origin.clone()),
        renamed_from: fa.renamed_from.clone().map(located),
        description: fa.description.clone(),
        ty: Located::new(fty, fa.kind.as_ref().map_or_else(|| at(ty_span), |k| at(k.span))),
        required,
        nullable,
        default,
        settable,
        write_only: fa.write_only.as_ref().is_some_and(|w| w.value) || is_password,
        read_only: fa.read_only.as_ref().is_some_and(|r| r.value),
        unique: flag(&fa.unique),
        unique_global: fa.unique_global,
        min: fa.min.clone().map(located),
        max: fa.max.clone().map(located),
        min_length: fa.min_length.clone().map(located),
        max_length: fa.max_length.clone().map(located),
        pattern: fa.pattern.clone().map(located),
        filter: flag(&fa.filter),
        sort: flag(&fa.sort),
        gate: gate(fa.since.as_ref(), fa.until.as_ref(), errors),
        read: fa.read.as_ref().map(|words| rules(&words.value)),
        write: fa.write.as_ref().map(|words| rules(&words.value)),
        origin,
    })
}

/// The schema type of a field: what its Rust type says, refined by `text`, `email`, `url`,
/// `password`, `json`, `roles`, `values(...)` or `ref = ...`.
fn field_type(
    fname: &str,
    resource: &str,
    read: &ty::Read,
    fa: &FieldAttrs,
    ty_span: Span,
    errors: &mut Errors,
) -> Option<FieldType> {
    let kind = fa.kind.as_ref().map(|k| k.value.as_str());
    if let Some(values) = &fa.values {
        let expected = declared_enum(resource, fname);
        // `{Resource}{Field}` is declared by the derive; any other named type is an enum of
        // the user's, whose expansion asserts that its variants are these values.
        if ty::name(read.inner).as_deref() != Some(expected.as_str()) && read.kind != Rust::Other {
            errors.at(
                codes::RUST_TYPE,
                ty_span,
                format!(
                    "a field with `values` holds an enum: `{fname}: {expected}`, which the derive declares, \
                     or an enum of yours with `#[derive(restgen::Enum)]`"
                ),
            );
        }
        return Some(FieldType::Enum { values: values.value.iter().cloned().map(located).collect() });
    }
    if let Some(target) = &fa.reference {
        if !matches!(read.kind, Rust::Uuid | Rust::Integer) {
            errors.at(codes::RUST_TYPE, ty_span, format!("`{fname}` refers to a record by its id: `Uuid` or `i64`"));
        }
        return Some(FieldType::Ref { to: Located::new(resource_name(target), at(target.span())) });
    }
    let mismatch = |errors: &mut Errors, wants: &str| {
        errors.at(
            codes::RUST_TYPE,
            ty_span,
            format!("`{fname}` is declared `{}`, which holds {wants}", kind.unwrap_or("?")),
        );
    };
    Some(match (kind, read.kind) {
        (None, Rust::String) => FieldType::String,
        (Some("text"), Rust::String) => FieldType::Text,
        (Some("email"), Rust::String) => FieldType::Email,
        (Some("url"), Rust::String) => FieldType::Url,
        (Some("password"), Rust::String) => FieldType::Password,
        (Some("text" | "email" | "url" | "password"), _) => {
            mismatch(errors, "text: `String`");
            FieldType::String
        }
        (Some("json"), _) => FieldType::Json,
        (Some("roles"), Rust::Strings) => FieldType::Roles,
        (Some("roles"), _) => {
            mismatch(errors, "role names: `Vec<String>`");
            FieldType::Roles
        }
        (_, Rust::Integer) => FieldType::Integer,
        (_, Rust::Float) => FieldType::Number,
        (_, Rust::Bool) => FieldType::Boolean,
        (_, Rust::Uuid) => FieldType::Uuid,
        (_, Rust::Date | Rust::TimeDate) => FieldType::Date,
        (_, Rust::DateTime | Rust::TimeDateTime) => FieldType::DateTime,
        (_, Rust::Decimal) => FieldType::Decimal,
        (_, Rust::Json) => FieldType::Json,
        _ => {
            errors.at(codes::RUST_TYPE,
                ty_span,
                format!(
                    "restgen cannot tell the type of `{fname}` from its Rust type: use String, i64, f64, bool, Uuid, \
                     NaiveDate, DateTime<Utc>, time's Date or OffsetDateTime, Decimal, serde_json::Value, an enum with `#[field(values(...))]` \
                     (declared by the derive, or yours with `#[derive(restgen::Enum)]`), \
                     or an id with `#[field(ref = Type)]`"
                ),
            );
            return None;
        }
    })
}

/// A field's `read(...)` or `write(...)` as access rules.
fn rules(words: &[Sp<String>]) -> Vec<Located<AccessRule>> {
    words.iter().map(|w| Located::new(AccessRule::from_word(&w.value), at(w.span))).collect()
}
