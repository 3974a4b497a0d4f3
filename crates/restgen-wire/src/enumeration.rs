//! A field's closed set of string values as a Rust enum of the user's own.

/// An enum whose variants are the values of a field, each written on the wire as one
/// string. `#[derive(restgen::Enum)]` implements it (with serde's traits and `Display` in
/// terms of it), so a hand-written enum can be the type of a derived resource's field.
/// The input structs that hold it derive `Clone`, `Debug` and `PartialEq`, so it does too.
pub trait Enum: Clone + core::fmt::Debug + PartialEq + Sized + 'static {
    /// Every value, in the order the variants are declared.
    const VALUES: &'static [&'static str];

    /// The value as it appears on the wire.
    fn value(&self) -> &'static str;

    /// The variant a wire value names, if any.
    fn from_value(text: &str) -> Option<Self>;
}
