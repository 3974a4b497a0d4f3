//! Request ids: every answer carries one (`X-Request-Id`), a problem body quotes it, and
//! an id a trusted proxy sent is kept, so that a report can be followed from the load
//! balancer's log to the service's. (The harness checks the first two on every answer of
//! every test; the log's side is in `logs.rs`.)

use crate::backends;
use crate::support::harness::Server;
use std::collections::HashSet;

const PROXYS_ID: &str = "lb-6f1c2a1e-9c1d-4b7e-8a51-0e2c6d2b4f10";

backends!(each_answer_has_an_id_of_its_own_and_a_caller_cannot_choose_it, fleet::service());
async fn each_answer_has_an_id_of_its_own_and_a_caller_cannot_choose_it(s: Server) {
    let sent = [("x-request-id", PROXYS_ID)];
    let answers = [
        s.send_with("GET", "/v0/depots", None, &sent).await,
        s.send_with("GET", "/v0/depots/999999", None, &sent).await,
        s.send_with("PATCH", "/v0/depots", None, &sent).await,
        s.send_with("POST", "/v0/depots", Some(serde_json::json!({ "name": 7 })), &sent).await,
        s.send_with("GET", "/no/such/route", None, &sent).await,
        s.send_with("GET", "/healthz", None, &sent).await,
    ];
    let statuses: Vec<u16> = answers.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 404, 405, 400, 404, 200]);
    // The fleet trusts no proxy: the id a caller sends is nobody's word, so it is not
    // taken (or one caller could make its requests look like another's in the log).
    let ids: HashSet<&str> = answers.iter().map(|r| r.header("x-request-id").unwrap()).collect();
    assert_eq!(ids.len(), answers.len(), "one id per answer: {ids:?}");
    assert!(!ids.contains(PROXYS_ID));
    let problem: serde_json::Value = serde_json::from_str(&answers[1].text).unwrap();
    assert_eq!(problem["request_id"], answers[1].header("x-request-id").unwrap());
}

backends!(the_id_a_trusted_proxy_sends_is_the_requests_id, shop::service());
async fn the_id_a_trusted_proxy_sends_is_the_requests_id(s: Server) {
    // The shop trusts 127.0.0.1, where the test's requests come from.
    let denied = s.send_with("GET", "/api/orders", None, &[("x-request-id", PROXYS_ID)]).await;
    denied.assert_problem(401);
    assert_eq!(denied.header("x-request-id"), Some(PROXYS_ID));
    let problem: serde_json::Value = serde_json::from_str(&denied.text).unwrap();
    assert_eq!(problem["request_id"], PROXYS_ID);
    // One a log line could not carry as one token is replaced by a made one.
    for bad in ["two words", "\"quoted\"", &"x".repeat(201)] {
        let r = s.send_with("GET", "/healthz", None, &[("x-request-id", bad)]).await;
        assert_eq!(r.status, 200, "{}", r.text);
        let id = r.header("x-request-id").unwrap();
        assert!(id != bad && id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    }
}
