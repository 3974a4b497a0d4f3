//! ETags, `If-None-Match` and `Cache-Control`: every representation is tagged, a read
//! whose caller holds the current one gets 304 without a body, and reads say how long
//! caches may keep them.

use crate::backends;
use crate::support::accounts::{call, register};
use crate::support::harness::{Reply, Server};
use serde_json::json;

fn tag(r: &Reply) -> String {
    let etag = r.header("etag").unwrap_or_else(|| panic!("no ETag on {}: {}", r.status, r.text)).to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"') && etag.len() == 24, "a strong tag: {etag}");
    etag
}

fn assert_not_modified(r: &Reply, etag: &str, cache: &str) {
    assert_eq!(r.status, 304, "{}", r.text);
    assert!(r.text.is_empty(), "no body: {}", r.text);
    assert_eq!(r.header("etag"), Some(etag));
    assert_eq!(r.header("cache-control"), Some(cache));
}

backends!(a_read_whose_caller_holds_the_current_representation_is_304, shop::service());
async fn a_read_whose_caller_holds_the_current_representation_is_304(s: Server) {
    let ann = register(&s, "ann").await;
    let auth = ann.bearer();
    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    let path = created.header("location").unwrap().to_owned();
    let read = call(&s, &ann, "GET", &path, None).await;
    let etag = tag(&read);
    assert_eq!(tag(&created), etag, "the create's tag is the representation's");
    // `cache: { max_age: 30, visibility: private }`
    assert_eq!(read.header("cache-control"), Some("private, max-age=30"));

    let weak = format!("W/{etag}");
    let listed = format!("\"other\", {etag}");
    for held in [etag.as_str(), weak.as_str(), "*", listed.as_str()] {
        let r = s.send_with("GET", &path, None, &[("authorization", &auth), ("if-none-match", held)]).await;
        assert_not_modified(&r, &etag, "private, max-age=30");
    }
    let head = s.send_with("HEAD", &path, None, &[("authorization", &auth), ("if-none-match", &etag)]).await;
    assert_eq!(head.status, 304);
    let stale = s.send_with("GET", &path, None, &[("authorization", &auth), ("if-none-match", "\"other\"")]).await;
    assert_eq!((stale.status, tag(&stale)), (200, etag.clone()));

    // A change makes a new representation, and the old tag no longer matches.
    let patched = call(&s, &ann, "PATCH", &path, Some(json!({ "note": "ring twice" }))).await;
    assert_eq!(patched.status, 200, "{}", patched.text);
    assert_ne!(tag(&patched), etag);
    let after = s.send_with("GET", &path, None, &[("authorization", &auth), ("if-none-match", &etag)]).await;
    assert_eq!(after.status, 200);
    assert_eq!(tag(&after), tag(&patched));
    assert_eq!(after.body["note"], "ring twice");
}

backends!(a_page_is_tagged_and_changes_when_its_records_do, shop::service());
async fn a_page_is_tagged_and_changes_when_its_records_do(s: Server) {
    let ann = register(&s, "ann").await;
    let auth = ann.bearer();
    call(&s, &ann, "POST", "/api/customers", Some(json!({ "name": "Ada" }))).await;
    let page = call(&s, &ann, "GET", "/api/customers", None).await;
    let etag = tag(&page);
    // Customers set no `cache`, and reading them needs credentials.
    assert_eq!(page.header("cache-control"), Some("private, no-cache"));
    let again = s.send_with("GET", "/api/customers", None, &[("authorization", &auth), ("if-none-match", &etag)]).await;
    assert_not_modified(&again, &etag, "private, no-cache");
    call(&s, &ann, "POST", "/api/customers", Some(json!({ "name": "Bo" }))).await;
    let changed =
        s.send_with("GET", "/api/customers", None, &[("authorization", &auth), ("if-none-match", &etag)]).await;
    assert_eq!(changed.status, 200);
    assert_eq!(changed.body.as_array().unwrap().len(), 2);
    // Another caller's page is another representation.
    let bob = register(&s, "bob").await;
    assert_ne!(tag(&call(&s, &bob, "GET", "/api/customers", None).await), etag);
}

backends!(public_data_is_no_cache_and_a_malformed_condition_is_ignored, fleet::service());
async fn public_data_is_no_cache_and_a_malformed_condition_is_ignored(s: Server) {
    let depot = s.post("/v0/depots", json!({ "name": "North" })).await;
    let path = depot.header("location").unwrap().to_owned();
    let read = s.get(&path).await;
    assert_eq!(read.header("cache-control"), Some("no-cache"), "anyone may read: no `private`");
    let etag = read.header("etag").unwrap().to_owned();
    // A malformed condition names no representation: the full answer, never a 304.
    let bare = etag.trim_matches('"').to_owned();
    for malformed in [bare.as_str(), "abc", "*, \"a\"", "0"] {
        let r = s.send_with("GET", &path, None, &[("if-none-match", malformed)]).await;
        assert_eq!((r.status, r.body["name"].as_str()), (200, Some("North")), "{malformed}");
    }
    // One longer than the documented bound is refused, naming the header.
    let long = format!("\"{}\"", "a".repeat(1100));
    let r = s.send_with("GET", "/v0/depots", None, &[("if-none-match", &long)]).await;
    r.assert_problem(400);
    assert_eq!(r.error_fields(), ["If-None-Match"]);
}
