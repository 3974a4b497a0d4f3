//! What each fixture promises: valid ones check clean, and each invalid one reports
//! exactly the codes its `# expect:` line lists, rendered as its snapshot shows.

use restgen_tests::{check_output, display_name, invalid_schemas, valid_schemas};
use std::collections::BTreeSet;

/// Valid schemas check clean, but for warnings a fixture allows by code on an `# allow:`
/// line (a schema that shows a discouraged but working feature).
#[test]
fn valid_schemas_check_clean() {
    for path in valid_schemas() {
        let text = std::fs::read_to_string(&path).unwrap();
        let allowed: Vec<String> = text
            .lines()
            .find_map(|l| l.strip_prefix("# allow:"))
            .map(|codes| codes.split(',').map(|c| c.trim().to_owned()).collect())
            .unwrap_or_default();
        let out = check_output(&path);
        let unexpected: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("error[") || l.starts_with("warning["))
            .filter(|l| !(l.starts_with("warning[") && allowed.iter().any(|c| l.starts_with(&format!("warning[{c}]")))))
            .collect();
        assert!(unexpected.is_empty(), "{} should check clean:\n{out}", path.display());
    }
}

#[test]
fn there_are_enough_invalid_fixtures() {
    let n = invalid_schemas().len();
    assert!(n >= 25, "at least 25 invalid fixtures, found {n}");
}

#[test]
fn invalid_schemas_report_exactly_their_expected_codes() {
    let mut failures = Vec::new();
    for path in invalid_schemas() {
        let text = std::fs::read_to_string(&path).unwrap();
        let expected: BTreeSet<String> = text
            .lines()
            .find_map(|l| l.strip_prefix("# expect:"))
            .unwrap_or_else(|| panic!("{} has no `# expect:` line", path.display()))
            .split(',')
            .map(|c| c.trim().to_owned())
            .filter(|c| !c.is_empty())
            .collect();
        let out = check_output(&path);
        let found: BTreeSet<String> = out
            .lines()
            .filter_map(|l| l.strip_prefix("error[").or_else(|| l.strip_prefix("warning[")))
            .filter_map(|l| l.split(']').next())
            .map(str::to_owned)
            .collect();
        if expected != found {
            failures.push(format!("{}: expected {expected:?}, found {found:?}\n{out}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn diagnostics_of_invalid_fixtures() {
    insta::glob!("../fixtures/invalid", "*.yaml", |path| {
        insta::with_settings!({
            snapshot_path => "snapshots/diagnostics",
            prepend_module_to_snapshot => false,
            description => display_name(path),
            omit_expression => true,
        }, {
            insta::assert_snapshot!(check_output(path));
        });
    });
}

/// Every key of the format is used by some valid schema (the examples and the valid
/// fixtures), so each is parsed, lowered, generated from and snapshotted somewhere.
#[test]
fn every_key_is_used_by_a_valid_schema() {
    fn walk(v: &serde_json::Value, seen: &mut BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    seen.insert(k.clone());
                    walk(v, seen);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, seen)),
            _ => {}
        }
    }
    let mut seen = BTreeSet::new();
    for path in valid_schemas() {
        let text = std::fs::read_to_string(&path).unwrap();
        walk(&restgen_schema::to_json(&display_name(&path), &text).unwrap(), &mut seen);
    }
    let missing: Vec<String> = restgen_core::vocabulary::TABLES
        .iter()
        .flat_map(|t| {
            t.names(restgen_core::vocabulary::Fronts::Yaml)
                .into_iter()
                .filter(|k| !seen.contains(*k))
                .map(move |k| format!("{}.{k}", t.name))
        })
        .collect();
    assert!(missing.is_empty(), "keys no valid schema uses: {missing:?}");
}
