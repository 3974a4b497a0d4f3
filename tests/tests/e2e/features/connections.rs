//! Connections a client holds without making progress are closed: a head sent slowly, a
//! body that stops coming, a connection idle between requests; and no more than the cap
//! are open at once. Each limit is shown not to close a connection early, and a request
//! within it is served as ever.

use crate::support::harness::{Server, start_with_http};
use restgen::__private::tokio::io::{AsyncReadExt, AsyncWriteExt};
use restgen::__private::tokio::net::TcpStream;
use restgen::serve::HttpLimits;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_millis(400);
/// Long enough never to be met in a test.
const LONG: Duration = Duration::from_secs(600);
/// Bounds a wait that must end, so a regression fails rather than hangs.
const AT_MOST: Duration = Duration::from_secs(20);

async fn shop(limits: HttpLimits) -> Server {
    start_with_http(shop::service(), limits).await
}

fn limits(header: Duration, body: Duration, keep_alive: Duration) -> HttpLimits {
    HttpLimits { header_timeout: header, body_timeout: body, keep_alive_timeout: keep_alive, ..HttpLimits::default() }
}

async fn connect(s: &Server) -> TcpStream {
    TcpStream::connect(s.base.trim_start_matches("http://")).await.unwrap()
}

/// Reads until the server closes the connection (or resets it): what it sent, and when.
async fn until_closed(stream: &mut TcpStream) -> (String, Instant) {
    let mut answer = Vec::new();
    let read = restgen::__private::tokio::time::timeout(AT_MOST, stream.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "the connection was never closed");
    (String::from_utf8_lossy(&answer).into_owned(), Instant::now())
}

const PROBE: &[u8] = b"GET /healthz HTTP/1.1\r\nhost: shop\r\n\r\n";

#[restgen::__private::tokio::test]
async fn a_head_sent_slowly_is_cut_off_at_the_header_timeout() {
    let s = shop(limits(LIMIT, LONG, LONG)).await;
    // A byte of header every tenth of the limit: the bytes keep coming, the head never ends.
    let mut stream = connect(&s).await;
    let started = Instant::now();
    stream.write_all(b"GET /healthz HTTP/1.1\r\n").await.unwrap();
    let trickle = async {
        for n in 0.. {
            restgen::__private::tokio::time::sleep(LIMIT / 10).await;
            if stream.write_all(format!("x-{n}: y\r\n").as_bytes()).await.is_err() {
                return;
            }
        }
    };
    let cut = restgen::__private::tokio::time::timeout(AT_MOST, trickle).await;
    assert!(cut.is_ok(), "a head trickled for {AT_MOST:?} was never cut off");
    assert!(started.elapsed() >= LIMIT, "cut off after {:?}, before the limit", started.elapsed());
    // A connection that never sends a byte is cut off too.
    let mut silent = connect(&s).await;
    let started = Instant::now();
    let (sent, closed) = until_closed(&mut silent).await;
    assert!(sent.is_empty(), "{sent}");
    assert!(closed - started >= LIMIT);
    // A head sent within the limit is answered.
    assert_eq!(s.get("/healthz").await.status, 200);
}

#[restgen::__private::tokio::test]
async fn a_body_that_stops_coming_is_cut_off_at_the_body_timeout() {
    let s = shop(limits(LONG, LIMIT, LONG)).await;
    let mut stream = connect(&s).await;
    let head =
        "POST /api/users HTTP/1.1\r\nhost: shop\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(b"{\"name\": ").await.unwrap();
    let started = Instant::now();
    let (_, closed) = until_closed(&mut stream).await;
    assert!(closed - started >= LIMIT, "cut off after {:?}, before the limit", closed - started);
    // A body sent whole is read.
    let r = s
        .post(
            "/api/users",
            serde_json::json!({ "name": "Ann", "email": "ann@example.com", "password": "correct horse" }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
}

#[restgen::__private::tokio::test]
async fn an_idle_connection_is_closed_at_the_keep_alive_timeout_and_served_before() {
    let s = shop(limits(LONG, LONG, LIMIT)).await;
    let mut stream = connect(&s).await;
    // Two requests on one connection, the second well within the limit of the first's end.
    for _ in 0..2 {
        stream.write_all(PROBE).await.unwrap();
        let mut answer = [0u8; 512];
        let n = stream.read(&mut answer).await.unwrap();
        assert!(String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 200"), "kept alive and served");
    }
    let answered = Instant::now();
    let (more, closed) = until_closed(&mut stream).await;
    assert!(more.is_empty(), "{more}");
    assert!(closed - answered >= LIMIT, "closed after {:?}, before the limit", closed - answered);
}

#[restgen::__private::tokio::test]
async fn connections_beyond_the_cap_wait_until_one_closes() {
    let s = shop(HttpLimits { max_connections: 2, ..limits(LONG, LONG, LONG) }).await;
    let held = [connect(&s).await, connect(&s).await];
    // Accepted in order: wait until both are the server's (a request on each is served).
    let mut held = held;
    for stream in &mut held {
        stream.write_all(PROBE).await.unwrap();
        let mut answer = [0u8; 512];
        let n = stream.read(&mut answer).await.unwrap();
        assert!(String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 200"));
    }
    let waiting = restgen::__private::tokio::spawn({
        let (client, base) = (reqwest::Client::new(), s.base.clone());
        async move { client.get(format!("{base}/healthz")).send().await.map(|r| r.status().as_u16()) }
    });
    // Not served while the cap is taken...
    restgen::__private::tokio::time::sleep(LIMIT).await;
    assert!(!waiting.is_finished(), "a third connection was served beyond a cap of two");
    // ...and served once a connection closes.
    drop(held);
    let status = restgen::__private::tokio::time::timeout(AT_MOST, waiting).await.expect("served").unwrap().unwrap();
    assert_eq!(status, 200);
}
