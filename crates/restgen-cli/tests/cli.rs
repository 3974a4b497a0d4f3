//! The `restgen` binary as a user runs it: exit codes, output, and what lands on disk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn restgen(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_restgen"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .output()
        .expect("restgen runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn shop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop/shop.yaml").canonicalize().unwrap()
}

/// Every file under `dir` with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

const BROKEN: &str = "service: shop\nresources:\n  order:\n    path: /orders\n    fields:\n      total: { type: integr, setable: true }\n";

#[test]
fn check_reports_every_problem_with_its_location_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.yaml"), BROKEN).unwrap();
    let out = restgen(&["check", "broken.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("error[E0101]: unknown field type `integr`"), "{err}");
    assert!(err.contains("broken.yaml:6:22"), "{err}");
    assert!(err.contains("did you mean `integer`?"), "{err}");
    assert!(err.contains("error[E0002]: unknown key `setable` in field `total`"), "{err}");
    assert!(err.contains("did you mean `settable`?"), "{err}");
    assert!(err.contains("broken.yaml: 2 errors and 0 warnings"), "{err}");
}

#[test]
fn check_short_format_prints_one_line_per_problem() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.yaml"), BROKEN).unwrap();
    let out = restgen(&["check", "--format", "short", "broken.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("broken.yaml:6:22: error[E0101]: unknown field type `integr`\n"), "{err}");
    assert!(err.contains("broken.yaml:6:30: error[E0002]: unknown key `setable` in field `total`\n"), "{err}");
}

#[test]
fn check_of_a_sound_schema_is_silent_and_exits_0() {
    let vault = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/valid/vault.yaml");
    let out = restgen(&["check", vault.to_str().unwrap()], Path::new("."));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn the_shop_which_uses_every_key_checks_clean() {
    // Every key the format accepts is served, so none is warned of (E0801); the shop
    // writes them all.
    let out = restgen(&["check", "--format", "short", shop().to_str().unwrap()], Path::new("."));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(!err.contains("E0801"), "{err}");
}

#[test]
fn usage_and_io_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = restgen(&["check", "nope.yaml"], dir.path());
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("cannot read nope.yaml"));
    assert_eq!(restgen(&["check"], dir.path()).status.code(), Some(2));
    assert_eq!(restgen(&["frobnicate"], dir.path()).status.code(), Some(2));
    assert_eq!(restgen(&["generate", "x.yaml"], dir.path()).status.code(), Some(2), "--out is required");
}

#[test]
fn generate_twice_gives_the_same_bytes_and_touches_nothing_the_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let first = restgen(&["generate", shop().to_str().unwrap(), "--out", "svc"], dir.path());
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let before = tree(&dir.path().join("svc"));
    assert!(before.contains_key(Path::new("src/generated/models.rs")));
    assert!(before.values().all(|b| !b.is_empty()));
    let second = restgen(&["generate", shop().to_str().unwrap(), "--out", "svc"], dir.path());
    assert_eq!(second.status.code(), Some(0));
    assert_eq!(tree(&dir.path().join("svc")), before);
    let report = text(&second.stdout);
    assert!(!report.contains("created") && !report.contains("updated"), "{report}");
}

#[test]
fn generated_files_do_not_depend_on_where_schema_or_output_live() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(b.path().join("deep/er")).unwrap();
    std::fs::copy(shop(), b.path().join("deep/er/shop.yaml")).unwrap();
    restgen(&["generate", shop().to_str().unwrap(), "--out", "one", "--runtime-version", "0.1"], a.path());
    restgen(&["generate", "deep/er/shop.yaml", "--out", "x/two", "--runtime-version", "0.1"], b.path());
    assert_eq!(tree(&a.path().join("one")), tree(&b.path().join("x/two")));
}

#[test]
fn every_generated_rust_file_starts_with_the_generated_header() {
    let dir = tempfile::tempdir().unwrap();
    restgen(&["generate", shop().to_str().unwrap(), "--out", "svc"], dir.path());
    for (path, bytes) in tree(&dir.path().join("svc/src/generated")) {
        assert!(text(&bytes).starts_with("// @generated by restgen from shop.yaml."), "{}", path.display());
    }
}

#[test]
fn generate_check_names_stale_and_missing_files_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let schema = shop();
    let args = ["generate", schema.to_str().unwrap(), "--out", "svc", "--check"];
    let before_any = restgen(&args, dir.path());
    assert_eq!(before_any.status.code(), Some(1));
    assert!(text(&before_any.stdout).contains("missing: svc/src/generated/models.rs"));
    assert!(!dir.path().join("svc").exists(), "--check writes nothing");

    restgen(&args[..4], dir.path());
    assert_eq!(restgen(&args, dir.path()).status.code(), Some(0));

    let models = dir.path().join("svc/src/generated/models.rs");
    std::fs::write(&models, "// hand edit\n").unwrap();
    let stale = restgen(&args, dir.path());
    assert_eq!(stale.status.code(), Some(1));
    let report = text(&stale.stdout);
    assert!(report.contains("stale: svc/src/generated/models.rs"), "{report}");
    assert!(!report.contains("mod.rs"), "only what differs is named: {report}");
    assert_eq!(std::fs::read_to_string(&models).unwrap(), "// hand edit\n", "--check writes nothing");
}

#[test]
fn user_owned_files_survive_regeneration_and_generated_ones_are_restored() {
    let dir = tempfile::tempdir().unwrap();
    let schema = shop();
    let gen_args = ["generate", schema.to_str().unwrap(), "--out", "svc"];
    restgen(&gen_args, dir.path());
    let hooks = dir.path().join("svc/src/hooks.rs");
    let models = dir.path().join("svc/src/generated/models.rs");
    let original_models = std::fs::read(&models).unwrap();
    std::fs::write(&hooks, "// my business rules\n").unwrap();
    std::fs::write(&models, "// broken by hand\n").unwrap();
    let out = restgen(&gen_args, dir.path());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&hooks).unwrap(), "// my business rules\n");
    assert_eq!(std::fs::read(&models).unwrap(), original_models);
    assert!(text(&out.stdout).contains("updated  svc/src/generated/models.rs"));
}

#[test]
fn a_failed_write_leaves_the_output_directory_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("svc");
    std::fs::create_dir_all(out_dir.join("src")).unwrap();
    // `src/generated` is a file, so its directory cannot be made: the run must fail
    // without leaving Cargo.toml, src/lib.rs or staging files behind.
    std::fs::write(out_dir.join("src/generated"), "in the way").unwrap();
    std::fs::write(out_dir.join("README"), "mine").unwrap();
    let before = tree(&out_dir);
    let out = restgen(&["generate", shop().to_str().unwrap(), "--out", "svc"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("src/generated"), "{}", text(&out.stderr));
    assert_eq!(tree(&out_dir), before);
}

#[test]
fn a_schema_with_errors_generates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.yaml"), BROKEN).unwrap();
    let out = restgen(&["generate", "broken.yaml", "--out", "svc"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.path().join("svc").exists());
}

#[test]
fn init_writes_a_starter_that_checks_clean_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let out = restgen(&["init", "my-shop"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(dir.path().join("my-shop.yaml")).unwrap();
    assert!(written.contains("service: my-shop"));
    assert!(written.contains("MY_SHOP_JWT_SECRET"));
    let check = restgen(&["check", "my-shop.yaml"], dir.path());
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));

    std::fs::write(dir.path().join("my-shop.yaml"), "# mine\n").unwrap();
    let again = restgen(&["init", "my-shop"], dir.path());
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(dir.path().join("my-shop.yaml")).unwrap(), "# mine\n");
    assert_eq!(restgen(&["init", "MyShop"], dir.path()).status.code(), Some(2));
}

#[test]
fn help_of_every_command_shows_examples() {
    for args in
        [&["--help"][..], &["check", "--help"], &["generate", "--help"], &["diff", "--help"], &["init", "--help"]]
    {
        let out = restgen(args, Path::new("."));
        assert_eq!(out.status.code(), Some(0));
        let help = text(&out.stdout);
        assert!(help.contains("Examples:"), "{args:?}");
        insta::assert_snapshot!(format!("help_{}", args[0].trim_start_matches('-')), help);
    }
}

#[test]
fn no_client_generates_the_service_crate_alone() {
    let dir = tempfile::tempdir().unwrap();
    let schema = shop();
    let args = ["generate", schema.to_str().unwrap(), "--out", "svc", "--no-client"];
    assert_eq!(restgen(&args, dir.path()).status.code(), Some(0));
    assert!(dir.path().join("svc/src/generated/mod.rs").exists());
    assert!(!dir.path().join("shop-client").exists(), "no client crate");
    let check: Vec<&str> = args.iter().copied().chain(["--check"]).collect();
    let fresh = restgen(&check, dir.path());
    assert_eq!(fresh.status.code(), Some(0), "{}", text(&fresh.stdout));
    assert!(text(&fresh.stdout).contains("svc up to date"), "{}", text(&fresh.stdout));
}
