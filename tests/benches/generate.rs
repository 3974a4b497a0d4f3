//! `restgen generate` as a user waits for it, the whole process from start to exit with
//! every file written, on the shop and on synthetic schemas of 10, 100 and 1,000
//! resources: medians with their spread, and the time per resource, which should stay
//! flat as the schema grows.
//!
//! Run: `cargo bench -p restgen-tests --bench generate`

use std::fmt::Write;
use std::time::{Duration, Instant};

/// A schema of `n` resources in the shape of the shop's: owned, with refs to the previous
/// resource, enums with a lifecycle, filters, sorts, and every input kind.
fn synthetic(n: usize) -> String {
    let mut s = String::from(
        "service: synthetic\nauth:\n  principal: account\n  login: { identifier: email }\n  roles: [admin, member]\n  admin_roles: [admin]\nresources:\n  account:\n    path: /accounts\n    access: { create: [anyone] }\n    fields:\n      email: { type: email, required: true, unique: true, settable: [create] }\n      password: { type: password, required: true, settable: [create] }\n",
    );
    for i in 0..n.saturating_sub(1) {
        let prev = if i == 0 { "account".to_owned() } else { format!("thing{}", i - 1) };
        writeln!(
            s,
            "  thing{i}:\n    path: /things{i}\n    owner: account\n    fields:\n      name: {{ type: string, required: true, max_length: 100, settable: true, sort: true }}\n      status: {{ type: enum, values: [open, done, gone], filter: true }}\n      amount: {{ type: integer, min: 0, default: 0, settable: [create] }}\n      note: {{ type: text, nullable: true, settable: true }}\n      parent_id: {{ type: ref, to: {prev}, nullable: true, settable: true, filter: true }}\n    states:\n      field: status\n      initial: open\n      transitions:\n        finish: {{ from: [open], to: done }}\n        drop: {{ from: [open, done], to: gone }}\n    events: [created, finish]"
        )
        .unwrap();
    }
    s
}

/// The `restgen` command as a user runs it: built in release by cargo (this bench's
/// profile) before anything is timed.
fn restgen() -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "-q", "-p", "restgen-cli"])
        .current_dir(&root)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "restgen-cli builds");
    root.join("target/release/restgen")
}

/// One whole `restgen generate` into a fresh directory: from the process's start to its
/// exit, every file written (the client beside the service, as it goes by default, so it
/// is written fresh each time too). Returns the time and the bytes written.
fn generate(restgen: &std::path::Path, schema: &std::path::Path) -> (Duration, u64) {
    let out = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let run = std::process::Command::new(restgen)
        .arg("generate")
        .arg(schema)
        .arg("--out")
        .arg(out.path().join("service"))
        .stdout(std::process::Stdio::null())
        .output()
        .expect("restgen runs");
    let took = start.elapsed();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    (took, bytes_under(out.path()))
}

fn bytes_under(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() { bytes_under(&e.path()) } else { e.metadata().unwrap().len() }
        })
        .sum()
}

/// The median and the spread (smallest, largest) of `runs`.
fn stats(mut runs: Vec<Duration>) -> (Duration, Duration, Duration) {
    runs.sort();
    (runs[runs.len() / 2], runs[0], runs[runs.len() - 1])
}

fn main() {
    let restgen = restgen();
    let dir = tempfile::tempdir().unwrap();
    let shop = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/shop/shop.yaml");
    // The shop has four resources.
    let mut schemas = vec![("shop".to_owned(), shop, 4)];
    for n in [10, 100, 1000] {
        let path = dir.path().join(format!("synthetic-{n}.yaml"));
        std::fs::write(&path, synthetic(n)).unwrap();
        schemas.push((format!("{n} resources"), path, n));
    }
    println!("restgen generate, whole command (service, client, OpenAPI and migrations written to a fresh directory)");
    println!(
        "{:>14} {:>12} {:>22} {:>14} {:>10} {:>6}",
        "schema", "median", "smallest-largest", "per resource", "written", "runs"
    );
    for (name, schema, n) in schemas {
        generate(&restgen, &schema); // warm the page cache
        let runs = (200 / n).clamp(5, 21);
        let mut times = Vec::new();
        let mut written = 0;
        for _ in 0..runs {
            let (t, bytes) = generate(&restgen, &schema);
            times.push(t);
            written = bytes;
        }
        let (median, lo, hi) = stats(times);
        let spread = format!("{lo:.1?}-{hi:.1?}");
        println!(
            "{name:>14} {median:>12.1?} {spread:>22} {:>14.1?} {:>7.1} MB {runs:>6}",
            median / n as u32,
            written as f64 / 1e6
        );
    }
}
