//! The load: the rows of the table, the client that drives a server through one, the
//! rounds in which the two servers take turns, and the checks that both answer alike.

use super::*;

/// What one row of the table asks.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Case {
    Item,
    Item304,
    CursorList,
    OffsetList,
    Create,
    Patch,
}

impl Case {
    pub(super) const ALL: [Case; 6] =
        [Case::Item, Case::Item304, Case::CursorList, Case::OffsetList, Case::Create, Case::Patch];

    pub(super) fn name(self) -> &'static str {
        match self {
            Case::Item => "GET item",
            Case::Item304 => "GET item, 304",
            Case::CursorList => "cursor list of 20",
            Case::OffsetList => "offset list, filter + sort",
            Case::Create => "POST create",
            Case::Patch => "PATCH",
        }
    }

    pub(super) fn expected(self) -> u16 {
        match self {
            Case::Item304 => 304,
            Case::Create => 201,
            _ => 200,
        }
    }

    /// Request `n` of this case; `tags` are the trips' current tags, `names` makes new
    /// depots' names unique to the run.
    pub(super) fn request(
        self,
        client: &reqwest::Client,
        base: &str,
        n: u64,
        tags: &HashMap<u64, String>,
        names: &str,
    ) -> reqwest::RequestBuilder {
        let trip = 1 + n * 7 % TRIPS;
        match self {
            Case::Item => client.get(format!("{base}/v0/trips/{trip}")),
            Case::Item304 => client.get(format!("{base}/v0/trips/{trip}")).header("if-none-match", &tags[&trip]),
            Case::CursorList => client.get(format!("{base}/v0/trips?limit=20")),
            Case::OffsetList => client.get(format!("{base}/v0/depots?open=true&sort=name_desc&limit=20&offset=20")),
            Case::Create => client
                .post(format!("{base}/v0/depots"))
                .header("content-type", "application/json")
                .body(json!({ "name": format!("{names}-{n}"), "city": "Bench" }).to_string()),
            Case::Patch => client
                .patch(format!("{base}/v0/depots/{}", 1 + n % DEPOTS))
                .header("content-type", "application/merge-patch+json")
                .body(json!({ "city": format!("c{}", n % 10) }).to_string()),
        }
    }
}

/// One server's measured run: its blocks of one round.
#[derive(Clone, Copy)]
pub(super) struct Run {
    pub(super) rps: f64,
    pub(super) p50: Duration,
    pub(super) p99: Duration,
    /// Server CPU time per request: the server's own cost, which the load generator
    /// sharing the machine disturbs less than it does wall-clock throughput.
    pub(super) cpu: Duration,
    pub(super) rss_kib: u64,
    /// The server's anonymous memory at the run's end (heap, stacks, SQLite's caches): its
    /// resident set less the clean pages of the executable and libraries, which the kernel
    /// maps in 64 KiB around each page of code run and may drop or share.
    pub(super) anon_kib: u64,
}

pub(super) static RUN: AtomicU64 = AtomicU64::new(0);

/// A client of `server` for one run, with a name that makes the run's new records its own.
pub(super) fn client_for_run(server: &Server, case: Case, tags: &Arc<HashMap<u64, String>>) -> Driver {
    let client = reqwest::Client::new();
    let names = format!("bench{}", RUN.fetch_add(1, Ordering::Relaxed));
    Driver { client, base: server.base.clone(), case, tags: tags.clone(), names }
}

/// What sends one run's requests.
pub(super) struct Driver {
    pub(super) client: reqwest::Client,
    pub(super) base: String,
    pub(super) case: Case,
    pub(super) tags: Arc<HashMap<u64, String>>,
    pub(super) names: String,
}

impl Driver {
    /// Warms up connections, statement caches and the allocator.
    pub(super) async fn warm_up(&self) {
        let Driver { client, base, case, tags, names } = self;
        for n in 0..200 {
            let r = case.request(client, base, 1_000_000 + n, tags, names).send().await.unwrap();
            assert_eq!(r.status().as_u16(), case.expected(), "{}: {}", case.name(), r.text().await.unwrap());
        }
    }

    /// Sends requests, `concurrency` at a time, until there are `enough`, numbered from
    /// `first` (new records are named by their number); each one's latency.
    pub(super) async fn drive(&self, first: u64, enough: Enough, concurrency: usize) -> Vec<Duration> {
        let case = self.case;
        let tasks: Vec<_> = (0..concurrency as u64)
            .map(|task| {
                let (client, base, tags, names) =
                    (self.client.clone(), self.base.clone(), self.tags.clone(), self.names.clone());
                tokio::spawn(async move {
                    let mut latencies = Vec::new();
                    for i in 0.. {
                        let t = Instant::now();
                        let more = match enough {
                            Enough::Requests(n) => i < (n / concurrency) as u64,
                            Enough::Until(end) => t < end,
                        };
                        if !more {
                            break;
                        }
                        let n = first + i * concurrency as u64 + task;
                        let r = case.request(&client, &base, n, &tags, &names).send().await.unwrap();
                        let status = r.status().as_u16();
                        let body = r.bytes().await.unwrap();
                        // The answer's body says why (a problem's detail), should a run fail.
                        assert_eq!(
                            status,
                            case.expected(),
                            "{} from {base}: {}",
                            case.name(),
                            String::from_utf8_lossy(&body)
                        );
                        latencies.push(t.elapsed());
                    }
                    latencies
                })
            })
            .collect();
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        all
    }
}

/// When a [`Driver`] has sent enough.
#[derive(Clone, Copy)]
pub(super) enum Enough {
    /// This many requests in all.
    Requests(usize),
    /// Requests started before this instant.
    Until(Instant),
}

/// How many blocks a round's time with each server is divided into, the two servers taking
/// turns block by block.
pub(super) const BLOCKS: u32 = 10;

/// One round of `case`: both servers started afresh on the database as [`settle`] leaves
/// it, warmed up, then sent requests for `run` each in [`BLOCKS`] blocks, taking turns
/// (`first` sends the first block). Each server's run is the sum of its blocks: the
/// requests answered over the time its blocks took, its CPU time during them, its
/// latencies together.
///
/// Turns of a tenth of a run, not whole runs one after the other: this shared 2-core
/// machine drifts within seconds (a row's throughput moved 28-43k requests a second from
/// one whole run to the next), and a drift that lasts a run fell on one server's run
/// only, where it now falls on blocks of both. Runs of a time, not of a number of
/// requests: 20,000 requests were two seconds of PATCHes but half a second of GETs, whose
/// rows then moved most from round to round.
pub(super) async fn round(
    pair: Pair,
    url: &str,
    case: Case,
    tags: &Arc<HashMap<u64, String>>,
    run: Duration,
    first: usize,
) -> [Run; 2] {
    settle(url).await;
    let servers = pair.serve.map(|kind| Server::start(kind, url));
    let drivers = servers.each_ref().map(|server| client_for_run(server, case, tags));
    for driver in &drivers {
        driver.warm_up().await;
    }
    let mut elapsed = [Duration::ZERO; 2];
    let mut cpu = [0; 2];
    let mut latencies: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    for block in 0..BLOCKS {
        for k in if (block as usize + first).is_multiple_of(2) { [0, 1] } else { [1, 0] } {
            let cpu_before = servers[k].cpu_ns();
            let start = Instant::now();
            let enough = Enough::Until(start + run / BLOCKS);
            let answered = drivers[k].drive(u64::from(block) << 32, enough, CONCURRENCY).await;
            elapsed[k] += start.elapsed();
            cpu[k] += servers[k].cpu_ns().saturating_sub(cpu_before);
            latencies[k].extend(answered);
        }
    }
    [0, 1].map(|k| {
        let all = &mut latencies[k];
        all.sort();
        Run {
            rps: all.len() as f64 / elapsed[k].as_secs_f64(),
            p50: all[all.len() / 2],
            p99: all[all.len() * 99 / 100],
            cpu: Duration::from_nanos(cpu[k] / all.len() as u64),
            rss_kib: servers[k].peak_rss_kib(),
            anon_kib: servers[k].anon_kib(),
        }
    })
}

/// What a client acts on in an answer: status, the headers that matter, the body; for
/// a write, with the new record's own id, name and times (and so its tag and location)
/// masked, as two servers writing one after the other cannot give the same.
pub(super) async fn observed(r: reqwest::Response, write: bool) -> (u16, Vec<Option<String>>, String) {
    let status = r.status().as_u16();
    let mut headers: Vec<Option<String>> = ["content-type", "etag", "cache-control", "location", "link"]
        .iter()
        .map(|h| r.headers().get(*h).map(|v| v.to_str().unwrap().to_owned()))
        .collect();
    let bytes = r.bytes().await.unwrap();
    if !write {
        return (status, headers, String::from_utf8_lossy(&bytes).into_owned());
    }
    let sent = bench_servers::tag(&bytes);
    assert_eq!(headers[1].as_deref(), Some(sent.as_str()), "a write's tag is its body's");
    let mut body: serde_json::Map<String, Value> = serde_json::from_slice(&bytes).unwrap();
    for key in ["id", "name", "created_at", "updated_at"] {
        if let Some(v) = body.get_mut(key) {
            *v = json!(format!("<{key}>"));
        }
    }
    headers[1] = headers[1].as_ref().map(|_| "<tag>".into());
    headers[3] = headers[3].as_ref().map(|l| l.rsplit_once('/').map_or(l.clone(), |(path, _)| format!("{path}/<id>")));
    (status, headers, serde_json::to_string(&body).unwrap())
}

/// Both servers give `case` the same answer; a comparison of unequal work would measure
/// nothing.
pub(super) async fn same_answers(pair: Pair, url: &str, case: Case, tags: &HashMap<u64, String>) {
    let mut answers = Vec::new();
    // Named by turn, not kind: two servers alike create records of their own.
    for (k, kind) in pair.serve.into_iter().enumerate() {
        let server = Server::start(kind, url);
        let client = reqwest::Client::new();
        let r = case.request(&client, &server.base, 3, tags, &format!("same-{k}")).send().await.unwrap();
        answers.push(observed(r, matches!(case, Case::Create | Case::Patch)).await);
    }
    assert_eq!(answers[0], answers[1], "{}: the {} answers differ", case.name(), pair.names.join(" and "));
}

/// Each server starts on the database in the same state: on SQLite, with no write-ahead
/// log. A server is stopped by a signal, which leaves its log behind (7-23 MB after a run
/// of PATCHes), and whichever server opened the database next had to deal with it: its
/// count of instructions per PATCH was 1.78x the other's in two runs, 1.05x in three
/// with the log emptied before each server starts. `BENCH_VERBOSE=1` shows what it found.
///
/// On PostgreSQL, with the last run's dead rows vacuumed, its statistics taken and its
/// dirty pages written: otherwise autovacuum (20,000 creates or PATCHes are far past its
/// threshold) and the checkpointer do that work while the next server is measured.
pub(super) async fn settle(url: &str) {
    if !url.starts_with("sqlite:") {
        let pool = PgPool::connect(url).await.unwrap();
        let tables: Vec<String> =
            sqlx::query_scalar("SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()")
                .fetch_all(&pool)
                .await
                .unwrap();
        for table in tables {
            let vacuum = format!("VACUUM (ANALYZE) \"{table}\"");
            sqlx::query(sqlx::AssertSqlSafe(vacuum)).execute(&pool).await.unwrap();
        }
        // A superuser's or `pg_checkpoint`'s right; without it the checkpointer keeps its own time.
        if let Err(e) = sqlx::query("CHECKPOINT").execute(&pool).await
            && std::env::var_os("BENCH_VERBOSE").is_some()
        {
            eprintln!("checkpoint: {e}");
        }
        pool.close().await;
        return;
    }
    let file = url.trim_start_matches("sqlite://").split('?').next().unwrap_or_default().to_owned();
    let size = |suffix: &str| std::fs::metadata(format!("{file}{suffix}")).map_or(-1, |m| m.len() as i64);
    let before = (size("-wal"), size("-shm"));
    let pool = SqlitePool::connect_with(SqliteConnectOptions::from_str(url).unwrap()).await.unwrap();
    let (busy, log, written): (i64, i64, i64) =
        sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)").fetch_one(&pool).await.unwrap();
    if std::env::var_os("BENCH_VERBOSE").is_some() {
        eprintln!(
            "checkpoint: wal, shm bytes before {before:?}; busy {busy}, {log} pages in the log, {written} written back"
        );
    }
    pool.close().await;
}

/// The fleet's records: 200 depots (every other one open), a vehicle and a driver, 500
/// trips; and each trip's tag.
pub(super) async fn seed(url: &str) -> HashMap<u64, String> {
    let server = Server::start("generated", url);
    let c = reqwest::Client::new();
    let base = server.base.clone();
    let post = |path: &'static str, body: Value| {
        let (c, url) = (c.clone(), format!("{base}{path}"));
        async move {
            let r = c.post(url).json(&body).send().await.unwrap();
            assert_eq!(r.status(), 201);
            r.json::<Value>().await.unwrap()
        }
    };
    for i in 0..DEPOTS {
        post("/v0/depots", json!({ "name": format!("Depot {i:03}"), "city": "Leeds", "open": i % 2 == 0 })).await;
    }
    let driver = post("/v0/drivers", json!({ "name": "B", "email": "b@example.com", "depot_id": 1 })).await;
    let vehicle = post("/v0/vehicles", json!({ "plate": "BENCH1", "kind": "van" })).await;
    let mut tags = HashMap::new();
    for i in 0..TRIPS {
        let starts_at = format!("2026-01-01T{:02}:{:02}:00Z", i / 60 % 24, i % 60);
        let trip =
            json!({ "vehicle_id": vehicle["id"], "driver_id": driver["id"], "starts_at": starts_at, "note": "a note" });
        let r = c.post(format!("{base}/v0/trips")).json(&trip).send().await.unwrap();
        let etag = r.headers()["etag"].to_str().unwrap().to_owned();
        let id = r.json::<Value>().await.unwrap()["id"].as_u64().unwrap();
        tags.insert(id, etag);
    }
    tags
}

/// The PostgreSQL schema of this run, dropped at its end.
pub(super) fn bench_schema() -> String {
    format!("bench_{}", std::process::id())
}

/// A PostgreSQL schema of its own for this run.
pub(super) async fn postgres_schema(url: &str) -> String {
    let schema = bench_schema();
    drop_schema(url).await;
    let pool = PgPool::connect(url).await.expect("RESTGEN_TEST_DATABASE_URL reachable");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA \"{schema}\""))).execute(&pool).await.unwrap();
    pool.close().await;
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

pub(super) async fn drop_schema(url: &str) {
    let pool = PgPool::connect(url).await.expect("RESTGEN_TEST_DATABASE_URL reachable");
    let drop = format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", bench_schema());
    sqlx::query(sqlx::AssertSqlSafe(drop)).execute(&pool).await.unwrap();
    pool.close().await;
}
