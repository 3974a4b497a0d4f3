//! Shared helpers for restgen's test suites: where the fixtures are, and how to load and
//! generate them the way the CLI does.

use restgen_core::diagnostics::{self, Sources};
use restgen_core::emit::{self, Options, RuntimeDep};
use restgen_core::output::Output;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the repository").to_path_buf()
}

/// Every schema that must pass `restgen check`: the valid fixtures and the examples.
pub fn valid_schemas() -> Vec<PathBuf> {
    let mut all = yaml_files(&root().join("tests/fixtures/valid"));
    for entry in std::fs::read_dir(root().join("examples")).expect("examples/ exists") {
        all.extend(yaml_files(&entry.expect("readable").path()));
    }
    all.sort();
    all
}

/// Every schema that must fail `restgen check`.
pub fn invalid_schemas() -> Vec<PathBuf> {
    yaml_files(&root().join("tests/fixtures/invalid"))
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> =
        entries.map(|e| e.expect("readable").path()).filter(|p| p.extension().is_some_and(|e| e == "yaml")).collect();
    files.sort();
    files
}

/// The file name a schema is reported under: stable across machines.
pub fn display_name(path: &Path) -> String {
    path.file_name().expect("a file").to_string_lossy().into_owned()
}

/// Loads and checks a schema that must be valid, panicking with rendered diagnostics if not.
pub fn load_valid(path: &Path) -> restgen_core::model::Service {
    let text = std::fs::read_to_string(path).expect("fixture readable");
    let name = display_name(path);
    match restgen_schema::load(&name, &text) {
        Ok((service, _)) => service,
        Err(diags) => panic!("{} should be valid:\n{}", path.display(), render(&name, &text, diags)),
    }
}

/// The rendered diagnostics of a schema (empty when it is clean), without color.
pub fn check_output(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("fixture readable");
    let name = display_name(path);
    match restgen_schema::load(&name, &text) {
        Ok((_, diags)) => render(&name, &text, diags),
        Err(diags) => render(&name, &text, diags),
    }
}

fn render(name: &str, text: &str, diags: restgen_core::Diagnostics) -> String {
    let mut sources = Sources::new();
    sources.add(name, text);
    diagnostics::render(&diags.into_sorted(), &sources, false)
}

/// The files `restgen generate` writes into the service crate for a valid schema, with
/// the runtime at a fixed relative path as in the repository's examples.
pub fn generate(path: &Path) -> Output {
    emit::generate(&load_valid(path), &options(path)).expect("generation succeeds on a valid schema")
}

/// The files of the client crate for a valid schema.
pub fn generate_client(path: &Path) -> Output {
    emit::generate_client(&load_valid(path), &options(path)).expect("generation succeeds on a valid schema")
}

fn options(path: &Path) -> Options {
    Options {
        source_name: display_name(path),
        runtime: RuntimeDep::Path("../../../crates/restgen".into()),
        client_runtime: RuntimeDep::Path("../../../crates/restgen-client".into()),
        databases: restgen_core::evolution::ddl::Dialect::ALL.to_vec(),
        workspace_member: true,
    }
}
