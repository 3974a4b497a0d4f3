//! Lifecycles: records move only by their declared transitions (`POST {item}/{name}`),
//! for the callers the transition admits, from the states it starts from, one at a time;
//! and the status endpoint answers a poll with 304 until the state changes.

use crate::backends;
use crate::support::accounts::{admin, call, register};
use crate::support::harness::Server;
use serde_json::json;

backends!(orders_move_only_as_their_transitions_say, shop::service());
async fn orders_move_only_as_their_transitions_say(s: Server) {
    let ann = register(&s, "ann").await;
    // The state starts at `initial`, and no write sets it.
    let sneaky = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100, "status": "paid" }))).await;
    sneaky.assert_problem(400);
    assert_eq!(sneaky.error_fields(), ["status"]);
    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    assert_eq!(created.body["status"], "pending");
    let order = created.header("location").unwrap().to_owned();
    let patched = call(&s, &ann, "PATCH", &order, Some(json!({ "status": "shipped" }))).await;
    patched.assert_problem(400);
    assert_eq!(patched.error_fields(), ["status"]);

    let paid = call(&s, &ann, "POST", &format!("{order}/pay"), None).await;
    assert_eq!((paid.status, paid.body["status"].as_str()), (200, Some("paid")), "{}", paid.text);
    assert!(paid.header("etag").is_some());
    assert_eq!(call(&s, &ann, "GET", &order, None).await.body["status"], "paid");

    // Paying twice: 409 naming the state and what is open from it to this caller
    // (`ship` is for admins, so ann is offered only `cancel`).
    let again = call(&s, &ann, "POST", &format!("{order}/pay"), None).await;
    again.assert_problem(409);
    assert_eq!(again.body["state"], "paid");
    assert_eq!(again.body["transitions"], json!(["cancel"]));
    assert!(again.body["detail"].as_str().unwrap().contains("paid"), "{}", again.text);

    // A transition with roles: others are refused before the record is even read.
    call(&s, &ann, "POST", &format!("{order}/ship"), None).await.assert_problem(403);
    call(&s, &ann, "POST", "/api/orders/00000000-0000-7000-8000-000000000000/ship", None).await.assert_problem(403);
    let boss = admin(&s, "boss").await;
    let shipped = call(&s, &boss, "POST", &format!("{order}/ship"), None).await;
    assert_eq!((shipped.status, shipped.body["status"].as_str()), (200, Some("shipped")), "{}", shipped.text);
    let late = call(&s, &ann, "POST", &format!("{order}/cancel"), None).await;
    late.assert_problem(409);
    assert_eq!((late.body["state"].as_str(), &late.body["transitions"]), (Some("shipped"), &json!([])));

    // Somebody else's record, nobody, an unknown transition, a missing record.
    let bob = register(&s, "bob").await;
    let other = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 5 }))).await;
    let other = other.header("location").unwrap().to_owned();
    call(&s, &bob, "POST", &format!("{other}/pay"), None).await.assert_problem(403);
    s.send("POST", &format!("{other}/pay"), None).await.assert_problem(401);
    assert_eq!(call(&s, &ann, "POST", &format!("{other}/refund"), None).await.status, 404);
    call(&s, &ann, "POST", "/api/orders/00000000-0000-7000-8000-000000000000/pay", None).await.assert_problem(404);
    // A transition takes no input: what would be ignored is refused, naming it.
    let input = call(&s, &ann, "POST", &format!("{other}/pay"), Some(json!({ "status": "shipped" }))).await;
    input.assert_problem(400);
    assert_eq!(input.error_fields(), ["status"]);
    let empty = call(&s, &ann, "POST", &format!("{other}/cancel"), Some(json!({}))).await;
    assert_eq!((empty.status, empty.body["status"].as_str()), (200, Some("cancelled")), "{}", empty.text);
}

backends!(a_transition_honours_if_match_and_replays_an_idempotency_key, shop::service());
async fn a_transition_honours_if_match_and_replays_an_idempotency_key(s: Server) {
    let ann = register(&s, "ann").await;
    let auth = ann.bearer();
    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    let order = created.header("location").unwrap().to_owned();
    let etag = created.header("etag").unwrap().to_owned();
    call(&s, &ann, "PATCH", &order, Some(json!({ "note": "ring twice" }))).await;
    let stale =
        s.send_with("POST", &format!("{order}/pay"), None, &[("authorization", &auth), ("if-match", &etag)]).await;
    stale.assert_problem(412);
    assert_eq!(call(&s, &ann, "GET", &order, None).await.body["status"], "pending", "nothing moved");
    let current = call(&s, &ann, "GET", &order, None).await.header("etag").unwrap().to_owned();
    let key = [("authorization", auth.as_str()), ("if-match", current.as_str()), ("idempotency-key", "pay-1")];
    let paid = s.send_with("POST", &format!("{order}/pay"), None, &key).await;
    assert_eq!(paid.status, 200, "{}", paid.text);
    // The retry of a request that was answered gets that answer again, not a 409.
    let replay = s.send_with("POST", &format!("{order}/pay"), None, &key).await;
    assert_eq!((replay.status, replay.header("idempotent-replayed")), (200, Some("true")), "{}", replay.text);
    assert_eq!(replay.body, paid.body);
}

backends!(of_concurrent_transitions_on_one_record_one_succeeds, shop::service());
async fn of_concurrent_transitions_on_one_record_one_succeeds(s: Server) {
    let ann = register(&s, "ann").await;
    for transition in ["pay", "cancel"] {
        let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
        let path = format!("{}/{transition}", created.header("location").unwrap());
        let racers = (0..8).map(|_| call(&s, &ann, "POST", &path, None));
        let answers = futures_util::future::join_all(racers).await;
        let mut statuses: Vec<u16> = answers.iter().map(|r| r.status).collect();
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409, 409, 409, 409, 409, 409, 409], "{transition}");
    }
}

backends!(the_status_endpoint_answers_a_poll_with_304_until_the_state_changes, shop::service());
async fn the_status_endpoint_answers_a_poll_with_304_until_the_state_changes(s: Server) {
    let ann = register(&s, "ann").await;
    let auth = ann.bearer();
    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    let order = created.header("location").unwrap().to_owned();
    let status = format!("{order}/status");
    let first = call(&s, &ann, "GET", &status, None).await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.body, json!({ "status": "pending", "updated_at": created.body["updated_at"] }));
    assert_eq!(first.header("cache-control"), Some("private, no-cache"));
    let etag = first.header("etag").unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.len() == 24, "strong: {etag}");
    let poll = s.send_with("GET", &status, None, &[("authorization", &auth), ("if-none-match", &etag)]).await;
    assert_eq!((poll.status, poll.text.as_str()), (304, ""));
    call(&s, &ann, "POST", &format!("{order}/pay"), None).await;
    let moved = s.send_with("GET", &status, None, &[("authorization", &auth), ("if-none-match", &etag)]).await;
    assert_eq!((moved.status, moved.body["status"].as_str()), (200, Some("paid")));
    assert_ne!(moved.header("etag"), Some(etag.as_str()));
    // As reading the record: nobody 401, somebody else 403; JSON only.
    s.get(&status).await.assert_problem(401);
    let bob = register(&s, "bob").await;
    call(&s, &bob, "GET", &status, None).await.assert_problem(403);
    let csv = s.send_with("GET", &status, None, &[("authorization", &auth), ("accept", "text/csv")]).await;
    csv.assert_problem(406);
}

backends!(a_hook_may_refuse_a_transition, fleet::service());
async fn a_hook_may_refuse_a_transition(s: Server) {
    let depot = s.post("/v0/depots", json!({ "name": "North" })).await.body;
    let driver =
        s.post("/v0/drivers", json!({ "name": "Dana", "email": "d@example.com", "depot_id": depot["id"] })).await.body;
    let van = s.post("/v0/vehicles", json!({ "plate": "AB1", "kind": "van" })).await.body;
    let trip = s
        .post(
            "/v0/trips",
            json!({ "vehicle_id": van["id"], "driver_id": driver["id"], "starts_at": "2026-01-01T08:00:00Z" }),
        )
        .await;
    assert_eq!(trip.status, 201, "{}", trip.text);
    let path = trip.header("location").unwrap().to_owned();
    assert_eq!(s.send("POST", &format!("{path}/depart"), None).await.body["status"], "underway");
    // fleet's hooks: a trip arrives only once its distance is recorded.
    let refused = s.send("POST", &format!("{path}/arrive"), None).await;
    refused.assert_problem(422);
    assert!(refused.body["detail"].as_str().unwrap().contains("distance_km"), "{}", refused.text);
    assert_eq!(s.get(&path).await.body["status"], "underway", "nothing moved");
    s.send("PATCH", &path, Some(json!({ "distance_km": "12.5" }))).await;
    assert_eq!(s.send("POST", &format!("{path}/arrive"), None).await.body["status"], "done");
}

// The shop written with the derive macros has the same lifecycle, lowered to the same
// model: its transitions race and its status polls alike.
backends!(derived_transitions_race_alike, crate::services::derived_shop::service());
async fn derived_transitions_race_alike(s: Server) {
    of_concurrent_transitions_on_one_record_one_succeeds(s).await
}

backends!(derived_status_polls_alike, crate::services::derived_shop::service());
async fn derived_status_polls_alike(s: Server) {
    the_status_endpoint_answers_a_poll_with_304_until_the_state_changes(s).await
}

backends!(links_lead_to_the_record_its_lists_and_the_transitions_open_to_the_caller, shop::service());
async fn links_lead_to_the_record_its_lists_and_the_transitions_open_to_the_caller(s: Server) {
    let ann = register(&s, "ann").await;
    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    let order = created.header("location").unwrap().to_owned();
    let links = &created.body["_links"];
    assert_eq!(links["self"], json!({ "href": order }));
    assert_eq!(links["collection"], json!({ "href": "/api/orders" }));
    assert_eq!(links["user"], json!({ "href": format!("/api/users/{}/orders", ann.id) }));
    assert_eq!(links["status"], json!({ "href": format!("{order}/status") }));
    // Open from `pending` to ann: pay and cancel; `ship` needs a role and another state.
    assert_eq!(links["pay"], json!({ "href": format!("{order}/pay"), "method": "POST" }));
    assert_eq!(links["cancel"]["method"], "POST");
    assert!(links.get("ship").is_none(), "{links}");

    // Following a link moves the record, and the answer offers what is open now.
    let paid = call(&s, &ann, "POST", links["pay"]["href"].as_str().unwrap(), None).await;
    let names: Vec<&String> = paid.body["_links"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["self", "collection", "user", "status", "cancel"]);
    // Lists carry them too, and a tag read with links is one a conditional write accepts.
    let page = call(&s, &ann, "GET", "/api/orders", None).await;
    assert_eq!(page.body["data"][0]["_links"], paid.body["_links"]);
    let read = call(&s, &ann, "GET", &order, None).await;
    let etag = read.header("etag").unwrap().to_owned();
    let auth = ann.bearer();
    let patched = s
        .send_with("PATCH", &order, Some(json!({ "note": "n" })), &[("authorization", &auth), ("if-match", &etag)])
        .await;
    assert_eq!(patched.status, 200, "{}", patched.text);
    // A request that names its version by path is led within that version.
    let v1 = call(&s, &ann, "GET", &order.replace("/api/", "/api/v1/"), None).await;
    assert_eq!(v1.body["_links"]["self"]["href"], order.replace("/api/", "/api/v1/"));
    assert_eq!(v1.body["_links"]["cancel"]["href"], format!("{}/cancel", order.replace("/api/", "/api/v1/")));
}

backends!(links_offer_a_transition_to_the_roles_it_names, shop::service());
async fn links_offer_a_transition_to_the_roles_it_names(s: Server) {
    let ann = register(&s, "ann").await;
    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    let order = created.header("location").unwrap().to_owned();
    call(&s, &ann, "POST", &format!("{order}/pay"), None).await;
    let boss = admin(&s, "boss").await;
    let seen = call(&s, &boss, "GET", &order, None).await;
    assert!(seen.body["_links"]["ship"].is_object() && seen.body["_links"]["cancel"].is_object(), "{}", seen.text);
    let own = call(&s, &ann, "GET", &order, None).await;
    assert!(own.body["_links"].get("ship").is_none());
    assert_ne!(own.header("etag"), seen.header("etag"), "what is open differs, so the representation does");
}

backends!(derived_links_alike, crate::services::derived_shop::service());
async fn derived_links_alike(s: Server) {
    links_lead_to_the_record_its_lists_and_the_transitions_open_to_the_caller(s).await
}
