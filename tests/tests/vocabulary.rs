//! The vocabulary (`restgen_core::vocabulary`) is the one definition of the format's keys;
//! what describes them elsewhere follows it. `schema/restgen.schema.json` is the JSON Schema
//! it renders, `docs/schema.md` holds each table as it renders it, and `docs/derive.md`
//! lists exactly the keys the derive accepts. `RESTGEN_BLESS=1 cargo test -p restgen-tests
//! --test vocabulary` rewrites the JSON Schema and the tables of `docs/schema.md` from the
//! vocabulary (then read the diff).

use restgen_core::vocabulary::{self, Fronts, TABLES, Table};
use restgen_tests::root;
use std::collections::BTreeSet;

/// The markdown table under the heading `## name` or `### name`: its first line and the
/// line after its last row (byte offsets into `doc`).
fn table_span(doc: &str, name: &str) -> Option<(usize, usize)> {
    let heading = doc.match_indices('\n').map(|(i, _)| i + 1).find(|&i| {
        [format!("## {name}\n"), format!("### {name}\n")].iter().any(|h| doc[i..].starts_with(h.as_str()))
    })?;
    let start = heading + doc[heading..].find("\n| key |")? + 1;
    let mut end = start;
    for line in doc[start..].split_inclusive('\n') {
        if !line.starts_with('|') {
            break;
        }
        end += line.len();
    }
    Some((start, end))
}

fn yaml_tables() -> impl Iterator<Item = &'static Table> {
    TABLES.iter().filter(|t| t.keys.iter().any(|k| k.spelled_in(Fronts::Yaml)))
}

#[test]
fn the_schema_reference_is_the_vocabulary() {
    let path = root().join("docs/schema.md");
    let mut doc = std::fs::read_to_string(&path).unwrap();
    let bless = std::env::var_os("RESTGEN_BLESS").is_some();
    let mut problems = Vec::new();
    for table in yaml_tables() {
        // The top level's keys stand under "Top level".
        let heading = if table.name == "service" { "Top level" } else { table.name };
        let Some((start, end)) = table_span(&doc, heading) else {
            problems.push(format!("docs/schema.md has no `## {}` heading with a key table", table.name));
            continue;
        };
        let expected = table.markdown();
        if doc[start..end] != expected {
            if bless {
                doc.replace_range(start..end, &expected);
            } else {
                problems.push(format!(
                    "the `{}` table differs from the vocabulary; it should read:\n{expected}",
                    table.name
                ));
            }
        }
    }
    if bless {
        std::fs::write(&path, doc).unwrap();
    }
    assert!(problems.is_empty(), "{}\n(RESTGEN_BLESS=1 rewrites the tables)", problems.join("\n"));
}

/// The keys in the first column of the table under `## heading` of `doc`.
fn listed_keys(doc: &str, heading: &str) -> BTreeSet<String> {
    let start = doc.find(&format!("## {heading}\n")).unwrap_or_else(|| panic!("a `## {heading}` section"));
    let table = &doc[start..];
    let table = &table[table.find("\n|").unwrap() + 1..];
    table
        .lines()
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .flat_map(|row| {
            let cell = row.split('|').nth(1).unwrap_or_default();
            cell.split(',').map(|k| k.trim().trim_matches('`').to_owned()).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_derive_reference_lists_the_derive_keys() {
    let doc = std::fs::read_to_string(root().join("docs/derive.md")).unwrap();
    for (heading, table) in [("`#[resource(...)]`", &vocabulary::RESOURCE), ("`#[field(...)]`", &vocabulary::FIELD)] {
        let listed = listed_keys(&doc, heading);
        let derive: BTreeSet<String> = table.names(Fronts::Derive).into_iter().map(str::to_owned).collect();
        assert_eq!(listed, derive, "docs/derive.md, {heading}: the keys the derive takes");
    }
}

#[test]
fn the_json_schema_is_the_vocabulary() {
    let path = root().join("schema/restgen.schema.json");
    let expected = vocabulary::json_schema_text();
    if std::env::var_os("RESTGEN_BLESS").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(
        file == expected,
        "schema/restgen.schema.json is not the vocabulary's JSON Schema (RESTGEN_BLESS=1 rewrites it)"
    );
}
