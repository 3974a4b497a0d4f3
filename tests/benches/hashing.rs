//! Password hashing beside other requests: the latency of `GET /healthz` on the shop while
//! 64 clients at a time register accounts (each an Argon2id hash of 19 MiB and tens of
//! milliseconds), measured in one run three ways, over loopback, on SQLite:
//!
//! - idle: nothing else runs;
//! - bounded: the shop's own registrations, hashed on the bounded hashers
//!   (`restgen::password`, one thread per core);
//! - on the workers: the same number of hashes made by a route that hashes on the async
//!   worker that serves it, as registrations did before the hashers were bounded.
//!
//! The runtime has as many workers as the machine has cores, as a generated `main` has.
//! Each load runs in rounds; the table gives the medians of the probes' p50 and p99 and the
//! ratio of each to idle.
//!
//! Run: `cargo bench -p restgen-tests --bench hashing` (`BENCH_ROUNDS` rounds, 3 by default).
//! Writes `target/bench/hashing.md`.

use restgen::__private::axum::{self, routing::post};
use restgen::__private::tokio;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Clients hashing at once, and the hashes each load makes in a round.
const AT_ONCE: usize = 64;
const HASHES: usize = 256;
/// How often the prober asks for `/healthz`.
const PROBE_EVERY: Duration = Duration::from_millis(5);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Load {
    Idle,
    Bounded,
    OnTheWorkers,
}

impl Load {
    fn name(self) -> &'static str {
        match self {
            Load::Idle => "idle",
            Load::Bounded => "registrations, bounded hashers",
            Load::OnTheWorkers => "hashes on the async workers (before)",
        }
    }
}

fn main() {
    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let table = runtime.block_on(measure(rounds));
    println!("{table}");
    let dir = restgen_tests::root().join("target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hashing.md"), &table).unwrap();
}

async fn measure(rounds: usize) -> String {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("hashing.db").display());
    let base = serve(&url).await;
    // reqwest is built without a TLS provider of its own (docs/deploy.md, "Outgoing TLS").
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let loads = [Load::Idle, Load::Bounded, Load::OnTheWorkers];
    let mut results: Vec<(Load, Vec<(Duration, Duration)>)> = loads.iter().map(|l| (*l, Vec::new())).collect();
    let serial = AtomicUsize::new(0);
    for round in 0..rounds {
        for (load, samples) in &mut results {
            let (p50, p99) = run(&client, &base, *load, &serial).await;
            eprintln!("round {round}: {:<40} p50 {p50:>10.2?} p99 {p99:>10.2?}", load.name());
            samples.push((p50, p99));
        }
    }
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let idle = results.iter().find(|(l, _)| *l == Load::Idle).map(|(_, s)| s.clone()).unwrap();
    let (idle50, idle99) = (median(idle.iter().map(|s| s.0).collect()), median(idle.iter().map(|s| s.1).collect()));
    let mut out = format!(
        "# /healthz beside {AT_ONCE} clients hashing at once ({HASHES} hashes a round, {rounds} rounds, {} cores)\n\n\
         | load | p50 | p99 | p50 / idle | p99 / idle |\n|---|---|---|---|---|\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    for (load, samples) in &results {
        let p50 = median(samples.iter().map(|s| s.0).collect());
        let p99 = median(samples.iter().map(|s| s.1).collect());
        out.push_str(&format!(
            "| {} | {:.2?} | {:.2?} | {:.1} | {:.1} |\n",
            load.name(),
            p50,
            p99,
            p50.as_secs_f64() / idle50.as_secs_f64(),
            p99.as_secs_f64() / idle99.as_secs_f64()
        ));
    }
    out
}

/// The shop on `url`, with a route that hashes as registrations did before the hashers
/// were bounded (`POST /inline-hash`), on a free loopback port.
async fn serve(url: &str) -> String {
    let store = restgen::store::Store::connect(url).await.unwrap();
    let shop = shop::service();
    restgen::serve::migrate(&store, &shop).await.unwrap();
    let inline = axum::Router::new().route(
        "/inline-hash",
        post(|body: String| async move {
            // On the worker that serves the request, as `operations::stored` hashed.
            restgen::password::hash(&body).map(|_| "hashed")
        }),
    );
    let service = restgen::serve::Service { routes: shop.routes.merge(inline), ..shop };
    let settings = restgen::serve::Settings {
        rate: restgen::rate::RateSettings { scale: 1_000_000.0 },
        ..restgen::serve::Settings::default()
    };
    let app = restgen::serve::app(service, store, &settings).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(restgen::serve::serve_until(listener, app, std::future::pending()));
    base
}

/// One round of `load`, probed: the probes' p50 and p99.
async fn run(client: &reqwest::Client, base: &str, load: Load, serial: &AtomicUsize) -> (Duration, Duration) {
    let done = Arc::new(AtomicBool::new(false));
    let prober = {
        let (client, url, done) = (client.clone(), format!("{base}/healthz"), done.clone());
        tokio::spawn(async move {
            let mut took = Vec::new();
            while !done.load(Ordering::SeqCst) {
                let started = Instant::now();
                let r = client.get(&url).send().await.unwrap();
                assert_eq!(r.status(), 200);
                took.push(started.elapsed());
                tokio::time::sleep(PROBE_EVERY).await;
            }
            took
        })
    };
    match load {
        // As long as a round of the others takes, roughly.
        Load::Idle => tokio::time::sleep(Duration::from_secs(2)).await,
        Load::Bounded | Load::OnTheWorkers => {
            let next = Arc::new(AtomicUsize::new(0));
            let clients = (0..AT_ONCE).map(|_| {
                let (client, base, next) = (client.clone(), base.to_owned(), next.clone());
                let first = serial.fetch_add(HASHES, Ordering::SeqCst);
                async move {
                    while next.fetch_add(1, Ordering::SeqCst) < HASHES {
                        let n = first + next.load(Ordering::SeqCst);
                        let r = match load {
                            Load::Bounded => {
                                let email = format!("bench{n}-{}@example.com", std::process::id());
                                let body =
                                    json!({ "name": "Bench", "email": email, "password": "correct horse battery" });
                                client.post(format!("{base}/api/users")).json(&body).send().await.unwrap()
                            }
                            _ => client
                                .post(format!("{base}/inline-hash"))
                                .body("correct horse battery")
                                .send()
                                .await
                                .unwrap(),
                        };
                        assert!(r.status().is_success() || r.status() == 409, "{}", r.status());
                    }
                }
            });
            futures_util::future::join_all(clients).await;
        }
    }
    done.store(true, Ordering::SeqCst);
    let mut took = prober.await.unwrap();
    took.sort();
    let at = |q: f64| took[((took.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}
