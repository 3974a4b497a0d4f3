//! The two servers, each in a child process of its own (under callgrind when counted):
//! the generated fleet service or the hand-written reference, on one database, each from
//! its own executable (`tests/bench-servers`).

use super::*;

/// A server in a child process, so its memory and CPU time are its own.
pub(super) struct Server {
    pub(super) child: Child,
    pub(super) base: String,
}

/// The executable that serves `kind`, built once a run: `cargo build --release -p
/// bench-servers`, with the fleet's `traces` feature for the [`Pair`] of `BENCH_TRACES`.
/// Built apart from the bench so that each holds its own code alone and the runtime has
/// only the features the fleet's `Cargo.toml` names, as a user's build of it has.
pub(super) fn executable(kind: &str) -> &'static std::path::Path {
    static BUILT: std::sync::OnceLock<HashMap<String, std::path::PathBuf>> = std::sync::OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cargo.args(["build", "--release", "-q", "-p", "bench-servers", "--message-format=json"]);
        cargo.current_dir(crate::workspace());
        if Pair::from_env().serve.contains(&"generated-traces") {
            cargo.args(["--features", "traces"]);
        }
        let out = cargo.stderr(Stdio::inherit()).output().expect("cargo runs");
        assert!(out.status.success(), "cargo build -p bench-servers failed");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter_map(|m| {
                let name = m["target"]["name"].as_str()?.to_owned();
                Some((name, m["executable"].as_str()?.into()))
            })
            .collect()
    });
    let bin = if kind.starts_with("generated") { "generated" } else { "hand-written" };
    built.get(bin).unwrap_or_else(|| panic!("bench-servers built no `{bin}`"))
}

/// The pool's wait for a connection both servers are given: the generated service's own.
fn pool_timeout() -> String {
    StoreOptions::default().pool_timeout.as_secs().to_string()
}

impl Server {
    pub(super) fn start(kind: &str, url: &str) -> Server {
        let mut command = Command::new(executable(kind));
        command.args([kind, url, &pool_timeout()]);
        Server::spawn(configured(&mut command, kind))
    }

    /// The server under callgrind, counting from the start but told to zero its counts
    /// and write them out by `callgrind_control` (see [`count`]); `out` is where.
    ///
    /// Its pool waits up to [`CALLGRIND_POOL_TIMEOUT`] for a connection: under valgrind
    /// a PostgreSQL login (thousands of password hashes) takes about half a second, one
    /// after the other on valgrind's one thread, and the seven a pool of eight opens when
    /// [`count`]'s sixteen requests first arrive took longer than the usual 5 s wait, so
    /// that some were answered 503 before any was counted.
    pub(super) fn under_callgrind(kind: &str, url: &str, out: &std::path::Path) -> Server {
        let mut command = Command::new("valgrind");
        command
            .args(["--tool=callgrind", "-q", "--cache-sim=yes", "--branch-sim=yes"])
            .arg(format!("--callgrind-out-file={}", out.join("callgrind.out").display()))
            .arg(executable(kind))
            .args([kind, url, &CALLGRIND_POOL_TIMEOUT.as_secs().to_string()])
            .stderr(Stdio::null());
        Server::spawn(configured(&mut command, kind))
    }

    pub(super) fn spawn(command: &mut Command) -> Server {
        let mut child = command.stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.as_mut().unwrap()), &mut line).unwrap();
        Server { child, base: line.trim().to_owned() }
    }

    /// CPU time the server's threads have used so far, in nanoseconds, from each
    /// thread's `schedstat` (SQLite work runs on the driver's own threads).
    pub(super) fn cpu_ns(&self) -> u64 {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.child.id())) else { return 0 };
        tasks
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
            .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .sum()
    }

    /// Peak resident memory so far, from /proc.
    pub(super) fn peak_rss_kib(&self) -> u64 {
        self.status_kib("VmHWM:")
    }

    pub(super) fn anon_kib(&self) -> u64 {
        self.status_kib("RssAnon:")
    }

    /// A line of the server's `/proc/<pid>/status`, in KiB.
    fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
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

/// How long a server under callgrind waits for a pooled connection (see
/// [`Server::under_callgrind`]).
pub(super) const CALLGRIND_POOL_TIMEOUT: Duration = Duration::from_secs(120);

/// `command` with what `kind` is served with beyond its arguments: the pair of
/// BENCH_TRACES both log as a deployment does (warnings, the request's span), and one
/// traces every request to the [`sink`].
fn configured<'a>(command: &'a mut Command, kind: &str) -> &'a mut Command {
    if kind == "generated-traces" || kind == "generated-logs" {
        command.env("RUST_LOG", "warn").env("LOG_FORMAT", "text");
    }
    if kind == "generated-traces" {
        command.env("OTEL_EXPORTER_OTLP_ENDPOINT", sink());
    }
    command
}

/// An OTLP receiver that takes every export and keeps nothing, on a thread and runtime of
/// its own in the bench's process (so its work is not the server's): the address of the one
/// the run shares.
fn sink() -> &'static str {
    static SINK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SINK.get_or_init(|| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = format!("http://{}", listener.local_addr().unwrap());
        listener.set_nonblocking(true).unwrap();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = axum::Router::new().fallback(|_: axum::body::Bytes| async { axum::http::StatusCode::OK });
                axum::serve(listener, app).await.unwrap();
            });
        });
        at
    })
}
