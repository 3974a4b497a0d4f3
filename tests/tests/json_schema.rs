//! `schema/restgen.schema.json` and the vocabulary agree: the same keys exist at every
//! level with the same words, every valid schema validates, and the unknown keys the parser reports in an invalid
//! fixture are the ones the JSON Schema rejects.

use restgen_core::diagnostics::codes;
use restgen_core::vocabulary::{self, Fronts};
use restgen_tests::{display_name, invalid_schemas, root, valid_schemas};
use serde_json::Value;
use std::collections::BTreeSet;

fn json_schema() -> Value {
    let text = std::fs::read_to_string(root().join("schema/restgen.schema.json")).expect("schema/restgen.schema.json");
    serde_json::from_str(&text).expect("the JSON Schema is JSON")
}

fn instance(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    restgen_schema::to_json(&display_name(path), &text).expect("parses as YAML")
}

/// The words a JSON Schema property allows, wherever it lists them (`enum`, `items`,
/// `anyOf`); booleans left out (`settable: true`).
fn enum_words(property: &Value, out: &mut BTreeSet<String>) {
    match property {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("enum", Value::Array(words)) => {
                        out.extend(words.iter().filter_map(|w| w.as_str().map(str::to_owned)))
                    }
                    ("description" | "$comment", _) => {}
                    _ => enum_words(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| enum_words(v, out)),
        _ => {}
    }
}

#[test]
fn every_key_table_matches_its_definition() {
    let schema = json_schema();
    let defs = schema["$defs"].as_object().expect("$defs");
    let mut problems = Vec::new();
    let tables: Vec<_> = vocabulary::TABLES.iter().filter(|t| !t.names(Fronts::Yaml).is_empty()).collect();
    for table in &tables {
        let name = table.name;
        let parser: BTreeSet<&str> = table.names(Fronts::Yaml).into_iter().collect();
        let Some(props) = defs.get(name).and_then(|d| d["properties"].as_object()) else {
            problems.push(format!("$defs/{name} is missing or has no properties"));
            continue;
        };
        let json: BTreeSet<&str> = props.keys().map(String::as_str).collect();
        if parser != json {
            let only_parser: Vec<_> = parser.difference(&json).collect();
            let only_json: Vec<_> = json.difference(&parser).collect();
            problems.push(format!(
                "$defs/{name}: only the vocabulary has {only_parser:?}, only the JSON Schema has {only_json:?}"
            ));
        }
        if defs[name]["additionalProperties"] != Value::Bool(false) {
            problems.push(format!("$defs/{name} does not forbid other keys"));
        }
        // A closed set of words is the JSON Schema's `enum`, word for word.
        for key in table.keys.iter().filter(|k| k.spelled_in(Fronts::Yaml) && !k.words.is_empty() && !k.open) {
            let mut json_words = BTreeSet::new();
            if let Some(p) = props.get(key.name) {
                enum_words(p, &mut json_words);
            }
            let words: BTreeSet<String> = key.words.iter().map(|w| (*w).to_owned()).collect();
            if json_words != words {
                problems.push(format!(
                    "$defs/{name}/{}: the vocabulary's words {words:?}, the JSON Schema's {json_words:?}",
                    key.name
                ));
            }
        }
    }
    let names: BTreeSet<&str> = tables.iter().map(|t| t.name).collect();
    for (name, def) in defs {
        if def.get("properties").is_some() && !names.contains(name.as_str()) {
            problems.push(format!("$defs/{name} describes keys the vocabulary has no table for"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_valid_schema_validates() {
    let validator = jsonschema::validator_for(&json_schema()).expect("a valid JSON Schema");
    let starter = std::fs::read_to_string(root().join("templates/starter.yaml"))
        .unwrap()
        .replace("__SERVICE_ENV__", "SHOP")
        .replace("__SERVICE__", "shop");
    let mut instances: Vec<(String, Value)> =
        valid_schemas().iter().map(|p| (p.display().to_string(), instance(p))).collect();
    instances.push(("templates/starter.yaml".into(), restgen_schema::to_json("starter.yaml", &starter).unwrap()));
    let mut problems = Vec::new();
    for (name, value) in &instances {
        for e in validator.iter_errors(value) {
            problems.push(format!("{name}: {} at {}", e, e.instance_path()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn unknown_keys_are_unknown_to_both() {
    let validator = jsonschema::validator_for(&json_schema()).unwrap();
    let mut problems = Vec::new();
    for path in invalid_schemas() {
        let text = std::fs::read_to_string(&path).unwrap();
        let Some(value) = restgen_schema::to_json(&display_name(&path), &text) else { continue };
        let mut json_unknown: Vec<String> = validator
            .iter_errors(&value)
            .filter_map(|e| match e.kind() {
                jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => Some(unexpected.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        let diags = match restgen_schema::load(&display_name(&path), &text) {
            Ok((_, d)) | Err(d) => d,
        };
        let mut parser_unknown: Vec<String> = diags
            .iter()
            .filter(|d| d.code == codes::UNKNOWN_KEY)
            .map(|d| d.message.split('`').nth(1).unwrap_or_default().to_owned())
            .collect();
        json_unknown.sort();
        parser_unknown.sort();
        if json_unknown != parser_unknown {
            problems.push(format!("{}: parser {parser_unknown:?}, JSON Schema {json_unknown:?}", path.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
