//! Webhooks: subscriptions, events that arrive signed for every write and transition, to
//! subscribers who may read the record only; retries until a receiver answers; targets
//! off this machine or in private ranges refused before any connection is made; several
//! instances delivering each event once between them. Receivers listen on loopback and
//! verify each delivery themselves with the secret their subscription was given.

use crate::backends;
use crate::support::accounts::{Account, call, register};
use crate::support::child::Process;
use crate::support::harness::{Server, loopback_webhooks, manual_clock, secrets, unthrottled};
use crate::support::receiver::Receiver;
use restgen::serve::Settings;
use restgen::webhooks::Resolver;
use serde_json::{Value, json};
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const ORDER_EVENTS: [&str; 6] =
    ["order.created", "order.updated", "order.deleted", "order.pay", "order.ship", "order.cancel"];

/// Subscribes `who` to `events` at `url`; the answer.
async fn subscribe(s: &Server, who: &Account, url: &str, events: &[&str]) -> Value {
    let made = call(s, who, "POST", "/api/webhooks", Some(json!({ "url": url, "events": events }))).await;
    assert_eq!(made.status, 201, "{}", made.text);
    made.body
}

/// The deliveries of a subscription, newest first, once `ready` holds for them (checked
/// as the worker goes; a test that waits in vain fails after a long while).
async fn deliveries_when(s: &Server, who: &Account, webhook: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let path = format!("/api/webhooks/{webhook}/deliveries");
    for _ in 0..1000 {
        let r = call(s, who, "GET", &path, None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        let list = r.body["data"].as_array().unwrap().clone();
        if ready(&list) {
            return list;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the deliveries of {webhook} never came to the state the test waits for");
}

async fn order(s: &Server, who: &Account) -> String {
    let r = call(s, who, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.header("location").unwrap().to_owned()
}

backends!(every_write_and_transition_arrives_signed_to_who_may_read_it, shop::service());
async fn every_write_and_transition_arrives_signed_to_who_may_read_it(s: Server) {
    let (receiver, bobs) = (Receiver::start(&[]).await, Receiver::start(&[]).await);
    let ann = register(&s, "ann").await;
    let bob = register(&s, "bob").await;
    let sub = subscribe(&s, &ann, &receiver.url, &ORDER_EVENTS).await;
    let secret = sub["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"), "{sub}");
    assert_eq!((sub["enabled"].as_bool(), &sub["events"]), (Some(true), &json!(ORDER_EVENTS)));
    let bob_sub = subscribe(&s, &bob, &bobs.url, &["order.created"]).await;

    let path = order(&s, &ann).await;
    let id = path.rsplit('/').next().unwrap().to_owned();
    call(&s, &ann, "PATCH", &path, Some(json!({ "note": "ring twice" }))).await;
    // A patch that changes nothing, and a write refused (412): no event of either.
    assert_eq!(call(&s, &ann, "PATCH", &path, Some(json!({}))).await.status, 200);
    let stale = [("authorization", ann.bearer()), ("if-match", "\"stale\"".to_owned())];
    let stale: Vec<(&str, &str)> = stale.iter().map(|(k, v)| (*k, v.as_str())).collect();
    s.send_with("PATCH", &path, Some(json!({ "note": "x" })), &stale).await.assert_problem(412);
    call(&s, &ann, "POST", &format!("{path}/pay"), None).await;
    call(&s, &ann, "POST", &format!("{path}/cancel"), None).await;
    assert_eq!(call(&s, &ann, "DELETE", &path, None).await.status, 204);
    let bobs_own = order(&s, &bob).await;

    let seen = receiver.wait_for(5).await;
    let mut kinds: Vec<String> = seen.iter().map(|d| d.json()["type"].as_str().unwrap().to_owned()).collect();
    kinds.sort();
    assert_eq!(kinds, ["order.cancel", "order.created", "order.deleted", "order.pay", "order.updated"]);
    for d in &seen {
        restgen_client::verify(secret, &d.headers, &d.body).unwrap_or_else(|e| panic!("{e}: {:?}", d.headers));
        assert_eq!(d.json()["data"]["id"], id.as_str());
        assert_eq!(d.headers.get("content-type").unwrap(), "application/json");
        // A body changed on the way no longer verifies.
        let mut forged = d.body.to_vec();
        forged[1] ^= 1;
        assert!(restgen_client::verify(secret, &d.headers, &forged).is_err());
        // Another subscription's secret does not verify it either.
        assert!(restgen_client::verify(bob_sub["secret"].as_str().unwrap(), &d.headers, &d.body).is_err());
    }
    let ids: std::collections::BTreeSet<&str> = seen.iter().map(|d| d.id()).collect();
    assert_eq!(ids.len(), 5, "each event its own webhook-id");
    let deleted = seen.iter().map(|d| d.json()).find(|j| j["type"] == "order.deleted").unwrap();
    assert_eq!(deleted["data"]["status"], "cancelled", "the record as it was");

    // Bob may not read ann's orders: of the four created, he receives his own only.
    let bobs_deliveries = deliveries_when(&s, &bob, bob_sub["id"].as_str().unwrap(), |d| !d.is_empty()).await;
    let bob_seen = bobs.wait_for(1).await;
    assert_eq!(bob_seen[0].json()["data"]["id"], bobs_own.rsplit('/').next().unwrap());
    assert_eq!(bobs_deliveries.len(), 1, "{bobs_deliveries:?}");
    let list = deliveries_when(&s, &ann, sub["id"].as_str().unwrap(), |d| {
        d.len() == 5 && d.iter().all(|x| x["status"] == "succeeded")
    })
    .await;
    assert!(list.iter().all(|d| d["attempts"] == 1 && d["last_status"] == 204), "{list:?}");
}

backends!(
    a_receiver_failing_three_times_gets_the_event_once_it_answers,
    shop::service(),
    settings = manual_clock(1000.0)
);
async fn a_receiver_failing_three_times_gets_the_event_once_it_answers(s: Server) {
    let receiver = Receiver::with_clock(&[500, 503, 500], s.settings.clock.clone()).await;
    let ann = register(&s, "ann").await;
    let sub = subscribe(&s, &ann, &receiver.url, &["order.created"]).await;
    order(&s, &ann).await;
    receiver.wait_for(1).await;
    let id = sub["id"].as_str().unwrap();
    for n in 2..=4 {
        // The last attempt recorded (a task of its own records it once answered), then
        // past the schedule's next wait, whatever its jitter.
        deliveries_when(&s, &ann, id, |d| d.first().is_some_and(|x| x["attempts"] == n - 1)).await;
        s.settings.clock.advance(std::time::Duration::from_secs(3600));
        receiver.wait_for(n).await;
    }
    let list = deliveries_when(&s, &ann, sub["id"].as_str().unwrap(), |d| d[0]["status"] == "succeeded").await;
    let statuses: Vec<&Value> = list[0]["history"].as_array().unwrap().iter().map(|h| &h["status"]).collect();
    assert_eq!(statuses, [&json!(500), &json!(503), &json!(500), &json!(204)]);
    assert_eq!(list[0]["attempts"], 4);
    let seen = receiver.seen();
    assert!(seen.iter().all(|d| d.id() == seen[0].id()), "webhook-id is the same across retries");
    for d in &seen {
        restgen_client::webhook::verify_at(sub["secret"].as_str().unwrap(), &d.headers, &d.body, d.at).unwrap();
    }
}

backends!(
    an_endpoint_that_keeps_failing_or_answers_410_is_disabled_and_says_why,
    shop::service(),
    settings = manual_clock(1000.0)
);
async fn an_endpoint_that_keeps_failing_or_answers_410_is_disabled_and_says_why(s: Server) {
    let ann = register(&s, "ann").await;
    let gone = Receiver::start(&[410]).await;
    let sub = subscribe(&s, &ann, &gone.url, &["order.created"]).await;
    let path = format!("/api/webhooks/{}", sub["id"].as_str().unwrap());
    order(&s, &ann).await;
    deliveries_when(&s, &ann, sub["id"].as_str().unwrap(), |d| d.first().is_some_and(|x| x["status"] == "failed"))
        .await;
    let now = call(&s, &ann, "GET", &path, None).await;
    assert_eq!(now.body["enabled"], false);
    assert!(now.body["disabled_reason"].as_str().unwrap().contains("410"), "{}", now.text);
    // Disabled: later events are not delivered to it, until its subscriber enables it again.
    order(&s, &ann).await;
    // Enabled a moment later: this clock stands still until told, and an event of the
    // very microsecond a subscription is enabled again goes to it.
    s.settings.clock.advance(std::time::Duration::from_secs(1));
    let enabled = call(&s, &ann, "PATCH", &path, Some(json!({ "enabled": true }))).await;
    assert_eq!((enabled.body["enabled"].as_bool(), &enabled.body["disabled_reason"]), (Some(true), &Value::Null));
    order(&s, &ann).await;
    gone.wait_for(2).await;
    let list = deliveries_when(&s, &ann, sub["id"].as_str().unwrap(), |d| d.len() == 2).await;
    assert_eq!(list.len(), 2, "the event while it was disabled went nowhere");

    // Eight attempts (the shop's max_attempts) that all fail: the delivery fails, and
    // the subscription is disabled with the last reason.
    let failing = Receiver::start(&[500; 8]).await;
    let sub = subscribe(&s, &ann, &failing.url, &["order.created"]).await;
    order(&s, &ann).await;
    let id = sub["id"].as_str().unwrap();
    for n in 1..=8 {
        failing.wait_for(n).await;
        // Recorded before the clock moves: each attempt is a task of its own, which
        // records it after the receiver has answered.
        deliveries_when(&s, &ann, id, |d| d.first().is_some_and(|x| x["attempts"] == n)).await;
        s.settings.clock.advance(std::time::Duration::from_secs(25 * 3600));
    }
    let list = deliveries_when(&s, &ann, sub["id"].as_str().unwrap(), |d| d[0]["status"] == "failed").await;
    assert_eq!((list[0]["attempts"].as_i64(), list[0]["last_status"].as_i64()), (Some(8), Some(500)));
    let now = call(&s, &ann, "GET", &format!("/api/webhooks/{}", sub["id"].as_str().unwrap()), None).await;
    assert_eq!(now.body["enabled"], false);
    assert!(now.body["disabled_reason"].as_str().unwrap().contains("8 attempts"), "{}", now.text);
}

/// A resolver the test controls: `rebind.test` is loopback the first time it is asked
/// and private after; the others always resolve alike.
#[derive(Debug, Default)]
struct Names {
    rebind_asked: AtomicUsize,
}

impl Resolver for Names {
    fn resolve<'a>(&'a self, host: &'a str) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>> {
        let ip = match host {
            "rebind.test" if self.rebind_asked.fetch_add(1, Ordering::SeqCst) == 0 => "127.0.0.1",
            "rebind.test" => "10.0.0.7",
            "private.test" => "192.168.1.10",
            "mapped.test" => "::ffff:10.1.1.1",
            "public.test" => "93.184.216.34",
            "loopback.test" => "127.0.0.1",
            _ => return Box::pin(async { Err(std::io::Error::other("no such name")) }),
        };
        Box::pin(async move { Ok(vec![ip.parse().unwrap()]) })
    }
}

fn with_names() -> Settings {
    let webhooks =
        restgen::webhooks::WebhookSettings { resolver: Some(Arc::new(Names::default())), ..loopback_webhooks() };
    Settings { webhooks, ..unthrottled(secrets()) }
}

backends!(
    a_refused_target_is_refused_at_registration_and_again_after_resolving,
    shop::service(),
    settings = with_names()
);
async fn a_refused_target_is_refused_at_registration_and_again_after_resolving(s: Server) {
    let receiver = Receiver::start(&[]).await;
    let port = receiver.url.split(':').nth(2).unwrap().split('/').next().unwrap().to_owned();
    let ann = register(&s, "ann").await;
    // Private, link-local, CGNAT, multicast, unspecified, mapped private, by name and by
    // address; public addresses too, since this deployment admits loopback only; and
    // credentials in the URL, or another scheme.
    for url in [
        "http://10.0.0.1/h".to_owned(),
        "http://169.254.169.254/latest/meta-data".to_owned(),
        "http://100.64.1.1/".to_owned(),
        "http://224.0.0.1/".to_owned(),
        "http://0.0.0.0/".to_owned(),
        "http://[::ffff:192.168.0.1]/".to_owned(),
        "http://[fe80::1]/".to_owned(),
        "http://198.18.0.1/".to_owned(),
        "http://192.0.0.10/".to_owned(),
        "http://[64:ff9b:1::a00:1]/".to_owned(),
        "http://[2002:a00:1::1]/".to_owned(),
        "http://[::ffff:0:a00:1]/".to_owned(),
        format!("http://private.test:{port}/hooks"),
        format!("http://mapped.test:{port}/hooks"),
        "https://public.test/hooks".to_owned(),
        "https://93.184.216.34/hooks".to_owned(),
        format!("http://user:secret@127.0.0.1:{port}/hooks"),
        format!("ftp://127.0.0.1:{port}/hooks"),
        "http://nowhere.test/hooks".to_owned(),
    ] {
        let r = call(&s, &ann, "POST", "/api/webhooks", Some(json!({ "url": url, "events": ["order.created"] }))).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), ["url"], "{url}: {}", r.text);
        // What a name resolved to inside the service's network is never said.
        for resolved in ["192.168.1.10", "10.1.1.1", "93.184.216.34"] {
            assert!(url.contains(resolved) || !r.text.contains(resolved), "{url}: {}", r.text);
        }
    }
    // Loopback by name is admitted here; the name then resolves to a private address:
    // the delivery is refused without a connection.
    let sub = subscribe(&s, &ann, &format!("http://rebind.test:{port}/hooks"), &["order.created"]).await;
    order(&s, &ann).await;
    let list =
        deliveries_when(&s, &ann, sub["id"].as_str().unwrap(), |d| d.first().is_some_and(|x| x["attempts"] == 1)).await;
    let error = list[0]["last_error"].as_str().unwrap();
    assert!(error.contains("refused") && error.contains("a private-use address"), "{error}");
    assert!(!error.contains("10.0.0.7"), "the delivery's record names the address the name resolved to: {error}");
    assert_eq!(list[0]["status"], "pending", "retried later, refused again each time");
    assert!(receiver.seen().is_empty(), "nothing reached the receiver");
}

backends!(subscriptions_belong_to_their_subscriber, shop::service());
async fn subscriptions_belong_to_their_subscriber(s: Server) {
    let receiver = Receiver::start(&[]).await;
    let (ann, bob) = (register(&s, "ann").await, register(&s, "bob").await);
    s.send("POST", "/api/webhooks", Some(json!({ "url": receiver.url, "events": ["order.created"] })))
        .await
        .assert_problem(401);
    let bad = call(
        &s,
        &ann,
        "POST",
        "/api/webhooks",
        Some(json!({ "url": 5, "events": ["order.shipped", "order.pay", "order.pay"], "colour": "red" })),
    )
    .await;
    bad.assert_problem(400);
    assert_eq!(bad.error_fields(), ["url", "events[0]", "events[2]", "colour"]);
    let empty = call(&s, &ann, "POST", "/api/webhooks", Some(json!({ "url": receiver.url, "events": [] }))).await;
    assert_eq!(empty.error_fields(), ["events"]);

    let sub = subscribe(&s, &ann, &receiver.url, &["order.created"]).await;
    let path = format!("/api/webhooks/{}", sub["id"].as_str().unwrap());
    let made = call(&s, &ann, "GET", &path, None).await;
    assert_eq!(made.body["secret"], sub["secret"], "its own reads show the secret: {}", made.text);
    let listed = call(&s, &ann, "GET", "/api/webhooks", None).await;
    assert!(listed.body["data"][0].get("secret").is_none(), "a list never shows it: {}", listed.text);
    call(&s, &bob, "GET", &path, None).await.assert_problem(404);
    call(&s, &bob, "DELETE", &path, None).await.assert_problem(404);
    call(&s, &bob, "GET", &format!("{path}/deliveries"), None).await.assert_problem(404);
    assert_eq!(call(&s, &bob, "GET", "/api/webhooks", None).await.body["data"], json!([]));
    assert_eq!(listed.body["data"][0]["id"], sub["id"]);
    let changed = call(
        &s,
        &ann,
        "PATCH",
        &path,
        Some(json!({ "events": ["order.created", "order.pay"], "description": "mine" })),
    )
    .await;
    assert_eq!(
        (changed.body["events"].clone(), changed.body["description"].clone()),
        (json!(["order.created", "order.pay"]), json!("mine"))
    );

    // A delivery sent again: due at once, the same webhook-id.
    order(&s, &ann).await;
    let first = receiver.wait_for(1).await;
    let list = deliveries_when(&s, &ann, sub["id"].as_str().unwrap(), |d| {
        d.first().is_some_and(|x| x["status"] == "succeeded")
    })
    .await;
    let resend =
        call(&s, &ann, "POST", &format!("{path}/deliveries/{}/resend", list[0]["id"].as_str().unwrap()), None).await;
    assert_eq!(resend.status, 202, "{}", resend.text);
    let again = receiver.wait_for(2).await;
    assert_eq!(again[1].id(), first[0].id());
    call(&s, &ann, "POST", &format!("{path}/deliveries/dlv_nope/resend"), None).await.assert_problem(404);

    assert_eq!(call(&s, &ann, "DELETE", &path, None).await.status, 204);
    call(&s, &ann, "GET", &path, None).await.assert_problem(404);
}

backends!(two_instances_deliver_each_event_once_between_them, shop::service());
async fn two_instances_deliver_each_event_once_between_them(s: Server) {
    let other = s.twin(shop::service()).await;
    let receiver = Receiver::start(&[]).await;
    let ann = register(&s, "ann").await;
    let sub = subscribe(&s, &ann, &receiver.url, &["order.created"]).await;
    for i in 0..20 {
        order(if i % 2 == 0 { &s } else { &other }, &ann).await;
    }
    let seen = receiver.wait_for(20).await;
    let list = deliveries_when(&s, &ann, sub["id"].as_str().unwrap(), |d| {
        d.len() == 20 && d.iter().all(|x| x["status"] == "succeeded")
    })
    .await;
    assert!(list.iter().all(|d| d["attempts"] == 1), "no delivery was made twice: {list:?}");
    let ids: std::collections::BTreeSet<&str> = seen.iter().map(|d| d.id()).collect();
    assert_eq!((ids.len(), receiver.seen().len()), (20, 20));
}

backends!(the_client_subscribes_verifies_and_reads_deliveries, shop::service());
async fn the_client_subscribes_verifies_and_reads_deliveries(s: Server) {
    use restgen_client::{Auth, Error, Patch};
    use shop_client::{Client, CreateOrder, NewWebhook, WebhookChanges};
    let receiver = Receiver::start(&[]).await;
    let ann = register(&s, "ann").await;
    let client = Client::builder(&s.base).auth(Auth::Bearer(ann.token.clone())).build().unwrap();
    let new = NewWebhook {
        url: receiver.url.clone(),
        events: vec!["order.created".into()],
        description: Some("mine".into()),
    };
    let made = client.create_webhook(&new).await.unwrap();
    let id = made.webhook.id.clone();
    let input = CreateOrder { total_cents: 9, customer_id: Patch::Absent, note: Patch::Absent, gift_wrap: None };
    let order = client.create_order(&input).await.unwrap();
    let seen = receiver.wait_for(1).await;
    shop_client::verify(&made.secret, &seen[0].headers, &seen[0].body).unwrap();
    assert_eq!(seen[0].json()["data"]["id"], order.id.to_string());
    assert_eq!(client.list_webhooks().await.unwrap(), vec![made.webhook.clone()]);
    let mut deliveries = client.list_webhook_deliveries(&id).await.unwrap();
    while deliveries[0].status != "succeeded" {
        tokio::task::yield_now().await;
        deliveries = client.list_webhook_deliveries(&id).await.unwrap();
    }
    assert_eq!((deliveries[0].kind.as_str(), deliveries[0].event_id.as_str()), ("order.created", seen[0].id()));
    let paused =
        client.update_webhook(&id, &WebhookChanges { enabled: Some(false), ..Default::default() }).await.unwrap();
    assert!(!paused.enabled);
    assert_eq!(client.get_webhook(&id).await.unwrap().secret, made.secret);
    client.delete_webhook(&id).await.unwrap();
    match client.get_webhook(&id).await {
        Err(Error::Api(p)) => assert_eq!(p.status, 404),
        other => panic!("{other:?}"),
    }
}

/// The shop binary's way of running, in a process of its own on `url`, delivering
/// (`worker`) or not; its base URL.
fn spawn_shop(url: &str, worker: bool) -> (Process, String) {
    use std::io::BufRead;
    let child = crate::support::child::shop_command(url)
        .env("RUST_LOG", "warn")
        .env("SHOP_WEBHOOK_SECRET", restgen::wire::signature::secret_of(&secrets().webhook_keys[0]))
        .env("SHOP_WEBHOOK_ALLOW_LOOPBACK", "1")
        .env("SHOP_WEBHOOK_ALLOW_HTTP", "1")
        .env("SHOP_WEBHOOK_WORKER", if worker { "1" } else { "0" })
        .env("SHOP_RATE_LIMIT_SCALE", "1000")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Process(child);
    let mut lines = std::io::BufReader::new(child.0.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        // libtest writes the test's name first, on the same line.
        if let Some((_, base)) = line.unwrap().split_once("shop listening on ") {
            // What it prints after goes on being read: a closed pipe would fail its next line.
            std::thread::spawn(move || lines.for_each(drop));
            return (child, base.trim().to_owned());
        }
    }
    panic!("the child shop did not start");
}

/// Signs up `name` at the shop at `base`, subscribes them to `order.created` at `url`, and
/// creates an order: the token, the subscription, the create's answer.
async fn sign_up_subscribe_and_order(base: &str, url: &str) -> (String, Value, reqwest::Response) {
    let http = reqwest::Client::new();
    let post = |path: &str, token: Option<&str>, body: Value| {
        let mut req = http.post(format!("{base}{path}")).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send()
    };
    let (email, password) = ("ann@example.com", crate::support::accounts::PASSWORD);
    let signed_up =
        post("/api/users", None, json!({ "name": "ann", "email": email, "password": password })).await.unwrap();
    assert_eq!(signed_up.status(), 201);
    let login: Value = post("/api/auth/login", None, json!({ "email": email, "password": password }))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = login["access_token"].as_str().unwrap().to_owned();
    let sub = post("/api/webhooks", Some(&token), json!({ "url": url, "events": ["order.created"] })).await.unwrap();
    assert_eq!(sub.status(), 201);
    let sub: Value = sub.json().await.unwrap();
    let created = post("/api/orders", Some(&token), json!({ "total_cents": 100 })).await.unwrap();
    assert_eq!(created.status(), 201);
    (token, sub, created)
}

fn no_worker() -> Settings {
    Settings {
        webhooks: restgen::webhooks::WebhookSettings { worker: false, ..loopback_webhooks() },
        ..unthrottled(secrets())
    }
}

backends!(a_service_killed_right_after_answering_still_delivers, shop::service(), settings = no_worker());
async fn a_service_killed_right_after_answering_still_delivers(s: Server) {
    let receiver = Receiver::start(&[]).await;
    // The first process delivers nothing (no worker), so what reaches the receiver can only
    // come from the outbox after the restart.
    let (mut first, base) = spawn_shop(s.database_url(), false);
    let (_, sub, created) = sign_up_subscribe_and_order(&base, &receiver.url).await;
    first.kill(); // SIGKILL, the moment the answer is in
    let order: Value = created.json().await.unwrap();

    let (_second, _) = spawn_shop(s.database_url(), true);
    let seen = receiver.wait_for(1).await;
    assert_eq!(seen[0].json()["data"]["id"], order["id"]);
    restgen_client::verify(sub["secret"].as_str().unwrap(), &seen[0].headers, &seen[0].body).unwrap();
}

backends!(a_service_stopped_gracefully_finishes_the_delivery_in_flight, shop::service(), settings = no_worker());
async fn a_service_stopped_gracefully_finishes_the_delivery_in_flight(s: Server) {
    let receiver = Receiver::holding().await;
    let (mut shop, base) = spawn_shop(s.database_url(), true);
    let (token, sub, _) = sign_up_subscribe_and_order(&base, &receiver.url).await;
    receiver.wait_for(1).await; // the delivery is in flight, its answer held
    shop.terminate();
    // Stopping: it takes no more connections, and only then does the answer come.
    let addr = base.trim_start_matches("http://").to_owned();
    while std::net::TcpStream::connect(&addr).is_ok() {
        tokio::task::yield_now().await;
    }
    receiver.release();
    // Waited for without blocking: the receiver answers on this test's runtime.
    let status = loop {
        if let Some(status) = shop.0.try_wait().unwrap() {
            break status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    assert!(status.success(), "{status}");
    let path = format!("/api/webhooks/{}/deliveries", sub["id"].as_str().unwrap());
    let list = s.send_with("GET", &path, None, &[("authorization", &format!("Bearer {token}"))]).await;
    assert_eq!(
        (list.body["data"][0]["status"].as_str(), list.body["data"][0]["attempts"].as_i64()),
        (Some("succeeded"), Some(1)),
        "{}",
        list.text
    );
}

// The shop written with the derive macros publishes the same events, filtered and signed
// alike.
backends!(derived_events_arrive_alike, crate::services::derived_shop::service());
async fn derived_events_arrive_alike(s: Server) {
    every_write_and_transition_arrives_signed_to_who_may_read_it(s).await
}

backends!(an_admins_transition_arrives_and_a_redirect_is_not_followed, shop::service());
async fn an_admins_transition_arrives_and_a_redirect_is_not_followed(s: Server) {
    let (moved, boss_receiver) = (Receiver::start(&[301]).await, Receiver::start(&[]).await);
    let ann = register(&s, "ann").await;
    let boss = crate::support::accounts::admin(&s, "boss").await;
    let anns = subscribe(&s, &ann, &moved.url, &["order.ship"]).await;
    let bosses = subscribe(&s, &boss, &boss_receiver.url, &["order.ship"]).await;
    let path = order(&s, &ann).await;
    call(&s, &ann, "POST", &format!("{path}/pay"), None).await;
    assert_eq!(call(&s, &boss, "POST", &format!("{path}/ship"), None).await.status, 200);
    // An admin reads every order, so receives ann's `order.ship` too.
    let seen = boss_receiver.wait_for(1).await;
    assert_eq!(seen[0].json()["type"], "order.ship");
    restgen_client::verify(bosses["secret"].as_str().unwrap(), &seen[0].headers, &seen[0].body).unwrap();
    // A 3xx is a failed attempt: the Location is never followed.
    moved.wait_for(1).await;
    let list =
        deliveries_when(&s, &ann, anns["id"].as_str().unwrap(), |d| d.first().is_some_and(|x| x["attempts"] == 1))
            .await;
    assert_eq!((list[0]["status"].as_str(), list[0]["last_status"].as_i64()), (Some("pending"), Some(301)));
    assert!(list[0]["last_error"].as_str().unwrap().contains("redirects are not followed"), "{list:?}");
}

backends!(records_and_their_events_are_stamped_by_the_services_clock, shop::service(), settings = manual_clock(1000.0));
async fn records_and_their_events_are_stamped_by_the_services_clock(s: Server) {
    let receiver = Receiver::start(&[]).await;
    let ann = register(&s, "ann").await;
    let sub = subscribe(&s, &ann, &receiver.url, &["order.created", "order.updated"]).await;
    let start = s.settings.clock.timestamp();
    let made = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    assert_eq!(made.status, 201, "{}", made.text);
    assert_eq!((&made.body["created_at"], &made.body["updated_at"]), (&json!(start), &json!(start)));
    // Delivered and recorded before the clock moves past the delivery's claim.
    let id = sub["id"].as_str().unwrap();
    deliveries_when(&s, &ann, id, |d| d.first().is_some_and(|x| x["status"] == "succeeded")).await;
    s.settings.clock.advance(std::time::Duration::from_secs(90));
    let later = s.settings.clock.timestamp();
    let path = made.header("location").unwrap();
    let patched = call(&s, &ann, "PATCH", path, Some(json!({ "note": "n" }))).await;
    assert_eq!((&patched.body["created_at"], &patched.body["updated_at"]), (&json!(start), &json!(later)));
    let events: Vec<Value> = receiver.wait_for(2).await.iter().map(|d| d.json()).collect();
    let stamps: Vec<(&Value, &Value)> = events.iter().map(|e| (&e["type"], &e["timestamp"])).collect();
    assert!(stamps.contains(&(&json!("order.created"), &json!(start))), "{stamps:?}");
    assert!(stamps.contains(&(&json!("order.updated"), &json!(later))), "{stamps:?}");
}

backends!(
    old_events_are_forgotten_once_nothing_about_them_is_pending,
    shop::service(),
    settings = manual_clock(1000.0)
);
async fn old_events_are_forgotten_once_nothing_about_them_is_pending(s: Server) {
    let (ok, failing) = (Receiver::start(&[]).await, Receiver::start(&[500]).await);
    let ann = register(&s, "ann").await;
    let done = subscribe(&s, &ann, &ok.url, &["order.created"]).await;
    let retrying = subscribe(&s, &ann, &failing.url, &["order.updated"]).await;
    let path = order(&s, &ann).await;
    call(&s, &ann, "PATCH", &path, Some(json!({ "note": "n" }))).await;
    deliveries_when(&s, &ann, done["id"].as_str().unwrap(), |d| d.first().is_some_and(|x| x["status"] == "succeeded"))
        .await;
    deliveries_when(&s, &ann, retrying["id"].as_str().unwrap(), |d| d.first().is_some_and(|x| x["attempts"] == 1))
        .await;
    // Everything is older than a moment from now: the delivered event goes, the one still
    // being retried stays.
    let later = s.settings.clock.now() + 1_000_000;
    assert_eq!(s.store.prune_events(later).await.unwrap(), 1);
    let gone = call(&s, &ann, "GET", &format!("/api/webhooks/{}/deliveries", done["id"].as_str().unwrap()), None).await;
    assert_eq!(gone.body["data"], json!([]));
    let kept =
        call(&s, &ann, "GET", &format!("/api/webhooks/{}/deliveries", retrying["id"].as_str().unwrap()), None).await;
    assert_eq!(kept.body["data"][0]["status"], "pending");
}

// Four accounts hold 100 subscriptions to an endpoint that takes every delivery and never
// answers, and each has an order's event to deliver; then another account's delivery
// arrives within two seconds: deliveries are shared fairly between owners, and none waits
// for another's slowest. The stuck endpoint gets no more of them at once than its owner's
// share.
backends!(stuck_endpoints_of_other_accounts_do_not_delay_a_delivery, shop::service());
async fn stuck_endpoints_of_other_accounts_do_not_delay_a_delivery(s: Server) {
    let stuck = Receiver::holding().await;
    let prompt = Receiver::start(&[]).await;
    let mut attackers = Vec::new();
    for n in 0..4 {
        let mallory = register(&s, &format!("mallory{n}")).await;
        for _ in 0..25 {
            subscribe(&s, &mallory, &stuck.url, &["order.created"]).await;
        }
        attackers.push(mallory);
    }
    for mallory in &attackers {
        order(&s, mallory).await;
    }
    // The stuck endpoint is busy with the attackers' deliveries before Ann's is due.
    stuck.wait_for(4).await;
    let ann = register(&s, "ann").await;
    subscribe(&s, &ann, &prompt.url, &["order.created"]).await;
    let started = std::time::Instant::now();
    order(&s, &ann).await;
    prompt.wait_for(1).await;
    let waited = started.elapsed();
    assert!(waited < std::time::Duration::from_secs(2), "Ann's delivery took {waited:?}");
    // Each owner had at most its share in flight at the stuck endpoint.
    let held = stuck.seen().len();
    assert!(held <= 4 * restgen::webhooks::PER_OWNER as usize, "{held} deliveries held at once");
    stuck.release();
}
