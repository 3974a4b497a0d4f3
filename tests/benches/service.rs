//! The generated fleet service against a hand-written axum + sqlx service answering the
//! same requests from the same SQLite file, measured in the same run over loopback:
//! throughput, p99 latency and peak RSS of each server process, and the ratio
//! generated / hand-written.
//!
//! Run: `cargo bench -p restgen-tests --bench service`

use restgen::__private::axum::{self, Router, extract::Path, extract::State, routing::get};
use serde_json::{Value, json};
use sqlx::sqlite::{SqlitePool, SqliteRow};
use sqlx::{Column, Row};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const REQUESTS: usize = 6000;
const CONCURRENCY: usize = 16;
const ROUNDS: usize = 5;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // One core each for the server and the load, so the two compete as little as they can
    // on a 2-core machine and the ratio reflects the servers' own cost.
    if let Some(i) = args.iter().position(|a| a == "--serve") {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        runtime.block_on(serve(&args[i + 1], &args[i + 2]));
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(compare());
}

/// A server in a child process, so its memory is its own.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn start(kind: &str, db: &str) -> Server {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--serve", kind, db])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.as_mut().unwrap()), &mut line).unwrap();
        Server { child, base: line.trim().to_owned() }
    }

    /// CPU time the server's threads have used so far, in nanoseconds, from each
    /// thread's `schedstat` (SQLite work runs on the driver's own threads).
    fn cpu_ns(&self) -> u64 {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.child.id())) else { return 0 };
        tasks
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
            .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .sum()
    }

    /// Peak resident memory so far, from /proc.
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn serve(kind: &str, db: &str) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("http://{}", listener.local_addr().unwrap());
    let url = format!("sqlite://{db}");
    let app = if kind == "generated" {
        let service = fleet::service();
        let store = restgen::store::Store::connect(&url).await.unwrap();
        store.migrate(service.migrations).await.unwrap();
        restgen::serve::app(service, store, &restgen::serve::Settings::default()).unwrap()
    } else {
        let pool = SqlitePool::connect(&url).await.unwrap();
        Router::new().route("/v0/trips", get(list)).route("/v0/trips/{id}", get(item)).with_state(pool)
    };
    axum::serve(listener, app).await.unwrap();
}

/// What a careful hand-written handler does: one query, rows to JSON.
async fn item(
    State(pool): State<SqlitePool>,
    Path(id): Path<i64>,
    headers: axum::http::HeaderMap,
) -> Result<axum::response::Response, axum::http::StatusCode> {
    let row = sqlx::query("SELECT * FROM \"trip\" WHERE \"id\" = ?").bind(id).fetch_optional(&pool).await;
    match row {
        Ok(Some(row)) => Ok(read(&trip_json(&row), &headers)),
        Ok(None) => Err(axum::http::StatusCode::NOT_FOUND),
        Err(_) => Err(axum::http::StatusCode::INTERNAL_SERVER_ERROR),
    }
}

/// The same read answer the generated service gives: the body with an `ETag` of its bytes
/// and `Cache-Control`, or 304 when `If-None-Match` names the tag.
fn read(body: &Value, request: &axum::http::HeaderMap) -> axum::response::Response {
    use axum::http::{HeaderValue, StatusCode, header};
    use base64::Engine;
    use sha2::Digest;
    let bytes = serde_json::to_vec(body).expect("JSON");
    let digest = sha2::Sha256::digest(&bytes);
    let tag = format!("\"{}\"", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..16]));
    let matched = request.get(header::IF_NONE_MATCH).is_some_and(|v| v.as_bytes() == tag.as_bytes());
    let mut response = if matched {
        axum::response::IntoResponse::into_response(StatusCode::NOT_MODIFIED)
    } else {
        let mut r = axum::response::IntoResponse::into_response(bytes);
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r
    };
    let headers = response.headers_mut();
    headers.insert(header::ETAG, HeaderValue::from_str(&tag).expect("base64url"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

async fn list(
    State(pool): State<SqlitePool>,
    headers: axum::http::HeaderMap,
) -> Result<axum::response::Response, axum::http::StatusCode> {
    let rows = sqlx::query("SELECT * FROM \"trip\" ORDER BY \"id\" ASC LIMIT 21")
        .fetch_all(&pool)
        .await
        .map_err(|_| axum::http::StatusCode::INTERNAL_SERVER_ERROR)?;
    let more = rows.len() > 20;
    let data: Vec<Value> = rows.iter().take(20).map(trip_json).collect();
    // The same opaque cursor a real API hands out: the last row's sort key, encoded.
    let cursor = more.then(|| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(json!({ "s": "", "v": [data.last().map(|d| d["id"].clone())] }).to_string())
    });
    // The same answer the generated service gives: the envelope plus a `Link` to the next page.
    let link = cursor.as_ref().map(|c| format!("</v0/trips?limit=20&cursor={c}>; rel=\"next\""));
    let mut response = read(&json!({ "data": data, "has_more": more, "next_cursor": cursor }), &headers);
    if let Some(v) = link.and_then(|l| axum::http::HeaderValue::from_str(&l).ok()) {
        response.headers_mut().insert(axum::http::header::LINK, v);
    }
    Ok(response)
}

fn trip_json(row: &SqliteRow) -> Value {
    let mut out = serde_json::Map::new();
    for c in row.columns() {
        let name = c.name();
        let v = match name {
            "id" | "vehicle_id" | "driver_id" => json!(row.get::<i64, _>(name)),
            _ => json!(row.get::<Option<String>, _>(name)),
        };
        out.insert(name.to_owned(), v);
    }
    Value::Object(out)
}

/// Both servers give `path` the same answer: body bytes and the headers a client acts on
/// (so also the same `ETag`). A comparison of unequal work would measure nothing.
async fn same_answers(db: &str, path: &str) {
    let mut answers = Vec::new();
    for kind in ["generated", "baseline"] {
        let server = Server::start(kind, db);
        let r = reqwest::get(format!("{}{path}", server.base)).await.unwrap();
        let headers: Vec<Option<String>> = ["content-type", "etag", "cache-control", "link"]
            .iter()
            .map(|h| r.headers().get(*h).map(|v| v.to_str().unwrap().to_owned()))
            .collect();
        answers.push((r.status(), headers, r.bytes().await.unwrap()));
    }
    assert_eq!(answers[0], answers[1], "{path}: the generated and hand-written answers differ");
}

/// One measured run against one server.
struct Run {
    rps: f64,
    p99: Duration,
    /// Server CPU time per request: the server's own cost, which the load generator
    /// sharing the machine does not disturb as it does wall-clock throughput.
    cpu_per_request: Duration,
    rss_kib: u64,
}

/// `REQUESTS` GETs of `path`, `CONCURRENCY` at once.
async fn load(server: &Server, path: &str) -> Run {
    let client = reqwest::Client::new();
    let url = format!("{}{path}", server.base);
    // Warm up connections and caches.
    for _ in 0..100 {
        assert!(client.get(&url).send().await.unwrap().status().is_success());
    }
    let cpu_before = server.cpu_ns();
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENCY {
        let (client, url) = (client.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(REQUESTS / CONCURRENCY);
            for _ in 0..REQUESTS / CONCURRENCY {
                let t = Instant::now();
                let r = client.get(&url).send().await.unwrap();
                assert!(r.status().is_success());
                r.bytes().await.unwrap();
                latencies.push(t.elapsed());
            }
            latencies
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let elapsed = start.elapsed();
    let cpu = server.cpu_ns().saturating_sub(cpu_before);
    all.sort();
    Run {
        rps: all.len() as f64 / elapsed.as_secs_f64(),
        p99: all[all.len() * 99 / 100],
        cpu_per_request: Duration::from_nanos(cpu / all.len() as u64),
        rss_kib: server.peak_rss_kib(),
    }
}

async fn compare() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bench.db").display().to_string();
    let seeded = Server::start("generated", &db);
    seed(&seeded.base).await;
    drop(seeded);
    println!(
        "{REQUESTS} requests per run, {CONCURRENCY} concurrent, {ROUNDS} alternating runs per server (medians); SQLite file, 500 trips"
    );
    println!("{:<28} {:>10} {:>10} {:>14} {:>12}", "case", "req/s", "p99", "CPU/request", "peak RSS");
    for (case, path) in [("GET item", "/v0/trips/250"), ("cursor list of 20", "/v0/trips?limit=20")] {
        same_answers(&db, path).await;
        // Alternate the two servers round by round so drift on the machine affects both
        // alike, and report medians: on two shared cores single runs vary by ±15%.
        let mut runs: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
        for _round in 0..ROUNDS {
            for (i, kind) in ["generated", "baseline"].iter().enumerate() {
                let server = Server::start(kind, &db);
                runs[i].push(load(&server, path).await);
            }
        }
        let median = |i: usize| {
            let mut rps: Vec<f64> = runs[i].iter().map(|r| r.rps).collect();
            let mut p99: Vec<Duration> = runs[i].iter().map(|r| r.p99).collect();
            let mut cpu: Vec<Duration> = runs[i].iter().map(|r| r.cpu_per_request).collect();
            rps.sort_by(f64::total_cmp);
            p99.sort();
            cpu.sort();
            let rss = runs[i].iter().map(|r| r.rss_kib).max().unwrap_or(0);
            (rps[rps.len() / 2], p99[p99.len() / 2], cpu[cpu.len() / 2], rss)
        };
        let results = [median(0), median(1)];
        for (i, kind) in ["generated", "hand-written"].iter().enumerate() {
            let (rps, p99, cpu, rss) = results[i];
            println!("{:<28} {rps:>10.0} {:>10.2?} {:>14.1?} {:>8} KiB", format!("{case}, {kind}"), p99, cpu, rss);
        }
        println!(
            "{:<28} throughput {:.2}, p99 {:.2}, requests per CPU-second {:.2} (generated / hand-written)",
            format!("{case}, ratio"),
            results[0].0 / results[1].0,
            results[0].1.as_secs_f64() / results[1].1.as_secs_f64(),
            results[1].2.as_secs_f64() / results[0].2.as_secs_f64(),
        );
    }
}

async fn seed(base: &str) {
    let c = reqwest::Client::new();
    let post = |path: &'static str, body: Value| {
        let c = c.clone();
        let url = format!("{base}{path}");
        async move { c.post(url).json(&body).send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let depot = post("/v0/depots", json!({ "name": "Bench" })).await;
    let driver = post("/v0/drivers", json!({ "name": "B", "email": "b@example.com", "depot_id": depot["id"] })).await;
    let vehicle = post("/v0/vehicles", json!({ "plate": "BENCH1", "kind": "van" })).await;
    for i in 0..500 {
        post(
            "/v0/trips",
            json!({ "vehicle_id": vehicle["id"], "driver_id": driver["id"], "starts_at": format!("2026-01-01T{:02}:{:02}:00Z", i / 60 % 24, i % 60), "note": "a note" }),
        )
        .await;
    }
}
