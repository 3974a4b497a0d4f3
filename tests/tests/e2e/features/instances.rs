//! Three instances of the shop on one PostgreSQL, each a process of its own (no memory
//! shared), behaving as one service: started together they migrate once; a rate budget
//! holds across them; an Idempotency-Key retried on another instance replays the first
//! answer; a write on one is read on the others at once; a request in flight when an
//! instance is stopped completes.

use crate::support::accounts::PASSWORD;
use crate::support::child::{Process, shop_command};
use crate::support::harness::{Reply, request};
use serde_json::{Value, json};
use std::io::BufRead;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long an instance may take to say something it must say (start, stop).
const PATIENCE: Duration = Duration::from_secs(60);

/// One instance: its process, where it listens, and the lines it writes.
struct Instance {
    process: Process,
    base: String,
    lines: mpsc::Receiver<String>,
}

impl Instance {
    /// Waits for a line of the instance's log containing `text`.
    fn wait_for(&self, text: &str) -> String {
        loop {
            match self.lines.recv_timeout(PATIENCE) {
                Ok(line) if line.contains(text) => return line,
                Ok(_) => {}
                Err(e) => panic!("the instance at {} never wrote `{text}`: {e}", self.base),
            }
        }
    }
}

/// Starts `n` instances at once on the database at `url` (each with these variables
/// set) and waits until every one listens.
fn start(n: usize, url: &str, vars: &[(&str, &str)]) -> Vec<Instance> {
    let starting: Vec<(Process, mpsc::Receiver<String>)> = (0..n)
        .map(|_| {
            let mut command = shop_command(url);
            command.envs(vars.iter().copied()).stdout(Stdio::piped()).stderr(Stdio::inherit());
            let mut process = Process(command.spawn().unwrap());
            let (send, lines) = mpsc::channel();
            let out = process.0.stdout.take().unwrap();
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                    if send.send(line).is_err() {
                        break;
                    }
                }
            });
            (process, lines)
        })
        .collect();
    starting
        .into_iter()
        .map(|(process, lines)| {
            let mut instance = Instance { process, base: String::new(), lines };
            let line = instance.wait_for("listening on ");
            instance.base = line[line.find("http://").unwrap()..].trim().to_owned();
            instance
        })
        .collect()
}

/// A fresh PostgreSQL schema, or `None` (saying so) when no server is configured.
async fn database() -> Option<String> {
    match std::env::var("RESTGEN_TEST_DATABASE_URL") {
        Ok(url) => Some(crate::support::harness::fresh_schema(&url, "instances").await),
        Err(_) => {
            eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
            None
        }
    }
}

/// A request to `base`, read whole.
async fn send(base: &str, method: &str, path: &str, headers: &[(&str, &str)], body: Option<&Value>) -> Reply {
    request(&reqwest::Client::new(), base, method, path, body.cloned(), headers).await
}

/// Registers `name` on one instance and signs in on another: the bearer header.
async fn sign_up(first: &Instance, second: &Instance, name: &str) -> String {
    let email = format!("{name}@example.com");
    let user = json!({ "name": name, "email": email, "password": PASSWORD });
    assert_eq!(send(&first.base, "POST", "/api/users", &[], Some(&user)).await.status, 201);
    let login = json!({ "email": email, "password": PASSWORD });
    let r = send(&second.base, "POST", "/api/auth/login", &[], Some(&login)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    format!("Bearer {}", r.body["access_token"].as_str().unwrap())
}

#[tokio::test]
async fn three_instances_started_together_migrate_once() {
    let Some(url) = database().await else { return };
    let instances = start(3, &url, &[]);
    for i in &instances {
        assert_eq!(send(&i.base, "GET", "/readyz", &[], None).await.status, 200, "{}", i.base);
    }
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let applied: Vec<(i64, bool)> = sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&pool)
        .await
        .unwrap();
    let expected: Vec<(i64, bool)> =
        shop::generated::migrations::MIGRATIONS.iter().map(|m| (m.version, true)).collect();
    assert_eq!(applied, expected, "each migration applied once");
    pool.close().await;
}

#[tokio::test]
async fn a_rate_budget_holds_across_instances() {
    let Some(url) = database().await else { return };
    // A tenth of the schema's budget: 6 requests, one more every 10 seconds.
    let instances = start(3, &url, &[("SHOP_RATE_LIMIT_SCALE", "0.1")]);
    let ann = sign_up(&instances[0], &instances[1], "ann").await;
    let auth = [("authorization", ann.as_str())];
    // Round the instances: each answer counts down the one budget.
    let mut left = Vec::new();
    for n in 0..6 {
        let r = send(&instances[n % 3].base, "GET", "/api/customers", &auth, None).await;
        assert_eq!(r.status, 200, "request {n}: {}", r.body);
        left.push(r.header("ratelimit").unwrap().split(";r=").nth(1).unwrap().split(';').next().unwrap().to_owned());
    }
    assert_eq!(left, ["5", "4", "3", "2", "1", "0"], "one budget, counted by every instance");
    for i in &instances {
        let r = send(&i.base, "GET", "/api/customers", &auth, None).await;
        assert_eq!(r.status, 429, "{}: {}", i.base, r.body);
        assert!(r.header("retry-after").is_some());
    }
}

#[tokio::test]
async fn an_idempotency_key_retried_on_another_instance_replays_the_first_answer() {
    let Some(url) = database().await else { return };
    let instances = start(3, &url, &[]);
    let ann = sign_up(&instances[0], &instances[1], "ann").await;
    let order = json!({ "total_cents": 1250 });
    let headers = [("authorization", ann.as_str()), ("idempotency-key", "order-1")];
    let first = send(&instances[0].base, "POST", "/api/orders", &headers, Some(&order)).await;
    assert_eq!(first.status, 201, "{}", first.body);
    assert!(first.header("idempotent-replayed").is_none());
    for retry in &instances[1..] {
        let again = send(&retry.base, "POST", "/api/orders", &headers, Some(&order)).await;
        assert_eq!((again.status, again.header("idempotent-replayed")), (201, Some("true")), "{}", retry.base);
        assert_eq!(again.body, first.body, "the first answer, not a second order");
        assert_eq!(again.header("location"), first.header("location"));
    }
    let list = send(&instances[2].base, "GET", "/api/orders", &[("authorization", ann.as_str())], None).await;
    assert_eq!(list.body["data"].as_array().unwrap().len(), 1, "one order: {}", list.body);
    // The same key with another body is a conflict wherever it arrives.
    let other = json!({ "total_cents": 99 });
    let clash = send(&instances[1].base, "POST", "/api/orders", &headers, Some(&other)).await;
    assert_eq!(clash.status, 422, "{}", clash.body);
}

#[tokio::test]
async fn a_write_on_one_instance_is_read_on_the_others_at_once() {
    let Some(url) = database().await else { return };
    let instances = start(3, &url, &[]);
    let ann = sign_up(&instances[0], &instances[1], "ann").await;
    let auth = [("authorization", ann.as_str())];
    let created = send(&instances[0].base, "POST", "/api/customers", &auth, Some(&json!({ "name": "Acme" }))).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let item = format!("/api/customers/{}", created.body["id"].as_str().unwrap());
    let seen = send(&instances[1].base, "GET", &item, &auth, None).await;
    assert_eq!((seen.status, &seen.body["name"]), (200, &json!("Acme")));
    let tag = seen.header("etag").unwrap().to_owned();

    for (n, writer) in instances.iter().enumerate() {
        let name = format!("Acme {n}");
        let patched = send(&writer.base, "PATCH", &item, &auth, Some(&json!({ "name": name }))).await;
        assert_eq!(patched.status, 200, "{}", patched.body);
        for reader in &instances {
            let r = send(&reader.base, "GET", &item, &auth, None).await;
            assert_eq!(r.body["name"], json!(name), "{} reads what {} wrote", reader.base, writer.base);
            // A tag from before the write no longer matches anywhere.
            let fresh = send(&reader.base, "GET", &item, &[auth[0], ("if-none-match", &tag)], None).await;
            assert_eq!(fresh.status, 200);
            assert_ne!(fresh.header("etag"), Some(tag.as_str()));
        }
    }
}

#[tokio::test]
async fn a_request_in_flight_when_an_instance_stops_completes() {
    let Some(url) = database().await else { return };
    // The stopping instance logs each request as it starts, so the test knows it is in flight.
    let mut instances = start(2, &url, &[("RUST_LOG", "info,tower_http=debug")]);
    let ann = sign_up(&instances[0], &instances[1], "ann").await;
    let body = json!({ "total_cents": 4200, "note": "sent across a stop" }).to_string();
    let (head, tail) = body.split_at(body.len() / 2);
    let address = instances[0].base.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let request = format!(
        "POST /api/orders HTTP/1.1\r\nhost: {address}\r\nauthorization: {ann}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{head}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    // Drain what the instance logged while the account was made, then see this request start.
    instances[0].wait_for("uri=/api/orders");
    instances[0].process.terminate();
    instances[0].wait_for("shutting down");

    // Stopping: no new connection is taken, but the one in flight is served to the end.
    assert!(reqwest::get(format!("{}/healthz", instances[0].base)).await.is_err(), "no new requests");
    stream.write_all(tail.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    let status = instances[0].process.0.wait().unwrap();
    assert!(status.success(), "a graceful stop exits 0: {status}");

    let list = send(&instances[1].base, "GET", "/api/orders", &[("authorization", ann.as_str())], None).await;
    let notes: Vec<&Value> = list.body["data"].as_array().unwrap().iter().map(|o| &o["note"]).collect();
    assert_eq!(notes, [&json!("sent across a stop")], "the other instance reads the order");
}
