//! The OpenAPI 3.0.3 rendering of every document of every fixture: the same operations as
//! the 3.1 document it comes from, and nothing 3.0 has no word for, anywhere.

use restgen_tests::{display_name, generate, valid_schemas};
use serde_json::Value;

const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// Every operation of a document: path, method, operationId.
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for method in METHODS {
            if let Some(op) = item.get(method) {
                out.push((path.clone(), method.to_owned(), op["operationId"].clone()));
            }
        }
    }
    out
}

/// Where `value` says something in 3.1's words: a list of types, a `const`, a `null` type,
/// `webhooks`, or a `$ref` with other keywords beside it (which 3.0 ignores).
fn words_of_3_1(value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(o) => {
            if o.get("type").is_some_and(Value::is_array) {
                found.push(format!("{at}: a list of types"));
            }
            if o.get("type").and_then(Value::as_str) == Some("null") {
                found.push(format!("{at}: type null"));
            }
            if o.contains_key("$ref") && o.len() > 1 {
                found.push(format!("{at}: $ref beside {:?}", o.keys().collect::<Vec<_>>()));
            }
            for (key, inner) in o {
                // `properties` names fields, which may be called anything.
                if key == "const" && !at.ends_with("/properties") {
                    found.push(format!("{at}: const"));
                }
                words_of_3_1(inner, &format!("{at}/{key}"), found);
            }
        }
        Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| words_of_3_1(v, &format!("{at}/{i}"), found)),
        _ => {}
    }
}

#[test]
fn every_document_has_a_3_0_rendering_with_its_operations_in_3_0_words() {
    let mut documents = 0;
    for path in valid_schemas() {
        let files = generate(&path).files;
        for (file, contents) in &files {
            let name = file.display().to_string();
            let Some(stem) = name.strip_suffix(".json").filter(|s| s.starts_with("openapi") && !s.ends_with(".3.0"))
            else {
                continue;
            };
            let rendered = &files[std::path::Path::new(&format!("{stem}.3.0.json"))].contents;
            let (doc, down): (Value, Value) =
                (serde_json::from_str(&contents.contents).unwrap(), serde_json::from_str(rendered).unwrap());
            let what = format!("{}: {stem}.3.0.json", display_name(&path));
            assert_eq!(down["openapi"], "3.0.3", "{what}");
            assert_eq!(operations(&doc), operations(&down), "{what}: the same operations");
            assert_eq!(
                doc["components"]["schemas"].as_object().map(|s| s.keys().collect::<Vec<_>>()),
                down["components"]["schemas"].as_object().map(|s| s.keys().collect::<Vec<_>>()),
                "{what}: the same schemas"
            );
            let mut found = Vec::new();
            words_of_3_1(&down, "", &mut found);
            assert!(down.get("webhooks").is_none(), "{what}: webhooks");
            assert!(found.is_empty(), "{what}: {found:#?}");
            if doc.get("webhooks").is_some() {
                assert!(down["info"]["description"].as_str().unwrap().contains("OpenAPI 3.1 document"), "{what}");
            }
            documents += 1;
        }
    }
    assert!(documents >= 8, "{documents} documents");
}
