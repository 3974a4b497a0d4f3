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
    /// chrono's `NaiveDate`.
    Date,
    /// chrono's `DateTime<Utc>`.
    DateTime,
    /// The `time` crate's `Date`.
    TimeDate,
    /// The `time` crate's `OffsetDateTime`.
    TimeDateTime,
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

fn has_generics(ty: &Type) -> bool {
    let Type::Path(p) = ty else { return false };
    p.path.segments.last().is_some_and(|s| !s.arguments.is_none())
}

impl Rust {
    /// A date or datetime of the `time` crate, which serde writes in `time`'s own form
    /// unless told to write restgen's (`#[serde(with = "restgen::time")]`).
    pub(crate) fn is_time(self) -> bool {
        matches!(self, Rust::TimeDate | Rust::TimeDateTime)
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
        Some("NaiveDate") => Rust::Date,
        Some("DateTime") if generic_of(ty, "DateTime").and_then(name).as_deref() == Some("Utc") => Rust::DateTime,
        // chrono's `Date<Tz>` is generic (and deprecated); `time`'s is not.
        Some("Date") if !has_generics(ty) => Rust::TimeDate,
        Some("OffsetDateTime") => Rust::TimeDateTime,
        Some("Decimal") => Rust::Decimal,
        Some("Value") => Rust::Json,
        _ => Rust::Other,
    }
}
