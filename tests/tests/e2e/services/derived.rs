//! A service written by hand with `#[derive(Resource)]`, mounted on `restgen::App`: the
//! same runtime behaviour as a generated service, from attributes instead of a schema.

use crate::backends;
use crate::support::harness::Server;
use restgen::__private::chrono::{DateTime, Utc};
use restgen::__private::uuid::Uuid;
use restgen::{App, Resource};
use serde_json::{Value, json};

/// A bookmark anyone may keep.
#[derive(Resource, serde::Deserialize)]
#[resource(
    path = "/bookmarks",
    access(all = [anyone]),
    pagination(style = cursor, default_size = 2, max_size = 50),
    formats(json, csv)
)]
pub struct Bookmark {
    pub id: Uuid,
    #[field(settable, url, unique)]
    pub url: String,
    #[field(settable, min_length = 1, max_length = 80, sort)]
    pub title: String,
    #[field(settable(create, patch), text)]
    pub note: Option<String>,
    #[field(values(unread, read, archived), default = "unread", settable(patch), filter)]
    pub state: BookmarkState,
    /// Counted by the service, never by a client.
    #[field(default = 0, min = 0)]
    pub visits: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A reading list, with integer ids and offset paging.
#[derive(Resource, serde::Deserialize)]
#[resource(path = "/lists", operations(create, get, list, delete), access(all = [anyone]), pagination(style = offset))]
pub struct List {
    pub id: i64,
    #[field(settable, max_length = 40)]
    pub name: String,
}

/// A shared note: changed only by writers who name the version they read (`If-Match`).
#[derive(Resource, serde::Deserialize)]
#[resource(
    path = "/notes",
    access(all = [anyone]),
    require_if_match,
    rate_limit(algorithm = leaky_bucket, capacity = 20, leak_per_second = 50.0, key = ip)
)]
pub struct Note {
    pub id: i64,
    #[field(settable, min_length = 1, max_length = 200)]
    pub text: String,
    pub updated_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
}

/// A feedback form: a body that is not a resource, read by a handler written by hand.
#[derive(restgen::Input, serde::Serialize)]
pub struct Feedback {
    #[field(settable, text, min_length = 1, max_length = 500)]
    pub message: String,
    #[field(settable, email)]
    pub reply_to: Option<String>,
    #[field(values(low, high), settable, default = "low")]
    pub urgency: FeedbackUrgency,
    /// Decided by the service, never by the client.
    pub trusted: bool,
    #[field(default = 3)]
    pub priority: i64,
}

/// Echoes what the form let through.
async fn feedback(restgen::Valid(form): restgen::Valid<Feedback>) -> restgen::__private::axum::Json<Feedback> {
    restgen::__private::axum::Json(form)
}

pub(crate) fn service() -> restgen::serve::Service {
    use restgen::__private::axum::{Router, routing::post};
    App::new("bookmarks")
        .base_path("/api")
        .resource::<Bookmark>()
        .resource::<List>()
        .resource::<Note>()
        .routes(Router::new().route("/api/feedback", post(feedback)))
        .into_service()
}

async fn bookmark(s: &Server, url: &str, title: &str) -> Value {
    let r = s.post("/api/bookmarks", json!({ "url": url, "title": title })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body
}

backends!(derived_resources_answer_every_operation, service());
async fn derived_resources_answer_every_operation(s: Server) {
    let b = bookmark(&s, "https://example.com/a", "A").await;
    let path = format!("/api/bookmarks/{}", b["id"].as_str().unwrap());
    assert_eq!(b["state"], "unread");
    assert_eq!(b["visits"], 0, "default applied");
    assert!(b["created_at"].is_string());
    assert_eq!(s.get(&path).await.body, b);
    // The struct is the representation: the service's answers read into it.
    let typed: Bookmark = serde_json::from_value(b.clone()).unwrap();
    assert_eq!(typed.id.to_string(), b["id"].as_str().unwrap());
    assert_eq!((typed.url.as_str(), typed.title.as_str(), typed.note), ("https://example.com/a", "A", None));
    assert_eq!((typed.state, typed.visits), (BookmarkState::Unread, 0));
    assert_eq!(typed.created_at, typed.updated_at);
    let patched = s.send("PATCH", &path, Some(json!({ "note": "later", "state": "read" }))).await;
    assert_eq!(patched.status, 200, "{}", patched.text);
    assert_eq!((patched.body["note"].as_str(), patched.body["state"].as_str()), (Some("later"), Some("read")));
    // PUT replaces: `note` is not settable in replace, so it stays; `title` changes.
    let replaced = s.send("PUT", &path, Some(json!({ "url": "https://example.com/a", "title": "A2" }))).await;
    assert_eq!(replaced.status, 200, "{}", replaced.text);
    assert_eq!((replaced.body["title"].as_str(), replaced.body["note"].as_str()), (Some("A2"), Some("later")));
    assert_eq!(s.send("DELETE", &path, None).await.status, 204);
    assert_eq!(s.get(&path).await.status, 404);

    // A second resource with integer ids and only some operations.
    let list = s.post("/api/lists", json!({ "name": "Weekend" })).await;
    assert_eq!(list.status, 201, "{}", list.text);
    let typed: List = serde_json::from_value(list.body.clone()).unwrap();
    assert_eq!((typed.id, typed.name.as_str()), (list.body["id"].as_i64().unwrap(), "Weekend"));
    let item = format!("/api/lists/{}", list.body["id"]);
    let put = s.send("PUT", &item, Some(json!({ "name": "x" }))).await;
    put.assert_problem(405);
    assert!(put.header("allow").unwrap().contains("GET"));
}

backends!(a_derived_input_applies_only_what_a_client_may_set, service());
async fn a_derived_input_applies_only_what_a_client_may_set(s: Server) {
    // `visits` and `id` are the server's: refused, naming them, and never applied.
    for (field, value) in [("visits", json!(99)), ("id", json!("0190b6a4-0000-7000-8000-000000000000"))] {
        let mut body = json!({ "url": "https://example.com/x", "title": "X" });
        body[field] = value;
        let r = s.post("/api/bookmarks", body).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), [field]);
    }
    // `state` is settable in patch only; `note` not in replace.
    let r = s.post("/api/bookmarks", json!({ "url": "https://example.com/z", "title": "Z", "state": "read" })).await;
    assert_eq!(r.error_fields(), ["state"]);
    let b = bookmark(&s, "https://example.com/y", "Y").await;
    let path = format!("/api/bookmarks/{}", b["id"].as_str().unwrap());
    let r = s.send("PUT", &path, Some(json!({ "url": "https://example.com/y", "title": "Y", "note": "n" }))).await;
    assert_eq!(r.error_fields(), ["note"]);
    // Bounds, formats and uniqueness from the attributes.
    let r = s.post("/api/bookmarks", json!({ "url": "not a url", "title": "" })).await;
    r.assert_problem(400);
    let mut fields = r.error_fields();
    fields.sort();
    assert_eq!(fields, ["title", "url"]);
    let r = s.send("PATCH", &path, Some(json!({ "state": "lost" }))).await;
    assert_eq!(r.error_fields(), ["state"]);
    s.post("/api/bookmarks", json!({ "url": "https://example.com/y", "title": "again" })).await.assert_problem(409);
    assert_eq!(s.get(&path).await.body["visits"], 0);
}

backends!(derived_lists_page_filter_and_sort, service());
async fn derived_lists_page_filter_and_sort(s: Server) {
    for (i, title) in ["c", "a", "e", "b", "d"].iter().enumerate() {
        bookmark(&s, &format!("https://example.com/{i}"), title).await;
    }
    // Cursor pages of two, sorted by title, followed to the end.
    let mut titles = Vec::new();
    let mut next = Some("/api/bookmarks?sort=title_asc".to_owned());
    while let Some(url) = next.take() {
        let page = s.get(&url).await;
        assert_eq!(page.status, 200, "{}", page.text);
        titles.extend(page.body["data"].as_array().unwrap().iter().map(|b| b["title"].as_str().unwrap().to_owned()));
        next = page.header("link").map(|l| l.trim_start_matches('<').split('>').next().unwrap().to_owned());
    }
    assert_eq!(titles, ["a", "b", "c", "d", "e"]);
    // The same list as CSV (`formats(json, csv)`): the titles in the same order.
    let csv = s.send_with("GET", "/api/bookmarks?sort=title_asc&limit=50", None, &[("accept", "text/csv")]).await;
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8; header=present"), "{}", csv.text);
    let mut lines = csv.text.split("\r\n");
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let title = header.iter().position(|c| *c == "title").expect("a title column");
    let column: Vec<&str> = lines.filter(|l| !l.is_empty()).map(|l| l.split(',').nth(title).unwrap()).collect();
    assert_eq!(column, titles);
    // The filter the attribute allows, and none other.
    assert_eq!(s.get("/api/bookmarks?state=unread&limit=50").await.body["data"].as_array().unwrap().len(), 5);
    s.get("/api/bookmarks?title=a").await.assert_problem(400);
    // Offset paging on the other resource.
    for n in ["x", "y", "z"] {
        s.post("/api/lists", json!({ "name": n })).await;
    }
    let page = s.get("/api/lists?limit=2&offset=2").await;
    assert_eq!(page.body["data"].as_array().unwrap().len(), 1, "{}", page.text);
}

backends!(a_derived_input_takes_only_its_settable_fields, service());
async fn a_derived_input_takes_only_its_settable_fields(s: Server) {
    let r = s.post("/api/feedback", json!({ "message": "Lovely" })).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({ "message": "Lovely", "reply_to": null, "urgency": "low", "trusted": false, "priority": 3 })
    );
    let r = s.post("/api/feedback", json!({ "message": "Hi", "reply_to": "ann@example.com", "urgency": "high" })).await;
    assert_eq!((r.body["reply_to"].as_str(), r.body["urgency"].as_str()), (Some("ann@example.com"), Some("high")));
    // The fields the service decides are refused, naming them, and never applied.
    for field in ["trusted", "priority"] {
        let mut body = json!({ "message": "Hi" });
        body[field] = json!(true);
        let r = s.post("/api/feedback", body).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), [field]);
    }
    // Rules and types, each refusal naming its field.
    let r = s.post("/api/feedback", json!({ "message": "", "reply_to": "nobody" })).await;
    r.assert_problem(400);
    let mut fields = r.error_fields();
    fields.sort();
    assert_eq!(fields, ["message", "reply_to"]);
    assert_eq!(s.post("/api/feedback", json!({})).await.error_fields(), ["message"]);
    assert_eq!(s.post("/api/feedback", json!({ "message": "x", "urgency": "now" })).await.error_fields(), ["urgency"]);
    s.raw("POST", "/api/feedback", "text/plain", b"hi".to_vec()).await.assert_problem(415);
}
