//! What a generated crate costs to compile, as a user meets it, against what a hand-written
//! one costs, measured in the same run: the service generated from
//! `tests/reference-service/orders.yaml` (one resource, no auth, no events) and the
//! hand-written axum + sqlx service beside it (`tests/reference-service`), each in a
//! directory of its own with a target directory of its own (every dependency compiled, as
//! on a first checkout), in debug (`BENCH_COMPILE_ROUNDS` times each, 3 unless told, the
//! crates taking turns to go first) and in release (and the size of the release executable);
//! then one field added (to the schema and `restgen generate`, or to the hand-written input
//! struct) and a debug build again (the edit, build loop). Last, the generated shop's cold
//! debug build, the largest example.

use crate::turns::{Turns, median};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The field added for the incremental builds: an order's currency.
const ADDED_FIELD: &str = "      currency: { type: string, nullable: true, settable: true, max_length: 3 }\n";
const ADDED_RUST: &str = "    #[serde(default)]\n    currency: Option<String>,\n";

/// The dependencies of the hand-written service, whose versions and features the
/// workspace names.
const REFERENCE_DEPS: [&str; 8] =
    ["axum", "tokio", "serde", "serde_json", "sqlx", "chrono", "tracing", "tracing-subscriber"];

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn run(command: &mut Command) -> Duration {
    let start = Instant::now();
    let out = command.output().expect("the command runs");
    let took = start.elapsed();
    assert!(out.status.success(), "{command:?}: {}", String::from_utf8_lossy(&out.stderr));
    took
}

/// A crate to build, in its own directory with its own target directory.
struct Crate {
    dir: PathBuf,
    target: PathBuf,
    /// Its executable's name.
    bin: &'static str,
}

impl Crate {
    fn build(&self, release: bool) -> Duration {
        let mut c = cargo();
        c.args(["build", "-q", "--offline", "--manifest-path"]).arg(self.dir.join("Cargo.toml"));
        c.arg("--target-dir").arg(&self.target);
        if release {
            c.arg("--release");
        }
        // As a user builds: incremental debug builds, whatever this run's environment says,
        // and from the crate's own directory, where cargo reads no `.cargo/config.toml` of
        // this checkout (whose profiles would override the crate's own).
        c.env_remove("CARGO_INCREMENTAL");
        c.current_dir(&self.dir);
        run(&mut c)
    }

    /// The size of the release executable, in bytes: its code, data and symbols, as the
    /// crate's release profile leaves it.
    fn release_size(&self) -> u64 {
        std::fs::metadata(self.target.join("release").join(self.bin)).expect("a release build").len()
    }
}

/// Cold release, and the debug build after an edit (with the time the edit's own step
/// took, `restgen generate` for a generated crate).
struct Builds {
    release: Duration,
    edit: Duration,
    incremental: Duration,
    /// The release executable's size in bytes.
    size: u64,
}

/// The crate's cold debug build, from an empty target directory.
fn cold_debug(name: &str, krate: &Crate) -> Duration {
    println!("compile cost: {name}: cold debug build ...");
    let _ = std::fs::remove_dir_all(&krate.target);
    krate.build(false)
}

/// The cold debug builds of both crates over the rounds: the median of each, and each
/// round's ratio in order.
struct ColdDebug {
    generated: Duration,
    reference: Duration,
    ratios: Vec<f64>,
}

impl ColdDebug {
    /// The cold debug builds of both crates, `rounds` times, in turns. The last round's
    /// target directories stay for the builds after it.
    fn measure(rounds: usize, generated: &Crate, reference: &Crate) -> ColdDebug {
        let turns =
            Turns::take(rounds, || cold_debug("generated", generated), || cold_debug("hand-written", reference));
        ColdDebug { generated: median(&turns.a), reference: median(&turns.b), ratios: turns.ratios() }
    }

    /// The median of the rounds' ratios: each round's pair built minutes apart, so one
    /// round's ratio is less moved by the machine than a ratio of medians.
    fn ratio(&self) -> f64 {
        let mut sorted = self.ratios.clone();
        sorted.sort_by(f64::total_cmp);
        sorted[sorted.len() / 2]
    }
}

/// After its cold debug build: a cold release build, then one field added and a debug build.
fn measure_crate(name: &str, krate: &Crate, edit: impl FnOnce() -> Duration) -> Builds {
    println!("compile cost: {name}: cold release build ...");
    let release = krate.build(true);
    let size = krate.release_size();
    println!("compile cost: {name}: one field added, debug build ...");
    let edit = edit();
    let incremental = krate.build(false);
    Builds { release, edit, incremental, size }
}

/// The hand-written service's manifest outside the workspace: its dependencies as the
/// workspace pins them, with the features its own manifest adds (`own`).
fn reference_manifest(workspace: &str, own: &str) -> String {
    let mut deps = String::new();
    for dep in REFERENCE_DEPS {
        let line = |manifest: &str| manifest.lines().find(|l| l.starts_with(&format!("{dep} = "))).map(str::to_owned);
        let pinned = line(workspace).unwrap_or_else(|| panic!("the workspace pins {dep}"));
        let added = line(own).and_then(|l| Some(l.split_once("features = [")?.1.split_once(']')?.0.to_owned()));
        match added {
            Some(added) => deps.push_str(&pinned.replacen("features = [", &format!("features = [{added}, "), 1)),
            None => deps.push_str(&pinned),
        }
        deps.push('\n');
    }
    format!(
        "[package]\nname = \"reference-service\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[workspace]\n\n[dependencies]\n{deps}"
    )
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn ratio(generated: Duration, reference: Duration) -> String {
    format!("{:.2}x", generated.as_secs_f64() / reference.as_secs_f64())
}

/// The measurements as a Markdown section.
pub fn measure() -> String {
    let root = crate::workspace();
    run(cargo().args(["build", "--release", "-q", "-p", "restgen-cli"]).current_dir(&root));
    let restgen = root.join("target/release/restgen");
    let dir = tempfile::tempdir().unwrap();
    let lock = root.join("Cargo.lock");
    let generate =
        |schema: &Path, out: &Path| run(Command::new(&restgen).arg("generate").arg(schema).arg("--out").arg(out));

    // The generated service, from the one-resource schema.
    let schema = dir.path().join("orders.yaml");
    let text = std::fs::read_to_string(root.join("tests/reference-service/orders.yaml")).unwrap();
    std::fs::write(&schema, &text).unwrap();
    let generated = Crate { dir: dir.path().join("orders"), target: dir.path().join("target-orders"), bin: "orders" };
    generate(&schema, &generated.dir);
    // The workspace's lock: the same dependency versions as the rest of this run.
    std::fs::copy(&lock, generated.dir.join("Cargo.lock")).unwrap();

    // The hand-written one.
    let reference = Crate {
        dir: dir.path().join("reference"),
        target: dir.path().join("target-reference"),
        bin: "reference-service",
    };
    std::fs::create_dir_all(reference.dir.join("src")).unwrap();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let own = std::fs::read_to_string(root.join("tests/reference-service/Cargo.toml")).unwrap();
    std::fs::write(reference.dir.join("Cargo.toml"), reference_manifest(&workspace, &own)).unwrap();
    let main = root.join("tests/reference-service/src/main.rs");
    std::fs::copy(&main, reference.dir.join("src/main.rs")).unwrap();
    std::fs::copy(&lock, reference.dir.join("Cargo.lock")).unwrap();

    let rounds = std::env::var("BENCH_COMPILE_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(3);
    let cold = ColdDebug::measure(rounds, &generated, &reference);
    let by_hand = measure_crate("hand-written", &reference, || {
        let start = Instant::now();
        let code = std::fs::read_to_string(reference.dir.join("src/main.rs")).unwrap();
        let at = code.find("struct CreateOrder {\n").expect("the reference has a create input")
            + "struct CreateOrder {\n".len();
        std::fs::write(reference.dir.join("src/main.rs"), format!("{}{ADDED_RUST}{}", &code[..at], &code[at..]))
            .unwrap();
        start.elapsed()
    });
    let by_restgen = measure_crate("generated", &generated, || {
        let at = text.find("      note:").expect("orders have a note");
        std::fs::write(&schema, format!("{}{ADDED_FIELD}{}", &text[..at], &text[at..])).unwrap();
        generate(&schema, &generated.dir)
    });

    // The shop, as the README's first command builds it.
    let shop_schema = dir.path().join("shop.yaml");
    std::fs::copy(root.join("examples/shop/shop.yaml"), &shop_schema).unwrap();
    let shop = Crate { dir: dir.path().join("shop"), target: dir.path().join("target-shop"), bin: "shop" };
    generate(&shop_schema, &shop.dir);
    std::fs::copy(&lock, shop.dir.join("Cargo.lock")).unwrap();
    println!("compile cost: the shop: cold debug build ...");
    let shop_debug = shop.build(false);

    let row = |what: &str, g: Duration, r: Duration| {
        format!("| {what} | {:.1} s | {:.1} s | {} |\n", g.as_secs_f64(), r.as_secs_f64(), ratio(g, r))
    };
    let cold_row = format!(
        "| cold, debug (every dependency) | {:.1} s | {:.1} s | {:.2}x |\n",
        cold.generated.as_secs_f64(),
        cold.reference.as_secs_f64(),
        cold.ratio()
    );
    let size = format!(
        "| release executable | {:.1} MiB | {:.1} MiB | {:.2}x |\n",
        mib(by_restgen.size),
        mib(by_hand.size),
        by_restgen.size as f64 / by_hand.size as f64
    );
    format!(
        "One resource (orders: list, get, create, patch, delete; no auth, no events), generated by restgen \
         and written by hand with axum and sqlx (`tests/reference-service`), each built in a directory of its \
         own with its own target directory and the profiles of its own Cargo.toml (the generated crate's two, \
         cargo's defaults for the hand-written one), in one run:\n\n\
         | build | generated | hand-written | ratio |\n|---|---:|---:|---:|\n{}{}{}{}\n\
         The cold debug builds: {} rounds, each crate first in every other, the medians and the median of \
         the rounds' ratios ({}). \
         The edit: `restgen generate` took {:.2} s of the generated crate's incremental build. \
         The generated shop ({} resources, auth, webhooks, CSV): cold debug build {:.1} s.\n",
        cold_row,
        row("cold, release (every dependency)", by_restgen.release, by_hand.release),
        row(
            "one field added, then a debug build",
            by_restgen.edit + by_restgen.incremental,
            by_hand.edit + by_hand.incremental
        ),
        size,
        cold.ratios.len(),
        cold.ratios.iter().map(|r| format!("{r:.2}x")).collect::<Vec<_>>().join(", "),
        by_restgen.edit.as_secs_f64(),
        restgen_schema::load("shop.yaml", &std::fs::read_to_string(&shop_schema).unwrap())
            .expect("the shop's schema is valid")
            .0
            .resources
            .len(),
        shop_debug.as_secs_f64(),
    )
}
