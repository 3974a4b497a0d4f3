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

/// The code every enum of values has, the generated ones and (its `@trait` part) those of
/// `#[derive(Enum)]`: written once here instead of in every generated file, where it was
/// a third of the lines of a model (and of the time spent printing them).
///
/// `string_enum!(Status { Open = "open", Done = "done" })`, beside an `enum Status` whose
/// unit variants are those (and `Copy`), gives it `Status::ALL` (every variant, in order),
/// `as_str` (the value on the wire), `Display` and [`Enum`]. `string_enum!(@trait ...)`
/// gives it [`Enum`] alone.
#[macro_export]
macro_rules! string_enum {
    ($name:ident { $($variant:ident = $value:literal),* $(,)? }) => {
        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The value as it appears on the wire.
            pub fn as_str(self) -> &'static str {
                <$name as $crate::Enum>::value(&self)
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(<$name as $crate::Enum>::value(self))
            }
        }

        $crate::string_enum!(@trait $name { $($variant = $value),* });
    };
    (@trait $name:ident { $($variant:ident = $value:literal),* $(,)? }) => {
        #[automatically_derived]
        impl $crate::Enum for $name {
            const VALUES: &'static [&'static str] = &[$($value),*];

            fn value(&self) -> &'static str {
                match self {
                    $($name::$variant => $value,)*
                }
            }

            fn from_value(text: &str) -> ::core::option::Option<Self> {
                match text {
                    $($value => ::core::option::Option::Some($name::$variant),)*
                    _ => ::core::option::Option::None,
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::Enum;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Status {
        InProgress,
        V2fa,
        Done,
    }
    crate::string_enum!(Status { InProgress = "in-progress", V2fa = "2fa", Done = "done" });

    #[derive(Clone, Debug, PartialEq)]
    enum Mine {
        One,
        Two,
    }
    crate::string_enum!(@trait Mine { One = "one", Two = "two", });

    #[test]
    fn an_enum_of_values_names_each_value_and_reads_it_back() {
        assert_eq!(Status::ALL, &[Status::InProgress, Status::V2fa, Status::Done]);
        assert_eq!(Status::VALUES, &["in-progress", "2fa", "done"]);
        for (variant, value) in Status::ALL.iter().zip(Status::VALUES) {
            assert_eq!(variant.as_str(), *value);
            assert_eq!(variant.value(), *value);
            assert_eq!(variant.to_string(), *value);
            assert_eq!(Status::from_value(value), Some(*variant));
        }
        assert_eq!(Status::from_value("In-Progress"), None, "values are matched exactly");
        assert_eq!(Status::from_value(""), None);
    }

    #[test]
    fn the_trait_alone_for_an_enum_of_ones_own() {
        assert_eq!(Mine::VALUES, &["one", "two"]);
        assert_eq!(Mine::Two.value(), "two");
        assert_eq!(Mine::from_value("one"), Some(Mine::One));
        assert_eq!(Mine::from_value("three"), None);
    }
}
