//! The two servers, each in a child process of its own (under callgrind when counted):
//! the generated fleet service or the hand-written reference, on one database.

use super::*;

/// A server in a child process, so its memory and CPU time are its own.
pub(super) struct Server {
    pub(super) child: Child,
    pub(super) base: String,
}

impl Server {
    pub(super) fn start(kind: &str, url: &str) -> Server {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command.args(["--serve", kind, url]);
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
            .arg(std::env::current_exe().unwrap())
            .args(["--serve", kind, url, &CALLGRIND_POOL_TIMEOUT.as_secs().to_string()])
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

/// Serves `kind` on `url`'s database, each query waiting up to `pool_timeout` for a
/// connection.
pub(super) async fn serve(kind: &str, url: &str, pool_timeout: Duration) {
    // The server's warnings (a 503's cause, a slow pool) to standard error: standard output
    // is the pipe the bench reads the address from, and then no more.
    if std::env::var_os("BENCH_VERBOSE").is_some() {
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).init();
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ready = || println!("http://{}", listener.local_addr().unwrap());
    // Both served alike: no connection info on the request, which neither reads here.
    if kind.starts_with("generated") {
        let service = fleet::service();
        // `generated-traces`, `generated-logs`: logs (and traces) set up as `main` sets them.
        let telemetry = (kind == "generated-traces" || kind == "generated-logs")
            .then(|| restgen::serve::telemetry(service.name).unwrap());
        let options = StoreOptions { pool_timeout, ..StoreOptions::default() };
        let store = restgen::store::Store::connect_with(url, options).await.unwrap();
        restgen::serve::migrate(&store, &service).await.unwrap();
        // `generated-metrics`: its requests counted, as `<SERVICE>_METRICS_BIND` has them.
        let metrics = (kind == "generated-metrics").then(|| Arc::new(restgen::serve::Metrics::new()));
        let settings = restgen::serve::Settings { metrics, ..Default::default() };
        let app = restgen::serve::app(service, store, &settings).unwrap();
        ready();
        axum::serve(listener, axum::ServiceExt::into_make_service(app)).await.unwrap();
        if let Some(telemetry) = telemetry {
            telemetry.finish().await;
        }
    } else {
        let app = hand_written(url, pool_timeout).await;
        ready();
        axum::serve(listener, app).await.unwrap();
    }
}

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
