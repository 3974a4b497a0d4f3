//! How long a document's pretty text is, to the byte, so the text is written into one
//! buffer of that size: a large document (40 MB for a thousand resources) grown by
//! doubling was written six times into fresh memory, each step faulted in and copied.

use serde_json::Value;

/// The length of `serde_json::to_writer_pretty`'s text of `value` (two-space indents).
pub(crate) fn pretty_len(value: &Value) -> usize {
    at_depth(value, 0)
}

fn at_depth(value: &Value, depth: usize) -> usize {
    // A non-empty array or object puts each member on a line of its own, indented one
    // level deeper, separated by commas, and closes on a line at its own depth.
    let members = |count: usize, inner: usize| 2 + inner + count * (1 + 2 * (depth + 1)) + (count - 1) + 1 + 2 * depth;
    match value {
        Value::Null => 4,
        Value::Bool(b) => {
            if *b {
                4
            } else {
                5
            }
        }
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => string_len(s),
        Value::Array(items) if items.is_empty() => 2,
        Value::Array(items) => members(items.len(), items.iter().map(|v| at_depth(v, depth + 1)).sum()),
        Value::Object(map) if map.is_empty() => 2,
        Value::Object(map) => {
            members(map.len(), map.iter().map(|(k, v)| string_len(k) + 2 + at_depth(v, depth + 1)).sum())
        }
    }
}

/// A string with its quotes and escapes, as serde_json writes it: `"` and `\` and the
/// short control escapes take two bytes, other control characters six (`\u001f`).
fn string_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn holds(value: Value) {
        let text = serde_json::to_string_pretty(&value).unwrap();
        assert_eq!(pretty_len(&value), text.len(), "{text}");
    }

    #[test]
    fn every_kind_of_value_measures_as_serde_json_writes_it() {
        holds(json!(null));
        holds(json!(true));
        holds(json!(false));
        holds(json!(0));
        holds(json!(-1234567890123_i64));
        holds(json!(u64::MAX));
        holds(json!(0.1));
        holds(json!(-2.5e-300));
        holds(json!(""));
        holds(json!([]));
        holds(json!({}));
        holds(json!([[]]));
        holds(json!({"a": {}}));
        holds(json!(["one", 2, [3, [4, {"five": [6]}]], {}, []]));
        holds(json!({"quote\"back\\slash": "line\nfeed\rtab\t\u{8}\u{c}", "ctl": "\u{1}\u{1f}\u{7f}", "wide": "é€😀"}));
        holds(json!({"paths": {"/a": {"get": {"parameters": [{"in": "query", "name": "x"}], "responses": {}}}}}));
    }

    #[test]
    fn the_shape_of_a_document_measures_as_written() {
        let mut paths = serde_json::Map::new();
        for i in 0..50 {
            paths.insert(format!("/things{i}/{{id}}"), json!({"get": {"summary": format!("thing \"{i}\""), "tags": ["t"], "responses": {"200": {"description": "ok"}}}}));
        }
        holds(json!({"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": paths}));
    }
}
