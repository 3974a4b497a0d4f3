//! The `time` crate's `OffsetDateTime` and `Date` in the form restgen's wire gives dates
//! and datetimes (RFC 3339, `2026-11-24T08:00:00Z`; `2026-11-24`), the form chrono's types
//! take by themselves. `time`'s own serde form is another, so a field of these types names
//! this module: `#[serde(with = "restgen::time")]` on a value, `restgen::time::option` on
//! an `Option`. Derived inputs name `not_null` and `patch` as their fields need.

use crate::Patch;
use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use time::format_description::well_known::{Iso8601, Rfc3339};
use time::{Date, OffsetDateTime};

/// A `time` type with a text form on the wire: `OffsetDateTime` and `Date`.
pub trait Text: Sized + private::Sealed {
    /// The value as the wire writes it.
    fn write(&self) -> Result<String, String>;
    /// The value the wire's text names.
    fn read(text: &str) -> Result<Self, String>;
}

mod private {
    pub trait Sealed {}
    impl Sealed for time::OffsetDateTime {}
    impl Sealed for time::Date {}
}

impl Text for OffsetDateTime {
    fn write(&self) -> Result<String, String> {
        self.format(&Rfc3339).map_err(|e| e.to_string())
    }

    fn read(text: &str) -> Result<Self, String> {
        OffsetDateTime::parse(text, &Rfc3339).map_err(|e| format!("`{text}` is not an RFC 3339 datetime: {e}"))
    }
}

impl Text for Date {
    fn write(&self) -> Result<String, String> {
        self.format(&Iso8601::DATE).map_err(|e| e.to_string())
    }

    fn read(text: &str) -> Result<Self, String> {
        // The calendar form only (`YYYY-MM-DD`), as the runtime and chrono read dates.
        let calendar = text.len() == 10 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-';
        let parsed = if calendar { Date::parse(text, &Iso8601::DATE).ok() } else { None };
        parsed.ok_or_else(|| format!("`{text}` is not a date (YYYY-MM-DD)"))
    }
}

/// Serde's view of one value through [`Text`].
struct Wire<T>(T);

impl<T: Text> Serialize for Wire<&T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.write().map_err(S::Error::custom)?)
    }
}

impl<'de, T: Text> Deserialize<'de> for Wire<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(d)?;
        T::read(&text).map(Wire).map_err(D::Error::custom)
    }
}

/// A value: `#[serde(with = "restgen::time")]`.
pub fn serialize<T: Text, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    Wire(value).serialize(s)
}

/// A value: `#[serde(with = "restgen::time")]`.
pub fn deserialize<'de, T: Text, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    Wire::<T>::deserialize(d).map(|w| w.0)
}

/// An `Option` whose `None` is `null`: `#[serde(with = "restgen::time::option")]`. A
/// record's nullable field, or an input's required nullable one (present, maybe `null`).
pub mod option {
    use super::{Text, Wire};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<T: Text, S: Serializer>(value: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        value.as_ref().map(Wire).serialize(s)
    }

    pub fn deserialize<'de, T: Text, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
        Ok(Option::<Wire<T>>::deserialize(d)?.map(|w| w.0))
    }
}

/// An input's optional field that is never `null` (absence is `#[serde(default)]`), as
/// [`crate::input::not_null`] for other types.
pub mod not_null {
    use super::Text;
    use serde::{Deserializer, Serializer};

    pub fn serialize<T: Text, S: Serializer>(value: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        super::option::serialize(value, s)
    }

    pub fn deserialize<'de, T: Text, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
        super::deserialize(d).map(Some)
    }
}

/// An input's [`Patch`] field (absence is `#[serde(default)]`; `null` is [`Patch::Null`]).
pub mod patch {
    use super::{Patch, Text, Wire};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<T: Text, S: Serializer>(value: &Patch<T>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Patch::Value(v) => Wire(v).serialize(s),
            Patch::Null | Patch::Absent => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: Text, D: Deserializer<'de>>(d: D) -> Result<Patch<T>, D::Error> {
        Ok(match Option::<Wire<T>>::deserialize(d)? {
            Some(w) => Patch::Value(w.0),
            None => Patch::Null,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::Patch;
    use serde::{Deserialize, Serialize};
    use time::{Date, Month, OffsetDateTime};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Record {
        #[serde(with = "super")]
        at: OffsetDateTime,
        #[serde(with = "super::option")]
        due: Option<Date>,
        #[serde(default, with = "super::not_null", skip_serializing_if = "Option::is_none")]
        from: Option<Date>,
        #[serde(default, with = "super::patch", skip_serializing_if = "Patch::is_absent")]
        until: Patch<OffsetDateTime>,
    }

    fn at(text: &str) -> OffsetDateTime {
        OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap()
    }

    #[test]
    fn values_take_the_wire_forms_chrono_takes() {
        let day = Date::from_calendar_date(2026, Month::November, 4).unwrap();
        let record = Record { at: at("2026-11-24T08:00:00.5Z"), due: Some(day), from: None, until: Patch::Null };
        let json = serde_json::to_string(&record).unwrap();
        assert_eq!(json, r#"{"at":"2026-11-24T08:00:00.5Z","due":"2026-11-04","until":null}"#);
        assert_eq!(serde_json::from_str::<Record>(&json).unwrap(), record);
        // What chrono writes reads back as the same instant.
        let chrono_text = "2026-11-24T09:00:00.500+01:00";
        let read: Record = serde_json::from_str(&format!(r#"{{"at":"{chrono_text}","due":null}}"#)).unwrap();
        assert_eq!((read.at, read.due, read.until), (at("2026-11-24T08:00:00.5Z"), None, Patch::Absent));
    }

    #[test]
    fn other_forms_and_misplaced_nulls_are_refused() {
        for body in [
            r#"{"at":"2026-11-24 08:00:00","due":null}"#,
            r#"{"at":"2026-11-24T08:00:00Z","due":"2026-W48-2"}"#,
            r#"{"at":"2026-11-24T08:00:00Z","due":"20261124"}"#,
            r#"{"at":"2026-11-24T08:00:00Z","due":null,"from":null}"#,
            r#"{"at":"2026-11-24T08:00:00Z"}"#,
        ] {
            assert!(serde_json::from_str::<Record>(body).is_err(), "{body}");
        }
    }
}
