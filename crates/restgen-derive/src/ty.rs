//! What a field's Rust type says: whether it may be null (`Option<T>`), and which schema
//! type its values have. Types are recognised by their last path segment, so
//! `chrono::DateTime<Utc>` and a `use`d `DateTime<Utc>` read alike.

use syn::{GenericArgument, PathArguments, Type};

/// The kind of value a Rust type holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rust {
    String,
    Integer,
    Float,
    Bool,
    Uuid,
    Date,
    DateTime,
    Decimal,
    Json,
    /// `Vec<String>` (a `roles` field).
    Strings,
    /// Any other named type: an enum the derive declares, or a mistake.
    Other,
}

/// A field's type read: `Option<T>` unwrapped once.
pub(crate) struct Read<'a> {
    pub optional: bool,
    pub kind: Rust,
    /// The type inside `Option`, for messages and for naming generated enums.
    pub inner: &'a Type,
}

pub(crate) fn read(ty: &Type) -> Read<'_> {
    match generic_of(ty, "Option") {
        Some(inner) => Read { optional: true, kind: kind(inner), inner },
        None => Read { optional: false, kind: kind(ty), inner: ty },
    }
}

/// `T` of `Name<T>`, when `ty` is such a path.
fn generic_of<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    match args.args.first()? {
        GenericArgument::Type(t) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}

/// The last segment's name, when `ty` is a path.
pub(crate) fn name(ty: &Type) -> Option<String> {
    let Type::Path(p) = ty else { return None };
    p.path.segments.last().map(|s| s.ident.to_string())
}

fn kind(ty: &Type) -> Rust {
    if generic_of(ty, "Vec").and_then(name).as_deref() == Some("String") {
        return Rust::Strings;
    }
    match name(ty).as_deref() {
        Some("String") => Rust::String,
        Some("i64") => Rust::Integer,
        Some("f64") => Rust::Float,
        Some("bool") => Rust::Bool,
        Some("Uuid") => Rust::Uuid,
        Some("NaiveDate" | "Date") => Rust::Date,
        Some("DateTime" | "OffsetDateTime") => Rust::DateTime,
        Some("Decimal") => Rust::Decimal,
        Some("Value") => Rust::Json,
        _ => Rust::Other,
    }
}
