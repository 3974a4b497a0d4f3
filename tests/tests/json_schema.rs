//! `schema/restgen.schema.json` (rendered from the vocabulary, `tests/vocabulary.rs`) judges
//! schema files as restgen does: every valid schema validates, and the unknown keys the parser reports in an invalid
//! fixture are the ones the JSON Schema rejects.

use restgen_core::diagnostics::codes;
use restgen_tests::{display_name, invalid_schemas, root, valid_schemas};
use serde_json::Value;

fn json_schema() -> Value {
    let text = std::fs::read_to_string(root().join("schema/restgen.schema.json")).expect("schema/restgen.schema.json");
    serde_json::from_str(&text).expect("the JSON Schema is JSON")
}

fn instance(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    restgen_schema::to_json(&display_name(path), &text).expect("parses as YAML")
}

#[test]
fn every_valid_schema_validates() {
    let validator = jsonschema::validator_for(&json_schema()).expect("a valid JSON Schema");
    let starter = std::fs::read_to_string(root().join("crates/restgen-cli/templates/starter.yaml"))
        .unwrap()
        .replace("__JWT_SECRET_ENV__", "SHOP_JWT_SECRET")
        .replace("__SERVICE__", "shop");
    let mut instances: Vec<(String, Value)> =
        valid_schemas().iter().map(|p| (p.display().to_string(), instance(p))).collect();
    instances.push((
        "crates/restgen-cli/templates/starter.yaml".into(),
        restgen_schema::to_json("starter.yaml", &starter).unwrap(),
    ));
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
