//! The change feed (`GET {collection}/changes`) with a real Server-Sent Events reader: each
//! caller shown what their list would show, field by field; every change once, in order,
//! across a reconnect, a restart and two instances; filters; a reset for an id the log no
//! longer keeps; a slow reader, an expired token, revoked access, the caps on open
//! streams, heartbeats; and the generated client's typed stream resuming by itself.

use crate::backends;
use crate::support::accounts::{Account, admin, call, claims, register, with_role};
use crate::support::harness::{JWT_SECRET, Server, quick_feed, secrets, unthrottled};
use eventsource_stream::{Event, Eventsource};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use restgen::feed::FeedSettings;
use restgen::serve::Settings;
use restgen::spec::Rule;
use serde_json::{Value, json};
use std::time::Duration;

/// How long an event that must come may take.
const PATIENCE: Duration = Duration::from_secs(15);
const CUSTOMERS: &str = "/api/customers/changes";

/// One open stream, read event by event.
struct Feed {
    events: BoxStream<'static, Result<Event, String>>,
}

impl Feed {
    /// Opens `path` with these headers; panics unless the service answers 200 with an
    /// event stream.
    async fn open(s: &Server, path: &str, headers: &[(&str, &str)]) -> Feed {
        let response = get(s, path, headers).await;
        assert_eq!(response.status(), 200, "{path}: {:?}", response.text().await);
        let kind = response.headers()["content-type"].to_str().unwrap().to_owned();
        assert_eq!(kind, "text/event-stream");
        Feed { events: response.bytes_stream().eventsource().map(|e| e.map_err(|e| e.to_string())).boxed() }
    }

    async fn as_(s: &Server, who: &Account, path: &str, last: Option<&str>) -> Feed {
        let bearer = who.bearer();
        let mut headers = vec![("authorization", bearer.as_str())];
        if let Some(id) = last {
            headers.push(("last-event-id", id));
        }
        Feed::open(s, path, &headers).await
    }

    /// The next event; panics if none comes in time or the stream ends.
    async fn next(&mut self) -> Event {
        match tokio::time::timeout(PATIENCE, self.events.next()).await {
            Ok(Some(Ok(event))) => event,
            other => panic!("expected an event, got {other:?}"),
        }
    }

    /// The next event, which must be of `kind`; its data.
    async fn expect(&mut self, kind: &str) -> (Event, Value) {
        let event = self.next().await;
        assert_eq!(event.event, kind, "{event:?}");
        let data = serde_json::from_str(&event.data).unwrap();
        (event, data)
    }

    /// Whether the stream ends (the service closed it) within patience.
    async fn ends(&mut self) -> bool {
        matches!(tokio::time::timeout(PATIENCE, self.events.next()).await, Ok(None | Some(Err(_))))
    }
}

async fn get(s: &Server, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = s.client.get(format!("{}{path}", s.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

/// A customer of `who`'s, with a name and these other fields.
async fn customer(s: &Server, who: &Account, name: &str, more: Value) -> String {
    let mut body = json!({ "name": name });
    body.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
    let r = call(s, who, "POST", "/api/customers", Some(body)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["id"].as_str().unwrap().to_owned()
}

fn seq(event: &Event) -> i64 {
    event.id.parse().unwrap_or_else(|_| panic!("an event id is a position: {event:?}"))
}

/// What the customer spec says `roles` (and owning the record or not) admit to `f`.
fn sees(field: &str, owns: bool, roles: &[&str]) -> bool {
    let spec = &shop::generated::resources::CUSTOMER;
    let f = spec.fields.iter().find(|f| f.name == field).unwrap();
    f.read.is_none_or(|rules| {
        rules.iter().any(|rule| match rule {
            Rule::Anyone | Rule::Authenticated => true,
            Rule::Owner => owns,
            Rule::Role(r) => roles.contains(r),
        })
    })
}

/// Every field with a `read` list is in the event's record exactly where the rules say.
fn shown_as_rules_say(data: &Value, owns: bool, roles: &[&str]) {
    for f in shop::generated::resources::CUSTOMER.fields.iter().filter(|f| f.read.is_some()) {
        assert_eq!(data.get(f.name).is_some(), sees(f.name, owns, roles), "`{}` in {data}", f.name);
    }
}

backends!(each_caller_is_shown_what_their_list_would_show, shop::service());
async fn each_caller_is_shown_what_their_list_would_show(s: Server) {
    let root = admin(&s, "root").await;
    let (ann, bob) = (register(&s, "ann").await, register(&s, "bob").await);
    let stan = with_role(&s, &root, "stan", "staff").await;
    let mut anns = Feed::as_(&s, &ann, CUSTOMERS, None).await;
    let mut bobs = Feed::as_(&s, &bob, CUSTOMERS, None).await;
    let mut stans = Feed::as_(&s, &stan, CUSTOMERS, None).await;
    let mut start = 0;
    for feed in [&mut anns, &mut bobs, &mut stans] {
        let (ready, data) = feed.expect("ready").await;
        assert_eq!(data, json!({}));
        start = seq(&ready);
    }
    let ada = customer(&s, &ann, "Ada", json!({ "phone": "+44 1" })).await;
    let bea = customer(&s, &bob, "Bea", json!({ "phone": "+44 2" })).await;
    let note = call(&s, &stan, "PATCH", &format!("/api/customers/{ada}"), Some(json!({ "staff_note": "VIP" }))).await;
    assert_eq!(note.status, 200, "{}", note.text);
    assert_eq!(call(&s, &ann, "DELETE", &format!("/api/customers/{ada}"), None).await.status, 204);

    // Ann: her customer's life, her phone shown and the staff's note never.
    let mut last = start;
    for kind in ["created", "updated"] {
        let (event, data) = anns.expect(kind).await;
        assert!(seq(&event) > last, "in the log's order");
        last = seq(&event);
        assert_eq!(data["id"], ada);
        shown_as_rules_say(&data, true, &[]);
    }
    let (event, data) = anns.expect("deleted").await;
    assert!(seq(&event) > last);
    assert_eq!(data, json!({ "id": ada }), "a tombstone holds the id alone");
    // Bob: his own alone; the next thing after it is his next change, nothing of Ann's.
    let (_, data) = bobs.expect("created").await;
    assert_eq!(data["id"], bea);
    shown_as_rules_say(&data, true, &[]);
    let later = customer(&s, &bob, "Bob's second", json!({})).await;
    assert_eq!(bobs.expect("created").await.1["id"], later);
    // Stan: everybody's, as staff see them (no phone, the note).
    let mut seen = Vec::new();
    for _ in 0..5 {
        let event = stans.next().await;
        let data: Value = serde_json::from_str(&event.data).unwrap();
        if event.event != "deleted" {
            shown_as_rules_say(&data, false, &["staff"]);
        }
        seen.push((event.event.clone(), data["id"].as_str().unwrap().to_owned()));
    }
    let expected = [("created", &ada), ("created", &bea), ("updated", &ada), ("deleted", &ada), ("created", &later)];
    let expected: Vec<(String, String)> = expected.iter().map(|(k, id)| (k.to_string(), id.to_string())).collect();
    assert_eq!(seen, expected);
}

backends!(a_reconnect_with_last_event_id_gets_every_later_change_once, shop::service());
async fn a_reconnect_with_last_event_id_gets_every_later_change_once(s: Server) {
    let ann = register(&s, "ann").await;
    let mut feed = Feed::as_(&s, &ann, CUSTOMERS, None).await;
    let (ready, _) = feed.expect("ready").await;
    let first = customer(&s, &ann, "one", json!({})).await;
    let (event, data) = feed.expect("created").await;
    assert_eq!(data["id"], first);
    drop(feed);
    // Cut off: three changes go by unseen.
    let mut missed = Vec::new();
    for name in ["two", "three", "four"] {
        missed.push(customer(&s, &ann, name, json!({})).await);
    }
    let mut again = Feed::as_(&s, &ann, CUSTOMERS, Some(&event.id)).await;
    let (resumed, _) = again.expect("ready").await;
    assert_eq!(resumed.id, event.id, "the stream starts where the client stood");
    for id in &missed {
        assert_eq!(&again.expect("created").await.1["id"], id);
    }
    let marker = customer(&s, &ann, "five", json!({})).await;
    assert_eq!(again.expect("created").await.1["id"], marker, "none twice, none out of order");
    // From the first `ready`, nothing of it was lost either.
    let mut whole = Feed::as_(&s, &ann, CUSTOMERS, Some(&ready.id)).await;
    whole.expect("ready").await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(whole.expect("created").await.1["id"].as_str().unwrap().to_owned());
    }
    let mut all = vec![first];
    all.extend(missed);
    all.push(marker);
    assert_eq!(ids, all);
}

backends!(the_lists_filters_apply_and_bad_requests_are_refused, shop::service());
async fn the_lists_filters_apply_and_bad_requests_are_refused(s: Server) {
    let root = admin(&s, "root").await;
    let ann = register(&s, "ann").await;
    let stan = with_role(&s, &root, "stan", "staff").await;
    let mut paris = Feed::as_(&s, &ann, &format!("{CUSTOMERS}?city=Paris"), None).await;
    paris.expect("ready").await;
    customer(&s, &ann, "in Rome", json!({ "city": "Rome" })).await;
    let moved = customer(&s, &ann, "moving", json!({ "city": "Rome" })).await;
    let r = call(&s, &ann, "PATCH", &format!("/api/customers/{moved}"), Some(json!({ "city": "Paris" }))).await;
    assert_eq!(r.status, 200);
    let here = customer(&s, &ann, "in Paris", json!({ "city": "Paris" })).await;
    assert_eq!(paris.expect("updated").await.1["id"], moved, "a record that comes to match is shown");
    assert_eq!(paris.expect("created").await.1["id"], here);

    let refused = |r: reqwest::Response, status: u16| async move {
        assert_eq!(r.status(), status);
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        r.json::<Value>().await.unwrap()
    };
    let bearer = stan.bearer();
    let auth = ("authorization", bearer.as_str());
    // Staff list every account's customers, and never see a phone: no filter on it.
    let body = refused(get(&s, &format!("{CUSTOMERS}?phone=1"), &[auth]).await, 400).await;
    assert_eq!(body["errors"][0]["field"], "phone");
    let body = refused(get(&s, &format!("{CUSTOMERS}?sort=name_asc"), &[auth]).await, 400).await;
    assert_eq!(body["errors"][0]["field"], "sort");
    let body = refused(get(&s, CUSTOMERS, &[auth, ("last-event-id", "yesterday")]).await, 400).await;
    assert_eq!(body["errors"][0]["field"], "Last-Event-ID");
    refused(get(&s, CUSTOMERS, &[auth, ("accept", "application/json")]).await, 406).await;
    refused(get(&s, CUSTOMERS, &[]).await, 401).await;
}

backends!(a_stream_resumes_across_a_restart_and_another_instance, shop::service());
async fn a_stream_resumes_across_a_restart_and_another_instance(s: Server) {
    let ann = register(&s, "ann").await;
    let other = s.twin(shop::service()).await;
    let mut feed = Feed::as_(&s, &ann, CUSTOMERS, None).await;
    feed.expect("ready").await;
    // Written through the other instance: this one finds it in the log.
    let first = customer(&other, &ann, "one", json!({})).await;
    let (seen, data) = feed.expect("created").await;
    assert_eq!(data["id"], first);
    // The instance restarts: the stream is closed, saying why, and ends.
    let restarted = s.restart(shop::service()).await;
    let (_, closed) = feed.expect("closed").await;
    assert_eq!(closed["reason"], "shutdown");
    assert!(feed.ends().await);
    let mut missed = Vec::new();
    for name in ["two", "three"] {
        missed.push(customer(&other, &ann, name, json!({})).await);
    }
    // Resumed on the other instance, then on the restarted one: each change once, in order.
    let mut there = Feed::as_(&other, &ann, CUSTOMERS, Some(&seen.id)).await;
    there.expect("ready").await;
    let (second, data) = there.expect("created").await;
    assert_eq!(data["id"], missed[0]);
    drop(there);
    let mut back = Feed::as_(&restarted, &ann, CUSTOMERS, Some(&second.id)).await;
    back.expect("ready").await;
    assert_eq!(back.expect("created").await.1["id"], missed[1]);
    let last = customer(&restarted, &ann, "four", json!({})).await;
    assert_eq!(back.expect("created").await.1["id"], last);
}

backends!(a_reset_tells_a_client_to_list_again, shop::service());
async fn a_reset_tells_a_client_to_list_again(s: Server) {
    let ann = register(&s, "ann").await;
    let mut feed = Feed::as_(&s, &ann, CUSTOMERS, None).await;
    let (ready, _) = feed.expect("ready").await;
    customer(&s, &ann, "one", json!({})).await;
    let (event, _) = feed.expect("created").await;
    drop(feed);
    customer(&s, &ann, "two", json!({})).await;
    // The log forgets everything it holds, as its retention would (the last change
    // numbered first, as the feed's poller would have).
    s.store.sequence_changes().await.unwrap();
    let everything = s.settings.clock.now() + 1_000_000_000;
    assert!(s.store.prune_changes(everything).await.unwrap() >= 1);
    for stale in [ready.id.as_str(), "999999999"] {
        let mut again = Feed::as_(&s, &ann, CUSTOMERS, Some(stale)).await;
        let (reset, data) = again.expect("reset").await;
        assert!(data["detail"].as_str().unwrap().contains("list the collection again"), "{data}");
        assert!(seq(&reset) > seq(&event), "read on from the log's end");
        let next = customer(&s, &ann, "after", json!({})).await;
        assert_eq!(again.expect("created").await.1["id"], next);
    }
}

fn small(feed: FeedSettings) -> Settings {
    Settings { feed, ..unthrottled(secrets()) }
}

backends!(
    a_reader_that_falls_behind_is_closed_with_a_resumable_id,
    shop::service(),
    settings =
        small(FeedSettings { buffer: 4, streams_per_caller: 1, heartbeat: Duration::from_millis(200), ..quick_feed() })
);
async fn a_reader_that_falls_behind_is_closed_with_a_resumable_id(s: Server) {
    use restgen::__private::axum::body::Body;
    use restgen::__private::axum::http::Request;
    use tower::ServiceExt;
    let ann = register(&s, "ann").await;
    let mut written = Vec::new();
    for n in 0..20 {
        written.push(customer(&s, &ann, &format!("customer {n}"), json!({})).await);
    }
    // Another instance on the same database, called in process so that its answer's body
    // goes unread: a reader that takes nothing, resuming from the log's start.
    let store = restgen::store::Store::connect(s.database_url()).await.unwrap();
    let app = restgen::serve::app(shop::service(), store, &s.settings).unwrap();
    let open = |last: &str| {
        let request = Request::get(CUSTOMERS)
            .header("authorization", ann.bearer())
            .header("last-event-id", last)
            .body(Body::empty())
            .unwrap();
        app.clone().oneshot(request)
    };
    let response = open("0").await.unwrap();
    assert_eq!(response.status(), 200);
    // Ann may hold one stream there: once another opens, the unread one has been closed.
    let mut admitted = None;
    for _ in 0..1000 {
        let probe = open("0").await.unwrap();
        match probe.status().as_u16() {
            200 => {
                admitted = Some(probe);
                break;
            }
            429 => tokio::time::sleep(Duration::from_millis(10)).await,
            other => panic!("{other}"),
        }
    }
    assert!(admitted.is_some(), "the unread stream's place is given back");
    drop(admitted);
    // What the buffer held, in order, then the end, saying why.
    let mut body = response.into_body().into_data_stream();
    let mut text = String::new();
    while let Some(chunk) = tokio::time::timeout(PATIENCE, body.next()).await.expect("the stream ends") {
        text.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
    }
    let events: Vec<&str> = text.split("\n\n").filter(|e| e.contains("event: ")).collect();
    let last = events.last().unwrap();
    assert!(last.contains("event: closed") && last.contains("\"behind\""), "{text}");
    let created: Vec<&str> = events.iter().filter(|e| e.contains("event: created")).copied().collect();
    assert!(created.len() < 4, "at most what the buffer holds: {text}");
    for (event, id) in created.iter().zip(&written) {
        assert!(event.contains(id.as_str()), "in order: {event}");
    }
    // Resumed from the last id it got: the rest, once each.
    let ids: Vec<&str> = events.iter().filter_map(|e| e.lines().find_map(|l| l.strip_prefix("id: "))).collect();
    let mut again = Feed::as_(&s, &ann, CUSTOMERS, ids.last().copied()).await;
    again.expect("ready").await;
    for id in &written[created.len()..] {
        assert_eq!(&again.expect("created").await.1["id"], id);
    }
}

backends!(an_expired_token_ends_its_stream, shop::service());
async fn an_expired_token_ends_its_stream(s: Server) {
    let ann = register(&s, "ann").await;
    let mut short = claims(&ann.token);
    short["exp"] = json!(jsonwebtoken::get_current_timestamp() + 2);
    let header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    let token = jsonwebtoken::encode(&header, &short, &jsonwebtoken::EncodingKey::from_secret(JWT_SECRET)).unwrap();
    let bearer = format!("Bearer {token}");
    let mut feed = Feed::open(&s, CUSTOMERS, &[("authorization", &bearer)]).await;
    let (ready, _) = feed.expect("ready").await;
    let (_, closed) = feed.expect("closed").await;
    assert_eq!(closed["reason"], "expired");
    assert!(feed.ends().await);
    // The token is refused for a new stream, though its verification's leeway would still
    // admit it to a request: the stream would end as it began.
    let refused = get(&s, CUSTOMERS, &[("authorization", &bearer)]).await;
    assert_eq!(refused.status(), 401);
    assert!(refused.headers()["www-authenticate"].to_str().unwrap().contains("invalid_token"));
    assert_eq!(refused.json::<Value>().await.unwrap()["detail"], "the token has expired");
    // A fresh token resumes where it stood.
    let made = customer(&s, &ann, "meanwhile", json!({})).await;
    let mut again = Feed::as_(&s, &ann, CUSTOMERS, Some(&ready.id)).await;
    again.expect("ready").await;
    assert_eq!(again.expect("created").await.1["id"], made);
}

backends!(
    revoked_access_ends_or_narrows_a_stream,
    shop::service(),
    settings = small(FeedSettings { recheck: Duration::from_millis(50), ..quick_feed() })
);
async fn revoked_access_ends_or_narrows_a_stream(s: Server) {
    let root = admin(&s, "root").await;
    let ann = register(&s, "ann").await;
    // An API key revoked: its stream ends.
    let key = call(&s, &ann, "POST", "/api/auth/api-keys", Some(json!({ "name": "feed" }))).await;
    assert_eq!(key.status, 201, "{}", key.text);
    let (secret, id) = (key.body["key"].as_str().unwrap(), key.body["id"].as_str().unwrap());
    let mut keyed = Feed::open(&s, CUSTOMERS, &[("x-api-key", secret)]).await;
    keyed.expect("ready").await;
    assert_eq!(call(&s, &ann, "DELETE", &format!("/api/auth/api-keys/{id}"), None).await.status, 204);
    let (_, closed) = keyed.expect("closed").await;
    assert_eq!(closed["reason"], "revoked");
    assert!(keyed.ends().await);
    // Staff who lose the role stop seeing other accounts' customers, though their token
    // still names it; their own go on.
    let stan = with_role(&s, &root, "stan", "staff").await;
    let mut feed = Feed::as_(&s, &stan, CUSTOMERS, None).await;
    feed.expect("ready").await;
    let seen = customer(&s, &ann, "seen by staff", json!({})).await;
    assert_eq!(feed.expect("created").await.1["id"], seen);
    let r = call(&s, &root, "PATCH", &format!("/api/users/{}", stan.id), Some(json!({ "roles": [] }))).await;
    assert_eq!(r.status, 200);
    // Once the stream has looked again (within a few of its checks), Ann's changes stop.
    let mut narrowed = false;
    for n in 0..100 {
        let hers = customer(&s, &ann, &format!("hers {n}"), json!({})).await;
        let his = customer(&s, &stan, &format!("his {n}"), json!({})).await;
        let (_, first) = feed.expect("created").await;
        if first["id"] == his {
            narrowed = true;
            break;
        }
        assert_eq!(first["id"], hers);
        assert_eq!(feed.expect("created").await.1["id"], his);
    }
    assert!(narrowed, "the stream narrowed to Stan's own customers");
    let hers = customer(&s, &ann, "never seen", json!({})).await;
    let his = customer(&s, &stan, "his last", json!({})).await;
    let (_, next) = feed.expect("created").await;
    assert_eq!(next["id"], his, "not {hers}");
}

backends!(
    open_streams_are_capped_per_caller_and_per_instance,
    shop::service(),
    settings = small(FeedSettings { streams_per_caller: 2, max_streams: 3, ..quick_feed() })
);
async fn open_streams_are_capped_per_caller_and_per_instance(s: Server) {
    let (ann, bob, cat) = (register(&s, "ann").await, register(&s, "bob").await, register(&s, "cat").await);
    let mut anns = vec![Feed::as_(&s, &ann, CUSTOMERS, None).await, Feed::as_(&s, &ann, CUSTOMERS, None).await];
    let too_many = |r: reqwest::Response| async move {
        assert_eq!(r.status(), 429);
        assert!(r.headers().contains_key("retry-after"));
        r.json::<Value>().await.unwrap()["detail"].as_str().unwrap().to_owned()
    };
    let bearer = |a: &Account| a.bearer();
    let detail = too_many(get(&s, CUSTOMERS, &[("authorization", &bearer(&ann))]).await).await;
    assert!(detail.contains("close one"), "{detail}");
    let _bobs = Feed::as_(&s, &bob, CUSTOMERS, None).await;
    let detail = too_many(get(&s, CUSTOMERS, &[("authorization", &bearer(&cat))]).await).await;
    assert!(detail.contains("this instance"), "{detail}");
    // A stream closed by its client gives its place back.
    anns.pop();
    let mut admitted = false;
    for _ in 0..200 {
        let r = get(&s, CUSTOMERS, &[("authorization", &bearer(&cat))]).await;
        if r.status() == 200 {
            admitted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(admitted, "the place of a closed stream is given back");
    anns[0].expect("ready").await;
}

backends!(
    an_idle_stream_has_heartbeats,
    shop::service(),
    settings = small(FeedSettings { heartbeat: Duration::from_millis(100), ..quick_feed() })
);
async fn an_idle_stream_has_heartbeats(s: Server) {
    let ann = register(&s, "ann").await;
    let response = get(&s, CUSTOMERS, &[("authorization", &ann.bearer())]).await;
    assert_eq!(response.headers()["cache-control"], "no-store");
    let mut bytes = response.bytes_stream();
    let mut text = String::new();
    while !text.contains(": keep-alive\n\n") {
        let chunk = tokio::time::timeout(PATIENCE, bytes.next()).await.unwrap().unwrap().unwrap();
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    assert!(text.starts_with("id: ") && text.contains("event: ready"), "{text}");
}

backends!(the_clients_typed_stream_resumes_by_itself, shop::service());
async fn the_clients_typed_stream_resumes_by_itself(s: Server) {
    use restgen_client::{Auth, Change};
    let ann = register(&s, "ann").await;
    let client = shop_client::Client::builder(&s.base)
        .auth(Auth::login(&ann.email, crate::support::accounts::PASSWORD))
        .build()
        .unwrap();
    // Where the log stands now, so the typed stream takes every change from here.
    let mut raw = Feed::as_(&s, &ann, CUSTOMERS, None).await;
    let (ready, _) = raw.expect("ready").await;
    drop(raw);
    let mut changes = client.customer_changes().after(ready.id);
    let first = customer(&s, &ann, "one", json!({})).await;
    let Change::Created(got) = changes.next().await.unwrap() else { panic!("a creation") };
    assert_eq!(got.id.to_string(), first);
    // The instance restarts under the open stream: it is opened again where it stood.
    let s = s.restart(shop::service()).await;
    let second = customer(&s, &ann, "two", json!({})).await;
    let Change::Created(got) = changes.next().await.unwrap() else { panic!("a creation") };
    assert_eq!(got.id.to_string(), second, "the next change, and not the first again");
    assert_eq!(call(&s, &ann, "DELETE", &format!("/api/customers/{second}"), None).await.status, 204);
    assert_eq!(changes.next().await.unwrap(), Change::Deleted { id: second });
    // A client that kept the id resumes from it later.
    let kept = changes.last_id().unwrap().to_owned();
    drop(changes);
    let third = customer(&s, &ann, "three", json!({})).await;
    let mut resumed = client.customer_changes().after(kept);
    let Change::Created(got) = resumed.next().await.unwrap() else { panic!("a creation") };
    assert_eq!(got.id.to_string(), third);
}

backends!(
    anonymous_streams_are_capped_per_address_whatever_the_client_forwards,
    fleet::service(),
    settings = small(FeedSettings { streams_per_caller: 1, ..quick_feed() })
);
async fn anonymous_streams_are_capped_per_address_whatever_the_client_forwards(s: Server) {
    const VEHICLES: &str = "/v0/vehicles/changes";
    let mut trucks = Feed::open(&s, &format!("{VEHICLES}?kind=truck"), &[]).await;
    trucks.expect("ready").await;
    // Nobody signed in: one stream per client address, and a forwarding header the
    // service has no trusted proxy for buys no other address.
    for headers in [&[][..], &[("x-forwarded-for", "203.0.113.9")], &[("forwarded", "for=198.51.100.7")]] {
        let r = get(&s, VEHICLES, headers).await;
        assert_eq!(r.status(), 429, "{headers:?}");
        assert!(r.headers().contains_key("retry-after"));
    }
    // An enum filter, integer ids: the van is not shown, the truck is, and its delete is
    // its id alone, a number as the id is.
    let van = s.post("/v0/vehicles", json!({ "plate": "VAN1", "kind": "van" })).await;
    assert_eq!(van.status, 201, "{}", van.text);
    let truck = s.post("/v0/vehicles", json!({ "plate": "TRUCK1", "kind": "truck" })).await;
    assert_eq!(truck.status, 201, "{}", truck.text);
    let (_, data) = trucks.expect("created").await;
    assert_eq!(data["id"], truck.body["id"]);
    assert_eq!(data["kind"], "truck");
    assert_eq!(s.send("DELETE", &format!("/v0/vehicles/{}", truck.body["id"]), None).await.status, 204);
    let (_, data) = trucks.expect("deleted").await;
    assert_eq!(data, json!({ "id": truck.body["id"] }));
    assert!(data["id"].is_i64());
}
