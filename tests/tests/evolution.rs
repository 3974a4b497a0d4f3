//! Schema evolution, one case per change: each directory of `tests/fixtures/evolution/cases`
//! holds a schema `before.yaml` (the last generation) and `after.yaml`. The snapshot of a
//! case shows what `restgen diff` reports and what `restgen generate` does to the database:
//! the next migration in both dialects, or the refusal of a change that loses data (and the
//! migration `--accept-data-loss` writes instead).

use restgen_core::diagnostics::{self, Diagnostics};
use restgen_core::evolution::diff::{self, Class};
use restgen_core::evolution::storage::Storage;
use restgen_core::evolution::{Migrations, Record};
use restgen_core::model::Service;
use std::path::Path;

fn load(dir: &Path, name: &str) -> Service {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    match restgen_schema::load(name, &text) {
        Ok((service, _)) => service,
        Err(d) => panic!("{}/{name} is invalid:\n{}", dir.display(), diagnostics::render_short(&d.into_sorted())),
    }
}

/// What the next generation writes after `before`'s, for `after`.
fn migration(before: &Service, after: &Service, accept_loss: bool) -> (String, bool) {
    let first = Migrations::initial(before);
    let record = Record { storage: Storage::of(before), ..first.record };
    let mut diags = Diagnostics::new();
    let next = Migrations::next(&record, after, accept_loss, &mut diags);
    let refused = diags.has_errors();
    let mut out = diagnostics::render_short(&diags.into_sorted());
    if refused {
        return (out, true);
    }
    match &next.new {
        None if next.record == record => out.push_str("storage unchanged: no migration\n"),
        None => out.push_str("storage.json updated, nothing to migrate in the database\n"),
        Some((name, m)) => {
            out.push_str(&format!("{name}\n"));
            for step in &m.steps {
                out.push_str(&format!("  {step}\n"));
            }
            for risk in &m.risks {
                out.push_str(&format!("  note: {risk}\n"));
            }
            out.push_str(&format!("-- sqlite\n{}-- postgres\n{}", m.sqlite, m.postgres));
        }
    }
    (out, false)
}

#[test]
fn every_change_is_classified_and_migrated_or_refused() {
    let root = restgen_tests::root().join("tests/fixtures/evolution/cases");
    let mut cases: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    assert!(cases.len() >= 30, "at least 30 change pairs, found {}", cases.len());
    for dir in cases {
        let case = dir.file_name().unwrap().to_string_lossy().into_owned();
        let (before, after) = (load(&dir, "before.yaml"), load(&dir, "after.yaml"));
        let report = diff::diff(&before, &after);
        let (plan, refused) = migration(&before, &after, false);
        let mut text = format!(
            "# restgen diff\n{}\n# restgen generate\n{plan}",
            diff::render(&report, "before.yaml", "after.yaml")
        );
        if refused {
            text.push_str(&format!("\n# restgen generate --accept-data-loss\n{}", migration(&before, &after, true).0));
        }
        // The JSON report says the same as the one for people.
        let json: serde_json::Value = serde_json::from_str(&diff::render_json(&report)).unwrap();
        assert_eq!(json["breaking"], report.count(Class::Breaking), "{case}");
        assert_eq!(json["changes"].as_array().unwrap().len(), report.changes.len(), "{case}");
        insta::with_settings!({ snapshot_path => "snapshots/evolution", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(case, text);
        });
    }
}

/// The rules every case must keep, stated once: a change that refuses data already
/// stored is breaking, and nothing unchanged is reported.
#[test]
fn a_refused_change_is_a_breaking_one_and_no_change_is_no_report() {
    let root = restgen_tests::root().join("tests/fixtures/evolution/cases");
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let (before, after) = (load(&dir, "before.yaml"), load(&dir, "after.yaml"));
        let report = diff::diff(&before, &after);
        if migration(&before, &after, false).1 {
            assert!(report.count(Class::Breaking) > 0, "{}: refused by generate, yet not breaking", dir.display());
        }
        assert!(diff::diff(&after, &after).changes.is_empty(), "{}: a schema differs from itself", dir.display());
    }
}
