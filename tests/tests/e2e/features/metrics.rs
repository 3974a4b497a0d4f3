//! `/metrics`, as Prometheus scrapes it: the shop in a process of its own with
//! `SHOP_METRICS_BIND` set, sent a known sequence of requests, then scraped. The scrape
//! shows exactly those requests, by the schema's resource and operation and by status
//! class, passes Prometheus's own linter (`promtool check metrics`), and is never served on
//! the public port.

use crate::support::accounts::PASSWORD;
use crate::support::child::{Process, shop_command};
use crate::support::harness::{Reply, request, secrets};
use crate::support::receiver::Receiver;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::process::Stdio;

/// `restgen_http_requests_total`'s series: (resource, operation, status class) to count.
type Requests = BTreeMap<(String, String, String), u64>;

#[test]
fn a_scrape_counts_exactly_the_requests_sent_by_operation_and_status() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("metrics.db").display());
    let mut command = shop_command(&url);
    command.env("SHOP_METRICS_BIND", "127.0.0.1:0").env("RUST_LOG", "warn");
    // Deliveries to the test's receiver on loopback, over plain http.
    let secret = restgen::wire::signature::secret_of(&secrets().webhook_keys[0]);
    command
        .env("SHOP_WEBHOOK_ALLOW_HTTP", "1")
        .env("SHOP_WEBHOOK_ALLOW_LOOPBACK", "1")
        .env("SHOP_WEBHOOK_SECRET", secret);
    let mut child = Process(command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap());
    let mut lines = std::io::BufReader::new(child.0.stdout.take().unwrap()).lines().map_while(Result::ok);
    let mut public = None;
    let metrics = lines
        .by_ref()
        .find_map(|l| {
            if let Some(at) = l.split("listening on ").nth(1) {
                public = Some(at.to_owned());
            }
            l.strip_prefix("metrics: ").map(str::to_owned)
        })
        .expect("the shop says where its metrics are");
    let public = public.expect("the shop says where it listens before its metrics");

    let runtime = restgen::__private::tokio::runtime::Runtime::new().unwrap();
    let (expected, too_many, scrape) = runtime.block_on(async {
        // The receiver asks for no more deliveries: the subscription is disabled.
        let receiver = Receiver::start(&[410]).await;
        let client = reqwest::Client::new();
        let mut expected = Requests::new();
        let send = async |method: &str, path: &str, body: Option<serde_json::Value>, headers: &[(&str, &str)]| {
            let r: Reply = request(&client, &public, method, path, body, headers).await;
            (r.status, r.body)
        };
        let mut count = |resource: &str, operation: &str, status: u16| {
            let key = (resource.to_owned(), operation.to_owned(), format!("{}xx", status / 100));
            *expected.entry(key).or_default() += 1;
        };
        for _ in 0..2 {
            let (status, _) = send("GET", "/healthz", None, &[]).await;
            count("", "healthz", status);
        }
        let ann = json!({ "name": "Ann", "email": "ann@example.com", "password": PASSWORD });
        let (status, _) = send("POST", "/api/users", Some(ann), &[]).await;
        assert_eq!(status, 201);
        count("user", "create", status);
        let (status, body) =
            send("POST", "/api/auth/login", Some(json!({ "email": "ann@example.com", "password": PASSWORD })), &[])
                .await;
        count("", "login", status);
        let bearer = format!("Bearer {}", body["access_token"].as_str().unwrap());
        let signed = [("authorization", bearer.as_str())];
        let subscription = json!({ "url": receiver.url, "events": ["order.created"] });
        let (status, _) = send("POST", "/api/webhooks", Some(subscription), &signed).await;
        assert_eq!(status, 201);
        count("", "create_webhook", status);
        let (status, _) = send("GET", "/api/orders", None, &signed).await;
        assert_eq!(status, 200);
        count("order", "list", status);
        let keyed = [("authorization", bearer.as_str()), ("idempotency-key", "metrics-1")];
        for _ in 0..2 {
            let (status, _) = send("POST", "/api/orders", Some(json!({ "total_cents": 5 })), &keyed).await;
            assert_eq!(status, 201);
            count("order", "create", status);
        }
        let (status, _) = send("GET", "/api/orders/00000000-0000-0000-0000-000000000000", None, &signed).await;
        assert_eq!(status, 404);
        count("order", "get", status);
        // No operation answers these: no such route, the metrics asked of the public port.
        for path in ["/api/nothing", "/metrics"] {
            let (status, _) = send("GET", path, None, &[]).await;
            assert_eq!(status, 404, "{path}");
            count("", "", status);
        }
        // Anonymous reads of orders: the list refuses them (401), and they count against
        // the orders' own budget (30 a minute) until it is spent, when the rate limit
        // refuses the next before any operation runs.
        let mut too_many = 0;
        for _ in 0..200 {
            let (status, _) = send("GET", "/api/orders", None, &[]).await;
            if status == 429 {
                count("", "", status);
                too_many += 1;
                break;
            }
            assert_eq!(status, 401);
            count("order", "list", status);
        }
        assert_eq!(too_many, 1, "the orders' budget is spent within 200 requests");
        // The one order created is delivered once, and refused: scraped until the worker
        // has recorded it (it runs beside the requests) and a scrape has read the outbox
        // since.
        let settled = [
            ("restgen_webhook_deliveries_total{outcome=\"failed\"}", 1),
            ("restgen_webhook_subscriptions_disabled", 1),
            ("restgen_webhook_outbox_lag_seconds", 0),
        ];
        let give_up = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let scrape = client.get(&metrics).send().await.unwrap();
            assert_eq!(scrape.status(), 200);
            assert_eq!(scrape.headers()["content-type"], "text/plain; version=0.0.4");
            let text = scrape.text().await.unwrap();
            let done = settled.iter().all(|(series, n)| value(&text, series) == Some(*n));
            if done || std::time::Instant::now() > give_up {
                assert_eq!(receiver.seen().len(), 1);
                break (expected, too_many, text);
            }
            receiver.wait_for(1).await;
        }
    });

    assert_eq!(requests(&scrape), expected, "{scrape}");
    assert_eq!(value(&scrape, "restgen_rate_limit_refusals_total{policy=\"order\"}"), Some(too_many));
    assert_eq!(value(&scrape, "restgen_idempotent_replays_total{operation=\"create\",resource=\"order\"}"), Some(1));
    assert_eq!(value(&scrape, "restgen_http_requests_in_flight"), Some(0));
    let listed = value(&scrape, "restgen_http_request_duration_seconds_count{operation=\"list\",resource=\"order\"}");
    let lists = expected.iter().filter(|((r, o, _), _)| r == "order" && o == "list").map(|(_, n)| n).sum();
    assert_eq!(listed, Some(lists), "every answer of the list, whatever its status, is timed");
    assert!(value(&scrape, "restgen_db_pool_max_connections").is_some_and(|n| n > 0), "{scrape}");
    assert_eq!(value(&scrape, "restgen_webhook_attempts_total{outcome=\"4xx\"}"), Some(1), "{scrape}");
    assert_eq!(value(&scrape, "restgen_webhook_deliveries_total{outcome=\"failed\"}"), Some(1));
    assert_eq!(value(&scrape, "restgen_webhook_subscriptions_disabled_total"), Some(1));
    assert_eq!(value(&scrape, "restgen_webhook_subscriptions_disabled"), Some(1));
    assert_eq!(value(&scrape, "restgen_webhook_outbox_lag_seconds"), Some(0), "nothing waits");
    // A fresh database: every migration of the shop applied at start.
    let migrations = u64::try_from(shop::service().migrations.len()).unwrap();
    assert_eq!(value(&scrape, "restgen_migrations_applied_total"), Some(migrations), "{scrape}");
    let taken = value(&scrape, "restgen_db_pool_acquires_total").unwrap();
    // At least one each for the register, login, subscription, list, two creates and get.
    assert!(taken >= 7, "{taken} takes of a connection");
    let waited =
        scrape.lines().find_map(|l| l.strip_prefix("restgen_db_pool_wait_seconds_total ")?.parse::<f64>().ok());
    assert!(waited.is_some_and(|s| s >= 0.0), "{scrape}");
    for reason in ["broken", "lifetime", "idle"] {
        let closed = format!("restgen_db_pool_connections_closed_total{{reason=\"{reason}\"}}");
        assert_eq!(value(&scrape, &closed), Some(0), "{scrape}");
    }
    lint(&scrape);
    child.kill();
}

/// `restgen_http_requests_total`'s series in `scrape`.
fn requests(scrape: &str) -> Requests {
    let mut out = Requests::new();
    for line in scrape.lines().filter(|l| l.starts_with("restgen_http_requests_total{")) {
        let (labels, n) = line.rsplit_once(' ').unwrap();
        let label = |name: &str| {
            let start = labels.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            labels[start..][..labels[start..].find('"').unwrap()].to_owned()
        };
        out.insert((label("resource"), label("operation"), label("status")), n.parse().unwrap());
    }
    out
}

/// The value of the series written exactly `series` (labels in the order the encoder
/// writes them: by name).
fn value(scrape: &str, series: &str) -> Option<u64> {
    scrape.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// `promtool check metrics` on `scrape`: Prometheus's own reading of the text format and
/// its naming rules. CI installs it (Debian's `prometheus`); elsewhere the check is skipped,
/// saying so.
fn lint(scrape: &str) {
    use std::io::Write;
    let spawned = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut promtool = match spawned {
        Ok(child) => child,
        Err(_) if std::env::var_os("CI").is_none() => {
            eprintln!("skipped: promtool is not installed (CI installs Debian's `prometheus`)");
            return;
        }
        Err(e) => panic!("promtool: {e}"),
    };
    promtool.stdin.take().unwrap().write_all(scrape.as_bytes()).unwrap();
    let out = promtool.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "promtool check metrics: {said}\n{scrape}");
}
