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
/// `as_str` (the value on the wire), `Display` and [`Enum`] (serde's traits are derived
/// beside it). `string_enum!(@derived ...)`, what `#[derive(Enum)]` expands to, gives an
/// enum of one's own [`Enum`], `Display` and serde's traits in terms of it, so that it is
/// its value on the wire.
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

        $crate::string_enum!(@display $name);
        $crate::string_enum!(@trait $name { $($variant = $value),* });
    };
    (@derived $name:ident { $($variant:ident = $value:literal),* $(,)? }) => {
        $crate::string_enum!(@trait $name { $($variant = $value),* });
        $crate::string_enum!(@display $name);

        #[automatically_derived]
        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error>
            where
                S: $crate::__private::serde::Serializer,
            {
                serializer.serialize_str($crate::Enum::value(self))
            }
        }

        #[automatically_derived]
        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D>(deserializer: D) -> ::core::result::Result<Self, D::Error>
            where
                D: $crate::__private::serde::Deserializer<'de>,
            {
                deserializer.deserialize_str($crate::__private::Values::<$name>::new())
            }
        }
    };
    (@display $name:ident) => {
        #[automatically_derived]
        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(<$name as $crate::Enum>::value(self))
            }
        }
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

/// The serde visitor of every enum of values `string_enum!(@derived ...)` makes: one of
/// its values, as a string.
#[doc(hidden)]
pub struct Values<E>(core::marker::PhantomData<E>);

impl<E> Values<E> {
    #[allow(clippy::new_without_default)]
    pub fn new() -> Values<E> {
        Values(core::marker::PhantomData)
    }
}

impl<E: Enum> serde::de::Visitor<'_> for Values<E> {
    type Value = E;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("one of ")?;
        for (i, value) in E::VALUES.iter().enumerate() {
            write!(f, "{}`{value}`", if i == 0 { "" } else { ", " })?;
        }
        Ok(())
    }

    fn visit_str<Err: serde::de::Error>(self, text: &str) -> Result<E, Err> {
        E::from_value(text).ok_or_else(|| Err::unknown_variant(text, E::VALUES))
    }
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

    #[derive(Clone, Debug, PartialEq)]
    enum Derived {
        Low,
        High,
    }
    crate::string_enum!(@derived Derived { Low = "low", High = "very-high" });

    #[test]
    fn a_derived_enum_is_its_value_on_the_wire() {
        assert_eq!(serde_json::to_string(&Derived::High).unwrap(), r#""very-high""#);
        assert_eq!(Derived::High.to_string(), "very-high");
        assert_eq!(serde_json::from_str::<Derived>(r#""low""#).unwrap(), Derived::Low);
        let unknown = serde_json::from_str::<Derived>(r#""High""#).unwrap_err().to_string();
        assert!(unknown.contains("unknown variant `High`, expected `low` or `very-high`"), "{unknown}");
        let wrong = serde_json::from_str::<Derived>("1").unwrap_err().to_string();
        assert!(wrong.contains("invalid type: integer `1`, expected one of `low`, `very-high`"), "{wrong}");
    }

    #[test]
    fn the_trait_alone_for_an_enum_of_ones_own() {
        assert_eq!(Mine::VALUES, &["one", "two"]);
        assert_eq!(Mine::Two.value(), "two");
        assert_eq!(Mine::from_value("one"), Some(Mine::One));
        assert_eq!(Mine::from_value("three"), None);
    }
}
