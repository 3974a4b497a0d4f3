//! A field of a JSON Merge Patch (RFC 7396): absent, explicitly `null`, or a new value.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One field of an input where "not sent" and "sent as `null`" mean different things:
/// in a PATCH absent leaves the field alone and `null` clears it; at create absent takes
/// the default and `null` stores null.
///
/// Use with `#[serde(default, skip_serializing_if = "Patch::is_absent")]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Patch<T> {
    /// The field was not in the body.
    #[default]
    Absent,
    /// The field was `null`.
    Null,
    /// The field had a value.
    Value(T),
}

impl<T> Patch<T> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Patch::Absent)
    }

    /// `None` when absent; `Some(None)` for null; `Some(Some(v))` for a value.
    pub fn into_option(self) -> Option<Option<T>> {
        match self {
            Patch::Absent => None,
            Patch::Null => Some(None),
            Patch::Value(v) => Some(Some(v)),
        }
    }

    pub fn as_ref(&self) -> Patch<&T> {
        match self {
            Patch::Absent => Patch::Absent,
            Patch::Null => Patch::Null,
            Patch::Value(v) => Patch::Value(v),
        }
    }
}

impl<T> From<Option<T>> for Patch<T> {
    /// `Some(v)` sets a value, `None` sends `null`.
    fn from(value: Option<T>) -> Self {
        value.map_or(Patch::Null, Patch::Value)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    // Only called when the field is present (absence is `#[serde(default)]`), so a
    // `null` here is an explicit null.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(d).map(|o| o.map_or(Patch::Null, Patch::Value))
    }
}

impl<T: Serialize> Serialize for Patch<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Patch::Value(v) => v.serialize(s),
            Patch::Absent | Patch::Null => s.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Patch;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Default, PartialEq, Deserialize, Serialize)]
    struct Body {
        #[serde(default, skip_serializing_if = "Patch::is_absent")]
        note: Patch<String>,
    }

    #[test]
    fn absent_null_and_value_are_three_different_things() {
        let absent: Body = serde_json::from_str("{}").unwrap();
        let null: Body = serde_json::from_str(r#"{"note":null}"#).unwrap();
        let value: Body = serde_json::from_str(r#"{"note":"hi"}"#).unwrap();
        assert_eq!(absent.note, Patch::Absent);
        assert_eq!(null.note, Patch::Null);
        assert_eq!(value.note, Patch::Value("hi".to_owned()));
    }

    #[test]
    fn serializing_round_trips_all_three() {
        for json in ["{}", r#"{"note":null}"#, r#"{"note":"hi"}"#] {
            let body: Body = serde_json::from_str(json).unwrap();
            assert_eq!(serde_json::to_string(&body).unwrap(), json);
        }
    }
}
