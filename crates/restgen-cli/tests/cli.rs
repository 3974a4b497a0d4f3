//! The `restgen` binary as a user runs it: exit codes, output, and what lands on disk.

mod common;

use common::{restgen, text, tree};
use std::path::{Path, PathBuf};

fn shop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop/shop.yaml").canonicalize().unwrap()
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

/// The byte offset of 1-based `line` and `column` (in characters) of `text`: the inverse of
/// how positions are counted, to check them by.
fn offset_of(text: &str, line: u64, column: u64) -> usize {
    let starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let start = starts[line as usize - 1];
    start + text[start..].chars().take(column as usize - 1).map(char::len_utf8).sum::<usize>()
}

#[test]
fn check_json_format_says_what_short_says_with_ends_labels_and_help_for_every_invalid_fixture() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/invalid");
    let mut seen = 0;
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let file = path.to_str().unwrap();
        let source = std::fs::read_to_string(&path).unwrap();
        let short = restgen(&["check", "--format", "short", file], Path::new("."));
        let json = restgen(&["check", "--format", "json", file], Path::new("."));
        assert_eq!(json.status.code(), short.status.code(), "{file}");
        assert_eq!(text(&json.stderr), "", "{file}: JSON alone, on standard output");
        let doc: serde_json::Value = serde_json::from_str(&text(&json.stdout)).unwrap();
        assert_eq!(doc["version"], 1);
        let list = doc["diagnostics"].as_array().unwrap();
        let lines: Vec<String> = list
            .iter()
            .map(|d| {
                format!(
                    "{}:{}:{}: {}[{}]: {}",
                    d["file"].as_str().unwrap(),
                    d["line"],
                    d["column"],
                    d["severity"].as_str().unwrap(),
                    d["code"].as_str().unwrap(),
                    d["message"].as_str().unwrap()
                )
            })
            .collect();
        let said = text(&short.stderr);
        let expected: Vec<&str> = said.lines().filter(|l| l.contains(": error[") || l.contains(": warning[")).collect();
        assert_eq!(lines, expected, "{file}");
        let errors = list.iter().filter(|d| d["severity"] == "error").count();
        assert_eq!(
            (doc["errors"].as_u64(), doc["warnings"].as_u64()),
            (Some(errors as u64), Some((list.len() - errors) as u64))
        );
        for d in list {
            let (start, end) = (d["start"].as_u64().unwrap() as usize, d["end"].as_u64().unwrap() as usize);
            assert!(start <= end && end <= source.len(), "{file}: {d}");
            let at =
                |line: &str, column: &str| offset_of(&source, d[line].as_u64().unwrap(), d[column].as_u64().unwrap());
            assert_eq!(at("line", "column"), start, "{file}: the start's line and column are its offset: {d}");
            assert_eq!(at("end_line", "end_column"), end, "{file}: the end's likewise: {d}");
            let labels = d["labels"].as_array().unwrap();
            assert_eq!(labels[0]["primary"], true, "{file}: the primary label first: {d}");
            assert_eq!((&labels[0]["start"], &labels[0]["end"]), (&d["start"], &d["end"]), "{file}");
            assert!(labels[1..].iter().all(|l| l["primary"] == false && l["message"].is_string()), "{file}: {d}");
            assert!(d["help"].is_null() || d["help"].is_string(), "{file}: {d}");
            assert!(d["name"].as_str().is_some_and(|n| !n.is_empty()), "{file}: {d}");
        }
        seen += list.len();
    }
    assert!(seen > 50, "the invalid fixtures report problems: {seen}");
}

#[test]
fn check_json_format_of_a_sound_schema_says_so_and_exits_0() {
    let vault = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/valid/vault.yaml");
    let out = restgen(&["check", "--format", "json", vault.to_str().unwrap()], Path::new("."));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(doc, serde_json::json!({ "version": 1, "diagnostics": [], "errors": 0, "warnings": 0 }));
    // A misspelt key's help and both places of a duplicate, as an editor shows them.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.yaml"), BROKEN).unwrap();
    let out = restgen(&["check", "--format", "json", "broken.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let setable = doc["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "E0002").unwrap();
    assert_eq!(setable["help"], "did you mean `settable`?");
    assert_eq!(
        (&setable["line"], &setable["column"], &setable["end_line"], &setable["end_column"]),
        (&6.into(), &30.into(), &6.into(), &37.into())
    );
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
fn generate_warns_when_the_kept_cargo_toml_leaves_out_a_feature_the_schema_now_uses() {
    let dir = tempfile::tempdir().unwrap();
    let schema = shop();
    let gen_args = ["generate", schema.to_str().unwrap(), "--out", "svc", "--no-client"];
    let first = restgen(&gen_args, dir.path());
    assert_eq!(first.status.code(), Some(0));
    assert!(!text(&first.stderr).contains("leaves out"), "{}", text(&first.stderr));
    // The user's Cargo.toml, from before the schema published events.
    let manifest = dir.path().join("svc/Cargo.toml");
    let kept = std::fs::read_to_string(&manifest).unwrap();
    let without: String = kept.lines().filter(|l| !l.contains("\"webhooks\"")).map(|l| format!("{l}\n")).collect();
    std::fs::write(&manifest, &without).unwrap();
    let again = restgen(&gen_args, dir.path());
    assert_eq!(again.status.code(), Some(0));
    let warned = text(&again.stderr);
    assert!(
        warned.contains("leaves out restgen's `webhooks` feature") && warned.contains("`events` of customer, order"),
        "{warned}"
    );
    assert!(!warned.contains("`csv` feature"), "only what is missing: {warned}");
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), without, "the user's Cargo.toml is theirs");
}

#[test]
fn a_crate_of_its_own_sets_its_build_profiles_and_a_workspace_member_is_told_where_to_set_them() {
    let dir = tempfile::tempdir().unwrap();
    let schema = shop();
    let alone = restgen(&["generate", schema.to_str().unwrap(), "--out", "alone", "--no-client"], dir.path());
    assert_eq!(alone.status.code(), Some(0), "{}", text(&alone.stderr));
    let manifest = std::fs::read_to_string(dir.path().join("alone/Cargo.toml")).unwrap();
    assert!(manifest.contains("\n[profile.release]\ncodegen-units = 1\n"), "{manifest}");
    assert!(
        manifest.contains("\n[profile.dev.package.\"*\"]\ndebug = \"line-tables-only\"\nincremental = false\n"),
        "{manifest}"
    );
    assert!(!text(&alone.stdout).contains("note:"), "{}", text(&alone.stdout));

    // A profile in a member's manifest is one cargo ignores, with a warning at every build.
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("Cargo.toml"), "[workspace]\nresolver = \"3\"\nmembers = [\"services/*\"]\n").unwrap();
    let args = ["generate", schema.to_str().unwrap(), "--out", "services/shop", "--no-client"];
    let member = restgen(&args, &root);
    assert_eq!(member.status.code(), Some(0), "{}", text(&member.stderr));
    let manifest = std::fs::read_to_string(root.join("services/shop/Cargo.toml")).unwrap();
    assert!(!manifest.contains("[profile"), "{manifest}");
    let said = text(&member.stdout);
    let workspace = root.canonicalize().unwrap().join("Cargo.toml");
    assert!(
        said.contains(&format!("note: services/shop is in the workspace of {}", workspace.display()))
            && said.contains("\n    [profile.release]\n    codegen-units = 1")
            && said.contains("\n    [profile.dev.package.\"*\"]\n    debug = \"line-tables-only\""),
        "{said}"
    );
    // Said once, when the manifest is written: the kept one is the user's to have changed.
    let again = restgen(&args, &root);
    assert_eq!(again.status.code(), Some(0));
    assert!(!text(&again.stdout).contains("note:"), "{}", text(&again.stdout));

    // A directory the workspace excludes holds a workspace of its own: the profiles are its.
    std::fs::write(root.join("Cargo.toml"), "[workspace]\nresolver = \"3\"\nexclude = [\"apart\"]\n").unwrap();
    let args = ["generate", schema.to_str().unwrap(), "--out", "apart/shop", "--no-client"];
    let apart = restgen(&args, &root);
    assert_eq!(apart.status.code(), Some(0), "{}", text(&apart.stderr));
    let manifest = std::fs::read_to_string(root.join("apart/shop/Cargo.toml")).unwrap();
    assert!(manifest.contains("\n[profile.release]\ncodegen-units = 1\n"), "{manifest}");
    assert!(!text(&apart.stdout).contains("note:"), "{}", text(&apart.stdout));
}

#[test]
fn generate_keeps_the_databases_it_is_told_and_says_which_it_knows() {
    let dir = tempfile::tempdir().unwrap();
    let schema = shop();
    let features = |manifest: &str| -> Vec<String> {
        let list = manifest.split("features = [").nth(1).unwrap().split(']').next().unwrap();
        list.lines().filter_map(|l| Some(l.trim().strip_prefix('"')?.split('"').next()?.to_owned())).collect()
    };
    let both = ["generate", schema.to_str().unwrap(), "--out", "both", "--no-client"];
    assert_eq!(restgen(&both, dir.path()).status.code(), Some(0));
    let manifest = std::fs::read_to_string(dir.path().join("both/Cargo.toml")).unwrap();
    assert_eq!(features(&manifest)[..2], ["sqlite", "postgres"], "both by default");

    let one = ["generate", schema.to_str().unwrap(), "--out", "pg", "--no-client", "--database", "postgres"];
    let first = restgen(&one, dir.path());
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let manifest = std::fs::read_to_string(dir.path().join("pg/Cargo.toml")).unwrap();
    let kept = features(&manifest);
    assert_eq!(kept[0], "postgres", "{manifest}");
    assert!(!kept.contains(&"sqlite".to_owned()), "{manifest}");
    assert!(kept.contains(&"csv".to_owned()), "the schema's parts as ever: {manifest}");
    // A database left out is the deployment's choice, not a part the schema misses.
    let again = restgen(&one[..5], dir.path());
    assert_eq!(again.status.code(), Some(0));
    assert!(!text(&again.stderr).contains("leaves out"), "{}", text(&again.stderr));

    let unknown = restgen(&["generate", schema.to_str().unwrap(), "--out", "my", "--database", "mysql"], dir.path());
    assert_eq!(unknown.status.code(), Some(2));
    let said = text(&unknown.stderr);
    assert!(said.contains("invalid value 'mysql'") && said.contains("[possible values: sqlite, postgres]"), "{said}");
    assert!(!dir.path().join("my").exists(), "nothing written");
}

/// The process's umask, as Linux reports it in /proc/self/status (it cannot be read
/// without being set, and setting it would race the other tests' file creation).
#[cfg(target_os = "linux")]
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find_map(|l| l.strip_prefix("Umask:")).expect("Linux 4.7 or later reports the umask");
    u32::from_str_radix(line.trim(), 8).unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn written_files_get_the_modes_a_user_expects_new_ones_by_umask_updated_ones_as_they_were() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| format!("{:o}", std::fs::metadata(p).unwrap().permissions().mode() & 0o777);
    let dir = tempfile::tempdir().unwrap();
    let schema = shop();
    let gen_args = ["generate", schema.to_str().unwrap(), "--out", "svc"];
    restgen(&gen_args, dir.path());
    let expected = format!("{:o}", 0o666 & !umask());
    for crate_dir in [dir.path().join("svc"), dir.path().join("shop-client")] {
        for path in tree(&crate_dir).keys() {
            let file = crate_dir.join(path);
            assert_eq!(mode(&file), expected, "{}: made as fs::write makes a file", file.display());
        }
    }
    let models = dir.path().join("svc/src/generated/models.rs");
    std::fs::write(&models, "// broken by hand\n").unwrap();
    std::fs::set_permissions(&models, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = restgen(&gen_args, dir.path());
    assert!(text(&out.stdout).contains("updated  svc/src/generated/models.rs"), "{}", text(&out.stdout));
    assert_eq!(mode(&models), "640", "an updated file keeps the mode its owner gave it");
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
fn a_client_that_cannot_be_written_leaves_the_service_unwritten_too() {
    // The service's files are made and staged on other threads than the client's; all
    // of them go into place together or none does.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("shop-client")).unwrap();
    std::fs::write(dir.path().join("shop-client/src"), "in the way").unwrap();
    let out = restgen(&["generate", shop().to_str().unwrap(), "--out", "svc"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("shop-client/src"), "{}", text(&out.stderr));
    let svc = dir.path().join("svc");
    assert!(!svc.exists() || tree(&svc).is_empty(), "{:?}", tree(&svc).keys().collect::<Vec<_>>());
    assert_eq!(tree(&dir.path().join("shop-client")).len(), 1, "only what was in the way");
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

/// The format's JSON Schema as this checkout holds it.
fn checkout_schema() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/restgen.schema.json")).unwrap()
}

#[test]
fn the_starters_yaml_language_server_line_resolves_to_the_formats_json_schema() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("api")).unwrap();
    let out = restgen(&["init", "shop", "--out", "api/shop.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let starter = std::fs::read_to_string(dir.path().join("api/shop.yaml")).unwrap();
    let first = starter.lines().next().unwrap();
    let target = first.strip_prefix("# yaml-language-server: $schema=").expect("the editor line comes first");
    // yaml-language-server resolves a relative `$schema` from the file's directory.
    let resolved =
        std::fs::read_to_string(dir.path().join("api").join(target)).expect("the line names a file beside it");
    assert_eq!(resolved, checkout_schema());
    serde_json::from_str::<serde_json::Value>(&resolved).expect("JSON");

    let written = restgen(&["schema", "--out", "elsewhere.json"], dir.path());
    assert_eq!(written.status.code(), Some(0), "{}", text(&written.stderr));
    assert_eq!(std::fs::read_to_string(dir.path().join("elsewhere.json")).unwrap(), checkout_schema());
}

#[test]
fn help_of_every_command_shows_examples() {
    for args in [
        &["--help"][..],
        &["check", "--help"],
        &["generate", "--help"],
        &["diff", "--help"],
        &["init", "--help"],
        &["schema", "--help"],
        &["lsp", "--help"],
    ] {
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
