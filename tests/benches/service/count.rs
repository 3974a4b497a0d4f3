//! Instructions per request, counted by callgrind.

use super::*;

/// What `kind` executes per request of `case`, all its threads counted by callgrind from
/// after the warm-up to after the last answer. One request at a time unless
/// `BENCH_COUNT_AT` says otherwise: valgrind runs a process's threads one by one, and
/// requests waiting on each other (for a pooled connection, say) count the waiting, which
/// depends on timing; at the timed runs' 16, that waiting is counted as they pay for it.
pub(super) async fn count(
    database: &str,
    (kind, name): (&str, &str),
    url: &str,
    case: Case,
    tags: &Arc<HashMap<u64, String>>,
    requests: usize,
) -> Counted {
    settle(url).await;
    let out = tempfile::tempdir().unwrap();
    let server = Server::under_callgrind(kind, url, out.path());
    let driver = client_for_run(&server, case, tags);
    driver.warm_up().await;
    // Then at full concurrency, so that the pool has opened its connections: one opened
    // while counting (a PostgreSQL login hashes its password thousands of times) would
    // outweigh hundreds of requests.
    driver.drive(2_000_000, Enough::Requests(2 * CONCURRENCY * 10), CONCURRENCY).await;
    let control = |what: &str| {
        let status = Command::new("callgrind_control")
            .args([what, &server.child.id().to_string()])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "callgrind_control {what}");
    };
    control("--zero");
    let answered = driver.drive(0, Enough::Requests(requests), setting("BENCH_COUNT_AT", 1)).await.len();
    control("--dump");
    // The dump after the zero is the first numbered one: `callgrind.out.1`.
    let dump = std::fs::read_to_string(out.path().join("callgrind.out.1")).unwrap();
    if let Ok(keep) = std::env::var("BENCH_PROFILES") {
        let name = format!("{database}-{}-{name}.out", case.name()).replace([' ', ',', '+'], "_");
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::write(std::path::Path::new(&keep).join(name), &dump).unwrap();
    }
    Counted::of(&dump, answered as u64)
}

/// Per request, as callgrind counts and simulates them: what CPU time weighs and the
/// instruction count alone does not (this VM has no hardware counters to read).
#[derive(Clone, Copy)]
pub(super) struct Counted {
    pub(super) instructions: u64,
    /// Misses of the simulated first-level instruction cache (32 KiB, 8-way, as this
    /// machine's): the code a request runs that was not in the cache, each a stall.
    pub(super) code_misses: u64,
    /// Mispredicted conditional and indirect branches of the simulated predictor.
    pub(super) mispredicts: u64,
}

impl Counted {
    /// From a callgrind dump's `events:` and `summary:` lines.
    pub(super) fn of(dump: &str, requests: u64) -> Counted {
        let line = |key: &str| dump.lines().find_map(|l| l.strip_prefix(key)).expect("callgrind's events and summary");
        let events: Vec<&str> = line("events:").split_whitespace().collect();
        let totals: Vec<u64> = line("summary:").split_whitespace().map(|n| n.parse().unwrap()).collect();
        let total = |event: &str| {
            let i = events.iter().position(|e| *e == event).unwrap_or_else(|| panic!("callgrind counted no {event}"));
            totals[i] / requests
        };
        Counted { instructions: total("Ir"), code_misses: total("I1mr"), mispredicts: total("Bcm") + total("Bim") }
    }
}

pub(super) fn valgrind_installed() -> bool {
    Command::new("valgrind").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success())
}
