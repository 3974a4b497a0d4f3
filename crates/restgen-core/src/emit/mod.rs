//! Emitters: pure functions from the model to files. Rust files are built as tokens with
//! `quote` and printed by prettyplease; other files render minijinja templates. Nothing
//! here touches the disk (see `output`).
//!
//! One module per generated file: `service` (`src/generated/mod.rs`), `models`, `resources`,
//! `hooks`, `routes`, `migrations` (and the SQL files), `scaffold` (the files written once),
//! `client` (the client crate); `derived` expands the derive macros through the same code.
//! `rust` prints tokens as a file; `names` turns schema names into Rust names.

mod client;
pub mod derived;
mod hooks;
mod migrations;
mod models;
mod names;
mod resources;
mod routes;
mod rust;
mod scaffold;
mod service;

pub use names::{field_ident, type_name};

use crate::evolution::{Migrations, RECORD_PATH};
use crate::model::Service;
use crate::output::{FileKind, Output};
use std::fmt;

/// How the generated crate depends on the runtime crate `restgen`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuntimeDep {
    /// `restgen = { path = "..." }`, relative to the generated crate.
    Path(String),
    /// `restgen = "<version>"` from a registry.
    Version(String),
}

/// Settings of one generation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The schema's file name as the header names it (no directories, so output does
    /// not depend on where the schema lives).
    pub source_name: String,
    pub runtime: RuntimeDep,
    /// How the generated client crate depends on the client runtime `restgen-client`.
    pub client_runtime: RuntimeDep,
}

/// A generation that failed inside restgen: always a bug, never a schema problem (those
/// are diagnostics, found before emitting).
#[derive(Debug)]
pub struct EmitError {
    pub file: String,
    pub message: String,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "internal error generating {}: {}", self.file, self.message)
    }
}

impl std::error::Error for EmitError {}

/// Every file of the service crate for `service`, which must have passed the checks, as a
/// first generation (one migration creating everything).
pub fn generate(service: &Service, options: &Options) -> Result<Output, EmitError> {
    generate_with(service, options, &Migrations::initial(service))
}

/// Every file of the service crate for `service`, with the migrations planned against the
/// last generation's record.
pub fn generate_with(service: &Service, options: &Options, history: &Migrations) -> Result<Output, EmitError> {
    let mut out = sources(service, options, history)?;
    out.merge(documents(service));
    Ok(out)
}

/// The service's OpenAPI documents, by their paths in the service crate: apart from
/// [`sources`] so that a caller with two cores can write both at once.
pub fn documents(service: &Service) -> Output {
    let mut out = Output::default();
    out.add("openapi.json", FileKind::Generated, restgen_openapi::render(service));
    for (n, document) in restgen_openapi::render_versions(service) {
        out.add(format!("openapi.v{n}.json"), FileKind::Generated, document);
    }
    out
}

/// Every file of the service crate but its OpenAPI [`documents`].
pub fn sources<'s>(service: &'s Service, options: &Options, history: &Migrations) -> Result<Output, EmitError> {
    let mut out = Output::default();
    let header = rust::header(&options.source_name);
    // Each file emitted only as it is printed, so one file's tokens are alive at a time.
    let rust_files: [(&str, &dyn Fn() -> rust::RustFile<'s>); 6] = [
        ("src/generated/mod.rs", &|| service::emit(service)),
        ("src/generated/models.rs", &|| models::emit(service, models::Side::Service)),
        ("src/generated/resources.rs", &|| resources::emit(service)),
        ("src/generated/hooks.rs", &|| hooks::emit(service)),
        ("src/generated/routes.rs", &|| routes::emit(service)),
        ("src/generated/migrations.rs", &|| migrations::emit(history)),
    ];
    for (path, file) in rust_files {
        out.add(path, FileKind::Generated, rust::render(path, &header, file())?);
    }
    for (path, contents) in migrations::files(history, &options.source_name) {
        let kind = if path == RECORD_PATH { FileKind::Record } else { FileKind::Migration };
        out.add(path, kind, contents);
    }
    for (path, contents) in scaffold::render(service, options)? {
        out.add(path, FileKind::Scaffold, contents);
    }
    Ok(out)
}

/// Every file of the client crate `<service>-client` for `service`.
pub fn generate_client<'s>(service: &'s Service, options: &Options) -> Result<Output, EmitError> {
    let mut out = Output::default();
    let header = rust::header(&options.source_name);
    let rust_files: [(&str, &dyn Fn() -> rust::RustFile<'s>); 2] =
        [("src/lib.rs", &|| client::lib(service)), ("src/models.rs", &|| client::models(service))];
    for (path, file) in rust_files {
        out.add(path, FileKind::Generated, rust::render(path, &header, file())?);
    }
    out.add("Cargo.toml", FileKind::Generated, scaffold::client_manifest(service, options)?);
    Ok(out)
}
