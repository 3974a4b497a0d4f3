//! One record as stored: its columns in order, each a JSON value.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// A record as stored, server-controlled fields included: `id`, `owner_id`, the fields,
/// the times, in that order, as the representation shows them.
///
/// Not a `serde_json::Map`: a record's column names are the schema's `&'static str`s,
/// which a map would copy into a `String` each for every record read, and hash; a record
/// has a dozen columns, found as fast by comparing names as by hashing them. Lists read
/// and serialize one per row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record(Vec<(Cow<'static, str>, Value)>);

impl Record {
    /// The record's id as text, whichever kind it is.
    pub(crate) fn id_text(&self) -> String {
        match self.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        }
    }

    pub fn new() -> Record {
        Record(Vec::new())
    }

    pub fn with_capacity(columns: usize) -> Record {
        Record(Vec::with_capacity(columns))
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| same(k, name)).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        self.0.iter_mut().find(|(k, _)| same(k, name)).map(|(_, v)| v)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets `name`, where it stands if the record has it, else last; returns the value
    /// it replaced.
    pub fn insert(&mut self, name: impl Into<Cow<'static, str>>, value: Value) -> Option<Value> {
        let name = name.into();
        match self.get_mut(&name) {
            Some(slot) => Some(std::mem::replace(slot, value)),
            None => {
                self.0.push((name, value));
                None
            }
        }
    }

    /// Adds a column the record does not have yet, last: what reading a row does, where
    /// the names are known apart and looking for each first would cost a scan per column.
    pub(crate) fn push(&mut self, name: &'static str, value: Value) {
        debug_assert!(!self.contains_key(name), "`{name}` pushed twice");
        self.0.push((Cow::Borrowed(name), value));
    }

    /// Takes the value of `name` out, leaving `null` in its place: cheaper than removing
    /// it where the record is taken apart column by column.
    pub fn take(&mut self, name: &str) -> Option<Value> {
        self.get_mut(name).map(Value::take)
    }

    /// Removes `name`, keeping the others in order.
    pub fn shift_remove(&mut self, name: &str) -> Option<Value> {
        let at = self.0.iter().position(|(k, _)| same(k, name))?;
        Some(self.0.remove(at).1)
    }

    /// Keeps the columns `keep` says yes to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.0.retain(|(k, _)| keep(k));
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// Adds every column of `other`, as [`Record::insert`] does.
    pub fn extend<K: Into<Cow<'static, str>>>(&mut self, other: impl IntoIterator<Item = (K, Value)>) {
        for (k, v) in other {
            self.insert(k, v);
        }
    }

    /// The record as a JSON object.
    pub fn into_map(self) -> Map<String, Value> {
        self.0.into_iter().map(|(k, v)| (k.into_owned(), v)).collect()
    }
}

/// Whether column `k` is `name`. Often both are the schema's own `&'static str` for the
/// field, one string in memory, told at once by where it is. Otherwise names of a dozen
/// bytes that nearly always differ in their first: compared here byte by byte, which
/// stops there, rather than by a call to `memcmp`.
fn same(k: &str, name: &str) -> bool {
    k.len() == name.len()
        && (std::ptr::eq(k.as_ptr(), name.as_ptr()) || k.bytes().zip(name.bytes()).all(|(a, b)| a == b))
}

impl From<Map<String, Value>> for Record {
    fn from(map: Map<String, Value>) -> Record {
        Record(map.into_iter().map(|(k, v)| (Cow::Owned(k), v)).collect())
    }
}

impl From<Record> for Value {
    fn from(record: Record) -> Value {
        Value::Object(record.into_map())
    }
}

impl<K: Into<Cow<'static, str>>> FromIterator<(K, Value)> for Record {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(columns: I) -> Record {
        let mut record = Record::new();
        for (k, v) in columns {
            record.insert(k, v);
        }
        record
    }
}

impl IntoIterator for Record {
    type Item = (Cow<'static, str>, Value);
    type IntoIter = std::vec::IntoIter<(Cow<'static, str>, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k.as_ref(), v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Record, D::Error> {
        Map::deserialize(deserializer).map(Record::from)
    }
}

#[cfg(test)]
mod tests {
    use super::Record;
    use serde_json::{Value, json};

    #[test]
    fn a_record_keeps_its_columns_in_order_as_a_json_object_does() {
        let mut record = Record::new();
        record.insert("id", json!(1));
        record.insert("name", json!("a"));
        record.insert(String::from("note"), Value::Null);
        assert_eq!(record.insert("id", json!(2)), Some(json!(1)), "replaced where it stands");
        assert_eq!(serde_json::to_string(&record).unwrap(), r#"{"id":2,"name":"a","note":null}"#);
        assert_eq!(record.shift_remove("name"), Some(json!("a")));
        assert_eq!(record.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["id", "note"]);
        let back: Record = serde_json::from_str(r#"{"id":2,"note":null}"#).unwrap();
        assert_eq!(back, record);
        assert_eq!(Value::from(record), json!({"id": 2, "note": null}));
    }
}
