//! Enums whose variants are words of the schema format (`not_found`, `cursor`, `HS256`).
//! Each word is written once, beside its variant: both front-ends read words through
//! [`Word`], the [vocabulary](crate::vocabulary) lists them for the docs, the JSON Schema
//! test and did-you-mean hints, and emitters that print a word ask the variant for it.

/// An enum whose variants are the words a key allows.
pub trait Word: Copy + PartialEq + 'static {
    /// Every variant, in the order the format lists them.
    const ALL: &'static [Self];
    /// The words, in the same order.
    const WORDS: &'static [&'static str];

    /// The word a schema writes for this variant.
    fn word(self) -> &'static str;

    /// The variant a schema means by `word`.
    fn from_word(word: &str) -> Option<Self> {
        Self::ALL.iter().zip(Self::WORDS).find(|(_, w)| **w == word).map(|(v, _)| *v)
    }
}

/// Declares an enum of words: each variant with the word a schema writes for it.
macro_rules! words {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $word:literal,)+
        }
    ) => {
        $(#[$meta])*
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// The word a schema writes for this variant (a `const` form of [`Word::word`]).
            ///
            /// [`Word::word`]: $crate::words::Word::word
            pub const fn word(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }

            /// The variant's name in Rust, for emitters that write `Enum::Variant`.
            pub const fn variant(self) -> &'static str {
                match self {
                    $($name::$variant => stringify!($variant),)+
                }
            }
        }

        impl $crate::words::Word for $name {
            const ALL: &'static [Self] = &[$($name::$variant,)+];
            const WORDS: &'static [&'static str] = &[$($word,)+];

            fn word(self) -> &'static str {
                $name::word(self)
            }
        }
    };
}
pub(crate) use words;

/// `noun` with its indefinite article, by sound: "an order", "a user", "an hour"; a
/// snake_case name is read as the words it joins ("an order item").
pub fn a(noun: &str) -> String {
    format!("{} {noun}", article(noun))
}

/// [`a`], capitalized to begin a sentence: "An order was created."
pub fn a_capitalized(noun: &str) -> String {
    let with = a(noun);
    let mut chars = with.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

/// The indefinite article `noun` is said with.
pub fn article(noun: &str) -> &'static str {
    match in_definite::is_an(&noun.replace('_', " ")) {
        in_definite::Is::An => "an",
        _ => "a",
    }
}

#[cfg(test)]
mod tests {
    use super::Word;
    use crate::model::{NotOwned, Operation};

    #[test]
    fn words_and_variants_read_both_ways() {
        assert_eq!(NotOwned::from_word("not_found"), Some(NotOwned::NotFound));
        assert_eq!(NotOwned::NotFound.word(), "not_found");
        assert_eq!(NotOwned::from_word("notfound"), None);
        assert_eq!(<Operation as Word>::WORDS, ["create", "get", "list", "replace", "patch", "delete"]);
    }
}

#[cfg(test)]
mod articles {
    use super::{a, a_capitalized};

    #[test]
    fn a_name_takes_the_article_it_is_said_with() {
        for (name, said) in [
            ("order", "an order"),
            ("invoice", "an invoice"),
            ("item", "an item"),
            ("event_log", "an event_log"),
            ("user", "a user"),
            ("unicorn", "a unicorn"),
            ("hour_entry", "an hour_entry"),
            ("customer", "a customer"),
            ("vehicle", "a vehicle"),
            ("euro_rate", "a euro_rate"),
            ("one_off", "a one_off"),
            ("api_key", "an api_key"),
        ] {
            assert_eq!(a(name), said, "{name}");
        }
        assert_eq!(a_capitalized("order"), "An order");
        assert_eq!(a_capitalized("user"), "A user");
    }
}
