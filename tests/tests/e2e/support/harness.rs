//! Starting a generated service for one test.

use restgen::auth::Secrets;
use restgen::clock::Clock;
use restgen::rate::RateSettings;
use restgen::serve::{Service, Settings};
use restgen::store::Store;
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The HS256 secret services under test sign their tokens with.
pub const JWT_SECRET: &[u8] = b"e2e-test-secret-0123456789abcdef-0123456789";

/// How much the suites that are not about rate limits scale the schema's limits: enough
/// that they never meet one (`rate.rs` tests the schema's own).
const UNTHROTTLED: f64 = 1000.0;

/// A running service; stops when dropped.
pub struct Server {
    pub base: String,
    pub client: reqwest::Client,
    /// The service's database, for setting up what no endpoint creates.
    pub store: Store,
    /// What the service was started with (its rate limit clock among them).
    pub settings: Settings,
    /// Where the database is, for a second instance on it.
    url: String,
    _dir: std::sync::Arc<tempfile::TempDir>,
    task: tokio::task::JoinHandle<()>,
    /// Stops it as a signal stops a service: it finishes what it answers, then returns.
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The databases a test runs on.
#[derive(Clone, Copy, Debug)]
pub enum Db {
    Sqlite,
    Postgres,
}

/// Defines `$name::sqlite` and `$name::postgres`, each running `$name(server)` against
/// `$service` on that database. The PostgreSQL one skips, saying so, when
/// `RESTGEN_TEST_DATABASE_URL` is unset. With `settings = ...`, the service runs with
/// those (a manual clock at the schema's own rate limits, say). `postgres_only $name, ...`
/// defines `$name::postgres` alone, for what only PostgreSQL has (an unlogged table that
/// a crash empties, say), where a SQLite half would pass having tested nothing.
#[macro_export]
macro_rules! backends {
    (postgres_only $name:ident, $service:expr, settings = $settings:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $crate::backends!(@postgres $name, $service, $settings);
        }
    };
    ($name:ident, $service:expr) => {
        $crate::backends!($name, $service, $crate::support::harness::secrets());
    };
    ($name:ident, $service:expr, settings = $settings:expr) => {
        $crate::backends!(@settings $name, $service, $settings);
    };
    ($name:ident, $service:expr, $secrets:expr) => {
        $crate::backends!(@settings $name, $service, $crate::support::harness::unthrottled($secrets));
    };
    (@settings $name:ident, $service:expr, $settings:expr) => {
        mod $name {
            // `$service` and `$settings` are written in the test's module.
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test]
            async fn sqlite() {
                super::$name(
                    $crate::support::harness::start_with_settings($service, $crate::support::harness::Db::Sqlite, $settings)
                        .await
                        .expect("sqlite always runs"),
                )
                .await
            }

            $crate::backends!(@postgres $name, $service, $settings);
        }
    };
    (@postgres $name:ident, $service:expr, $settings:expr) => {
        #[tokio::test]
        async fn postgres() {
            match $crate::support::harness::start_with_settings($service, $crate::support::harness::Db::Postgres, $settings).await {
                Some(server) => super::$name(server).await,
                None => eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset"),
            }
        }
    };
}

/// Feeds that look at the log often, so a change another instance wrote reaches a
/// stream here within a test's patience.
pub fn quick_feed() -> restgen::feed::FeedSettings {
    restgen::feed::FeedSettings { poll: std::time::Duration::from_millis(50), ..Default::default() }
}

/// The keys services under test sign with.
pub fn secrets() -> Secrets {
    Secrets {
        jwt_secret: Some(JWT_SECRET.to_vec()),
        // One key for every instance of a test's service, as a deployment shares its secret.
        webhook_keys: vec![b"e2e-webhook-signing-key-0123456789".to_vec()],
        ..Secrets::default()
    }
}

/// `secrets`, with rate limits too wide to meet.
pub fn unthrottled(secrets: Secrets) -> Settings {
    Settings {
        secrets,
        rate: RateSettings { scale: UNTHROTTLED },
        clock: Clock::System,
        webhooks: loopback_webhooks(),
        feed: quick_feed(),
        metrics: None,
    }
}

/// Webhooks to receivers on this machine only (plain http, loopback, as
/// `<SERVICE>_WEBHOOK_ALLOW_HTTP` and `_ALLOW_LOOPBACK` admit them), looked for often.
pub fn loopback_webhooks() -> restgen::webhooks::WebhookSettings {
    restgen::webhooks::WebhookSettings {
        allow_http: true,
        allow_loopback: true,
        poll: std::time::Duration::from_millis(20),
        ..Default::default()
    }
}

/// The test's keys, the schema's rate limits scaled by `scale`, and a clock that moves
/// only when the test says (`server.settings.clock.advance`).
pub fn manual_clock(scale: f64) -> Settings {
    Settings {
        secrets: secrets(),
        rate: RateSettings { scale },
        clock: Clock::manual(),
        webhooks: loopback_webhooks(),
        feed: quick_feed(),
        metrics: None,
    }
}

/// The shop with every credential scheme the format has: Basic, and API keys in the query
/// string as well as the header. The shop's own schema leaves both out, as OWASP advises.
pub fn shop_with_every_scheme() -> Service {
    use restgen::spec::{ApiKeySpec, AuthSpec, Scheme};
    static AUTH: std::sync::LazyLock<AuthSpec> = std::sync::LazyLock::new(|| {
        let shop = shop::generated::resources::AUTH.expect("the shop has auth");
        AuthSpec {
            schemes: &[Scheme::Bearer, Scheme::ApiKey, Scheme::Basic],
            api_key: ApiKeySpec { header: shop.api_key.header, query: Some("api_key") },
            ..shop
        }
    });
    Service { auth: Some(&AUTH), ..shop::service() }
}

/// Starts `service` on `db` with these keys and limits too wide to meet; `None` for
/// PostgreSQL when no server is configured.
pub async fn start_with(service: Service, db: Db, secrets: Secrets) -> Option<Server> {
    start_with_settings(service, db, unthrottled(secrets)).await
}

/// Starts `service` on `db` with these settings; `None` for PostgreSQL when no server is
/// configured.
pub async fn start_with_settings(service: Service, db: Db, settings: Settings) -> Option<Server> {
    let dir = tempfile::tempdir().unwrap();
    let url = match db {
        Db::Postgres => fresh_schema(&std::env::var("RESTGEN_TEST_DATABASE_URL").ok()?, service.name).await,
        Db::Sqlite => format!("sqlite://{}", dir.path().join("test.db").display()),
    };
    Some(start_on(service, url, std::sync::Arc::new(dir), &settings).await)
}

/// `service` on the database at `url` (a PostgreSQL schema of its own, reached through a
/// relay, say), with the suite's keys and limits too wide to meet.
pub async fn start_on_url(service: Service, url: String) -> Server {
    let dir = tempfile::tempdir().unwrap();
    start_on(service, url, std::sync::Arc::new(dir), &unthrottled(secrets())).await
}

/// `service` on SQLite, its connections held to `http` (not the defaults).
pub async fn start_with_http(service: Service, http: restgen::serve::HttpLimits) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("test.db").display());
    start_on_with(service, url, std::sync::Arc::new(dir), &unthrottled(secrets()), http).await
}

/// `service` on the database at `url`, served as `restgen::serve` serves it.
async fn start_on(
    service: Service,
    url: String,
    dir: std::sync::Arc<tempfile::TempDir>,
    settings: &Settings,
) -> Server {
    start_on_with(service, url, dir, settings, restgen::serve::HttpLimits::default()).await
}

async fn start_on_with(
    service: Service,
    url: String,
    dir: std::sync::Arc<tempfile::TempDir>,
    settings: &Settings,
    http: restgen::serve::HttpLimits,
) -> Server {
    serve_at("127.0.0.1:0", service, url, dir, settings, http).await
}

/// `service` on the database at `url`, listening at `addr`.
async fn serve_at(
    addr: &str,
    service: Service,
    url: String,
    dir: std::sync::Arc<tempfile::TempDir>,
    settings: &Settings,
    http: restgen::serve::HttpLimits,
) -> Server {
    let store = Store::connect(&url).await.expect("database reachable");
    restgen::serve::migrate(&store, &service).await.expect("migrations apply");
    let app = restgen::serve::app(service, store.clone(), settings).expect("keys usable");
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let signal = async move {
            let _ = stopped.await;
        };
        restgen::serve::serve_with(listener, app, http, signal).await.unwrap();
    });
    let settings = settings.clone();
    Server {
        base: format!("http://{addr}"),
        client: reqwest::Client::new(),
        store,
        settings,
        url,
        _dir: dir,
        task,
        stop: Some(stop),
    }
}

/// A PostgreSQL schema of its own for one test, so tests never see each other's rows.
pub async fn fresh_schema(url: &str, service: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    static SWEPT: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    let schema = format!("t_{service}_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    let pool = sqlx::PgPool::connect(url).await.expect("RESTGEN_TEST_DATABASE_URL reachable");
    SWEPT.get_or_init(|| sweep_schemas(&pool)).await;
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA \"{schema}\""))).execute(&pool).await.unwrap();
    pool.close().await;
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

/// Drops the schemas that test and bench processes no longer running left behind: a test
/// keeps its schema (what a failed one leaves is there to look at), so without this every
/// run added a few hundred (thousands had piled up on a development machine, and
/// PostgreSQL took minutes to start). Every such schema (`t_...`, `bench_...`) names the
/// process that made it; one naming a process still running is kept.
async fn sweep_schemas(pool: &sqlx::PgPool) {
    let names: Vec<String> = sqlx::query_scalar(
        r"SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 't\_%' OR nspname LIKE 'bench\_%'",
    )
    .fetch_all(pool)
    .await
    .expect("schemas listed");
    let running = |name: &str| {
        name.split('_')
            .filter_map(|part| part.parse::<u32>().ok())
            .any(|pid| pid == std::process::id() || std::path::Path::new(&format!("/proc/{pid}")).exists())
    };
    let stale: Vec<String> = names.into_iter().filter(|n| !running(n)).map(|n| format!("\"{n}\"")).collect();
    // A few at a time: one statement takes a lock on every object of every schema it drops.
    // Tidying only: a batch another process drops at the same moment fails no test.
    for batch in stale.chunks(20) {
        let drop = format!("DROP SCHEMA IF EXISTS {} CASCADE", batch.join(", "));
        if let Err(e) = sqlx::query(sqlx::AssertSqlSafe(drop)).execute(pool).await {
            eprintln!("stale test schemas left for the next run: {e}");
        }
    }
}

#[tokio::test]
async fn schemas_of_processes_no_longer_running_are_swept_and_running_ones_kept() {
    let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
        eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
        return;
    };
    let pool = sqlx::PgPool::connect(&url).await.expect("RESTGEN_TEST_DATABASE_URL reachable");
    // No process has an id as large as the largest the kernel gives.
    let max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse().unwrap();
    let mine = std::process::id();
    let stale = [format!("t_sweep_{max}_0"), format!("bench_{max}")];
    let running = [format!("t_sweep_{mine}_0"), "t_sweep_1_0".to_owned()];
    for schema in stale.iter().chain(&running) {
        let create =
            format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\"; CREATE TABLE IF NOT EXISTS \"{schema}\".kept (a int)");
        sqlx::raw_sql(sqlx::AssertSqlSafe(create)).execute(&pool).await.unwrap();
    }
    sweep_schemas(&pool).await;
    let left: Vec<String> =
        sqlx::query_scalar("SELECT nspname::text FROM pg_namespace WHERE nspname = ANY($1) ORDER BY nspname")
            .bind(stale.iter().chain(&running).cloned().collect::<Vec<_>>())
            .fetch_all(&pool)
            .await
            .unwrap();
    for schema in &running {
        let drop = format!("DROP SCHEMA \"{schema}\" CASCADE");
        sqlx::query(sqlx::AssertSqlSafe(drop)).execute(&pool).await.unwrap();
    }
    let mut expected = running.to_vec();
    expected.sort();
    assert_eq!(left, expected, "the stale schemas go, with their tables; those naming a running process stay");
}

/// A response, read whole.
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The problem+json field errors, as `field` names.
    pub fn error_fields(&self) -> Vec<String> {
        self.body["errors"]
            .as_array()
            .map(|a| a.iter().map(|e| e["field"].as_str().unwrap_or("").to_owned()).collect())
            .unwrap_or_default()
    }

    pub fn assert_problem(&self, status: u16) {
        assert_eq!(self.status, status, "{}", self.text);
        assert_eq!(self.header("content-type"), Some("application/problem+json"), "{}", self.text);
        assert_eq!(self.body["status"], status);
        assert!(self.body["title"].is_string() && self.body["detail"].is_string(), "{}", self.text);
    }
}

impl Server {
    /// Where its database is (for a process of its own on it).
    pub fn database_url(&self) -> &str {
        &self.url
    }

    /// Stops the instance as SIGTERM would, and waits until it has: it stops accepting,
    /// finishes what it answers, and ends the streams it serves.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let stopped = tokio::time::timeout(std::time::Duration::from_secs(30), &mut self.task).await;
        assert!(stopped.is_ok(), "the instance at {} stops within 30 s", self.base);
    }

    /// Stops the instance, then starts `service` again on its database at its address, as
    /// a restart of the process would: clients that knew it find it where it was.
    pub async fn restart(self, service: Service) -> Server {
        let (addr, url, dir, settings) = (
            self.base.trim_start_matches("http://").to_owned(),
            self.url.clone(),
            self._dir.clone(),
            self.settings.clone(),
        );
        self.stop().await;
        serve_at(&addr, service, url, dir, &settings, restgen::serve::HttpLimits::default()).await
    }

    /// A second instance of `service` on this server's database with the same settings,
    /// as a deployment of several instances runs.
    pub async fn twin(&self, service: Service) -> Server {
        start_on(service, self.url.clone(), self._dir.clone(), &self.settings).await
    }

    pub async fn send(&self, method: &str, path: &str, body: Option<Value>) -> Reply {
        let mut req = self.client.request(method.parse().unwrap(), format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b.to_string());
        }
        reply(req.send().await.unwrap()).await
    }

    /// A request with extra headers (credentials).
    pub async fn send_with(&self, method: &str, path: &str, body: Option<Value>, headers: &[(&str, &str)]) -> Reply {
        request(&self.client, &self.base, method, path, body, headers).await
    }

    pub async fn raw(&self, method: &str, path: &str, content_type: &str, body: Vec<u8>) -> Reply {
        let req = self
            .client
            .request(method.parse().unwrap(), format!("{}{path}", self.base))
            .header("content-type", content_type)
            .body(body);
        reply(req.send().await.unwrap()).await
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send("GET", path, None).await
    }

    /// `request`, bytes as they go on the wire, written whole on a connection of its own,
    /// then the answer as it came, read to the connection's end. Panics when the request
    /// cannot be written whole (the service cut it off).
    pub async fn exchange(&self, request: &[u8]) -> String {
        use restgen::__private::tokio::io::{AsyncReadExt, AsyncWriteExt};
        let addr = self.base.trim_start_matches("http://");
        let mut stream = restgen::__private::tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.write_all(request).await.expect("the whole request is taken, not cut off");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }

    /// A `POST` of `bytes` bytes of JSON-typed body written whole before the answer is
    /// read, as Python's `http.client` does ([`Server::exchange`]).
    pub async fn upload_whole(&self, path: &str, bytes: usize) -> String {
        let addr = self.base.trim_start_matches("http://");
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {bytes}\r\n\r\n"
        )
        .into_bytes();
        request.resize(request.len() + bytes, b'x');
        self.exchange(&request).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send("POST", path, Some(body)).await
    }
}

/// A request to the service at `base` (one in this process or another), read whole.
pub async fn request(
    client: &reqwest::Client,
    base: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> Reply {
    let mut req = client.request(method.parse().unwrap(), format!("{base}{path}"));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    if let Some(b) = body {
        req = req.header("content-type", "application/json").body(b.to_string());
    }
    reply(req.send().await.unwrap()).await
}

/// A request whose JSON body is `text` as it is (JSON `serde_json` would never write),
/// with `authorization`.
pub async fn request_raw(s: &Server, method: &str, path: &str, authorization: &str, text: String) -> Reply {
    let req = s
        .client
        .request(method.parse().unwrap(), format!("{}{path}", s.base))
        .header("authorization", authorization)
        .header("content-type", "application/json")
        .body(text);
    reply(req.send().await.unwrap()).await
}

async fn reply(r: reqwest::Response) -> Reply {
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let text = r.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    let mut reply = Reply { status, headers, body, text };
    take_its_request_id(&mut reply);
    reply
}

/// Every answer of every test carries its request id in `X-Request-Id`, and in its body
/// when it is a problem, so a caller can quote it and find its request in the log. Checked
/// here, then taken out of `body` (not `text`): two answers alike but for their requests
/// compare equal.
fn take_its_request_id(r: &mut Reply) {
    let id = r.header("x-request-id").unwrap_or_else(|| panic!("{} without X-Request-Id: {}", r.status, r.text));
    assert!(!id.is_empty() && id.len() <= restgen_model::bounds::MAX_REQUEST_ID, "{id:?}");
    let problem = r.header("content-type") == Some(restgen::wire::http::media::PROBLEM) && !r.text.is_empty();
    if problem {
        let quoted = r.body.as_object_mut().and_then(|body| body.remove("request_id"));
        let quoted = quoted.unwrap_or_else(|| panic!("a problem quotes its request's id: {}", r.text));
        // A replay is the first answer as it was given, naming the first request.
        if r.header(restgen::wire::http::IDEMPOTENT_REPLAYED.lowercase).is_none() {
            assert_eq!(quoted, r.header("x-request-id").unwrap(), "a problem quotes its request's id: {}", r.text);
        }
    }
}
