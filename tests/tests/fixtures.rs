//! What each fixture promises: valid ones check clean, and each invalid one reports
//! exactly the codes its `# expect:` line lists, rendered as its snapshot shows.

use restgen_tests::{check_output, display_name, invalid_schemas, valid_schemas};
use std::collections::BTreeSet;

#[test]
fn valid_schemas_check_clean() {
    for path in valid_schemas() {
        let out = check_output(&path);
        assert!(out.is_empty(), "{} should check clean:\n{out}", path.display());
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
