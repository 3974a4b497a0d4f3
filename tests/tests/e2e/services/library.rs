//! The library (`tests/fixtures/valid/library.yaml`), a second domain with Basic
//! credentials, API keys, integer ids and a role that is not an admin's, driven through
//! its API as its users would.

use crate::backends;
use crate::support::harness::{Reply, Server};
use base64::Engine;
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse battery";

/// Basic credentials of a library card.
fn card(number: &str) -> (&'static str, String) {
    let pair = format!("{number}:{PASSWORD}");
    ("authorization", format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair)))
}

async fn call(s: &Server, who: &str, method: &str, path: &str, body: Option<Value>) -> Reply {
    let (name, value) = card(who);
    s.send_with(method, path, body, &[(name, &value)]).await
}

/// The first librarian, seeded as an operator would (`LIBRARY_ADMIN`).
async fn librarian(s: &Server) -> &'static str {
    let json = json!({ "card_number": "00000001", "full_name": "Libby", "password": PASSWORD }).to_string();
    let auth = library::generated::resources::AUTH.as_ref().unwrap();
    restgen::auth::bootstrap_admin(&s.store, auth, &json).await.unwrap();
    "00000001"
}

/// A member, signed up by the librarian (members cannot sign themselves up here).
async fn member(s: &Server, librarian: &str, number: &'static str, name: &str) -> &'static str {
    let body = json!({ "card_number": number, "full_name": name, "password": PASSWORD });
    let r = call(s, librarian, "POST", "/members", Some(body)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    number
}

/// A book the librarian catalogues, and its id.
async fn a_book(s: &Server, librarian: &str) -> Value {
    let author = call(s, librarian, "POST", "/authors", Some(json!({ "name": "Ursula" }))).await;
    assert_eq!(author.status, 201, "{}", author.text);
    let book = json!({ "title": "The Dispossessed", "isbn": "9780060512750", "author_id": author.body["id"] });
    let book = call(s, librarian, "POST", "/books", Some(book)).await;
    assert_eq!(book.status, 201, "{}", book.text);
    book.body["id"].clone()
}

// Reading lists are their members' own (`read: [owner]`): an entry may name only a list
// its author may read. Another member's list is, to Bob, exactly a list that does not
// exist, so the answer tells him nothing of Ann's; a librarian (an admin) may name any.
backends!(an_entry_names_only_a_reading_list_its_author_may_read, library::service());
async fn an_entry_names_only_a_reading_list_its_author_may_read(s: Server) {
    let libby = librarian(&s).await;
    let ann = member(&s, libby, "10000001", "Ann").await;
    let bob = member(&s, libby, "10000002", "Bob").await;
    let book_id = a_book(&s, libby).await;
    let list = call(&s, ann, "POST", "/reading-lists", Some(json!({ "name": "Summer" }))).await;
    assert_eq!(list.status, 201, "{}", list.text);
    let entry = |who, list_id: &Value| {
        let body = json!({ "reading_list_id": list_id, "book_id": book_id });
        let s = &s;
        async move { call(s, who, "POST", "/entries", Some(body)).await }
    };
    let before = call(&s, libby, "GET", "/entries", None).await;
    let foreign = entry(bob, &list.body["id"]).await;
    foreign.assert_problem(400);
    assert_eq!(foreign.error_fields(), ["reading_list_id"], "{}", foreign.text);
    let missing = entry(bob, &json!("0190b6a4-0000-7000-8000-0000000000dd")).await;
    assert_eq!(foreign.body, missing.body, "Ann's list answers as a missing one");
    assert_eq!(call(&s, libby, "GET", "/entries", None).await.body, before.body, "nothing written");
    assert_eq!(entry(ann, &list.body["id"]).await.status, 201, "her own list");
    assert_eq!(entry(libby, &list.body["id"]).await.status, 201, "a librarian reads every list");
}

fn stars(r: &Reply) -> Vec<i64> {
    let mut ids: Vec<i64> = r.body["data"].as_array().unwrap().iter().map(|v| v["stars"].as_i64().unwrap()).collect();
    ids.sort();
    ids
}

// A member lists their own reviews of a book nobody owns and anyone may read: the book
// is judged by its own rules, the reviews by theirs (only one's own).
backends!(a_member_lists_their_reviews_of_a_book_nobody_owns, library::service());
async fn a_member_lists_their_reviews_of_a_book_nobody_owns(s: Server) {
    let libby = librarian(&s).await;
    let ann = member(&s, libby, "10000001", "Ann").await;
    let bob = member(&s, libby, "10000002", "Bob").await;
    let book_id = a_book(&s, libby).await;
    for (who, stars) in [(ann, 5), (ann, 4), (ann, 3), (bob, 1)] {
        let r = call(&s, who, "POST", "/reviews", Some(json!({ "book_id": book_id, "stars": stars }))).await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let reviews = format!("/books/{book_id}/reviews");

    let mine = call(&s, ann, "GET", &reviews, None).await;
    assert_eq!(mine.status, 200, "{}", mine.text);
    assert_eq!(stars(&mine), [3, 4, 5], "exactly Ann's three reviews");
    assert!(mine.body["data"].as_array().unwrap().iter().all(|r| r["book_id"] == book_id));
    let theirs = call(&s, bob, "GET", &reviews, None).await;
    assert_eq!(stars(&theirs), [1], "Bob sees his one");
    let all = call(&s, libby, "GET", &reviews, None).await;
    assert_eq!(stars(&all), [1, 3, 4, 5], "a librarian sees every review");
    // Reviews are read by their owners: nobody anonymous lists them, wherever they hang.
    s.get(&reviews).await.assert_problem(401);
    // The book exists only once: another id is the 404 of a missing parent.
    call(&s, ann, "GET", "/books/987654/reviews", None).await.assert_problem(404);
}

// Manuscripts are changed only conditionally (`require_if_match`): the archivists'
// client has only the conditional writes, a write from a stale read is a typed
// `Error::Changed` carrying the current tag, and one without a condition is a 428.
backends!(archivists_change_a_manuscript_only_from_its_current_version, library::service());
async fn archivists_change_a_manuscript_only_from_its_current_version(s: Server) {
    use library_client::{CreateManuscript, PatchManuscript, ReplaceManuscript};
    use restgen_client::{Auth, Error};
    let libby = librarian(&s).await;
    let body = json!({ "card_number": "20000001", "full_name": "Ari", "password": PASSWORD, "roles": ["archivist"] });
    assert_eq!(call(&s, libby, "POST", "/members", Some(body)).await.status, 201);
    let archive = call(&s, libby, "POST", "/archives", Some(json!({ "name": "Letters" }))).await;
    assert_eq!(archive.status, 201, "{}", archive.text);
    let client = |number: &str| {
        library_client::Client::builder(&s.base).auth(Auth::basic(number, PASSWORD)).build().expect("client builds")
    };
    let (ari, other) = (client("20000001"), client("20000001"));
    let archive_id = archive.body["id"].as_i64().unwrap();
    let created = ari.create_manuscript(&CreateManuscript { archive_id, title: "Draft".into() }).await.unwrap();

    // Two archivists read the same version; the first to write wins.
    let mine = ari.get_manuscript_tagged(created.id).await.unwrap();
    let theirs = other.get_manuscript_tagged(created.id).await.unwrap();
    assert_eq!(mine, theirs);
    let patch = PatchManuscript { title: Some("Letters to Vera".into()) };
    let written = ari.update_manuscript_if(created.id, &mine.etag, &patch).await.unwrap();
    assert_eq!(written.title, "Letters to Vera");
    assert_ne!(written.etag, mine.etag);
    let replace = ReplaceManuscript { title: "Letters".into() };
    match other.replace_manuscript_if(created.id, &theirs.etag, &replace).await {
        Err(Error::Changed(problem)) => {
            assert_eq!(problem.status, 412);
            assert_eq!(problem.etag.as_deref(), Some(written.etag.as_str()), "the current tag, to read again");
        }
        other => panic!("expected Error::Changed, got {other:?}"),
    }
    // Only librarians delete; a stale tag stops them too (after their right to delete).
    assert!(
        matches!(other.delete_manuscript_if(created.id, &written.etag).await, Err(Error::Api(p)) if p.status == 403)
    );
    let librarian_client = client(libby);
    let stale = librarian_client.delete_manuscript_if(created.id, &theirs.etag).await;
    assert!(matches!(stale, Err(Error::Changed(_))), "{stale:?}");
    // Read again, then write from the current version.
    let fresh = other.get_manuscript_tagged(created.id).await.unwrap();
    let replaced = other.replace_manuscript_if(created.id, &fresh.etag, &replace).await.unwrap();
    assert_eq!(replaced.title, "Letters");

    // A write without the condition, as a client written by hand might send it: 428.
    let path = format!("/manuscripts/{}", created.id);
    let (name, value) = card("20000001");
    let unconditional = s.send_with("PATCH", &path, Some(json!({ "title": "x" })), &[(name, &value)]).await;
    unconditional.assert_problem(428);
    let refused = ari.transport().patch::<_, serde_json::Value>(&path, &json!({ "title": "x" })).await;
    assert!(matches!(refused, Err(Error::ConditionRequired(_))), "{refused:?}");
    // Deleting takes the condition too (a librarian deletes).
    let (name, value) = card(libby);
    s.send_with("DELETE", &path, None, &[(name, &value)]).await.assert_problem(428);
    let current = other.get_manuscript_tagged(created.id).await.unwrap();
    let headers = [(name, value.as_str()), ("if-match", current.etag.as_str())];
    assert_eq!(s.send_with("DELETE", &path, None, &headers).await.status, 204);
}

// Reviews are under a leaky bucket (three in the bucket, two a second per member): a
// burst is not served at once but spaced, each request held until its turn, and what
// does not fit is a 429. The clock is manual: the test moves it, and nothing waits for
// real time.
backends!(
    a_burst_of_reviews_is_let_through_at_a_steady_pace,
    library::service(),
    settings = crate::support::harness::manual_clock(1.0)
);
async fn a_burst_of_reviews_is_let_through_at_a_steady_pace(s: Server) {
    let libby = librarian(&s).await;
    let ann = member(&s, libby, "10000001", "Ann").await;
    let bob = member(&s, libby, "10000002", "Bob").await;
    let first = call(&s, ann, "GET", "/reviews", None).await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.header("ratelimit"), Some("\"review\";r=2;t=1"));
    assert_eq!(first.header("ratelimit-policy"), Some("\"review\";q=3;w=2"));

    // Two more at once: each waits for its turn, half a second apart.
    let send = |who: &str| {
        let (name, value) = card(who);
        let request = s.client.get(format!("{}/reviews", s.base)).header(name, value);
        tokio::spawn(async move { request.send().await.map(|r| r.status().as_u16()) })
    };
    let (second, third) = (send(ann), send(ann));
    s.settings.clock.sleepers(2).await;
    // The bucket is full: the next is refused, and told when a place is free.
    let refused = call(&s, ann, "GET", "/reviews", None).await;
    refused.assert_problem(429);
    assert_eq!(refused.header("retry-after"), Some("1"));
    // Another member has a bucket of their own.
    assert_eq!(call(&s, bob, "GET", "/reviews", None).await.status, 200);
    assert!(!second.is_finished() && !third.is_finished(), "both wait their turn");

    // Which of the two reached the bucket first is the scheduler's choice: that one leaves
    // half a second after the first request, the other half a second later.
    s.settings.clock.advance(std::time::Duration::from_millis(500));
    let (earlier, later) = match futures_util::future::select(second, third).await {
        futures_util::future::Either::Left((done, waiting)) | futures_util::future::Either::Right((done, waiting)) => {
            (done, waiting)
        }
    };
    assert_eq!(earlier.unwrap().unwrap(), 200, "one leaves half a second after the first");
    s.settings.clock.sleepers(1).await;
    assert!(!later.is_finished(), "the other still waits");
    s.settings.clock.advance(std::time::Duration::from_millis(500));
    assert_eq!(later.await.unwrap().unwrap(), 200);
    // The bucket has drained: a request goes straight through again.
    s.settings.clock.advance(std::time::Duration::from_millis(500));
    let again = call(&s, ann, "GET", "/reviews", None).await;
    assert_eq!((again.status, again.header("ratelimit")), (200, Some("\"review\";r=2;t=1")));
}
