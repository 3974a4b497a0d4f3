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
    assert_eq!(r.header("content-type"), None, "no body, so no body's type");
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

/// The conditional writes of one record at `path` (an item path), by a caller whose
/// credentials are `auth`: a write whose `If-Match` names no current representation is
/// 412 with the current `ETag` and changes nothing; a current tag, `*` or a list holding
/// it lets the write through. `patch` is a body that changes the record.
async fn conditional_writes(s: &Server, auth: &[(&str, &str)], path: &str, patch: serde_json::Value) {
    fn with<'a>(auth: &[(&'a str, &'a str)], tag: &'a str) -> Vec<(&'a str, &'a str)> {
        let mut h = auth.to_vec();
        h.push(("if-match", tag));
        h
    }
    let read = s.send_with("GET", path, None, auth).await;
    let first = tag(&read);

    let weak = format!("W/{first}");
    for stale in ["\"gone\"", weak.as_str()] {
        let r = s.send_with("PATCH", path, Some(patch.clone()), &with(auth, stale)).await;
        r.assert_problem(412);
        assert_eq!(r.header("etag"), Some(first.as_str()), "412 names the current tag");
    }
    // A condition that names no version (not a list of tags) is never met: nothing is
    // written unconditionally because a header could not be read.
    let malformed = s.send_with("PATCH", path, Some(patch.clone()), &with(auth, "version 3")).await;
    malformed.assert_problem(412);
    assert_eq!(malformed.header("etag"), Some(first.as_str()));
    // A stale write is refused before its body is looked at: a bad body is still a 412.
    s.send_with("PATCH", path, Some(json!({ "no such field": 1 })), &with(auth, "\"gone\"")).await.assert_problem(412);
    assert_eq!(s.send_with("GET", path, None, auth).await.body, read.body, "refused writes changed nothing");

    let listed = format!("\"other\", {first}");
    let patched = s.send_with("PATCH", path, Some(patch.clone()), &with(auth, &listed)).await;
    assert_eq!(patched.status, 200, "{}", patched.text);
    let second = tag(&patched);
    assert_ne!(second, first);
    assert_eq!(tag(&s.send_with("GET", path, None, auth).await), second, "the answer's tag is the new one");

    // The first tag is stale now, for every write.
    let mut current = patched.body.clone();
    let replaced = s.send_with("PUT", path, Some(current.take()), &with(auth, &first)).await;
    if replaced.status != 405 {
        replaced.assert_problem(412);
        assert_eq!(replaced.header("etag"), Some(second.as_str()));
    }
    let deleted = s.send_with("DELETE", path, None, &with(auth, &first)).await;
    if deleted.status != 405 {
        deleted.assert_problem(412);
        assert_eq!(s.send_with("GET", path, None, auth).await.status, 200, "still there");
        let gone = s.send_with("DELETE", path, None, &with(auth, "*")).await;
        assert_eq!(gone.status, 204, "{}", gone.text);
        // `*` asks for the record as it stands: there is none.
        s.send_with("PATCH", path, Some(patch), &with(auth, "*")).await.assert_problem(404);
    }
}

/// Writers that all hold the record's current tag send their changes at once: the check
/// and the write are one step, so exactly one wins and every other gets 412; the record
/// is the winner's.
async fn racing_writers(s: &Server, auth: &[(&str, &str)], path: &str, patch: impl Fn(usize) -> serde_json::Value) {
    const WRITERS: usize = 8;
    let held = tag(&s.send_with("GET", path, None, auth).await);
    let mut headers = auth.to_vec();
    headers.push(("if-match", &held));
    let writes = (0..WRITERS).map(|i| s.send_with("PATCH", path, Some(patch(i)), &headers));
    let replies = futures_util::future::join_all(writes).await;
    let winners: Vec<&Reply> = replies.iter().filter(|r| r.status == 200).collect();
    assert_eq!(winners.len(), 1, "exactly one writer wins: {:?}", replies.iter().map(|r| r.status).collect::<Vec<_>>());
    for r in replies.iter().filter(|r| r.status != 200) {
        r.assert_problem(412);
    }
    let now = s.send_with("GET", path, None, auth).await;
    assert_eq!(now.body, winners[0].body, "the record is the winner's");
}

backends!(a_write_holding_a_stale_tag_is_412_and_changes_nothing, shop::service());
async fn a_write_holding_a_stale_tag_is_412_and_changes_nothing(s: Server) {
    let ann = register(&s, "ann").await;
    let auth = ann.bearer();
    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    let path = created.header("location").unwrap().to_owned();
    conditional_writes(&s, &[("authorization", &auth)], &path, json!({ "note": "ring twice" })).await;
    // Without `If-Match`, orders are written unconditionally, as before.
    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    let path = created.header("location").unwrap().to_owned();
    assert_eq!(call(&s, &ann, "PATCH", &path, Some(json!({ "note": "n" }))).await.status, 200);
    assert_eq!(call(&s, &ann, "DELETE", &path, None).await.status, 204);
}

backends!(of_writers_holding_the_same_tag_exactly_one_wins, shop::service());
async fn of_writers_holding_the_same_tag_exactly_one_wins(s: Server) {
    let ann = register(&s, "ann").await;
    let auth = ann.bearer();
    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    let path = created.header("location").unwrap().to_owned();
    for round in 0..3 {
        racing_writers(
            &s,
            &[("authorization", &auth)],
            &path,
            |i| json!({ "note": format!("round {round}, writer {i}") }),
        )
        .await;
    }
    // Deleting races the same way: one 204, the rest 412 or (once it is gone) 404.
    let held = tag(&call(&s, &ann, "GET", &path, None).await);
    let headers = [("authorization", auth.as_str()), ("if-match", held.as_str())];
    let deletes = (0..8).map(|_| s.send_with("DELETE", &path, None, &headers));
    let statuses: Vec<u16> = futures_util::future::join_all(deletes).await.iter().map(|r| r.status).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 204).count(), 1, "{statuses:?}");
    assert!(statuses.iter().all(|s| [204, 404, 412].contains(s)), "{statuses:?}");
}

backends!(a_derived_resource_holds_writes_to_if_match_the_same_way, crate::services::derived::service());
async fn a_derived_resource_holds_writes_to_if_match_the_same_way(s: Server) {
    // `#[resource(require_if_match)]`: a write without the condition is 428.
    let note = s.post("/api/notes", json!({ "text": "draft" })).await;
    assert_eq!(note.status, 201, "{}", note.text);
    let path = note.header("location").unwrap().to_owned();
    let crate::services::derived::Note { id, text, created_at, updated_at } =
        serde_json::from_value(note.body.clone()).unwrap();
    assert_eq!((path.rsplit('/').next(), text.as_str()), (Some(id.to_string().as_str()), "draft"));
    assert_eq!(created_at, updated_at);
    for method in ["PUT", "PATCH"] {
        let r = s.send(method, &path, Some(json!({ "text": "unconditional" }))).await;
        r.assert_problem(428);
    }
    s.send("DELETE", &path, None).await.assert_problem(428);
    assert_eq!(s.get(&path).await.body, note.body, "refused writes changed nothing");
    conditional_writes(&s, &[], &path, json!({ "text": "second draft" })).await;
    let note = s.post("/api/notes", json!({ "text": "draft" })).await;
    let path = note.header("location").unwrap().to_owned();
    racing_writers(&s, &[], &path, |i| json!({ "text": format!("writer {i}") })).await;
}
