//! A typed value's fields as a [`Record`]: what a write's input type holds, in the form
//! the operations work on, without going through a `serde_json::Map` (whose keys would be
//! copied into `String`s and hashed, when a struct's names are the schema's `&'static str`s).

use super::Record;
use serde::Serialize;
use serde::ser::{Error as _, Impossible, SerializeStruct, Serializer};

impl Record {
    /// The fields `value` serializes, in order, each as JSON; those it skips (an absent
    /// [`Patch`](restgen_wire::Patch), an `Option` left out) are not in the record. A
    /// value that is not a struct is read as the JSON object it serializes to.
    pub fn from_typed<T: Serialize>(value: &T) -> Result<Record, serde_json::Error> {
        match value.serialize(Fields) {
            Ok(record) => Ok(record),
            Err(_) => match serde_json::to_value(value)? {
                serde_json::Value::Object(map) => Ok(Record::from(map)),
                _ => Err(serde_json::Error::custom("an input is a JSON object")),
            },
        }
    }
}

/// Serializes a struct into a [`Record`]; anything else is refused, so that
/// [`Record::from_typed`] takes the general way.
struct Fields;

struct Columns(Record);

fn not_a_struct() -> serde_json::Error {
    serde_json::Error::custom("not a struct")
}

impl SerializeStruct for Columns {
    type Ok = Record;
    type Error = serde_json::Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), Self::Error> {
        self.0.insert(key, serde_json::to_value(value)?);
        Ok(())
    }

    fn end(self) -> Result<Record, Self::Error> {
        Ok(self.0)
    }
}

/// Every form but a struct's is refused.
macro_rules! refused {
    ($($method:ident($($arg:ty),*);)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Record, serde_json::Error> { Err(not_a_struct()) })*
    };
}

impl Serializer for Fields {
    type Ok = Record;
    type Error = serde_json::Error;
    type SerializeSeq = Impossible<Record, serde_json::Error>;
    type SerializeTuple = Impossible<Record, serde_json::Error>;
    type SerializeTupleStruct = Impossible<Record, serde_json::Error>;
    type SerializeTupleVariant = Impossible<Record, serde_json::Error>;
    type SerializeMap = Impossible<Record, serde_json::Error>;
    type SerializeStruct = Columns;
    type SerializeStructVariant = Impossible<Record, serde_json::Error>;

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Columns, serde_json::Error> {
        Ok(Columns(Record::with_capacity(len)))
    }

    refused! {
        serialize_bool(bool); serialize_i8(i8); serialize_i16(i16); serialize_i32(i32);
        serialize_i64(i64); serialize_u8(u8); serialize_u16(u16); serialize_u32(u32);
        serialize_u64(u64); serialize_f32(f32); serialize_f64(f64); serialize_char(char);
        serialize_str(&str); serialize_bytes(&[u8]); serialize_none(); serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<Record, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<Record, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Record, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, serde_json::Error> {
        Err(not_a_struct())
    }
}

#[cfg(test)]
mod tests {
    use super::Record;
    use restgen_wire::Patch;
    use serde::Serialize;
    use serde_json::{Value, json};
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Input {
        name: String,
        #[serde(rename = "cityName", skip_serializing_if = "Patch::is_absent")]
        city: Patch<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        open: Option<bool>,
        rating: f64,
        tags: Vec<String>,
    }

    #[test]
    fn a_struct_becomes_the_record_its_json_object_is() {
        let sent = [
            Input { name: "a".into(), city: Patch::Value("x".into()), open: Some(true), rating: 4.0, tags: vec![] },
            Input { name: "b".into(), city: Patch::Null, open: None, rating: 0.5, tags: vec!["t".into()] },
            Input { name: "c".into(), city: Patch::Absent, open: None, rating: -1.0, tags: vec![] },
        ];
        for input in sent {
            let record = Record::from_typed(&input).unwrap();
            // Same members, same order, same values as serde_json makes of it.
            assert_eq!(serde_json::to_string(&record).unwrap(), serde_json::to_string(&input).unwrap());
        }
        let record =
            Record::from_typed(&Input { name: "c".into(), city: Patch::Absent, open: None, rating: 1.0, tags: vec![] })
                .unwrap();
        assert!(!record.contains_key("cityName") && !record.contains_key("open"), "skipped fields are absent");
        assert_eq!(record.get("rating"), Some(&json!(1.0)));
    }

    #[test]
    fn a_value_that_is_not_a_struct_is_read_as_its_json_object() {
        let map = BTreeMap::from([("b", 2), ("a", 1)]);
        assert_eq!(Value::from(Record::from_typed(&map).unwrap()), json!({"a": 1, "b": 2}));
        assert!(Record::from_typed(&3).is_err(), "a number is no input");
    }
}
