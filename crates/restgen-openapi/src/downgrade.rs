//! The OpenAPI 3.0.3 rendering of a 3.1 document, for the tools that read 3.0 alone
//! (progenitor, Rust's usual client generator, among them). The same operations and
//! shapes, with 3.1's JSON Schema written the way 3.0's subset says it: a `null` type or
//! branch becomes `nullable`, `const` a one-value `enum`, numeric exclusive bounds the
//! boolean form, and what 3.0 has no word for (the `webhooks`, `propertyNames`, ...) is
//! left out, the webhooks with a note in the description pointing at the 3.1 document.

use restgen_wire::http;
use serde_json::{Map, Value, json};

/// The version the rendering declares.
pub const VERSION: &str = "3.0.3";

/// Keywords of 3.1's JSON Schema that 3.0's subset lacks and that only narrow what a
/// value may be: left out, so a 3.0 reader accepts a little more than the service does.
const UNKNOWN_TO_3_0: [&str; 10] = [
    "$schema",
    "$id",
    "$comment",
    "contentMediaType",
    "contentEncoding",
    "propertyNames",
    "patternProperties",
    "unevaluatedProperties",
    "dependentRequired",
    "prefixItems",
];

/// `document` (3.1, as [`crate::render`] writes it) as OpenAPI 3.0.3, pretty JSON ending
/// in a newline.
pub fn to_3_0(document: &str) -> String {
    let mut doc: Value = serde_json::from_str(document).expect("a document restgen-openapi rendered is JSON");
    downgrade(&mut doc);
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

fn downgrade(doc: &mut Value) {
    let Some(d) = doc.as_object_mut() else { return };
    d.insert("openapi".into(), json!(VERSION));
    d.remove("jsonSchemaDialect");
    let webhooks: Vec<String> =
        d.remove("webhooks").and_then(|w| w.as_object().map(|w| w.keys().cloned().collect())).unwrap_or_default();
    if let Some(info) = d.get_mut("info").and_then(Value::as_object_mut) {
        info.remove("summary");
        if let Some(license) = info.get_mut("license").and_then(Value::as_object_mut) {
            license.remove("identifier");
        }
        if !webhooks.is_empty() {
            let note = format!(
                "OpenAPI 3.0 cannot describe webhooks: the events this service sends ({}) are in its OpenAPI 3.1 document.",
                webhooks.join(", ")
            );
            let description = match info.get("description").and_then(Value::as_str) {
                Some(text) => format!("{text}\n\n{note}"),
                None => note,
            };
            info.insert("description".into(), json!(description));
        }
    }
    if let Some(components) = d.get_mut("components").and_then(Value::as_object_mut) {
        components.remove("pathItems");
        each(components.get_mut("schemas"), schema);
        each(components.get_mut("parameters"), parameter);
        each(components.get_mut("headers"), parameter);
        each(components.get_mut("responses"), response);
        each(components.get_mut("requestBodies"), content_of);
    }
    each(d.get_mut("paths"), path_item);
}

/// `f` on every value of a map, where there is one.
fn each(map: Option<&mut Value>, f: fn(&mut Value)) {
    for value in map.and_then(Value::as_object_mut).into_iter().flat_map(|m| m.values_mut()) {
        f(value);
    }
}

fn path_item(item: &mut Value) {
    let Some(item) = item.as_object_mut() else { return };
    for (key, value) in item.iter_mut() {
        match key.as_str() {
            "parameters" => value.as_array_mut().into_iter().flatten().for_each(parameter),
            "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace" => operation(value),
            _ => {}
        }
    }
}

fn operation(op: &mut Value) {
    let Some(op) = op.as_object_mut() else { return };
    op.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten().for_each(parameter);
    if let Some(body) = op.get_mut("requestBody") {
        content_of(body);
        // The service takes a merge patch as `application/json` too, with the same
        // semantics (RFC 7396); 3.0's tools know no `+json` type but JSON's own.
        if let Some(content) = body.get_mut("content").and_then(Value::as_object_mut)
            && let Some(patch) = content.remove(http::media::MERGE_PATCH)
        {
            content.entry(http::media::JSON).or_insert(patch);
        }
    }
    each(op.get_mut("responses"), response);
}

/// A parameter or a header: a schema, or content holding one.
fn parameter(p: &mut Value) {
    if let Some(s) = p.get_mut("schema") {
        schema(s);
    }
    content_of(p);
}

fn response(r: &mut Value) {
    each(r.get_mut("headers"), parameter);
    content_of(r);
}

/// The schema of every media type of `holder`'s `content`.
fn content_of(holder: &mut Value) {
    for media in holder.get_mut("content").and_then(Value::as_object_mut).into_iter().flat_map(|c| c.values_mut()) {
        if let Some(s) = media.get_mut("schema") {
            schema(s);
        }
    }
}

/// One schema and every schema inside it.
fn schema(s: &mut Value) {
    let Some(o) = s.as_object_mut() else { return };
    for key in UNKNOWN_TO_3_0 {
        o.remove(key);
    }
    if let Some(value) = o.remove("const") {
        o.insert("enum".into(), json!([value]));
    }
    if let Some(example) = o.remove("examples").and_then(|e| e.as_array().and_then(|e| e.first().cloned())) {
        o.insert("example".into(), example);
    }
    for (exclusive, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
        if let Some(n) = o.get(exclusive).filter(|v| v.is_number()).cloned() {
            o.insert(bound.into(), n);
            o.insert(exclusive.into(), json!(true));
        }
    }
    let mut nullable = false;
    if let Some(Value::Array(types)) = o.get("type").cloned() {
        let named: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
        nullable = named.len() < types.len();
        match named.as_slice() {
            [] => {
                o.remove("type");
            }
            [one] => {
                o.insert("type".into(), one.clone());
            }
            many => {
                o.remove("type");
                o.insert("anyOf".into(), Value::Array(many.iter().map(|t| json!({ "type": t })).collect()));
            }
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = o.get_mut(key) else { continue };
        let before = branches.len();
        branches.retain(|b| b.get("type").and_then(Value::as_str) != Some("null"));
        if branches.len() == before {
            continue;
        }
        nullable = true;
        if branches.len() == 1 {
            let only = branches.remove(0);
            o.remove(key);
            merge(o, only);
        }
    }
    // `$ref` beside other keywords: 3.0 ignores the others, so the reference moves
    // into an `allOf` they can stand beside.
    if o.contains_key("$ref") && (o.len() > 1 || nullable) {
        let reference = o.remove("$ref").unwrap_or_default();
        o.insert("allOf".into(), json!([{ "$ref": reference }]));
    }
    // `nullable` qualifies a `type` (3.0.3); a schema with neither a type nor a reference
    // admits null already.
    if nullable && (o.contains_key("type") || o.contains_key("allOf") || o.contains_key("anyOf")) {
        o.insert("nullable".into(), json!(true));
    }
    each(o.get_mut("properties"), schema);
    for key in ["items", "additionalProperties", "not"] {
        if let Some(inner) = o.get_mut(key).filter(|v| v.is_object()) {
            schema(inner);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        o.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten().for_each(schema);
    }
}

/// `branch`'s keywords into `o`, which keeps its own where both have one.
fn merge(o: &mut Map<String, Value>, branch: Value) {
    if let Value::Object(branch) = branch {
        for (key, value) in branch {
            o.entry(key).or_insert(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn down(s: Value) -> Value {
        let mut s = s;
        schema(&mut s);
        s
    }

    #[test]
    fn a_null_type_or_branch_becomes_nullable() {
        assert_eq!(down(json!({ "type": ["string", "null"] })), json!({ "type": "string", "nullable": true }));
        assert_eq!(
            down(json!({ "anyOf": [{ "$ref": "#/components/schemas/A" }, { "type": "null" }] })),
            json!({ "allOf": [{ "$ref": "#/components/schemas/A" }], "nullable": true })
        );
        assert_eq!(
            down(json!({ "anyOf": [{ "type": "integer" }, { "type": "null" }] })),
            json!({ "type": "integer", "nullable": true })
        );
        // Anything, null included: nothing to add.
        assert_eq!(down(json!({ "anyOf": [{}, { "type": "null" }] })), json!({}));
        assert_eq!(
            down(json!({ "type": ["string", "integer", "null"] })),
            json!({ "anyOf": [{ "type": "string" }, { "type": "integer" }], "nullable": true })
        );
    }

    #[test]
    fn keywords_3_0_lacks_are_said_its_way_or_left_out() {
        assert_eq!(down(json!({ "const": "ok" })), json!({ "enum": ["ok"] }));
        assert_eq!(
            down(json!({ "type": "number", "exclusiveMinimum": 0 })),
            json!({ "type": "number", "minimum": 0, "exclusiveMinimum": true })
        );
        assert_eq!(
            down(json!({ "type": "string", "examples": ["a", "b"] })),
            json!({ "type": "string", "example": "a" })
        );
        assert_eq!(
            down(json!({ "type": "object", "propertyNames": { "pattern": "^a" } })),
            json!({ "type": "object" })
        );
        assert_eq!(
            down(json!({ "$ref": "#/components/schemas/A", "description": "why" })),
            json!({ "allOf": [{ "$ref": "#/components/schemas/A" }], "description": "why" })
        );
    }

    #[test]
    fn schemas_inside_schemas_are_rendered_and_property_names_are_not_keywords() {
        let s = down(json!({
            "type": "object",
            "properties": {
                "const": { "type": ["string", "null"] },
                "type": { "const": 1 },
                "tags": { "type": "array", "items": { "const": "x" } },
            },
            "additionalProperties": { "type": ["integer", "null"] },
        }));
        assert_eq!(s["properties"]["const"], json!({ "type": "string", "nullable": true }));
        assert_eq!(s["properties"]["type"], json!({ "enum": [1] }));
        assert_eq!(s["properties"]["tags"]["items"], json!({ "enum": ["x"] }));
        assert_eq!(s["additionalProperties"], json!({ "type": "integer", "nullable": true }));
    }

    #[test]
    fn a_merge_patch_body_is_sent_as_json() {
        let mut op = json!({ "requestBody": { "required": true, "content": {
            "application/merge-patch+json": { "schema": { "type": ["string", "null"] } },
        } } });
        operation(&mut op);
        assert_eq!(
            op["requestBody"]["content"],
            json!({ "application/json": { "schema": { "type": "string", "nullable": true } } })
        );
    }

    #[test]
    fn webhooks_are_left_out_with_a_note() {
        let doc = json!({ "openapi": "3.1.0", "info": { "title": "t", "version": "1", "description": "Shop." }, "paths": {}, "webhooks": { "order.created": {} } });
        let down: Value = serde_json::from_str(&to_3_0(&doc.to_string())).unwrap();
        assert_eq!(down["openapi"], "3.0.3");
        assert!(down.get("webhooks").is_none());
        let description = down["info"]["description"].as_str().unwrap();
        assert!(description.starts_with("Shop.\n\n") && description.contains("order.created"), "{description}");
    }
}
