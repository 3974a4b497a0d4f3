//! `restgen`: check a schema, generate a service from it, or start a new one.

mod diff;
mod history;
mod init;
mod lsp;
mod paths;

use clap::{Parser, Subcommand, ValueEnum};
use restgen_core::diagnostics::{self, Diagnostics, Severity, Sources};
use restgen_core::emit::{self, Crate, Options, RuntimeDep};
use restgen_core::evolution::ddl::Dialect;
use restgen_core::model::Service;
use restgen_core::output::{Action, Output, Staged, Stale};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

// Generation builds and drops token trees by the million; glibc's allocator spent a
// fifth of the shop's generation in malloc and free.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit codes: 0 all well, 1 problems found (or stale files), 2 usage or I/O error.
pub(crate) const PROBLEMS: u8 = 1;
pub(crate) const FAILURE: u8 = 2;

#[derive(Parser)]
#[command(
    name = "restgen",
    version,
    about = "Turn a declarative resource schema into a production-grade HTTP JSON service in Rust",
    after_help = "Examples:\n  restgen init shop                                  # write a commented starter schema, shop.yaml\n  restgen check shop.yaml                            # report every problem with its line and column\n  restgen generate shop.yaml --out shop-service      # write the service crate\n  restgen generate shop.yaml --out shop-service --check   # exit 1 if generated files are stale"
)]
struct Cli {
    /// When to color diagnostics.
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    color: Color,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
enum Command {
    /// Check a schema and report every problem, each with its file, line and column.
    #[command(
        after_help = "Exit status: 0 when the schema is sound (warnings allowed), 1 when problems were found, 2 on usage or I/O errors.\n\nExamples:\n  restgen check shop.yaml\n  restgen check --format short shop.yaml    # one line per problem, for editors and CI\n  restgen check --format json shop.yaml     # every problem as JSON on standard output (docs/diagnostics.md)"
    )]
    Check {
        /// The schema file.
        file: PathBuf,
        /// `human` shows source snippets like rustc; `short` prints `file:line:col: error[code]: message`;
        /// `json` prints one JSON document of every problem on standard output.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Generate the service crate and its client crate from a schema.
    #[command(
        after_help = "Files under src/generated/ are rewritten whenever their bytes change; Cargo.toml, src/main.rs, src/lib.rs and src/hooks.rs are written only when absent and are yours afterwards. Migrations under migrations/ are written once and never rewritten: each run diffs the schema against migrations/storage.json, the record of the last generation, and writes the next numbered migration when what the database holds changes, refusing changes that drop data unless --accept-data-loss. The client crate (`<service>-client` beside the service crate unless --client-out says otherwise) is generated whole. A failed run leaves each output directory as it was.\n\nExamples:\n  restgen generate shop.yaml --out shop-service\n  restgen generate shop.yaml --out shop-service --check    # CI: exit 1 and list stale files\n  restgen generate shop.yaml --out svc --database postgres   # PostgreSQL alone: a smaller build\n  restgen generate shop.yaml --out svc --runtime-version 0.1"
    )]
    Generate {
        /// The schema file.
        file: PathBuf,
        /// The directory of the service crate.
        #[arg(long)]
        out: PathBuf,
        /// The directory of the client crate (default: `<service>-client` beside the service crate).
        #[arg(long, conflicts_with = "no_client")]
        client_out: Option<PathBuf>,
        /// Generate the service crate alone, without its client crate.
        #[arg(long)]
        no_client: bool,
        /// Write nothing; exit 1 when a generated file is missing or differs, naming each.
        #[arg(long)]
        check: bool,
        /// Depend on the runtime crate at this path (default: the restgen checkout this binary was built from, if present).
        #[arg(long, conflicts_with = "runtime_version")]
        runtime_path: Option<PathBuf>,
        /// Depend on this registry version of the runtime crate.
        #[arg(long)]
        runtime_version: Option<String>,
        /// Build the new service with this database alone (repeat it for both, the default:
        /// `DATABASE_URL` then picks at start). Written into a new Cargo.toml only.
        #[arg(long = "database", value_name = "DATABASE", value_parser = database())]
        databases: Vec<Dialect>,
        /// Write the migration even where it drops data (a field or resource gone, a type
        /// narrowed) or may fail on rows stored (a new required field without a default).
        #[arg(long)]
        accept_data_loss: bool,
    },
    /// Classify every change between two schemas, breaking or compatible, per served version.
    #[command(
        after_help = "Exit status: 0 when no change breaks a version the old schema serves, 1 when one does, 2 on usage or I/O errors (and when a schema has errors).\n\nExamples:\n  restgen diff old.yaml shop.yaml\n  restgen diff shop.yaml --against origin/main        # the schema as that git ref has it\n  restgen diff shop.yaml --against HEAD --format json"
    )]
    Diff {
        /// OLD and NEW schema files, or only NEW with --against.
        #[arg(num_args = 1..=2, required = true, value_name = "FILES")]
        files: Vec<PathBuf>,
        /// Compare NEW with the file as this git ref holds it (`origin/main`, `HEAD~1`, a tag).
        #[arg(long, value_name = "REF")]
        against: Option<String>,
        /// `human` groups changes by resource with their places; `json` is for tools.
        #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
        format: DiffFormat,
    },
    /// Write the format's JSON Schema, which editors read through yaml-language-server.
    #[command(
        after_help = "A schema file's first line `# yaml-language-server: $schema=restgen.schema.json` points editors (VS Code with the YAML extension, Neovim, Helix, JetBrains) at it: completion, hover docs and errors as you type. `restgen init` writes it beside the starter; write it again after upgrading restgen.\n\nExamples:\n  restgen schema                          # writes restgen.schema.json here\n  restgen schema --out api/restgen.schema.json"
    )]
    Schema {
        /// Where to write it (default: restgen.schema.json in this directory).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Serve editors (LSP on stdio): checks as you type, completion, hover, definitions.
    #[command(
        after_help = "A language server (LSP) for schema files: each open schema is checked as it is typed, with restgen check's own words, a moment after the typing stops; keys and the words of closed sets complete; hovering a key says what it means; go to definition jumps from a resource's name in `to`, `owner`, `nested_under` or `principal` to its declaration. Editor setup: docs/editors.md.\n\nExamples:\n  restgen lsp     # started by the editor, which speaks to it on standard input and output"
    )]
    Lsp,
    /// Write a commented starter schema to NAME.yaml.
    #[command(
        after_help = "Examples:\n  restgen init            # writes service.yaml\n  restgen init shop       # writes shop.yaml for a service named shop"
    )]
    Init {
        /// The service name (lower snake or kebab case).
        #[arg(default_value = "service")]
        name: String,
        /// Where to write the schema (default: NAME.yaml).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum DiffFormat {
    Human,
    Json,
}

/// `--database`'s words: the runtime's feature that keeps each database.
fn database() -> impl clap::builder::TypedValueParser<Value = Dialect> {
    use clap::builder::TypedValueParser as _;
    use restgen_core::features;
    clap::builder::PossibleValuesParser::new(Dialect::ALL.map(features::database))
        .map(|word| Dialect::ALL.into_iter().find(|d| features::database(*d) == word).expect("a possible value"))
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    Human,
    Short,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = match cli.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let result = match cli.command {
        Command::Check { file, format } => load(&file, format, color).map(|_| ExitCode::SUCCESS),
        Command::Lsp => lsp::run().map(|()| ExitCode::SUCCESS).map_err(|e| {
            eprintln!("error: restgen lsp: {e}");
            FAILURE
        }),
        Command::Generate {
            file,
            out,
            client_out,
            no_client,
            check,
            runtime_path,
            runtime_version,
            databases,
            accept_data_loss,
        } => {
            let settings =
                Generation { client_out, no_client, check, runtime_path, runtime_version, databases, accept_data_loss };
            generate(&file, &out, settings, color)
        }
        Command::Diff { files, against, format } => diff::run(&files, against.as_deref(), format, color),
        Command::Init { name, out } => init::run(&name, out),
        Command::Schema { out } => init::schema(out),
    };
    result.unwrap_or_else(ExitCode::from)
}

/// A schema read and checked: the model, and its file's name and text for snippets.
struct Loaded {
    service: Service,
    name: String,
    text: String,
}

/// Reads, parses and checks a schema, printing diagnostics; `Err(exit code)` when it is
/// unusable.
fn load(file: &Path, format: Format, color: bool) -> Result<Loaded, u8> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        eprintln!("error: cannot read {}: {e}", file.display());
        FAILURE
    })?;
    let name = file.display().to_string();
    let (service, diags) = match restgen_schema::load(&name, &text) {
        Ok((service, diags)) => (Some(service), diags),
        Err(diags) => (None, diags),
    };
    report(diags, &name, &text, format, color);
    let service = service.ok_or(PROBLEMS)?;
    Ok(Loaded { service, name, text })
}

/// Prints diagnostics about the schema `name` and how many there were.
/// As JSON, on standard output and always (an empty list says the schema is sound).
pub(crate) fn report(diags: Diagnostics, name: &str, text: &str, format: Format, color: bool) {
    let list = diags.into_sorted();
    let mut sources = Sources::new();
    sources.add(name.to_owned(), text.to_owned());
    let rendered = match format {
        Format::Json => return print!("{}", diagnostics::render_json(&list, &sources)),
        _ if list.is_empty() => return,
        Format::Human => diagnostics::render(&list, &sources, color),
        Format::Short => diagnostics::render_short(&list),
    };
    eprint!("{rendered}");
    let errors = list.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = list.len() - errors;
    eprintln!("{name}: {} and {}", plural(errors, "error"), plural(warnings, "warning"));
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}

/// How `generate` runs, beside the schema and the output directory.
struct Generation {
    client_out: Option<PathBuf>,
    no_client: bool,
    check: bool,
    runtime_path: Option<PathBuf>,
    runtime_version: Option<String>,
    databases: Vec<Dialect>,
    accept_data_loss: bool,
}

fn generate(file: &Path, out: &Path, settings: Generation, color: bool) -> Result<ExitCode, u8> {
    let Generation { client_out, no_client, check, runtime_path, runtime_version, databases, accept_data_loss } =
        settings;
    let loaded = load(file, Format::Human, color)?;
    let service = &loaded.service;
    let client_out = client_out.unwrap_or_else(|| paths::client_dir(out, &service.name.value));
    let (runtime, client_runtime) = match (runtime_path, runtime_version) {
        (_, Some(v)) => (RuntimeDep::Version(v.clone()), RuntimeDep::Version(v)),
        (Some(p), None) => (
            RuntimeDep::Path(paths::relative(out, &p)),
            RuntimeDep::Path(paths::relative(&client_out, &p.join("../restgen-client"))),
        ),
        (None, None) => (paths::default_runtime(out, "restgen"), paths::default_runtime(&client_out, "restgen-client")),
    };
    let source_name = file.file_name().map_or_else(|| "schema".into(), |n| n.to_string_lossy().into_owned());
    let databases = Dialect::ALL.into_iter().filter(|d| databases.is_empty() || databases.contains(d)).collect();
    let workspace = paths::workspace_root(out);
    let options = Options { source_name, runtime, client_runtime, databases, workspace_member: workspace.is_some() };
    let mut diags = Diagnostics::new();
    let history = history::plan(out, service, accept_data_loss, &mut diags)?;
    let refused = diags.has_errors();
    report(diags, &loaded.name, &loaded.text, Format::Human, color);
    if refused {
        eprintln!("nothing written: the schema changes what the database holds in ways the next migration cannot keep");
        return Err(PROBLEMS);
    }
    history::describe(&history);
    let internal = |e: emit::EmitError| {
        eprintln!("error: {e}");
        FAILURE
    };
    // What a thread does with the files it made: stage them beside their targets (the
    // renames wait until every thread staged), or, with --check, find the stale ones.
    let finish = |output: Output, dir: &Path| -> Result<Finished, u8> {
        if check {
            let stale = output.stale(dir).map_err(io_failure)?;
            Ok(Finished::Checked(stale.into_iter().map(|s| Stale { path: dir.join(&s.path), ..s }).collect()))
        } else {
            output.stage(dir).map(Finished::Staged).map_err(io_failure)
        }
    };
    // Three threads take the pieces of the generation in turn and keep two cores busy to
    // the end; each piece's files are staged as soon as they are made, so a thread's wait
    // for the disk (the durable files' fsync, the first piece) is the others' time to
    // print. All three read the one model.
    let next = std::sync::atomic::AtomicUsize::new(0);
    // What one thread made: the service's files and the client's.
    let work = || -> Result<[Finished; 2], u8> {
        let mut made = [finish(Output::default(), out)?, finish(Output::default(), &client_out)?];
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(piece) = emit::PIECES.get(i) else { break };
            let (into, dir) = match piece.into {
                Crate::Service => (&mut made[0], out),
                Crate::Client if no_client => continue,
                Crate::Client => (&mut made[1], client_out.as_path()),
            };
            into.merge(finish(piece.make(service, &options, &history).map_err(internal)?, dir)?);
        }
        Ok(made)
    };
    let done = std::thread::scope(|scope| {
        let helpers: Vec<_> = (0..2).map(|_| scope.spawn(work)).collect();
        let mut done = vec![work()];
        done.extend(helpers.into_iter().map(|h| h.join().expect("generating does not panic")));
        done
    });
    // Any failure drops what the others staged, which deletes it: nothing is written.
    let mut done = done.into_iter().collect::<Result<Vec<_>, u8>>()?.into_iter();
    let [mut service_files, mut client_files] = done.next().expect("the main thread's part");
    for [made, client] in done {
        service_files.merge(made);
        client_files.merge(client);
    }
    let finished = [service_files, client_files];
    if check {
        let stale: Vec<Stale> = finished.into_iter().flat_map(Finished::into_stale).collect();
        for s in &stale {
            println!("{}: {}", if s.missing { "missing" } else { "stale" }, s.path.display());
        }
        if stale.is_empty() {
            let mut dirs = vec![out.display().to_string()];
            dirs.extend((!no_client).then(|| client_out.display().to_string()));
            println!("{} up to date", dirs.join(" and "));
            return Ok(ExitCode::SUCCESS);
        }
        println!("run `restgen generate {} --out {}` to update", file.display(), out.display());
        return Ok(ExitCode::from(PROBLEMS));
    }
    let mut written = Vec::new();
    for staged in finished.into_iter().filter_map(Finished::into_staged) {
        written.extend(staged.persist().map_err(io_failure)?);
    }
    let manifest = out.join("Cargo.toml");
    let new_manifest = written.iter().any(|(path, action)| *path == manifest && matches!(action, Action::Created));
    for (path, action) in written {
        let word = match action {
            Action::Created => "created",
            Action::Updated => "updated",
            Action::Unchanged => "unchanged",
            Action::Kept => "kept (yours)",
        };
        println!("{word:>13}  {}", path.display());
    }
    if let Some(root) = workspace.filter(|_| new_manifest) {
        // The tables without their comments, indented under the note.
        let profiles: Vec<String> = emit::BUILD_PROFILES
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| if l.is_empty() { String::new() } else { format!("    {l}") })
            .collect();
        println!(
            "note: {} is in the workspace of {}, and cargo reads profiles from there alone: add these to it for a \
             shorter first debug build and a smaller release executable (docs/deploy.md, \"Build profiles\")\n{}",
            out.display(),
            root.display(),
            profiles.join("\n").trim_start_matches('\n')
        );
    }
    for (name, why) in features_left_out(&out.join("Cargo.toml"), service) {
        eprintln!(
            "warning: Cargo.toml leaves out restgen's `{name}` feature, which the schema now uses ({why}): add \"{name}\" \
             to the `features` of the `restgen` dependency, or the build stops there"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The runtime features `service` uses that the kept `Cargo.toml` at `manifest` turns
/// off: with `default-features = false` on the `restgen` dependency, the ones its
/// `features` do not name. Not the databases, which a deployment may leave out on purpose.
/// Read as text in the shapes `restgen generate` and `cargo add` write; the build says
/// the same of any other shape, at the generated code's `require!`.
fn features_left_out(manifest: &Path, service: &restgen_core::model::Service) -> Vec<(&'static str, String)> {
    use restgen_core::features::used;
    let Ok(text) = std::fs::read_to_string(manifest) else { return Vec::new() };
    let table = text.find("[dependencies.restgen]").map(|at| {
        let rest = &text[at + 1..];
        &rest[..rest.find("\n[").unwrap_or(rest.len())]
    });
    let inline = text.lines().find(|l| l.trim_start().starts_with("restgen = {"));
    let Some(dependency) = table.or(inline) else { return Vec::new() };
    if !dependency.contains("default-features = false") {
        return Vec::new();
    }
    used(service)
        .into_iter()
        .filter(|f| !dependency.contains(&format!("\"{}\"", f.name)))
        .map(|f| (f.name, f.why))
        .collect()
}

/// What generation left of one directory's files: staged to be put in place, or, under
/// `--check`, the ones stale or missing (their paths with the directory).
enum Finished {
    Staged(Staged),
    Checked(Vec<Stale>),
}

impl Finished {
    /// Adds `other`'s files, made for the same directory, in path order.
    fn merge(&mut self, other: Finished) {
        match (self, other) {
            (Finished::Staged(a), Finished::Staged(b)) => a.merge(b),
            (Finished::Checked(a), Finished::Checked(b)) => {
                a.extend(b);
                a.sort_by(|x, y| x.path.cmp(&y.path));
            }
            _ => unreachable!("every thread either stages or checks"),
        }
    }

    fn into_stale(self) -> Vec<Stale> {
        match self {
            Finished::Checked(stale) => stale,
            Finished::Staged(_) => Vec::new(),
        }
    }

    fn into_staged(self) -> Option<Staged> {
        match self {
            Finished::Staged(staged) => Some(staged),
            Finished::Checked(_) => None,
        }
    }
}

fn io_failure(e: std::io::Error) -> u8 {
    eprintln!("error: {e}");
    FAILURE
}
