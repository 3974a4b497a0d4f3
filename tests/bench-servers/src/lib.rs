//! The service bench's two servers (`tests/benches/service.rs`), each an executable of its
//! own: `generated` (the fleet service restgen generated) and `hand-written` (the reference
//! of docs/performance.md). The bench starts one as
//! `<executable> <kind> <database URL> <pool timeout in seconds>`; it prints its address on
//! standard output once it answers, and nothing more there.
//!
//! Apart, because a server's memory is mostly its executable's code: in one executable each
//! would map the other's code lying beside its own, and the generated one would carry every
//! runtime feature the test suite turns on.

use std::time::Duration;
use tokio::net::TcpListener;

/// What the bench starts a server with.
pub struct Args {
    /// `generated`, or a variant of it the bench compares (`generated-metrics`,
    /// `generated-traces`, `generated-logs`); `hand-written`.
    pub kind: String,
    pub url: String,
    /// How long a query waits for a pooled connection.
    pub pool_timeout: Duration,
}

/// Runs `serve` with the command line's [`Args`] and a listener on a port of loopback, on a
/// runtime of one worker thread: the server and the bench's load each have one core of a
/// 2-core machine, so the two compete as little as they can.
pub fn main<F: Future<Output = ()>>(serve: impl FnOnce(Args, TcpListener) -> F) {
    let mut args = std::env::args().skip(1);
    let usage = "usage: <kind> <database URL> <pool timeout in seconds>";
    let kind = args.next().expect(usage);
    let url = args.next().expect(usage);
    let pool_timeout = Duration::from_secs(args.next().and_then(|s| s.parse().ok()).expect(usage));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    runtime.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        serve(Args { kind, url, pool_timeout }, listener).await
    });
}

/// Tells the bench where the server answers: called once it would.
pub fn ready(listener: &TcpListener) {
    println!("http://{}", listener.local_addr().unwrap());
}

/// The strong tag the generated service sends for a body: 128 bits of its SHA-256,
/// base64url, quoted. The reference sends the same, and the bench checks a write's.
pub fn tag(bytes: &[u8]) -> String {
    use base64::Engine;
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    format!("\"{}\"", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..16]))
}
