//! Records as CSV (RFC 4180): a header row of the representation's columns in declared
//! order, one row per record, CRLF line ends, quoting where a cell needs it, nulls empty,
//! nested values (`json`, `roles`) as their JSON text. A text cell that a spreadsheet
//! would run as a formula (one starting with `=`, `+`, `-`, `@`, a tab or a carriage
//! return) is neutralised with a leading `'`, as OWASP advises for CSV exports; numbers,
//! booleans and decimals are values, never formulas, and are written as they are.

use crate::access::{self, Scope};
use crate::caller::Caller;
use crate::problem::Problem;
use crate::spec::{FieldKind, FieldSpec, ResourceSpec};
use crate::store::Record;
use crate::version::View;
use serde_json::Value;

/// The columns of `records`, representations of `spec` as the caller sees them in the
/// request's version, in the order a record holds them: a field they see on every record
/// has its column, one they see on none has none, and one they see on their own records
/// only has one where `records` hold one of theirs (empty in the others' rows), so an
/// item's table has exactly the item's fields.
fn columns(spec: &ResourceSpec, view: &View, caller: &Caller, records: &[Record]) -> Vec<&'static str> {
    let mut out = vec!["id"];
    if spec.owner.is_some() {
        out.push("owner_id");
    }
    let shown = |f: &&FieldSpec| {
        view.shows(f)
            && match access::field(f.read, caller) {
                Some(Scope::All) => true,
                Some(Scope::Own) => records.iter().any(|r| r.contains_key(f.name)),
                None => false,
            }
    };
    out.extend(spec.fields.iter().filter(shown).map(|f| f.name));
    if spec.timestamps {
        out.extend(["created_at", "updated_at"]);
    }
    out
}

/// `records` (representations of `spec`) as a CSV document.
pub(crate) fn csv(spec: &ResourceSpec, view: &View, caller: &Caller, records: &[Record]) -> Result<Vec<u8>, Problem> {
    let columns = columns(spec, view, caller, records);
    let mut out = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    let fail = |e: csv::Error| {
        tracing::error!(error = %e, "writing CSV");
        Problem::internal()
    };
    out.write_record(&columns).map_err(fail)?;
    for record in records {
        let row = columns.iter().map(|c| cell(spec, c, record.get(c).unwrap_or(&Value::Null)));
        out.write_record(row).map_err(fail)?;
    }
    out.into_inner().map_err(|e| fail(e.into_error().into()))
}

fn cell(spec: &ResourceSpec, column: &str, value: &Value) -> String {
    let text = match value {
        Value::Null => return String::new(),
        Value::String(s) => s.clone(),
        Value::Number(_) | Value::Bool(_) => return value.to_string(),
        nested => nested.to_string(),
    };
    // Only what a client wrote can be a formula: ids, timestamps and decimals are the
    // service's or checked to be numbers.
    let written = spec.field(column).is_some_and(|f| f.kind != FieldKind::Decimal);
    if written && text.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{text}") } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::FieldSpec;
    use serde_json::json;

    static SPEC: ResourceSpec = ResourceSpec {
        fields: &[
            FieldSpec { name: "name", ..FieldSpec::DEFAULT },
            FieldSpec { name: "secret", write_only: true, ..FieldSpec::DEFAULT },
            FieldSpec { name: "price", kind: FieldKind::Decimal, ..FieldSpec::DEFAULT },
            FieldSpec { name: "qty", kind: FieldKind::Integer, ..FieldSpec::DEFAULT },
            FieldSpec { name: "specs", kind: FieldKind::Json, ..FieldSpec::DEFAULT },
        ],
        ..ResourceSpec::DEFAULT
    };

    fn record(v: Value) -> Record {
        let Value::Object(map) = v else { panic!("an object") };
        Record::from(map)
    }

    fn text(records: &[Record]) -> String {
        String::from_utf8(csv(&SPEC, &View::NONE, &Caller::default(), records).expect("writes")).expect("UTF-8")
    }

    #[test]
    fn a_header_row_of_visible_columns_then_one_row_per_record() {
        assert_eq!(text(&[]), "id,name,price,qty,specs,created_at,updated_at\r\n");
        let r = record(json!({"id": 7, "name": "Ann", "price": "-1.50", "qty": -3, "specs": {"a": [1, "x"]},
            "created_at": "2026-11-25T00:00:00.000000Z", "updated_at": "2026-11-25T00:00:00.000000Z"}));
        assert_eq!(
            text(&[r]),
            "id,name,price,qty,specs,created_at,updated_at\r\n\
             7,Ann,-1.50,-3,\"{\"\"a\"\":[1,\"\"x\"\"]}\",2026-11-25T00:00:00.000000Z,2026-11-25T00:00:00.000000Z\r\n"
        );
    }

    #[test]
    fn cells_are_quoted_as_rfc_4180_says_and_nulls_are_empty() {
        let r = record(json!({"id": 1, "name": "a, \"b\"\r\nc", "price": null, "qty": null, "specs": null}));
        assert_eq!(text(&[r]).split_once("\r\n").map(|(_, row)| row), Some("1,\"a, \"\"b\"\"\r\nc\",,,,,\r\n"));
        let r = record(json!({"id": 1, "name": "", "price": null}));
        assert!(text(&[r]).ends_with("\r\n1,,,,,,\r\n"), "an empty text and a null are both empty");
    }

    #[test]
    fn text_a_spreadsheet_would_run_is_neutralised() {
        for (name, want) in [
            ("=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\""),
            ("+1", "'+1"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "\"'\rx\""),
            ("plain = fine", "plain = fine"),
        ] {
            let r = record(json!({"id": 1, "name": name}));
            let out = text(&[r]);
            let row = out.split_once("\r\n").expect("a header").1;
            assert!(row.starts_with(&format!("1,{want},")), "{name:?} -> {row:?}");
        }
    }
}
