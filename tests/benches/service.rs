//! The generated fleet service against a hand-written axum + sqlx service answering the
//! same requests from the same database, measured in one run over loopback, on SQLite and
//! (when `RESTGEN_TEST_DATABASE_URL` is set) on PostgreSQL: throughput, p50 and p99
//! latency, server CPU per request and peak RSS of each server process, medians of
//! rounds in which the two take turns, with their spread, and the ratio generated /
//! hand-written. Then, where valgrind is installed, the instructions each server executes
//! per request, counted by callgrind: the same from run to run within a per cent, where
//! CPU time on a shared machine moves by tens of per cents, so a change of a few per cent
//! can be judged.
//!
//! Then what the generated crate costs to compile (`service/compile.rs`).
//!
//! Run: `cargo bench -p restgen-tests --bench service` (`BENCH_ROUNDS`, and `BENCH_MILLIS`
//! for a run's time with each server, to change the runs; `BENCH_ROWS=<text>` for only
//! the rows whose database and name contain it, `BENCH_COMPILE=0` to leave out the builds
//! and `BENCH_COMPILE=only` for the builds alone, `BENCH_COMPILE_ROUNDS` for the rounds of
//! cold debug builds (3), `BENCH_FIRST_RUN=<commit>` for README command 1 alone, from fresh
//! clones of `HEAD` and of that commit in turns (`BENCH_FIRST_RUN_ROUNDS`, 3), written to
//! `target/bench/first-run.md`,
//! `BENCH_INSTRUCTIONS=<n>` for the requests counted under callgrind, 0 to leave the count
//! out, and `BENCH_COUNT_AT=<n>` for how many of them are sent at once (1);
//! `BENCH_PROFILES=<dir>` to keep each count's callgrind profile there,
//! `<database>-<row>-<server>.out`, for `callgrind_annotate`; `BENCH_ALIKE=1` to serve the
//! generated service in both turns, an A/A run whose ratios are the bench's own spread;
//! `BENCH_METRICS=1` to serve it with its requests counted in metrics against without,
//! whose ratios are what the metrics cost; `BENCH_TRACES=1` to serve it tracing every
//! request over OTLP against logging alone, whose ratios are what traces cost;
//! `BENCH_VERBOSE=1` for the timed servers' warnings, filtered by `RUST_LOG`, and what each
//! checkpoint found, on standard error).
//! Writes `target/bench/service.md` and `target/bench/service.svg` (`service-alike`,
//! `service-metrics`, `service-traces`, and `-rows` after any for a run of some rows).
//!
//! Each server is an executable of its own, built from `tests/bench-servers` at the start
//! of a run ([`servers::executable`]). The hand-written service is what a careful engineer
//! writes for these routes (the reference of docs/performance.md): `&'static str` SQL, rows
//! decoded into structs and serialized straight to bytes, the same pool settings, one
//! statement per request where one does, each write read to its end (so SQLite checkpoints
//! its log, as it does for the generated store). Before measuring, each row's answers from
//! both are compared: the same status, body bytes and headers (for writes, but for the new
//! record's id, name and times).

#[path = "service/compile.rs"]
mod compile;
#[path = "service/count.rs"]
mod count;
#[path = "service/first_run.rs"]
mod first_run;
#[path = "service/load.rs"]
mod load;
#[path = "service/report.rs"]
mod report;
#[path = "service/servers.rs"]
mod servers;
#[path = "service/turns.rs"]
mod turns;

use count::*;
use load::*;
use report::*;
use servers::*;

use restgen::__private::axum;
use restgen::store::StoreOptions;
use serde_json::{Value, json};
use sqlx::postgres::PgPool;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};
use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const CONCURRENCY: usize = 16;
const TRIPS: u64 = 500;
const DEPOTS: u64 = 200;
const KINDS: [&str; 2] = ["generated", "hand-written"];

/// The two servers of a run, as the tables name them and as they are started: the
/// generated and the hand-written one, or with `BENCH_ALIKE=1` the generated one twice.
///
/// Two servers alike (an A/A run) are what a ratio of exactly 1.00 reads as on this
/// machine: their spread is the bench's own, the room a target of a few per cent must
/// leave for it.
///
/// With `BENCH_METRICS=1` the two are the generated service with and without its requests
/// counted in Prometheus metrics (`<SERVICE>_METRICS_BIND`): the ratios are what counting
/// costs a request. With `BENCH_TRACES=1`, with and without every request traced to an
/// OTLP receiver (both logging as `main` sets it up, at `warn`): what traces cost.
#[derive(Clone, Copy)]
struct Pair {
    names: [&'static str; 2],
    serve: [&'static str; 2],
    /// The name of the files the run writes (`service.md`), before `-rows` for some rows.
    stem: &'static str,
    /// What the header says of the pair.
    note: &'static str,
}

impl Pair {
    fn from_env() -> Pair {
        if setting("BENCH_ALIKE", 0) != 0 {
            Pair {
                names: ["generated", "generated again"],
                serve: ["generated", "generated"],
                stem: "service-alike",
                note: " Both servers are the generated one (BENCH_ALIKE): the ratios are the bench's own spread.",
            }
        } else if setting("BENCH_METRICS", 0) != 0 {
            Pair {
                names: ["metrics on", "metrics off"],
                serve: ["generated-metrics", "generated"],
                stem: "service-metrics",
                note: " Both servers are the generated one, the first counting its requests in its metrics \
                       (BENCH_METRICS): the ratios are what the metrics cost.",
            }
        } else if setting("BENCH_TRACES", 0) != 0 {
            Pair {
                names: ["traces on", "traces off"],
                serve: ["generated-traces", "generated-logs"],
                stem: "service-traces",
                note: " Both servers are the generated one logging at `warn` as `main` sets it up, the first also \
                       tracing every request to an OTLP receiver in the bench's process (BENCH_TRACES): the ratios \
                       are what traces cost.",
            }
        } else {
            Pair { names: KINDS, serve: KINDS, stem: "service", note: "" }
        }
    }

    /// Whether the second server is the hand-written reference.
    fn against_reference(&self) -> bool {
        self.serve[1] == KINDS[1]
    }

    /// What the ratios divide: "generated / hand-written".
    fn ratio(&self) -> String {
        format!("{} / {}", self.names[0], self.names[1])
    }
}

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    // `BENCH_COMPILE=only`: the builds alone.
    if std::env::var("BENCH_COMPILE").as_deref() == Ok("only") {
        return write_alone("compile.md", &compile::measure());
    }
    // `BENCH_FIRST_RUN=<commit>`: README command 1 alone.
    if let Ok(baseline) = std::env::var("BENCH_FIRST_RUN") {
        return write_alone("first-run.md", &first_run::measure(&baseline, setting("BENCH_FIRST_RUN_ROUNDS", 3)));
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(compare());
}

/// This checkout's root, the workspace's.
fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A section measured alone, written to `target/bench/<file>` and printed.
fn write_alone(file: &str, section: &str) {
    let out = workspace().join("target/bench");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join(file), section).unwrap();
    println!("\n{section}\nwritten: target/bench/{file}");
}

async fn compare() {
    // The load's HTTP clients are built before any server: ring for their TLS stack, as a
    // generated service installs at start (reqwest is built without a provider of its own).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let pair = Pair::from_env();
    // The servers' executables, built before any run is timed.
    executable(pair.serve[0]);
    let rounds = setting("BENCH_ROUNDS", 5);
    let run = Duration::from_millis(setting("BENCH_MILLIS", 2_000) as u64);
    // `BENCH_ROWS=<text>`: only the rows whose "<database> <row>" contains it (to profile one).
    let only = std::env::var("BENCH_ROWS").ok();
    let to_count = if valgrind_installed() { setting("BENCH_INSTRUCTIONS", 400) } else { 0 };
    if to_count == 0 {
        eprintln!("instructions not counted: valgrind is not installed, or BENCH_INSTRUCTIONS=0");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut databases: Vec<(&'static str, String)> =
        vec![("SQLite", format!("sqlite://{}", dir.path().join("bench.db").display()))];
    match std::env::var("RESTGEN_TEST_DATABASE_URL") {
        Ok(url) => databases.push(("PostgreSQL", postgres_schema(&url).await)),
        Err(_) => eprintln!("PostgreSQL skipped: RESTGEN_TEST_DATABASE_URL is unset"),
    }
    let machine = machine();
    let header = format!(
        "Service bench, {}: {machine}. Runs of {} ms of requests a server, {CONCURRENCY} at once over loopback, \
         {rounds} rounds per row, the two servers taking turns in blocks of {} ms; medians. {TRIPS} trips, {DEPOTS} depots.{}",
        chrono::Utc::now().format("%Y-%m-%d"),
        run.as_millis(),
        (run / BLOCKS).as_millis(),
        pair.note,
    );
    println!("{header}");
    let mut rows = Vec::new();
    for (database, url) in &databases {
        let tags = Arc::new(seed(url).await);
        for case in Case::ALL {
            if !only.as_ref().is_none_or(|o| format!("{database} {}", case.name()).contains(o.as_str())) {
                continue;
            }
            same_answers(pair, url, case, &tags).await;
            // The server that sends the first block changes each round (one that always
            // went first after a row's change would carry that every round); each round
            // starts both afresh, so peak RSS is the round's own.
            let mut runs: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
            for n in 0..rounds {
                let [g, h] = round(pair, url, case, &tags, run, n % 2).await;
                runs[0].push(g);
                runs[1].push(h);
            }
            let counted = match to_count {
                0 => None,
                n => Some([
                    count(database, (pair.serve[0], pair.names[0]), url, case, &tags, n).await,
                    count(database, (pair.serve[1], pair.names[1]), url, case, &tags, n).await,
                ]),
            };
            let row = Row { database, case, runs, counted };
            let (g, h) = (row.of(0, |r| r.rps).0, row.of(1, |r| r.rps).0);
            println!(
                "{database:<10} {:<28} {g:>7.0} vs {h:>7.0} req/s  throughput {:.2}  p99 {:.2}  CPU {:.2}  instructions {}  L1i misses {}  RSS {:.1} vs {:.1} MiB  missed: {}",
                case.name(),
                row.ratio(|r| r.rps).0,
                row.ratio(|r| ms(&r.p99)).0,
                row.ratio(|r| r.cpu.as_secs_f64()).0,
                row.counted_ratio(|c| c.instructions),
                row.counted_ratio(|c| c.code_misses),
                row.peak_rss_mib(0),
                row.peak_rss_mib(1),
                if row.misses().is_empty() { "-".to_owned() } else { row.misses().join(", ") },
            );
            rows.push(row);
        }
    }
    if let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") {
        drop_schema(&url).await;
    }
    let out = workspace().join("target/bench");
    std::fs::create_dir_all(&out).unwrap();
    let mut table = markdown(pair, &rows, &header);
    // Skipped when profiling rows, in a run without the reference, or with `BENCH_COMPILE=0`:
    // two cold builds take minutes.
    if only.is_none() && pair.against_reference() && setting("BENCH_COMPILE", 1) != 0 {
        table.push_str(&format!("\n{}", compile::measure()));
    }
    // A run of some rows (to profile one), or of another pair, writes beside the whole
    // run's table and chart, not over them.
    let stem = format!("{}{}", pair.stem, if only.is_some() { "-rows" } else { "" });
    std::fs::write(out.join(format!("{stem}.md")), &table).unwrap();
    chart(pair, &rows, &out.join(format!("{stem}.svg"))).unwrap();
    println!("\n{table}\nwritten: target/bench/{stem}.md, target/bench/{stem}.svg");
}
