//! The shop: registration (anyone may create a user) and its allow-list; every other
//! operation needs credentials, so without them it is refused with 401.

use crate::backends;
use crate::support::harness::Server;
use serde_json::json;

backends!(registration_creates_a_user_and_never_applies_server_fields, shop::service());
async fn registration_creates_a_user_and_never_applies_server_fields(s: Server) {
    let ok =
        s.post("/api/users", json!({ "name": "Ann", "email": "ann@example.com", "password": "correct horse" })).await;
    assert_eq!(ok.status, 201, "{}", ok.text);
    assert_eq!(ok.body["is_admin"], false);
    assert_eq!(ok.body["roles"], json!([]));
    assert!(ok.body.get("password").is_none(), "passwords are never returned");
    for (field, value) in [
        ("is_admin", json!(true)),
        ("roles", json!(["admin"])),
        ("id", json!("01a20433-c924-7155-9db6-0a7a4c0df275")),
        ("created_at", json!("2020-01-01T00:00:00Z")),
    ] {
        let mut body = json!({ "name": "Mallory", "email": "mallory@example.com", "password": "correct horse" });
        body[field] = value;
        let r = s.post("/api/users", body).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), [field]);
    }
    // Mallory was never created: the address is still free.
    let later = s
        .post("/api/users", json!({ "name": "Mallory", "email": "mallory@example.com", "password": "correct horse" }))
        .await;
    assert_eq!(later.status, 201, "{}", later.text);
    assert_eq!(later.body["is_admin"], false);
}

// A client that writes the whole body before it reads gets the answer to a body far over
// the limit (8 MiB against 1 MiB), through every layer the shop has around its routes
// (CORS, versions, load shedding, authentication, rate limits): the 413 where the body
// reaches the bound, and the refusal of a layer outside it, here a version the API does
// not have, as well. The refused body is read away first, and the connection closed.
backends!(an_oversized_upload_sent_whole_gets_its_answer_whoever_refuses_it, shop::service());
async fn an_oversized_upload_sent_whole_gets_its_answer_whoever_refuses_it(s: Server) {
    for (path, status) in [("/api/users", "413"), ("/api/v9/users", "404")] {
        let answer = s.upload_whole(path, 8 * 1024 * 1024).await;
        assert!(answer.starts_with(&format!("HTTP/1.1 {status}")), "{path}: {answer}");
        assert!(answer.to_ascii_lowercase().contains("connection: close"), "{path}: {answer}");
        assert!(answer.contains("application/problem+json"), "{path}: {answer}");
    }
}

backends!(a_taken_email_is_409_and_a_short_password_400, shop::service());
async fn a_taken_email_is_409_and_a_short_password_400(s: Server) {
    let body = json!({ "name": "Ann", "email": "ann@example.com", "password": "correct horse" });
    assert_eq!(s.post("/api/users", body.clone()).await.status, 201);
    let dup = s.post("/api/users", body).await;
    dup.assert_problem(409);
    assert_eq!(dup.error_fields(), ["email"]);
    let short = s.post("/api/users", json!({ "name": "Bo", "email": "bo@example.com", "password": "short" })).await;
    short.assert_problem(400);
    assert_eq!(short.error_fields(), ["password"]);
}

backends!(operations_that_need_a_caller_answer_401_with_www_authenticate, shop::service());
async fn operations_that_need_a_caller_answer_401_with_www_authenticate(s: Server) {
    let u =
        s.post("/api/users", json!({ "name": "Ann", "email": "ann@example.com", "password": "correct horse" })).await;
    let user = format!("/api/users/{}", u.body["id"].as_str().unwrap());
    let cases = [
        ("GET", user.clone(), None),
        ("PATCH", user.clone(), Some(json!({ "name": "X" }))),
        ("GET", "/api/orders".to_owned(), None),
        ("POST", "/api/orders".to_owned(), Some(json!({ "total_cents": 100 }))),
        ("GET", "/api/customers".to_owned(), None),
        ("GET", "/api/invoices".to_owned(), None),
        ("GET", format!("{user}/orders"), None),
    ];
    for (method, path, body) in cases {
        let r = s.send(method, &path, body).await;
        r.assert_problem(401);
        let challenge = r.header("www-authenticate").unwrap_or_default();
        assert!(challenge.starts_with("Bearer realm=\"shop\""), "{method} {path}: {challenge}");
        assert!(challenge.contains("ApiKey realm=\"shop\", header=\"X-API-Key\""), "{challenge}");
        assert!(!challenge.contains("Basic"), "the shop takes no Basic credentials: {challenge}");
    }
    let r = s.send("POST", "/api/invoices", Some(json!({}))).await;
    r.assert_problem(405);
}
