//! `Idempotency-Key` on creates: the first answer is kept and given again to retries,
//! never creating twice; another body under the same key is a 422; keys belong to a
//! caller and a path; answers are kept for 24 hours (a manual clock moves past them).

use crate::backends;
use crate::support::accounts::{Account, register};
use crate::support::harness::{Reply, Server};
use futures_util::future::join_all;
use serde_json::{Value, json};
use std::time::Duration;

async fn create(s: &Server, who: &Account, path: &str, key: &str, body: Value) -> Reply {
    s.send_with("POST", path, Some(body), &[("authorization", &who.bearer()), ("idempotency-key", key)]).await
}

async fn orders_of(s: &Server, who: &Account) -> usize {
    let r = s.send_with("GET", "/api/orders?limit=100", None, &[("authorization", &who.bearer())]).await;
    r.body["data"].as_array().unwrap().len()
}

backends!(
    a_retry_gets_the_first_answer_and_creates_nothing,
    shop::service(),
    settings = crate::support::harness::manual_clock(1000.0)
);
async fn a_retry_gets_the_first_answer_and_creates_nothing(s: Server) {
    let ann = register(&s, "ann").await;
    let key = "5f2b9c1e-7d3a-4b8e-9f10-2a3b4c5d6e7f";
    let first = create(&s, &ann, "/api/orders", key, json!({ "total_cents": 1250 })).await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert!(first.header("idempotent-replayed").is_none());
    let again = create(&s, &ann, "/api/orders", key, json!({ "total_cents": 1250 })).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, first.body, "the same record, not a new one");
    for h in ["location", "etag", "content-type"] {
        assert_eq!(again.header(h), first.header(h), "{h}");
    }
    assert_eq!(orders_of(&s, &ann).await, 1);

    // Another body under the same key is refused, naming the key; nothing is created.
    let other = create(&s, &ann, "/api/orders", key, json!({ "total_cents": 999 })).await;
    other.assert_problem(422);
    assert_eq!(other.error_fields(), ["Idempotency-Key"]);
    assert_eq!(orders_of(&s, &ann).await, 1);

    // A refusal is an answer too: kept and given again.
    let bad = create(&s, &ann, "/api/orders", "bad-1", json!({ "total_cents": -1 })).await;
    bad.assert_problem(400);
    let bad_again = create(&s, &ann, "/api/orders", "bad-1", json!({ "total_cents": -1 })).await;
    assert_eq!((bad_again.status, bad_again.header("idempotent-replayed")), (400, Some("true")));
    assert_eq!(bad_again.body, bad.body);
    // The first answer as it was, naming the request it came from; the replay's own id
    // is in its header.
    assert_eq!(bad_again.text, bad.text);
    assert_ne!(bad_again.header("x-request-id"), bad.header("x-request-id"));

    // Kept for 24 hours: after that the key is new again.
    s.settings.clock.advance(Duration::from_secs(24 * 60 * 60));
    let later = create(&s, &ann, "/api/orders", key, json!({ "total_cents": 1250 })).await;
    assert_eq!(later.status, 201);
    assert!(later.header("idempotent-replayed").is_none());
    assert_ne!(later.body["id"], first.body["id"]);
    assert_eq!(orders_of(&s, &ann).await, 2);
}

backends!(keys_belong_to_a_caller_and_a_path, shop::service());
async fn keys_belong_to_a_caller_and_a_path(s: Server) {
    let ann = register(&s, "ann").await;
    let bob = register(&s, "bob").await;
    let body = json!({ "total_cents": 100 });
    let ann_order = create(&s, &ann, "/api/orders", "k1", body.clone()).await;
    // Bob's request with Ann's key is his own: it never sees her answer.
    let bob_order = create(&s, &bob, "/api/orders", "k1", body).await;
    assert_eq!(bob_order.status, 201);
    assert!(bob_order.header("idempotent-replayed").is_none());
    assert_ne!(bob_order.body["id"], ann_order.body["id"]);
    assert_eq!(bob_order.body["owner_id"], bob.id.as_str());
    // The same key on another collection is another key.
    let customer = create(&s, &ann, "/api/customers", "k1", json!({ "name": "Ada" })).await;
    assert_eq!(customer.status, 201);
    assert!(customer.header("idempotent-replayed").is_none());
    // Anonymous registration takes keys too.
    let reg = json!({ "name": "cy", "email": "cy@example.com", "password": "correct horse" });
    let first = s.send_with("POST", "/api/users", Some(reg.clone()), &[("idempotency-key", "signup")]).await;
    let again = s.send_with("POST", "/api/users", Some(reg), &[("idempotency-key", "signup")]).await;
    assert_eq!((first.status, again.status), (201, 201), "a retried sign-up is not a 409 for a taken e-mail");
    assert_eq!(again.body["id"], first.body["id"]);
}

backends!(a_malformed_key_is_400_and_creates_nothing, shop::service());
async fn a_malformed_key_is_400_and_creates_nothing(s: Server) {
    let ann = register(&s, "ann").await;
    for bad in ["with space", &"k".repeat(256)] {
        let r = create(&s, &ann, "/api/orders", bad, json!({ "total_cents": 1 })).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), ["Idempotency-Key"]);
    }
    assert_eq!(orders_of(&s, &ann).await, 0);
}

backends!(concurrent_requests_with_one_key_create_one_record, shop::service());
async fn concurrent_requests_with_one_key_create_one_record(s: Server) {
    let ann = register(&s, "ann").await;
    let body = json!({ "total_cents": 700 });
    let replies = join_all((0..12).map(|_| create(&s, &ann, "/api/orders", "race", body.clone()))).await;
    assert_eq!(orders_of(&s, &ann).await, 1, "one record, whatever the interleaving");
    let created: Vec<&Reply> = replies.iter().filter(|r| r.status == 201).collect();
    assert!(!created.is_empty());
    assert!(created.iter().all(|r| r.body["id"] == created[0].body["id"]), "every 201 is the one record");
    for r in replies.iter().filter(|r| r.status != 201) {
        r.assert_problem(409);
        assert_eq!(r.header("retry-after"), Some("1"));
    }
    // Once the first has finished, every retry gets its answer.
    let late = create(&s, &ann, "/api/orders", "race", body).await;
    assert_eq!((late.status, &late.body["id"]), (201, &created[0].body["id"]));
}
