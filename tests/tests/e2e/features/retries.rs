//! The client's retries, backoff, idempotency keys, token renewal and timeouts, against a
//! scripted HTTP server on loopback that answers each request from a list.

use restgen_client::{Auth, Error, Retry};
use shop_client::{Client, CreateCustomer, Patch};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the scripted server does with one request.
enum Answer {
    /// Write this status, these headers and this body.
    Reply(u16, &'static [(&'static str, &'static str)], &'static str),
    /// Close the connection without answering.
    Hang,
    /// Keep the connection open and never answer.
    Silence,
}

fn json(status: u16, body: &'static str) -> Answer {
    Answer::Reply(status, &[("content-type", "application/json")], body)
}

/// A request the server received.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    at: Instant,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

struct Script {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Script {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// Lists customers three times with login credentials; each request's path and the
/// credentials it carried.
async fn three_lists_logged_in(s: &Script) -> Vec<(String, Option<String>)> {
    let c = client(s, Auth::login("ann@example.com", "pw"), quick());
    for _ in 0..3 {
        c.list_customers().send().await.unwrap();
    }
    s.seen().iter().map(|r| (r.path.clone(), r.header("authorization").map(str::to_owned))).collect()
}

/// Serves `answers` in order, one request per connection; requests beyond them get 500.
async fn script(answers: Vec<Answer>) -> Script {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        let mut answers = answers.into_iter();
        let mut held = Vec::new();
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let Some(request) = read_request(&mut socket).await else { continue };
            log.lock().unwrap().push(request);
            match answers.next().unwrap_or(json(500, "{}")) {
                Answer::Reply(status, headers, body) => {
                    let mut text =
                        format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
                    for (k, v) in headers {
                        text.push_str(&format!("{k}: {v}\r\n"));
                    }
                    text.push_str("\r\n");
                    text.push_str(body);
                    let _ = socket.write_all(text.as_bytes()).await;
                    let _ = socket.shutdown().await;
                }
                Answer::Hang => drop(socket),
                Answer::Silence => held.push(socket),
            }
        }
    });
    Script { base, seen }
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut start = lines.next()?.split(' ');
    let (method, path) = (start.next()?.to_owned(), start.next()?.to_owned());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers.iter().find(|(k, _)| k == "content-length").map_or(0, |(_, v)| v.parse().unwrap_or(0));
    while buf.len() < head_end + length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(Seen { method, path, headers, at: Instant::now() })
}

const CUSTOMER: &str = r#"{"id":"0190c3a4-5b6e-7d8f-9a0b-1c2d3e4f5a6b","owner_id":"0190c3a4-5b6e-7d8f-9a0b-1c2d3e4f5a6c","name":"Ada","email":null,"city":null,"created_at":"2026-11-23T10:00:00Z","updated_at":"2026-11-23T10:00:00Z"}"#;
const BUSY: &str = r#"{"type":"about:blank","title":"Too Many Requests","status":429,"detail":"slow down"}"#;

fn quick() -> Retry {
    Retry { initial: Duration::from_millis(5), max_backoff: Duration::from_millis(20), ..Retry::default() }
}

fn client(s: &Script, auth: Auth, retry: Retry) -> Client {
    Client::builder(&s.base).auth(auth).retry(retry).build().unwrap()
}

fn ada() -> CreateCustomer {
    CreateCustomer { name: "Ada".into(), email: None, city: Patch::Absent, phone: Patch::Absent }
}

#[tokio::test]
async fn a_429_is_retried_after_its_retry_after_with_the_same_idempotency_key() {
    let s = script(vec![
        Answer::Reply(429, &[("retry-after", "1"), ("content-type", "application/problem+json")], BUSY),
        json(201, CUSTOMER),
        json(201, CUSTOMER),
    ])
    .await;
    let c = client(&s, Auth::None, quick());
    assert_eq!(c.create_customer(&ada()).await.unwrap().name, "Ada");
    c.create_customer(&ada()).await.unwrap();
    let seen = s.seen();
    assert_eq!(seen.len(), 3);
    assert!(seen.iter().all(|r| r.method == "POST" && r.path == "/api/customers"));
    let keys: Vec<&str> = seen.iter().map(|r| r.header("idempotency-key").expect("every create is keyed")).collect();
    assert_eq!(keys[0], keys[1], "a retry reuses its call's key");
    assert_ne!(keys[1], keys[2], "each call has a key of its own");
    assert!(seen[1].at - seen[0].at >= Duration::from_secs(1), "waited as long as Retry-After asked");
}

#[tokio::test]
async fn a_503_without_retry_after_backs_off_and_gives_up_after_max_retries() {
    let unavailable = || json(503, r#"{"title":"Service Unavailable","status":503,"detail":"busy"}"#);
    let s = script(vec![unavailable(), json(200, CUSTOMER)]).await;
    let c = client(&s, Auth::None, quick());
    let id = "0190c3a4-5b6e-7d8f-9a0b-1c2d3e4f5a6b".parse().unwrap();
    assert_eq!(c.get_customer(id).await.unwrap().id, id);
    assert_eq!(s.seen().len(), 2);

    let s = script((0..4).map(|_| unavailable()).collect()).await;
    let c = client(&s, Auth::None, Retry { max_retries: 2, ..quick() });
    let e = c.get_customer(id).await.unwrap_err();
    assert_eq!(e.problem().map(|p| (p.status, p.detail.as_str())), Some((503, "busy")));
    assert_eq!(s.seen().len(), 3, "the first attempt and two retries");
}

#[tokio::test]
async fn a_retry_after_beyond_the_clients_patience_fails_at_once_with_it() {
    let s = script(vec![Answer::Reply(429, &[("retry-after", "3600")], BUSY)]).await;
    let c = client(&s, Auth::None, quick());
    let e = c.list_customers().send().await.unwrap_err();
    let p = e.problem().unwrap();
    assert_eq!((p.status, p.retry_after), (429, Some(Duration::from_secs(3600))));
    assert_eq!(s.seen().len(), 1);
}

#[tokio::test]
async fn other_errors_are_not_retried() {
    let s = script(vec![json(409, r#"{"title":"Conflict","status":409,"detail":"email is taken"}"#)]).await;
    let e = client(&s, Auth::None, quick()).create_customer(&ada()).await.unwrap_err();
    assert_eq!(e.status(), Some(409));
    assert_eq!(s.seen().len(), 1);
}

#[tokio::test]
async fn a_keyed_create_whose_first_attempt_still_runs_waits_for_it_with_the_same_key() {
    let running =
        r#"{"title":"Conflict","status":409,"detail":"`Idempotency-Key` belongs to a request that is still running"}"#;
    let s = script(vec![
        // The first attempt reached the service and its answer was lost.
        Answer::Hang,
        Answer::Reply(409, &[("retry-after", "0"), ("content-type", "application/problem+json")], running),
        json(201, CUSTOMER),
    ])
    .await;
    assert_eq!(client(&s, Auth::None, quick()).create_customer(&ada()).await.unwrap().name, "Ada");
    let seen = s.seen();
    assert_eq!(seen.len(), 3);
    let keys: Vec<&str> = seen.iter().map(|r| r.header("idempotency-key").unwrap()).collect();
    assert!(keys.iter().all(|k| *k == keys[0]), "one key for the call and its retries: {keys:?}");
}

#[tokio::test]
async fn a_dropped_connection_is_retried_for_safe_calls_only() {
    let s = script(vec![Answer::Hang, json(200, "[]")]).await;
    let c = client(&s, Auth::None, quick());
    assert!(c.list_customers().send().await.unwrap().items.is_empty());
    assert_eq!(s.seen().len(), 2, "a GET is repeated");

    let s = script(vec![Answer::Hang, json(201, CUSTOMER)]).await;
    client(&s, Auth::None, quick()).create_customer(&ada()).await.unwrap();
    let seen = s.seen();
    assert_eq!(seen[0].header("idempotency-key"), seen[1].header("idempotency-key"), "a keyed create is repeated");

    // Logging in is a POST without a key: it might have been applied, so it is not repeated.
    let s =
        script(vec![Answer::Hang, json(200, r#"{"access_token":"t","token_type":"Bearer","expires_in":60}"#)]).await;
    let e = client(&s, Auth::None, quick()).login("ann@example.com", "pw").await.unwrap_err();
    assert!(matches!(e, Error::Transport(_)), "{e:?}");
    assert_eq!(s.seen().len(), 1);
}

#[tokio::test]
async fn a_refused_connection_fails_after_its_retries() {
    // Bind and release a port: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let c = Client::builder(format!("http://127.0.0.1:{port}")).retry(quick()).build().unwrap();
    let e = c.list_customers().send().await.unwrap_err();
    assert!(matches!(&e, Error::Transport(t) if t.is_connect()), "{e:?}");
}

#[tokio::test]
async fn a_silent_service_times_out() {
    let s = script(vec![Answer::Silence]).await;
    let c = Client::builder(&s.base).retry(Retry::never()).timeout(Duration::from_millis(200)).build().unwrap();
    let e = c.list_customers().send().await.unwrap_err();
    assert!(matches!(e, Error::Timeout), "{e:?}");
}

const TOKEN_A: &str = r#"{"access_token":"token-a","token_type":"Bearer","expires_in":900}"#;
const TOKEN_B: &str = r#"{"access_token":"token-b","token_type":"Bearer","expires_in":900}"#;

#[tokio::test]
async fn login_credentials_log_in_once_and_again_when_the_token_is_refused() {
    let unauthorized = json(401, r#"{"title":"Unauthorized","status":401,"detail":"invalid token"}"#);
    let s = script(vec![
        json(200, TOKEN_A),
        json(200, "[]"),
        json(200, "[]"),
        unauthorized,
        json(200, TOKEN_B),
        json(200, "[]"),
    ])
    .await;
    assert_eq!(
        three_lists_logged_in(&s).await,
        [
            ("/api/auth/login".to_owned(), None),
            ("/api/customers".to_owned(), Some("Bearer token-a".to_owned())),
            ("/api/customers".to_owned(), Some("Bearer token-a".to_owned())),
            ("/api/customers".to_owned(), Some("Bearer token-a".to_owned())),
            ("/api/auth/login".to_owned(), None),
            ("/api/customers".to_owned(), Some("Bearer token-b".to_owned())),
        ]
    );
}

#[tokio::test]
async fn an_expired_token_is_renewed_before_the_next_call() {
    // A token that expires at once: the next call logs in first instead of sending it.
    let spent = r#"{"access_token":"token-a","token_type":"Bearer","expires_in":0}"#;
    let s = script(vec![json(200, spent), json(200, "[]"), json(200, TOKEN_B), json(200, "[]"), json(200, "[]")]).await;
    assert_eq!(
        three_lists_logged_in(&s).await,
        [
            ("/api/auth/login".to_owned(), None),
            ("/api/customers".to_owned(), Some("Bearer token-a".to_owned())),
            ("/api/auth/login".to_owned(), None),
            ("/api/customers".to_owned(), Some("Bearer token-b".to_owned())),
            ("/api/customers".to_owned(), Some("Bearer token-b".to_owned())),
        ]
    );
}

#[tokio::test]
async fn a_non_problem_error_body_still_becomes_a_typed_problem() {
    let s = script(vec![Answer::Reply(502, &[("content-type", "text/html")], "<h1>bad gateway</h1>")]).await;
    let e = client(&s, Auth::None, quick()).list_customers().send().await.unwrap_err();
    let p = e.problem().unwrap();
    assert_eq!((p.status, p.title.as_str(), p.detail.as_str()), (502, "Bad Gateway", "<h1>bad gateway</h1>"));
}

#[test]
fn bad_configurations_are_refused_when_the_client_is_built() {
    let err = |r: Result<Client, Error>| r.unwrap_err().to_string();
    assert!(err(Client::builder("not a url").build()).contains("base URL"));
    assert!(err(Client::builder("ftp://127.0.0.1").build()).contains("http(s)"));
    let fleet = fleet_client::Client::builder("http://127.0.0.1:1").auth(Auth::login("a", "b")).build();
    assert!(fleet.unwrap_err().to_string().contains("no login operation"));
}
