//! Duplicate member names in a JSON body. RFC 8259 leaves their meaning to the parser:
//! serde_json keeps the last, a proxy, a WAF or a hook in another language may keep the
//! first, so `{"total_cents":5,"total_cents":7}` would be one order to whatever checked it
//! and another to the store. A body that names a key twice, at any depth, is refused.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The path of the first key named twice in one object of `bytes` (`total_cents`,
/// `meta.tags`, `items[2].qty`); `None` when there is none, or `bytes` is not JSON (the
/// parse that follows says why).
pub(crate) fn first_duplicate(bytes: &[u8]) -> Option<String> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut found = None;
    let _ = Scan { path: String::new(), found: &mut found }.deserialize(&mut de);
    found
}

/// Walks one value at `path`, leaving the first duplicate's path in `found` (and failing,
/// which stops the walk).
struct Scan<'a> {
    path: String,
    found: &'a mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        loop {
            let path = format!("{}[{index}]", self.path);
            if seq.next_element_seed(Scan { path, found: &mut *self.found })?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // Most objects are small: a list searched beats a set hashed.
        let mut seen: Vec<String> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() { key.clone() } else { format!("{}.{key}", self.path) };
            if seen.contains(&key) {
                *self.found = Some(path);
                return Err(A::Error::custom("duplicate key"));
            }
            map.next_value_seed(Scan { path, found: &mut *self.found })?;
            seen.push(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::first_duplicate;

    #[test]
    fn a_key_named_twice_is_found_at_any_depth_with_its_path() {
        let cases = [
            (r#"{"total_cents":5,"total_cents":7}"#, Some("total_cents")),
            (r#"{"a":1,"\u0061":2}"#, Some("a")),
            (r#"{"meta":{"tag":1,"tag":2}}"#, Some("meta.tag")),
            (r#"{"items":[{"qty":1},{"qty":1,"qty":2}]}"#, Some("items[1].qty")),
            (r#"[{"x":1},{"x":1}]"#, None),
            (r#"{"a":{"b":1},"b":{"a":1}}"#, None),
            (r#"{"a":1,"b":"a","c":["a","a"]}"#, None),
            ("not json", None),
            (r#"{"a":1,"a""#, Some("a")),
        ];
        for (body, expected) in cases {
            assert_eq!(first_duplicate(body.as_bytes()).as_deref(), expected, "{body}");
        }
    }
}
