//! Deserialization helpers generated input structs name in `deserialize_with`.

use serde::{Deserialize, Deserializer};

/// An optional field that may be absent but never `null` (the field is not nullable):
/// `null` fails with the type's own "invalid type: null" error.
pub fn not_null<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// A required field that may be `null`: it must be present (no `#[serde(default)]`), and
/// `null` is a legal value.
pub fn nullable<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d)
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        #[serde(default, deserialize_with = "super::not_null")]
        city: Option<String>,
        #[serde(deserialize_with = "super::nullable")]
        note: Option<String>,
    }

    #[test]
    fn not_null_accepts_absence_and_rejects_null() {
        let b: Body = serde_json::from_str(r#"{"note":null}"#).unwrap();
        assert_eq!(b.city, None);
        let err = serde_json::from_str::<Body>(r#"{"city":null,"note":null}"#).unwrap_err();
        assert!(err.to_string().contains("invalid type: null"), "{err}");
    }

    #[test]
    fn nullable_requires_presence_and_accepts_null() {
        let err = serde_json::from_str::<Body>("{}").unwrap_err();
        assert!(err.to_string().contains("missing field `note`"), "{err}");
        let b: Body = serde_json::from_str(r#"{"note":"x"}"#).unwrap();
        assert_eq!(b.note.as_deref(), Some("x"));
    }
}
