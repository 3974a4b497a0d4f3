//! Former paths: a collection that moved answers under its old path with a redirect to the
//! same place under the new one (301 for GET and HEAD, 308 for the rest, so the method
//! and body survive), the query kept; a client that follows redirects lands where it
//! meant to. The shop's orders were once `/purchases`, in the schema and the derive alike.

use crate::backends;
use crate::support::accounts::{call, register};
use crate::support::harness::Server;
use serde_json::json;

backends!(schema_shop_redirects_its_former_paths, shop::service());
async fn schema_shop_redirects_its_former_paths(s: Server) {
    former_paths_redirect(s).await
}

backends!(derived_shop_redirects_its_former_paths, crate::services::derived_shop::service());
async fn derived_shop_redirects_its_former_paths(s: Server) {
    former_paths_redirect(s).await
}

async fn former_paths_redirect(s: Server) {
    let ann = register(&s, "ann").await;
    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 1250 }))).await;
    assert_eq!(created.status, 201, "{}", created.text);
    let id = created.body["id"].as_str().unwrap().to_owned();
    let count = || async { call(&s, &ann, "GET", "/api/orders", None).await.body["data"].as_array().unwrap().len() };
    let before = count().await;

    // A client that does not follow redirects sees where each request is sent.
    let plain = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let cases = [
        (
            "GET",
            "/api/purchases?limit=2&sort=date_desc".to_owned(),
            301,
            "/api/orders?limit=2&sort=date_desc".to_owned(),
        ),
        ("HEAD", "/api/purchases".to_owned(), 301, "/api/orders".to_owned()),
        ("POST", "/api/purchases".to_owned(), 308, "/api/orders".to_owned()),
        ("GET", format!("/api/purchases/{id}"), 301, format!("/api/orders/{id}")),
        ("PATCH", format!("/api/purchases/{id}?x=1"), 308, format!("/api/orders/{id}?x=1")),
        ("PUT", format!("/api/purchases/{id}"), 308, format!("/api/orders/{id}")),
        ("DELETE", format!("/api/purchases/{id}"), 308, format!("/api/orders/{id}")),
    ];
    for (method, path, status, location) in cases {
        let r = plain
            .request(method.parse().unwrap(), format!("{}{path}", s.base))
            .header("authorization", ann.bearer())
            .header("content-type", "application/json")
            .body(r#"{"note": "sent to the old path"}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), status, "{method} {path}");
        assert_eq!(r.headers()["location"], location.as_str(), "{method} {path}");
    }
    // Redirects themselves change nothing.
    assert_eq!(count().await, before, "a redirected POST stored nothing");
    let unchanged = call(&s, &ann, "GET", &format!("/api/orders/{id}"), None).await;
    assert_eq!(unchanged.body, created.body, "a redirected PATCH, PUT or DELETE changed nothing");

    // A client that follows them reaches the record, by the same method with the same body.
    let read = s.send_with("GET", &format!("/api/purchases/{id}"), None, &[("authorization", &ann.bearer())]).await;
    assert_eq!((read.status, &read.body), (200, &created.body));
    let patched = s
        .send_with(
            "PATCH",
            &format!("/api/purchases/{id}"),
            Some(json!({ "note": "through the old path" })),
            &[("authorization", &ann.bearer())],
        )
        .await;
    assert_eq!(patched.status, 200, "{}", patched.text);
    assert_eq!(patched.body["note"], "through the old path");

    // Only that path moved: a longer name is no former path, and a redirect too long to
    // keep is refused rather than cut.
    s.get("/api/purchasesx").await.assert_problem(404);
    let long = format!("/api/purchases?{}", "q=1&".repeat(3000));
    let r = plain.get(format!("{}{long}", s.base)).header("authorization", ann.bearer()).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 414);

    // What the current path would refuse is refused here, not sent on: a method it does
    // not take (405), an id that cannot exist (404).
    let trace = plain
        .request(reqwest::Method::TRACE, format!("{}/api/purchases", s.base))
        .header("authorization", ann.bearer())
        .send()
        .await
        .unwrap();
    assert_eq!(trace.status().as_u16(), 405);
    let malformed = plain
        .get(format!("{}/api/purchases/not-an-id", s.base))
        .header("authorization", ann.bearer())
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status().as_u16(), 404);

    // A caller the current path would refuse is refused here too, before being sent on.
    let anonymous = plain.get(format!("{}/api/purchases/{id}", s.base)).send().await.unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
    assert!(anonymous.headers().get("location").is_none());
}
