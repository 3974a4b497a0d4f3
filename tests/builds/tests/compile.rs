//! Every valid schema's generated crates compile, warnings denied: a snapshot that does not
//! build fails here, not in a user's project.
//!
//! The shop, the fleet and the library are workspace members (`examples/shop/service`,
//! `tests/services/*`, each with its client), built by `cargo test --workspace` itself and
//! held to their schemas by `restgen generate --check` in CI. Every other valid fixture's
//! whole service crate (models, resources, routes, migrations, hooks, the scaffolded lib
//! and its `service()`) and its client are built here, as bins of one trybuild project, so
//! the runtime and its dependencies are compiled once for all of them.

use restgen_tests::{display_name, generate, generate_client, root, valid_schemas};
use std::path::{Path, PathBuf};

/// The compiled service crate of the schema named `name`, if it is a workspace member.
fn member(name: &str) -> Option<PathBuf> {
    [root().join("tests/services").join(name), root().join("examples").join(name).join("service")]
        .into_iter()
        .find(|dir| dir.join("Cargo.toml").is_file())
}

/// Writes every file of `output` under `dir`.
fn write(dir: &Path, files: impl IntoIterator<Item = (PathBuf, String)>) {
    for (file, contents) in files {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

#[test]
fn generated_crates_compile() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("generated-crates");
    let cases = trybuild::TestCases::new();
    let mut built = Vec::new();
    for path in valid_schemas() {
        let name = display_name(&path).trim_end_matches(".yaml").replace('-', "_");
        if member(&name).is_some() {
            continue;
        }
        // The service crate as `restgen generate` writes it; its scaffolded `lib.rs`, whose
        // text is the crate root here, with a `main` that builds the service.
        let dir = out.join(&name);
        let _ = std::fs::remove_dir_all(&dir);
        write(&dir, generate(&path).files.into_iter().map(|(file, f)| (file, f.contents)));
        let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
        let root_file = dir.join("src/compile_check.rs");
        // A binary uses none of the items the library exports, so dead code is allowed;
        // every other warning is denied.
        std::fs::write(
            &root_file,
            format!("#![deny(warnings)]\n#![allow(dead_code)]\n{lib}\nfn main() {{\n    let _ = service();\n}}\n"),
        )
        .unwrap();
        cases.pass(&root_file);

        // The client crate as one file: its `models` module inlined.
        let client = generate_client(&path);
        let text = |p: &str| client.files[Path::new(p)].contents.clone();
        let lib =
            text("src/lib.rs").replace("pub mod models;", &format!("pub mod models {{\n{}\n}}", text("src/models.rs")));
        let file = out.join(format!("{name}_client.rs"));
        std::fs::write(
            &file,
            format!("#![deny(warnings)]\n#![allow(dead_code)]\npub mod client {{\n{lib}\n}}\nfn main() {{}}\n"),
        )
        .unwrap();
        cases.pass(&file);
        built.push(name);
    }
    assert!(!built.is_empty(), "some valid fixture is built here");
    eprintln!("built here: {built:?}; the rest are workspace members");
}
