//! Changing a schema after a generation, as a user does it: `restgen generate` writes the
//! next migration or refuses a change that loses data (writing nothing), `--check` names a
//! missing migration, and `restgen diff` exits 1 when a change breaks a served version.

mod common;

use common::{restgen, text, tree};
use std::path::Path;
use std::process::Command;

/// A change case of the evolution fixtures.
fn case(name: &str, file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/evolution/cases").join(name).join(file);
    std::fs::read_to_string(path).unwrap()
}

/// A directory with `case`'s before schema generated into `svc`, the schema file now
/// holding its after schema.
fn generated_before(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("api.yaml"), case(name, "before.yaml")).unwrap();
    let first = restgen(&["generate", "api.yaml", "--out", "svc"], dir.path());
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    std::fs::write(dir.path().join("api.yaml"), case(name, "after.yaml")).unwrap();
    dir
}

#[test]
fn a_change_that_loses_data_is_refused_at_its_line_and_writes_nothing() {
    for (name, code, place) in [
        ("remove-field", "E1002", "api.yaml:18:3"),
        ("remove-resource", "E1002", "api.yaml:1:1"),
        ("type-narrowed", "E1003", "api.yaml:25:23"),
        ("enum-value-removed", "E1003", "api.yaml:28:23"),
        ("nullable-to-required", "E1004", "api.yaml:25:39"),
        ("add-required-field", "E1004", "api.yaml:29:41"),
        ("owner-added", "E1004", "api.yaml:37:12"),
        ("id-type-changed", "E1002", "api.yaml:18:3"),
    ] {
        let dir = generated_before(name);
        let before = tree(dir.path());
        let out = restgen(&["generate", "api.yaml", "--out", "svc"], dir.path());
        assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(err.contains(&format!("error[{code}]")) && err.contains(place), "{name}: {err}");
        assert!(err.contains("help:") && err.contains("--accept-data-loss"), "{name} says what to do: {err}");
        assert!(err.contains("nothing written"), "{name}: {err}");
        assert_eq!(tree(dir.path()), before, "{name}: nothing written");

        // Accepted, the migration is written beside the first; the first is untouched.
        let accepted = restgen(&["generate", "api.yaml", "--out", "svc", "--accept-data-loss"], dir.path());
        assert_eq!(accepted.status.code(), Some(0), "{name}: {}", text(&accepted.stderr));
        let after = tree(dir.path());
        for (path, bytes) in &before {
            if path.starts_with("svc/migrations") && path.extension().is_some_and(|e| e == "sql") {
                assert_eq!(after.get(path), Some(bytes), "{name}: {} rewritten", path.display());
            }
        }
        let second = after.keys().filter(|p| p.to_string_lossy().contains("/0002_")).count();
        assert_eq!(second, 2, "{name}: one 0002 migration per dialect");
    }
}

#[test]
fn a_change_writes_the_next_migration_once_and_check_names_it_until_then() {
    let dir = generated_before("rename-field");
    let check = restgen(&["generate", "api.yaml", "--out", "svc", "--check"], dir.path());
    assert_eq!(check.status.code(), Some(1));
    let report = text(&check.stdout);
    for path in [
        "svc/migrations/sqlite/0002_rename_order_note_to_remark.sql",
        "svc/migrations/postgres/0002_rename_order_note_to_remark.sql",
    ] {
        assert!(report.contains(&format!("missing: {path}")), "{report}");
    }
    assert!(report.contains("stale: svc/migrations/storage.json"), "{report}");

    let out = restgen(&["generate", "api.yaml", "--out", "svc"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("migration 0002_rename_order_note_to_remark:")
            && said.contains("rename column `order.note` to `remark`"),
        "{said}"
    );
    let sql = std::fs::read_to_string(dir.path().join("svc/migrations/postgres/0002_rename_order_note_to_remark.sql"))
        .unwrap();
    assert!(sql.contains("ALTER TABLE \"order\" RENAME COLUMN \"note\" TO \"remark\";"), "{sql}");
    let included = std::fs::read_to_string(dir.path().join("svc/src/generated/migrations.rs")).unwrap();
    assert!(
        included.contains("0001_initial.sql") && included.contains("0002_rename_order_note_to_remark.sql"),
        "{included}"
    );

    // Generating again finds nothing to migrate, and --check agrees.
    let before = tree(dir.path());
    assert_eq!(restgen(&["generate", "api.yaml", "--out", "svc"], dir.path()).status.code(), Some(0));
    assert_eq!(tree(dir.path()), before, "no second migration");
    assert_eq!(restgen(&["generate", "api.yaml", "--out", "svc", "--check"], dir.path()).status.code(), Some(0));
}

#[test]
fn a_migration_listed_but_missing_or_changed_stops_the_generation() {
    let dir = generated_before("add-optional-field");
    assert_eq!(restgen(&["generate", "api.yaml", "--out", "svc"], dir.path()).status.code(), Some(0));
    let second = dir.path().join("svc/migrations/sqlite/0002_add_order_gift.sql");
    let kept = std::fs::read(&second).unwrap();
    std::fs::remove_file(&second).unwrap();
    let out = restgen(&["generate", "api.yaml", "--out", "svc"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("0002_add_order_gift.sql, which is missing"), "{}", text(&out.stderr));
    std::fs::write(&second, kept).unwrap();

    // A record rolled back while a later migration stays would rewrite it: refused.
    let record = dir.path().join("svc/migrations/storage.json");
    let dir2 = generated_before("add-optional-field");
    std::fs::copy(dir2.path().join("svc/migrations/storage.json"), &record).unwrap();
    std::fs::write(dir.path().join("api.yaml"), case("add-field-with-default", "after.yaml")).unwrap();
    std::fs::rename(&second, dir.path().join("svc/migrations/sqlite/0002_add_order_rank.sql")).unwrap();
    let before = tree(dir.path());
    let out = restgen(&["generate", "api.yaml", "--out", "svc"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("never rewritten"), "{}", text(&out.stderr));
    assert_eq!(tree(dir.path()), before);
}

#[test]
fn diff_exits_1_on_a_breaking_change_to_a_served_version_and_0_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    for (name, breaking) in
        [("remove-field", true), ("add-optional-field", false), ("new-version-only", false), ("access-widened", false)]
    {
        std::fs::write(dir.path().join("old.yaml"), case(name, "before.yaml")).unwrap();
        std::fs::write(dir.path().join("new.yaml"), case(name, "after.yaml")).unwrap();
        let out = restgen(&["diff", "old.yaml", "new.yaml"], dir.path());
        assert_eq!(out.status.code(), Some(if breaking { 1 } else { 0 }), "{name}: {}", text(&out.stdout));
        let json = restgen(&["diff", "old.yaml", "new.yaml", "--format", "json"], dir.path());
        let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(value["breaking"].as_u64().unwrap() > 0, breaking, "{name}");
    }
    let out = restgen(&["diff", "old.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(2), "one file needs --against");
    std::fs::write(dir.path().join("broken.yaml"), "service: shop\nresources:\n  order: { path: orders }\n").unwrap();
    let broken = restgen(&["diff", "old.yaml", "broken.yaml"], dir.path());
    assert_eq!(broken.status.code(), Some(2), "a schema with errors is not compared");
    assert!(text(&broken.stderr).contains("broken.yaml has errors"), "{}", text(&broken.stderr));
    assert!(broken.stdout.is_empty(), "no report of a schema with errors");
}

#[test]
fn diff_against_a_git_ref_reads_the_schema_as_committed() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    };
    git(&["init", "-q"]);
    std::fs::create_dir(dir.path().join("api")).unwrap();
    std::fs::write(dir.path().join("api/schema.yaml"), case("remove-field", "before.yaml")).unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "schema"]);
    std::fs::write(dir.path().join("api/schema.yaml"), case("remove-field", "after.yaml")).unwrap();
    let out = restgen(&["diff", "api/schema.yaml", "--against", "HEAD"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(report.starts_with("HEAD:api/schema.yaml -> api/schema.yaml"), "{report}");
    assert!(report.contains("field `note` is removed") && report.contains("was HEAD:api/schema.yaml:25:7"), "{report}");
    let missing = restgen(&["diff", "api/schema.yaml", "--against", "no-such-ref"], dir.path());
    assert_eq!(missing.status.code(), Some(2));
}
