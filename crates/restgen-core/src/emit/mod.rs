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
    /// The databases the service's build keeps (the runtime's `sqlite` and `postgres`
    /// features), at least one.
    pub databases: Vec<crate::evolution::ddl::Dialect>,
    /// The service crate is a member of a workspace (a directory above it has a
    /// `Cargo.toml` with a `[workspace]` that does not exclude it): cargo reads profiles
    /// from the workspace's root alone, so the crate's own `Cargo.toml` names none.
    pub workspace_member: bool,
}

/// The build profiles a generated crate's `Cargo.toml` sets where it is its own workspace
/// (cargo reads a workspace member's from the workspace's root alone).
pub const BUILD_PROFILES: &str = r#"# Build profiles (docs/deploy.md, "Build profiles"). In a workspace, cargo reads them from
# the workspace's root alone.
#
# Dependencies' debug info as line tables: backtraces still name file and line, and the
# first debug build is shorter. This crate keeps full debug info. Nor are dependencies
# compiled incrementally: cargo never does so for one from crates.io, and for the runtime
# found by path (a restgen checkout) the records cost the first build time and disk.
[profile.dev.package."*"]
debug = "line-tables-only"
incremental = false

# One codegen unit: rustc then compiles each generic function and async body of the
# runtime once instead of once per unit, so the executable is smaller and a running
# service holds less memory, for about the same cold build.
[profile.release]
codegen-units = 1"#;

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
    make(Crate::Service, service, options, history)
}

/// Every file of the client crate `<service>-client` for `service`.
pub fn generate_client(service: &Service, options: &Options) -> Result<Output, EmitError> {
    make(Crate::Client, service, options, &Migrations::initial(service))
}

/// Every file of one crate, its pieces made one after the other.
fn make(into: Crate, service: &Service, options: &Options, history: &Migrations) -> Result<Output, EmitError> {
    let mut out = Output::default();
    for piece in PIECES.iter().filter(|p| p.into == into) {
        out.merge(piece.make(service, options, history)?);
    }
    Ok(out)
}

/// The crate a file goes into: the service's, or its client's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crate {
    Service,
    Client,
}

/// Some files of one crate, made from the model apart from every other piece, so a caller
/// with several cores makes several at once.
pub struct Piece {
    pub into: Crate,
    make: fn(&Service, &Options, &Migrations) -> Result<Output, EmitError>,
}

impl Piece {
    pub fn make(&self, service: &Service, options: &Options, history: &Migrations) -> Result<Output, EmitError> {
        (self.make)(service, options, history)
    }
}

/// Every piece of a generation: first the files that must reach the disk before they are
/// put in place (the migrations, their record and the files written once, small to make,
/// slow to sync), then the others, those that take longest first, so that threads that
/// take the next piece as they finish one finish together (the client's methods alone are
/// a quarter of the work on a large schema).
pub const PIECES: &[Piece] = &[
    Piece { into: Crate::Service, make: |s, o, h| rest_of_service(s, o, h) },
    Piece { into: Crate::Client, make: |s, o, _| rust_file("src/lib.rs", o, client::lib(s)) },
    Piece { into: Crate::Service, make: |s, _, _| Ok(openapi_newest(s)) },
    Piece {
        into: Crate::Service,
        make: |s, o, _| rust_file("src/generated/models.rs", o, models::emit(s, models::Side::Service)),
    },
    Piece { into: Crate::Service, make: |s, o, _| rust_file("src/generated/resources.rs", o, resources::emit(s)) },
    Piece { into: Crate::Client, make: |s, o, _| rust_file("src/models.rs", o, client::models(s)) },
    Piece { into: Crate::Service, make: |s, _, _| Ok(openapi_versions(s)) },
    Piece { into: Crate::Service, make: |s, o, _| rust_file("src/generated/hooks.rs", o, hooks::emit(s)) },
    Piece { into: Crate::Service, make: |s, o, _| rust_file("src/generated/routes.rs", o, routes::emit(s)) },
    Piece {
        into: Crate::Client,
        make: |s, o, _| {
            let mut out = Output::default();
            out.add("Cargo.toml", FileKind::Generated, scaffold::client_manifest(s, o)?);
            Ok(out)
        },
    },
];

/// A Rust file made from `file`'s tokens, printed.
fn rust_file(path: &str, options: &Options, file: rust::RustFile) -> Result<Output, EmitError> {
    let mut out = Output::default();
    out.add(path, FileKind::Generated, rust::render(path, &rust::header(&options.source_name), file)?);
    Ok(out)
}

/// The OpenAPI document of what a request that names no version gets.
fn openapi_newest(service: &Service) -> Output {
    let mut out = Output::default();
    let document = restgen_openapi::render(service);
    let file = |openapi_3_0| restgen_model::bounds::document_path(None, openapi_3_0)[1..].to_owned();
    out.add(file(true), FileKind::Generated, restgen_openapi::downgrade::to_3_0(&document));
    out.add(file(false), FileKind::Generated, document);
    out
}

/// The OpenAPI document of each served version.
fn openapi_versions(service: &Service) -> Output {
    let mut out = Output::default();
    for (n, document) in restgen_openapi::render_versions(service) {
        let file = |openapi_3_0| restgen_model::bounds::document_path(Some(n), openapi_3_0)[1..].to_owned();
        out.add(file(true), FileKind::Generated, restgen_openapi::downgrade::to_3_0(&document));
        out.add(file(false), FileKind::Generated, document);
    }
    out
}

/// The service crate's small files: its module root, the migrations and their record,
/// and the files written once.
fn rest_of_service(service: &Service, options: &Options, history: &Migrations) -> Result<Output, EmitError> {
    let mut out = rust_file("src/generated/mod.rs", options, service::emit(service))?;
    out.merge(rust_file("src/generated/migrations.rs", options, migrations::emit(history))?);
    for (path, contents) in migrations::files(history, &options.source_name) {
        let kind = if path == RECORD_PATH { FileKind::Record } else { FileKind::Migration };
        out.add(path, kind, contents);
    }
    for (path, contents) in scaffold::render(service, options)? {
        out.add(path, FileKind::Scaffold, contents);
    }
    Ok(out)
}
