//! What the format says at a place: the keys a map takes, the words a key takes, and what
//! each means. Read from the format's JSON Schema, which is rendered from the vocabulary
//! (`restgen_core::vocabulary`), so the editor knows exactly what `restgen check` does.

use super::place::{At, Place};
use restgen_core::vocabulary;
use serde_json::Value;

/// The keys whose values name a resource of the schema.
pub const RESOURCE_REFERENCES: [&str; 4] = ["to", "owner", "nested_under", "principal"];

/// A key a map takes.
#[derive(Debug)]
pub struct KeyInfo {
    pub name: String,
    /// What it takes (`list of create, get, ...`).
    pub takes: String,
    /// What it means, its default, and what services do while it is not served.
    pub about: String,
}

/// The format, ready to be asked.
pub struct Format {
    schema: Value,
}

impl Format {
    pub fn new() -> Format {
        Format { schema: vocabulary::json_schema() }
    }

    /// `$ref`s followed: the schema itself and the name of the table it is, if any.
    fn resolve<'a>(&'a self, mut s: &'a Value) -> (&'a Value, Option<&'a str>) {
        let mut name = None;
        while let Some(target) = s.get("$ref").and_then(Value::as_str) {
            let def = target.rsplit('/').next().unwrap_or_default();
            name = Some(def);
            s = &self.schema["$defs"][def];
        }
        (s, name)
    }

    /// Of `anyOf` branches, the one that is a map.
    fn map_branch<'a>(&'a self, s: &'a Value) -> (&'a Value, Option<&'a str>) {
        let (s, name) = self.resolve(s);
        if s.get("properties").is_some() {
            return (s, name);
        }
        for branch in s.get("anyOf").and_then(Value::as_array).into_iter().flatten() {
            let (b, n) = self.resolve(branch);
            if b.get("properties").is_some() {
                return (b, n);
            }
        }
        (s, name)
    }

    /// The map at `path` and its table's name.
    fn map_at(&self, path: &[String]) -> Option<(&Value, Option<&str>)> {
        let mut current = self.resolve(&self.schema);
        for segment in path {
            let (s, _) = self.map_branch(current.0);
            let next = if segment == "[]" {
                s.get("items")?
            } else if let Some(p) = s.get("properties").and_then(|p| p.get(segment)) {
                p
            } else {
                // A map of names (resources, fields, transitions): the name is the segment.
                s.get("additionalProperties").filter(|a| a.is_object())?
            };
            current = self.resolve(next);
        }
        Some(self.map_branch(current.0))
    }

    /// The keys of the map at `path`.
    pub fn keys(&self, path: &[String]) -> Vec<KeyInfo> {
        let Some((map, table)) = self.map_at(path) else { return Vec::new() };
        let table = table.and_then(vocabulary::table);
        map.get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, value)| KeyInfo {
                name: name.clone(),
                takes: table.and_then(|t| t.key(name)).map(|k| k.ty_text()).unwrap_or_default(),
                about: value.get("description").and_then(Value::as_str).unwrap_or_default().to_owned(),
            })
            .collect()
    }

    /// One key of the map at `path`.
    pub fn key(&self, path: &[String], name: &str) -> Option<KeyInfo> {
        self.keys(path).into_iter().find(|k| k.name == name)
    }

    /// The words `key` of the map at `path` takes, itself or as its list's items: a closed
    /// set from the vocabulary, or `true` and `false`.
    pub fn words(&self, path: &[String], key: &str) -> Vec<String> {
        let Some((map, _)) = self.map_at(path) else { return Vec::new() };
        let Some(value) = map.get("properties").and_then(|p| p.get(key)) else { return Vec::new() };
        let mut words = Vec::new();
        self.collect_words(value, &mut words);
        words
    }

    fn collect_words(&self, s: &Value, words: &mut Vec<String>) {
        let (s, _) = self.resolve(s);
        for word in s.get("enum").and_then(Value::as_array).into_iter().flatten() {
            if let Some(w) = word.as_str() {
                words.push(w.to_owned());
            }
        }
        if s.get("type").and_then(Value::as_str) == Some("boolean") {
            words.extend(["true".to_owned(), "false".to_owned()]);
        }
        if let Some(items) = s.get("items") {
            self.collect_words(items, words);
        }
        for branch in s.get("anyOf").and_then(Value::as_array).into_iter().flatten() {
            self.collect_words(branch, words);
        }
    }

    /// Whether the list `key` at `path` holds maps (`versions`) rather than words.
    pub fn holds_maps(&self, path: &[String], key: &str) -> bool {
        let mut inner = path.to_vec();
        inner.extend([key.to_owned(), "[]".to_owned()]);
        self.map_at(&inner).is_some_and(|(m, _)| m.get("properties").is_some())
    }

    /// The key a place names, when it is a key: the one under the position, or the one
    /// whose value or list the position is in.
    pub fn key_at(&self, place: &Place) -> Option<KeyInfo> {
        match &place.at {
            At::Key => self.key(&place.path, &place.word),
            At::Value(key) | At::Item(key) => self.key(&place.path, key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_keys_of_every_kind_of_map() {
        let format = Format::new();
        let names = |p: &[&str]| format.keys(&path(p)).into_iter().map(|k| k.name).collect::<Vec<_>>();
        assert!(names(&[]).contains(&"resources".to_owned()));
        assert!(names(&["resources", "order"]).contains(&"fields".to_owned()));
        assert!(names(&["resources", "order", "fields", "total"]).contains(&"type".to_owned()));
        assert!(names(&["api", "versions", "[]"]).contains(&"deprecated".to_owned()));
        assert!(names(&["auth", "jwt"]).contains(&"algorithm".to_owned()));
        assert!(names(&["resources", "order", "nope", "x"]).is_empty());
    }

    #[test]
    fn the_words_of_closed_sets_and_what_keys_mean() {
        let format = Format::new();
        let field = path(&["resources", "order", "fields", "total"]);
        let types = format.words(&field, "type");
        assert!(types.contains(&"enum".to_owned()) && types.contains(&"decimal".to_owned()), "{types:?}");
        assert_eq!(format.words(&field, "required"), ["true", "false"]);
        let operations = format.words(&path(&["resources", "order"]), "operations");
        assert!(operations.contains(&"list".to_owned()), "{operations:?}");
        let owner = format.key(&path(&["resources", "order"]), "owner").unwrap();
        assert!(owner.about.contains("principal"), "{}", owner.about);
        assert!(format.holds_maps(&path(&["api"]), "versions"));
        assert!(!format.holds_maps(&path(&["resources", "order"]), "operations"));
    }
}
