//! The serving layer on its own: panics, time limits, unknown routes and methods, probes,
//! graceful shutdown.

use axum::Router;
use axum::routing::get;
use restgen::serve::{Service, Settings, app, serve_until};
use restgen::store::Store;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

async fn store(dir: &tempfile::TempDir) -> Store {
    Store::connect(&format!("sqlite://{}", dir.path().join("t.db").display())).await.unwrap()
}

fn service(routes: Router<Store>) -> Service {
    Service {
        auth: None,
        name: "t",
        base_path: "/api",
        routes,
        migrations: &[],
        model: None,
        max_body_bytes: 1024,
        request_timeout: Duration::from_secs(30),
        sample_path: "/api",
        openapi: None,
        cors: None,
        max_in_flight: None,
        resources: &[],
        rate_limit: None,
        trusted_proxies: &[],
        proxy_header: restgen::spec::ProxyHeader::DEFAULT,
        versioning: None,
        webhooks: None,
        openapi_versions: &[],
        openapi_3_0: None,
        openapi_3_0_versions: &[],
        docs: false,
    }
}

fn boom() -> &'static str {
    panic!("secret internals: password=hunter2")
}

async fn listen() -> (tokio::net::TcpListener, String) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    (l, url)
}

/// `service` on `store`, served until the test ends; its URL.
async fn serving(service: Service, store: Store) -> String {
    let (listener, url) = listen().await;
    let app = app(service, store, &Settings::default()).unwrap();
    tokio::spawn(serve_until(listener, app, std::future::pending()));
    url
}

#[tokio::test]
async fn a_panicking_handler_answers_500_without_internals_and_the_service_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let routes =
        Router::new().route("/api/boom", get(|| async { boom() })).route("/api/fine", get(|| async { "fine" }));
    let url = serving(service(routes), store(&dir).await).await;
    let boom = reqwest::get(format!("{url}/api/boom")).await.unwrap();
    assert_eq!(boom.status(), 500);
    assert_eq!(boom.headers()["content-type"], "application/problem+json");
    let body = boom.text().await.unwrap();
    assert!(!body.contains("hunter2") && !body.contains("secret"), "{body}");
    let fine = reqwest::get(format!("{url}/api/fine")).await.unwrap();
    assert_eq!(fine.status(), 200);
    assert_eq!(fine.text().await.unwrap(), "fine");
}

#[tokio::test]
async fn a_request_past_its_time_is_stopped_with_a_problem_503_and_the_service_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let dropped = Arc::new(Notify::new());
    let on_drop = dropped.clone();
    let routes = Router::new()
        .route(
            "/api/stuck",
            get(move || {
                // Told when the stopped request's handler is dropped, not merely abandoned.
                let guard = scopeguard(on_drop.clone());
                async move {
                    let _guard = guard;
                    std::future::pending::<&'static str>().await
                }
            }),
        )
        .route("/api/fine", get(|| async { "fine" }));
    let mut service = service(routes);
    service.request_timeout = Duration::from_millis(200);
    let url = serving(service, store(&dir).await).await;
    let stuck = reqwest::get(format!("{url}/api/stuck")).await.unwrap();
    assert_eq!(stuck.status(), 503);
    assert_eq!(stuck.headers()["content-type"], "application/problem+json");
    let body: serde_json::Value = stuck.json().await.unwrap();
    assert_eq!(body["detail"], "the request took too long and was stopped");
    dropped.notified().await;
    let fine = reqwest::get(format!("{url}/api/fine")).await.unwrap();
    assert_eq!(fine.status(), 200);
}

/// Notifies `n` when dropped.
fn scopeguard(n: Arc<Notify>) -> impl Send + 'static {
    struct Guard(Arc<Notify>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.notify_one();
        }
    }
    Guard(n)
}

#[tokio::test]
async fn a_method_a_route_lacks_is_a_problem_405_naming_those_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let routes = Router::new().route("/api/fine", get(|| async { "fine" }));
    let url = serving(service(routes), store(&dir).await).await;
    let refused = reqwest::Client::new().delete(format!("{url}/api/fine")).send().await.unwrap();
    assert_eq!(refused.status(), 405);
    assert_eq!(refused.headers()["allow"], "GET,HEAD");
    assert_eq!(refused.headers()["content-type"], "application/problem+json");
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["detail"], "this method is not allowed here; see the Allow header");
}

#[tokio::test]
async fn unknown_routes_are_problem_404s() {
    let dir = tempfile::tempdir().unwrap();
    let url = serving(service(Router::new()), store(&dir).await).await;
    let missing = reqwest::get(format!("{url}/api/nothing")).await.unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(missing.headers()["content-type"], "application/problem+json");
}

#[tokio::test]
async fn liveness_does_not_ask_the_database_and_readiness_does() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let url = serving(service(Router::new()), store.clone()).await;
    let probe = |path: &'static str| {
        let url = format!("{url}{path}");
        async move {
            let r = reqwest::get(url).await.unwrap();
            let status = r.status().as_u16();
            let kind = r.headers()["content-type"].to_str().unwrap().to_owned();
            (status, kind, r.json::<serde_json::Value>().await.unwrap())
        }
    };
    let (status, _, body) = probe("/healthz").await;
    assert_eq!((status, body), (200, serde_json::json!({ "status": "ok" })));
    let (status, _, body) = probe("/readyz").await;
    assert_eq!((status, body), (200, serde_json::json!({ "status": "ready" })));

    // The database gone: the process still lives, but is not ready, once the last
    // answer (at most a second old) has aged.
    store.close().await;
    let (status, _, body) = probe("/healthz").await;
    assert_eq!((status, body), (200, serde_json::json!({ "status": "ok" })));
    let started = std::time::Instant::now();
    let (kind, body) = loop {
        let (status, kind, body) = probe("/readyz").await;
        if status == 503 {
            break (kind, body);
        }
        assert_eq!(status, 200);
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "still ready long after the database went");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(kind.as_str(), "application/problem+json");
    assert_eq!(body["detail"], "the database does not answer");
}

#[tokio::test]
async fn probes_answer_get_and_head_and_refuse_other_methods() {
    let dir = tempfile::tempdir().unwrap();
    let url = serving(service(Router::new()), store(&dir).await).await;
    let client = reqwest::Client::new();
    for path in ["/healthz", "/readyz"] {
        let head = client.head(format!("{url}{path}")).send().await.unwrap();
        assert_eq!(head.status(), 200, "{path}");
        assert_eq!(head.text().await.unwrap(), "", "{path}: HEAD has no body");
        let post = client.post(format!("{url}{path}")).send().await.unwrap();
        assert_eq!(post.status(), 405, "{path}");
        assert_eq!(post.headers()["allow"], "GET,HEAD");
        assert_eq!(post.headers()["content-type"], "application/problem+json");
        // Only the exact paths: anything below them is routed like any other path.
        let below = client.get(format!("{url}{path}/more")).send().await.unwrap();
        assert_eq!(below.status(), 404, "{path}/more");
    }
}

#[tokio::test]
async fn shutdown_finishes_requests_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let entered = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let (e, r) = (entered.clone(), release.clone());
    let routes = Router::new().route(
        "/api/slow",
        get(move || {
            let (e, r) = (e.clone(), r.clone());
            async move {
                e.notify_one();
                r.notified().await;
                "finished"
            }
        }),
    );
    let (listener, url) = listen().await;
    let app = app(service(routes), store(&dir).await, &Settings::default()).unwrap();
    let stop = Arc::new(Notify::new());
    let stop_signal = stop.clone();
    let server = tokio::spawn(serve_until(listener, app, async move { stop_signal.notified().await }));
    let request =
        tokio::spawn(async move { reqwest::get(format!("{url}/api/slow")).await.unwrap().text().await.unwrap() });
    entered.notified().await;
    stop.notify_one();
    // The server is draining: it must not return while the request is still running.
    tokio::task::yield_now().await;
    assert!(!server.is_finished());
    release.notify_one();
    assert_eq!(request.await.unwrap(), "finished");
    server.await.unwrap().unwrap();
}

#[test]
fn database_options_come_from_the_environment_and_a_bad_one_is_named() {
    use restgen::store::{StoreOptions, Synchronous};
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    };
    assert_eq!(StoreOptions::from_lookup(env(&[])).unwrap(), StoreOptions::default());
    assert_eq!(StoreOptions::default().synchronous, Synchronous::Normal);
    let set = StoreOptions::from_lookup(env(&[("DATABASE_MAX_CONNECTIONS", "3"), ("SQLITE_SYNCHRONOUS", "full")]));
    assert_eq!(
        set.unwrap(),
        StoreOptions { max_connections: Some(3), synchronous: Synchronous::Full, ..StoreOptions::default() }
    );
    let set = StoreOptions::from_lookup(env(&[("DATABASE_POOL_TIMEOUT", "0.25")])).unwrap();
    assert_eq!(set.pool_timeout, std::time::Duration::from_millis(250));
    for bad in ["0", "-1", "soon", "NaN", "inf", "1e30"] {
        let pairs: &'static [(&'static str, &'static str)] = Box::leak(Box::new([("DATABASE_POOL_TIMEOUT", bad)]));
        let err = StoreOptions::from_lookup(env(pairs)).unwrap_err();
        assert!(err.contains(&format!("DATABASE_POOL_TIMEOUT must be a positive number, not `{bad}`")), "{err}");
    }
    let err = StoreOptions::from_lookup(env(&[("DATABASE_MAX_CONNECTIONS", "0")])).unwrap_err();
    assert!(err.contains("DATABASE_MAX_CONNECTIONS must be a positive number, not `0`"), "{err}");
    let err = StoreOptions::from_lookup(env(&[("SQLITE_SYNCHRONOUS", "off")])).unwrap_err();
    assert!(err.contains("SQLITE_SYNCHRONOUS must be `normal` or `full`, not `off`"), "{err}");
    let set = StoreOptions::from_lookup(env(&[("DATABASE_MIN_CONNECTIONS", " 2 ")])).unwrap();
    assert_eq!(set, StoreOptions { min_connections: 2, ..StoreOptions::default() });
    for bad in ["-1", "two", "1.5"] {
        let pairs: &'static [(&'static str, &'static str)] = Box::leak(Box::new([("DATABASE_MIN_CONNECTIONS", bad)]));
        let err = StoreOptions::from_lookup(env(pairs)).unwrap_err();
        assert!(err.contains(&format!("DATABASE_MIN_CONNECTIONS must be a whole number, not `{bad}`")), "{err}");
    }
    let pairs = [("DATABASE_IDLE_TIMEOUT", "30"), ("DATABASE_MAX_LIFETIME", "0.5")];
    let set = StoreOptions::from_lookup(env(Box::leak(Box::new(pairs)))).unwrap();
    assert_eq!((set.idle_timeout, set.max_lifetime), (Duration::from_secs(30), Duration::from_millis(500)));
    for name in ["DATABASE_IDLE_TIMEOUT", "DATABASE_MAX_LIFETIME"] {
        for bad in ["0", "-3", "never"] {
            let pairs: &'static [(&'static str, &'static str)] = Box::leak(Box::new([(name, bad)]));
            let err = StoreOptions::from_lookup(env(pairs)).unwrap_err();
            assert!(err.contains(&format!("{name} must be a positive number, not `{bad}`")), "{err}");
        }
    }
}

/// A connection older than `DATABASE_MAX_LIFETIME` is closed as it is given back: the next
/// query runs on a new one, which has none of the old one's temporary tables, where with the
/// default lifetime the one connection of the pool serves both.
#[tokio::test]
async fn a_connection_past_its_lifetime_is_not_used_again() {
    use restgen::store::StoreOptions;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    for (max_lifetime, kept) in [(StoreOptions::default().max_lifetime, 1), (Duration::from_nanos(1), 0)] {
        let options = StoreOptions { max_connections: Some(1), max_lifetime, ..StoreOptions::default() };
        let store = Store::connect_with(&url, options).await.unwrap();
        let pool = store.sqlite().expect("a SQLite store");
        sqlx::query("CREATE TEMP TABLE mark (x)").execute(&mut *pool.acquire().await.unwrap()).await.unwrap();
        let (seen,): (i64,) = sqlx::query_as("SELECT count(*) FROM sqlite_temp_master WHERE name = 'mark'")
            .fetch_one(&mut *pool.acquire().await.unwrap())
            .await
            .unwrap();
        assert_eq!(seen, kept, "lifetime {max_lifetime:?}");
        store.close().await;
    }
}

/// The same on PostgreSQL, where the server tells one connection from another.
#[tokio::test]
async fn a_postgres_connection_past_its_lifetime_is_not_used_again() {
    use restgen::store::StoreOptions;
    let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
        eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
        return;
    };
    for (max_lifetime, same) in [(StoreOptions::default().max_lifetime, true), (Duration::from_nanos(1), false)] {
        let options = StoreOptions { max_connections: Some(1), max_lifetime, ..StoreOptions::default() };
        let store = Store::connect_with(&url, options).await.unwrap();
        let pool = store.postgres().expect("a PostgreSQL store");
        let backend = || async {
            let mut connection = pool.acquire().await.unwrap();
            let (pid,) =
                sqlx::query_as::<_, (i32,)>("SELECT pg_backend_pid()").fetch_one(&mut *connection).await.unwrap();
            connection.settle();
            pid
        };
        let (first, second) = (backend().await, backend().await);
        assert_eq!(first == second, same, "lifetime {max_lifetime:?}: backends {first} and {second}");
        store.close().await;
    }
}

/// Connections left unused past `DATABASE_IDLE_TIMEOUT` are closed by the pool's sweep. The
/// sweep runs on its own clock, so the test waits for its outcome (bounded), not for a time.
#[tokio::test]
async fn idle_connections_are_closed_after_the_idle_timeout() {
    use restgen::store::StoreOptions;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let idle_timeout = Duration::from_millis(50);
    let options = StoreOptions { max_connections: Some(2), idle_timeout, ..StoreOptions::default() };
    let store = Store::connect_with(&url, options).await.unwrap();
    let pool = store.sqlite().expect("a SQLite store");
    let (a, b) = tokio::join!(pool.acquire(), pool.acquire());
    drop((a.unwrap(), b.unwrap()));
    assert_eq!(pool.size(), 2);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while pool.size() > 0 {
        assert!(std::time::Instant::now() < deadline, "idle connections still open: {}", pool.size());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    store.close().await;
}

/// `DATABASE_MIN_CONNECTIONS` connections are open when the store is, where a store without
/// it has opened only the one it starts with; a least above the most stops the start.
#[tokio::test]
async fn a_sqlite_pool_opens_its_least_connections_at_start() {
    use restgen::store::StoreOptions;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    for (least, open) in [(0, 1), (3, 3)] {
        let options = StoreOptions { max_connections: Some(4), min_connections: least, ..StoreOptions::default() };
        let store = Store::connect_with(&url, options).await.unwrap();
        assert_eq!(store.sqlite().expect("a SQLite store").size(), open, "least {least}");
        store.close().await;
    }
    let options = StoreOptions { max_connections: Some(2), min_connections: 5, ..StoreOptions::default() };
    let err = Store::connect_with(&url, options).await.expect_err("refused").to_string();
    assert!(
        err.contains("DATABASE_MIN_CONNECTIONS is 5, more than the pool holds: 2 (DATABASE_MAX_CONNECTIONS)"),
        "{err}"
    );
    let options = StoreOptions { min_connections: 10_000, ..StoreOptions::default() };
    let err = Store::connect_with(&url, options).await.expect_err("refused").to_string();
    assert!(err.contains("more than the pool holds") && err.contains("default, 2 per core on SQLite"), "{err}");
}

/// On PostgreSQL the least are real logins, seen by the server; one the database refuses
/// (here a role allowed two connections, asked for three) stops the start, saying which
/// setting asked for them.
#[tokio::test]
async fn a_postgres_pool_opens_its_least_connections_at_start_or_fails_to_start() {
    use restgen::store::StoreOptions;
    let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
        eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
        return;
    };
    let mut named = reqwest::Url::parse(&url).expect("a URL");
    named.query_pairs_mut().append_pair("application_name", "restgen-least-test");
    // As many at most as at least: the count's query takes one of the three (given back to
    // the pool a moment after the start), where a fourth might open for it otherwise.
    let options = StoreOptions { max_connections: Some(3), min_connections: 3, ..StoreOptions::default() };
    let store = Store::connect_with(named.as_str(), options).await.unwrap();
    let pool = store.postgres().expect("a PostgreSQL store");
    assert_eq!(pool.size(), 3);
    let mut connection = pool.acquire().await.unwrap();
    let (seen,): (i64,) =
        sqlx::query_as("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'restgen-least-test'")
            .fetch_one(&mut *connection)
            .await
            .unwrap();
    assert_eq!(seen, 3, "the server sees the three logins");
    sqlx::query(
        "DO $$ BEGIN CREATE ROLE restgen_two LOGIN PASSWORD 'two' CONNECTION LIMIT 2; \
         EXCEPTION WHEN duplicate_object THEN NULL; END $$",
    )
    .execute(&mut *connection)
    .await
    .expect("a role limited to two connections (RESTGEN_TEST_DATABASE_URL's user needs CREATEROLE)");
    connection.settle();
    drop(connection);
    store.close().await;
    let mut limited = reqwest::Url::parse(&url).expect("a URL");
    limited.set_username("restgen_two").unwrap();
    limited.set_password(Some("two")).unwrap();
    let pool_timeout = Duration::from_millis(500);
    let options =
        StoreOptions { max_connections: Some(4), min_connections: 3, pool_timeout, ..StoreOptions::default() };
    let err = Store::connect_with(limited.as_str(), options).await.expect_err("refused").to_string();
    assert!(err.contains("DATABASE_MIN_CONNECTIONS is 3, and opening as many connections failed"), "{err}");
}

#[tokio::test]
async fn sqlite_commits_are_synced_as_configured() {
    use restgen::store::{StoreOptions, Synchronous};
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    // PRAGMA synchronous: 1 is NORMAL, 2 is FULL.
    for (synchronous, expected) in [(Synchronous::Normal, 1), (Synchronous::Full, 2)] {
        let options = StoreOptions { max_connections: Some(1), synchronous, ..StoreOptions::default() };
        let store = Store::connect_with(&url, options).await.unwrap();
        let Some(pool) = store.sqlite() else { panic!("a SQLite store") };
        let (level,): (i64,) =
            sqlx::query_as("PRAGMA synchronous").fetch_one(&mut *pool.acquire().await.unwrap()).await.unwrap();
        assert_eq!(level, expected, "{synchronous:?}");
        store.close().await;
    }
}

/// A database that refuses connections when the service starts (one started beside it,
/// still coming up) is waited for, longer than a query waits for a connection: the start
/// goes on once it listens.
#[tokio::test]
async fn a_start_waits_for_a_database_that_is_not_listening_yet() {
    use restgen::store::StoreOptions;
    let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
        eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
        return;
    };
    let mut refused = reqwest::Url::parse(&url).expect("a URL");
    let upstream = format!("{}:{}", refused.host_str().expect("a host"), refused.port().unwrap_or(5432));
    // A loopback port nothing listens on yet: connecting to it is refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    refused.set_host(Some("127.0.0.1")).unwrap();
    refused.set_port(Some(port)).unwrap();
    let refused = refused.to_string();
    let pool_timeout = Duration::from_millis(100);
    let options = StoreOptions { pool_timeout, max_connections: Some(2), ..StoreOptions::default() };
    let starting = tokio::spawn(async move { Store::connect_with(&refused, options).await });
    // Refused for three pool timeouts at least: a start that gave up when its first ran
    // out has failed by now.
    tokio::time::sleep(pool_timeout * 3).await;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let upstream = upstream.clone();
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    let store = starting.await.unwrap().expect("started once the database listens");
    assert!(store.ping().await, "the database answers through the late listener");
    store.close().await;
}

/// A database that cannot be opened at all (a SQLite file in a directory that does not
/// exist) stops the start at once, saying why, rather than being waited for like one that
/// is still starting.
#[tokio::test]
async fn a_start_with_a_database_that_cannot_open_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("missing/dir/t.db").display());
    // Bounded from above only so that a regression fails rather than hangs.
    let failed = tokio::time::timeout(Duration::from_secs(20), Store::connect(&url))
        .await
        .expect("failed before the guard's 20 s")
        .unwrap_err();
    assert!(!matches!(failed, sqlx::Error::PoolTimedOut), "the cause, not a timeout: {failed}");
    assert!(failed.to_string().contains("unable to open database file"), "{failed}");
}
