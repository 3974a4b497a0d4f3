//! The open fleet service: every method's semantics, status codes, lists and paging.

use crate::backends;
use crate::support::harness::Server;
use serde_json::{Value, json};

async fn depot(s: &Server, name: &str, city: Option<&str>) -> Value {
    let r = s.post("/v0/depots", json!({ "name": name, "city": city })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body
}

async fn driver(s: &Server, depot: &Value, email: &str) -> Value {
    let r = s
        .post(
            "/v0/drivers",
            json!({ "name": "Dana", "email": email, "depot_id": depot["id"], "rating": 4.5, "licence": "AB123456" }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body
}

backends!(create_answers_201_with_location_and_the_record, fleet::service());
async fn create_answers_201_with_location_and_the_record(s: Server) {
    let r = s.post("/v0/depots", json!({ "name": "North", "city": "Oslo" })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["id"].as_i64().expect("integer id");
    assert_eq!(r.header("location"), Some(format!("/v0/depots/{id}").as_str()));
    assert_eq!(r.body["name"], "North");
    assert_eq!(r.body["open"], true, "default applied");
    assert!(r.body["created_at"].is_string() && r.body["updated_at"].is_string());
    let back = s.get(&format!("/v0/depots/{id}")).await;
    assert_eq!(back.status, 200);
    assert_eq!(back.body, r.body);
}

backends!(head_answers_like_get_without_a_body_and_changes_nothing, fleet::service());
async fn head_answers_like_get_without_a_body_and_changes_nothing(s: Server) {
    let d = depot(&s, "North", None).await;
    let path = format!("/v0/depots/{}", d["id"]);
    let head = s.send("HEAD", &path, None).await;
    assert_eq!(head.status, 200);
    assert_eq!(head.text, "");
    assert_eq!(s.get(&path).await.body, d);
    assert_eq!(s.send("HEAD", "/v0/depots/999", None).await.status, 404);
}

backends!(put_replaces_and_clears_omitted_optional_fields, fleet::service());
async fn put_replaces_and_clears_omitted_optional_fields(s: Server) {
    let d = depot(&s, "North", None).await;
    let dr = driver(&s, &d, "dana@example.com").await;
    let path = format!("/v0/drivers/{}", dr["id"]);
    let r = s.send("PUT", &path, Some(json!({ "name": "Dana B", "depot_id": d["id"] }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["name"], "Dana B");
    assert_eq!(r.body["rating"], Value::Null, "omitted nullable field cleared");
    assert_eq!(r.body["licence"], Value::Null, "omitted optional field cleared");
    assert_eq!(r.body["email"], "dana@example.com", "not settable in replace: untouched");
    assert_eq!(r.body["hired_on"], dr["hired_on"]);
    assert_eq!(s.get(&path).await.body, r.body);
}

backends!(put_without_a_required_field_is_400_naming_it_and_changes_nothing, fleet::service());
async fn put_without_a_required_field_is_400_naming_it_and_changes_nothing(s: Server) {
    let d = depot(&s, "North", None).await;
    let dr = driver(&s, &d, "dana@example.com").await;
    let path = format!("/v0/drivers/{}", dr["id"]);
    let r = s.send("PUT", &path, Some(json!({ "depot_id": d["id"] }))).await;
    r.assert_problem(400);
    assert_eq!(r.error_fields(), ["name"]);
    assert_eq!(s.get(&path).await.body, dr);
}

backends!(a_get_modify_put_round_trip_works_but_changed_server_fields_are_refused, fleet::service());
async fn a_get_modify_put_round_trip_works_but_changed_server_fields_are_refused(s: Server) {
    let d = depot(&s, "North", None).await;
    let dr = driver(&s, &d, "dana@example.com").await;
    let path = format!("/v0/drivers/{}", dr["id"]);
    let mut whole = s.get(&path).await.body;
    whole["name"] = json!("Renamed");
    let r = s.send("PUT", &path, Some(whole.clone())).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["name"], "Renamed");
    whole["badge"] = json!("chief");
    let refused = s.send("PUT", &path, Some(whole)).await;
    refused.assert_problem(400);
    assert_eq!(refused.error_fields(), ["badge"]);
    assert_eq!(s.get(&path).await.body["badge"], "driver");
}

backends!(patch_merges_absent_untouched_null_clears_and_null_on_non_nullable_is_400, fleet::service());
async fn patch_merges_absent_untouched_null_clears_and_null_on_non_nullable_is_400(s: Server) {
    let d = depot(&s, "North", None).await;
    let dr = driver(&s, &d, "dana@example.com").await;
    let path = format!("/v0/drivers/{}", dr["id"]);
    let r = s.raw("PATCH", &path, "application/merge-patch+json", br#"{"rating": null}"#.to_vec()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["rating"], Value::Null);
    assert_eq!(r.body["name"], "Dana");
    assert_eq!(r.body["licence"], "AB123456");
    let bad = s.send("PATCH", &path, Some(json!({ "name": null }))).await;
    bad.assert_problem(400);
    assert_eq!(bad.error_fields(), ["name"]);
    assert_eq!(s.get(&path).await.body["name"], "Dana");
}

backends!(delete_is_204_without_body_and_a_repeat_is_404, fleet::service());
async fn delete_is_204_without_body_and_a_repeat_is_404(s: Server) {
    let d = depot(&s, "North", None).await;
    let path = format!("/v0/depots/{}", d["id"]);
    let r = s.send("DELETE", &path, None).await;
    assert_eq!(r.status, 204);
    assert_eq!(r.text, "");
    s.send("DELETE", &path, None).await.assert_problem(404);
    s.get(&path).await.assert_problem(404);
}

backends!(fields_not_settable_are_never_applied_in_any_write, fleet::service());
async fn fields_not_settable_are_never_applied_in_any_write(s: Server) {
    let d = depot(&s, "North", None).await;
    for (field, value) in [
        ("id", json!(99)),
        ("created_at", json!("2020-01-01T00:00:00Z")),
        ("updated_at", json!("2020-01-01T00:00:00Z")),
        ("badge", json!("chief")),
    ] {
        let mut body = json!({ "name": "Eve", "email": format!("{field}@example.com"), "depot_id": d["id"] });
        body[field] = value.clone();
        let r = s.post("/v0/drivers", body).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), [field]);
    }
    let list = s.get("/v0/drivers").await;
    assert_eq!(list.body["results"].as_array().unwrap().len(), 0, "nothing was created");
    let dr = driver(&s, &d, "dana@example.com").await;
    let path = format!("/v0/drivers/{}", dr["id"]);
    for field in ["id", "created_at", "badge", "email", "hired_on"] {
        let r = s.send("PATCH", &path, Some(json!({ field: "x" }))).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), [field]);
    }
    assert_eq!(s.get(&path).await.body, dr);
}

backends!(with_unknown_fields_ignore_extra_fields_are_dropped_not_applied, fleet::service());
async fn with_unknown_fields_ignore_extra_fields_are_dropped_not_applied(s: Server) {
    let v = s.post("/v0/vehicles", json!({ "plate": "AB1", "kind": "van" })).await;
    let r = s
        .post(
            "/v0/service-logs",
            json!({ "vehicle_id": v.body["id"], "done_on": "2026-01-02", "cost_cents": 100, "id": 4242, "extra": 1 }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_ne!(r.body["id"], 4242);
    assert!(r.body.get("extra").is_none());
}

backends!(bad_input_gets_400_naming_the_field, fleet::service());
async fn bad_input_gets_400_naming_the_field(s: Server) {
    let d = depot(&s, "North", None).await;
    let cases = [
        (json!({ "name": "Eve", "email": "e@example.com", "depot_id": d["id"], "rating": 7 }), "rating"),
        (json!({ "name": "Eve", "email": "not-an-email", "depot_id": d["id"] }), "email"),
        (json!({ "name": "Eve", "email": "e@example.com", "depot_id": d["id"], "licence": "abc" }), "licence"),
        (json!({ "name": 12, "email": "e@example.com", "depot_id": d["id"] }), "name"),
        (json!({ "name": "Eve", "email": "e@example.com", "depot_id": 9999 }), "depot_id"),
        (json!({ "name": "Eve", "email": "e@example.com" }), "depot_id"),
    ];
    for (body, field) in cases {
        let r = s.post("/v0/drivers", body.clone()).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), [field], "{body}");
    }
    let short = s.post("/v0/depots", json!({ "name": "N" })).await;
    short.assert_problem(400);
    assert_eq!(short.error_fields(), ["name"]);
    // `city` declares no `max_length`: a `string` takes 255 characters, no more.
    let city = |n: usize| json!({ "name": format!("Depot {n}"), "city": "c".repeat(n) });
    assert_eq!(s.post("/v0/depots", city(255)).await.status, 201);
    let long = s.post("/v0/depots", city(256)).await;
    long.assert_problem(400);
    assert_eq!(long.error_fields(), ["city"]);
    // Paging numbers beyond a signed 64-bit integer are refused, not wrapped.
    let huge = s.get("/v0/depots?limit=9223372036854775808").await;
    huge.assert_problem(400);
    assert_eq!(huge.error_fields(), ["limit"]);
    // A request with many bad parameters gets a bounded list of them.
    let noise: Vec<String> = (0..80).map(|i| format!("junk{i}=1")).collect();
    let many = s.get(&format!("/v0/depots?{}", noise.join("&"))).await;
    many.assert_problem(400);
    assert_eq!(many.error_fields().len(), 50);
    assert_eq!(many.body["detail"], "80 fields are invalid");
    let malformed = s.raw("POST", "/v0/depots", "application/json", b"{\"name\": ".to_vec()).await;
    malformed.assert_problem(400);
    let not_object = s.raw("POST", "/v0/depots", "application/json", b"[1]".to_vec()).await;
    not_object.assert_problem(400);
}

backends!(status_codes_for_routing_media_size_and_conflicts, fleet::service());
async fn status_codes_for_routing_media_size_and_conflicts(s: Server) {
    depot(&s, "North", None).await;
    let dup = s.post("/v0/depots", json!({ "name": "North" })).await;
    dup.assert_problem(409);
    assert_eq!(dup.error_fields(), ["name"]);
    s.get("/v0/depots/424242").await.assert_problem(404);
    s.get("/v0/depots/not-a-number").await.assert_problem(404);
    s.get("/v0/nowhere").await.assert_problem(404);
    let not_allowed = s.send("DELETE", "/v0/depots", None).await;
    not_allowed.assert_problem(405);
    let allow = not_allowed.header("allow").unwrap_or_default().to_owned();
    assert!(allow.contains("GET") && allow.contains("POST"), "{allow}");
    let no_replace = s.send("PUT", "/v0/service-logs/1", Some(json!({}))).await;
    no_replace.assert_problem(405);
    assert!(!no_replace.header("allow").unwrap_or_default().contains("PUT"));
    s.raw("POST", "/v0/depots", "text/plain", b"name=x".to_vec()).await.assert_problem(415);
    let big = json!({ "name": "x".repeat(20 * 1024) });
    s.post("/v0/depots", big).await.assert_problem(413);
    assert_eq!(s.get("/healthz").await.status, 200);
}

// A body is read straight into the operation's input where it can be; these are the
// bodies where the straight way and the JSON object way could part.
backends!(a_body_is_read_as_a_json_object_however_it_is_written, fleet::service());
async fn a_body_is_read_as_a_json_object_however_it_is_written(s: Server) {
    let post = |body: &str| s.raw("POST", "/v0/depots", "application/json", body.as_bytes().to_vec());
    let spaced = post(" \n\t{\"name\": \"Spaced\"}\n").await;
    assert_eq!(spaced.status, 201, "{}", spaced.text);
    assert_eq!(spaced.body["name"], "Spaced");
    // serde reads a struct from an array too, member by member; a body is an object.
    let array = post(r#"["Arrayed", null, true]"#).await;
    array.assert_problem(400);
    assert!(array.body["detail"].as_str().unwrap_or_default().contains("not an array"), "{}", array.text);
    assert_eq!(s.get("/v0/depots?name=Arrayed").await.body["data"], json!([]));
    // A member sent twice: neither, whichever a reader before the service would take.
    let twice = post(r#"{"name": "First", "name": "Second"}"#).await;
    twice.assert_problem(400);
    assert_eq!(twice.error_fields(), ["name"], "{}", twice.text);
    assert_eq!(s.get("/v0/depots?name=Second").await.body["data"], json!([]));
    for (body, field) in [
        (r#"{"name": 5}"#, "name"),
        (r#"{"name": "Flagged", "is_admin": true}"#, "is_admin"),
        (r#"{"name": "Open", "open": null}"#, "open"),
        (r#"{"city": "Oslo"}"#, "name"),
        (r#"{"name": "X"}"#, "name"),
    ] {
        let refused = post(body).await;
        refused.assert_problem(400);
        assert_eq!(refused.error_fields(), [field], "{body}: {}", refused.text);
    }
    for body in [r#"{"name": "Cut""#, r#"{"name": "Trailing"} x"#, "", "null"] {
        post(body).await.assert_problem(400);
    }
    let id = spaced.body["id"].as_i64().unwrap();
    let path = format!("/v0/depots/{id}");
    let patch = |body: &str| s.raw("PATCH", &path, "application/merge-patch+json", body.as_bytes().to_vec());
    patch(r#"["Oslo"]"#).await.assert_problem(400);
    let twice = patch(r#"{"city": "Oslo", "city": "Bergen"}"#).await;
    twice.assert_problem(400);
    assert_eq!(twice.error_fields(), ["city"], "{}", twice.text);
    assert_eq!(s.get(&path).await.body["city"], Value::Null, "nothing of it was applied");
    let cleared = patch(" {\"city\": null} ").await;
    assert_eq!(cleared.body["city"], Value::Null, "{}", cleared.text);
    assert_eq!(patch(r#"{"name": null}"#).await.error_fields(), ["name"]);
}

backends!(lists_filter_sort_and_page_by_offset_with_link_next, fleet::service());
async fn lists_filter_sort_and_page_by_offset_with_link_next(s: Server) {
    for (name, city) in
        [("Alpha", "Oslo"), ("Bravo", "Bergen"), ("Charlie", "Oslo"), ("Delta", "Oslo"), ("Echo", "Tromso")]
    {
        depot(&s, name, Some(city)).await;
    }
    let r = s.get("/v0/depots?city=Oslo&sort=name_desc&limit=2").await;
    assert_eq!(r.status, 200, "{}", r.text);
    let names: Vec<&str> = r.body["data"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Delta", "Charlie"]);
    assert_eq!(r.body["has_more"], true);
    assert_eq!(r.body["limit"], 2);
    assert_eq!(r.body["offset"], 0);
    let link = r.header("link").expect("Link while there is more").to_owned();
    assert!(link.ends_with("rel=\"next\"") && link.contains("offset=2"), "{link}");
    let next = link.trim_start_matches('<').split('>').next().unwrap();
    let page2 = s.get(next).await;
    let names: Vec<&str> = page2.body["data"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Alpha"]);
    assert_eq!(page2.body["has_more"], false);
    assert!(page2.header("link").is_none());
    let clamped = s.get("/v0/depots?limit=1000").await;
    assert_eq!(clamped.body["limit"], 50, "clamped to max_size");
    for bad in [
        "/v0/depots?limit=ten",
        "/v0/depots?limit=0",
        "/v0/depots?offset=-1",
        "/v0/depots?colour=red",
        "/v0/depots?sort=colour_asc",
        "/v0/depots?sort=name",
        "/v0/depots?open=maybe",
    ] {
        let r = s.get(bad).await;
        r.assert_problem(400);
        assert!(!r.error_fields().is_empty(), "{bad}");
    }
    // A paging number out of range says the range, not only its upper end.
    for (bad, range) in [("limit=-1", "from 1 to"), ("limit=0", "from 1 to"), ("offset=-1", "from 0 to")] {
        let r = s.get(&format!("/v0/depots?{bad}")).await;
        assert!(r.body["detail"].as_str().is_some_and(|d| d.contains(range)), "{bad}: {}", r.text);
    }
}

backends!(page_style_lists_are_bare_arrays_with_link_next, fleet::service());
async fn page_style_lists_are_bare_arrays_with_link_next(s: Server) {
    for i in 0..7 {
        let r = s.post("/v0/vehicles", json!({ "plate": format!("P{i}"), "kind": if i % 2 == 0 { "van" } else { "bike" }, "capacity": i * 10 })).await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let r = s.get("/v0/vehicles?sort=capacity_desc").await;
    let plates: Vec<&str> =
        r.body.as_array().expect("bare array").iter().map(|v| v["plate"].as_str().unwrap()).collect();
    assert_eq!(plates, ["P6", "P5", "P4", "P3", "P2"], "default size 5");
    assert!(r.header("link").unwrap().contains("page=2"));
    let p2 = s.get("/v0/vehicles?sort=capacity_desc&page=2").await;
    assert_eq!(p2.body.as_array().unwrap().len(), 2);
    assert!(p2.header("link").is_none());
    let vans = s.get("/v0/vehicles?kind=van&per_page=20").await;
    assert_eq!(vans.body.as_array().unwrap().len(), 4);
    s.get("/v0/vehicles?kind=plane").await.assert_problem(400);
}

backends!(nested_lists_show_only_the_parents_children, fleet::service());
async fn nested_lists_show_only_the_parents_children(s: Server) {
    let north = depot(&s, "North", None).await;
    let south = depot(&s, "South", None).await;
    driver(&s, &north, "a@example.com").await;
    driver(&s, &north, "b@example.com").await;
    driver(&s, &south, "c@example.com").await;
    let r = s.get(&format!("/v0/depots/{}/drivers", north["id"])).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let emails: Vec<&str> =
        r.body["results"].as_array().unwrap().iter().map(|d| d["email"].as_str().unwrap()).collect();
    assert_eq!(emails, ["a@example.com", "b@example.com"]);
    s.get("/v0/depots/999/drivers").await.assert_problem(404);
}

backends!(cursor_paging_never_repeats_or_skips_a_record_while_others_come_and_go, fleet::service());
async fn cursor_paging_never_repeats_or_skips_a_record_while_others_come_and_go(s: Server) {
    let d = depot(&s, "North", None).await;
    let dr = driver(&s, &d, "d@example.com").await;
    let v = s.post("/v0/vehicles", json!({ "plate": "AB1", "kind": "van" })).await.body;
    let trip = |i: usize| json!({ "vehicle_id": v["id"], "driver_id": dr["id"], "starts_at": format!("2026-01-{:02}T08:00:00Z", 1 + i % 28), "distance_km": format!("{i}.5") });
    let mut before = Vec::new();
    for i in 0..23 {
        before.push(s.post("/v0/trips", trip(i)).await.body["id"].as_i64().unwrap());
    }
    let mut seen: Vec<i64> = Vec::new();
    let mut deleted: Vec<i64> = Vec::new();
    let mut path = "/v0/trips?sort=starts_at_asc&limit=4".to_owned();
    for round in 0.. {
        let r = s.get(&path).await;
        assert_eq!(r.status, 200, "{}", r.text);
        seen.extend(r.body["data"].as_array().unwrap().iter().map(|t| t["id"].as_i64().unwrap()));
        // Others write meanwhile: a new trip, and a pre-existing one not yet seen goes.
        s.post("/v0/trips", trip(100 + round)).await;
        if let Some(victim) = before.iter().rev().find(|id| !seen.contains(id) && !deleted.contains(id)) {
            assert_eq!(s.send("DELETE", &format!("/v0/trips/{victim}"), None).await.status, 204);
            deleted.push(*victim);
        }
        if r.body["has_more"] == false {
            assert!(r.header("link").is_none());
            break;
        }
        let cursor = r.body["next_cursor"].as_str().expect("next_cursor while has_more").to_owned();
        path = format!("/v0/trips?sort=starts_at_asc&limit=4&cursor={cursor}");
        assert!(round < 50, "paging terminates");
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "no record repeated: {seen:?}");
    for id in before.iter().filter(|id| !deleted.contains(id)) {
        assert!(seen.contains(id), "pre-existing trip {id} skipped");
    }
    let wrong_sort = s.get(&format!("{}&sort=distance_km_desc", path.replace("sort=starts_at_asc&", ""))).await;
    wrong_sort.assert_problem(400);
    s.get("/v0/trips?cursor=garbage").await.assert_problem(400);
}

backends!(sql_metacharacters_are_data_never_code, fleet::service());
async fn sql_metacharacters_are_data_never_code(s: Server) {
    let evil = "x'); DROP TABLE \"depot\"; --";
    let d = depot(&s, evil, Some("O'Brien \\ % _ ;")).await;
    assert_eq!(d["name"], evil);
    let path = format!("/v0/depots?name={}", urlencode(evil));
    let r = s.get(&path).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"].as_array().unwrap().len(), 1);
    let like = s.get("/v0/depots?city=%25").await;
    assert_eq!(like.body["data"].as_array().unwrap().len(), 0, "`%` is no wildcard");
    let sort = s.get("/v0/depots?sort=name_asc;DROP").await;
    sort.assert_problem(400);
    assert_eq!(s.get("/v0/depots").await.status, 200, "the table is still there");
}

fn urlencode(s: &str) -> String {
    s.bytes().map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}

backends!(hooks_in_src_hooks_rs_change_input_and_refuse_writes, fleet::service());
async fn hooks_in_src_hooks_rs_change_input_and_refuse_writes(s: Server) {
    let van = s.post("/v0/vehicles", json!({ "plate": " ab-12 ", "kind": "van", "capacity": 900 })).await;
    assert_eq!(van.status, 201, "{}", van.text);
    assert_eq!(van.body["plate"], "AB-12", "the hook normalised the plate");
    let bike = s.post("/v0/vehicles", json!({ "plate": "B1", "kind": "bike", "capacity": 500 })).await;
    bike.assert_problem(422);
    assert!(bike.body["detail"].as_str().unwrap().contains("at most 50 kg"));
    assert_eq!(s.get("/v0/vehicles?plate=B1").await.body.as_array().unwrap().len(), 0, "nothing stored");
    let ok = s.post("/v0/vehicles", json!({ "plate": "B2", "kind": "bike", "capacity": 20 })).await;
    assert_eq!(ok.status, 201);
    let patch = s
        .send("PATCH", &format!("/v0/vehicles/{}", ok.body["id"]), Some(json!({ "kind": "bike", "capacity": 60 })))
        .await;
    patch.assert_problem(422);
}

backends!(decimals_sort_as_numbers_in_pages_and_cursors, fleet::service());
async fn decimals_sort_as_numbers_in_pages_and_cursors(s: Server) {
    let d = depot(&s, "North", None).await;
    let dr = driver(&s, &d, "d@example.com").await;
    let v = s.post("/v0/vehicles", json!({ "plate": "AB1", "kind": "van" })).await.body;
    for km in ["10.5", "2.5", "100", "9.75", "2.25"] {
        let r = s.post("/v0/trips", json!({ "vehicle_id": v["id"], "driver_id": dr["id"], "starts_at": "2026-01-01T08:00:00Z", "distance_km": km })).await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let mut seen = Vec::new();
    let mut path = "/v0/trips?sort=distance_km_desc&limit=2".to_owned();
    loop {
        let r = s.get(&path).await;
        assert_eq!(r.status, 200, "{}", r.text);
        seen.extend(r.body["data"].as_array().unwrap().iter().map(|t| t["distance_km"].as_str().unwrap().to_owned()));
        match r.body["next_cursor"].as_str() {
            Some(c) => path = format!("/v0/trips?sort=distance_km_desc&limit=2&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen, ["100", "10.5", "9.75", "2.5", "2.25"]);
}

backends!(sql_metacharacters_pass_through_every_text_field_and_filter_unchanged, fleet::service());
async fn sql_metacharacters_pass_through_every_text_field_and_filter_unchanged(s: Server) {
    let nasty = ["'; DELETE FROM \"driver\"; --", "\" OR 1=1 --", "%_\\", "$1 ? :name", "ünï'cødé"];
    let mut plates = Vec::new();
    for (i, text) in nasty.iter().enumerate() {
        let d = s.post("/v0/depots", json!({ "name": format!("{text}{i}"), "city": text })).await;
        assert_eq!(d.status, 201, "{}", d.text);
        assert_eq!(d.body["city"], *text);
        let dr = s
            .post(
                "/v0/drivers",
                json!({ "name": text, "email": format!("n{i}@example.com"), "depot_id": d.body["id"] }),
            )
            .await;
        assert_eq!(dr.status, 201, "{}", dr.text);
        assert_eq!(dr.body["name"], *text);
        let v = s
            .post("/v0/vehicles", json!({ "plate": format!("{text}{i}"), "kind": "van", "specs": { "note": text } }))
            .await;
        assert_eq!(v.status, 201, "{}", v.text);
        assert_eq!(v.body["specs"]["note"], *text);
        // The fleet's hook stores plates in capitals.
        plates.push(v.body["plate"].as_str().unwrap().to_owned());
        let t = s.post("/v0/trips", json!({ "vehicle_id": v.body["id"], "driver_id": dr.body["id"], "starts_at": "2026-01-01T08:00:00Z", "note": text })).await;
        assert_eq!(t.status, 201, "{}", t.text);
        assert_eq!(t.body["note"], *text);
    }
    for (i, text) in nasty.iter().enumerate() {
        let enc = urlencode(text);
        let by_city = s.get(&format!("/v0/depots?city={enc}")).await;
        assert_eq!(by_city.body["data"].as_array().unwrap().len(), 1, "city filter {text:?}");
        let by_name = s.get(&format!("/v0/depots?name={}", urlencode(&format!("{text}{i}")))).await;
        assert_eq!(by_name.body["data"].as_array().unwrap().len(), 1, "name filter {text:?}");
        let by_plate = s.get(&format!("/v0/vehicles?plate={}", urlencode(&plates[i]))).await;
        assert_eq!(by_plate.body.as_array().unwrap().len(), 1, "plate filter {text:?}");
        s.get(&format!("/v0/vehicles?kind={enc}")).await.assert_problem(400);
        s.get(&format!("/v0/drivers?depot_id={enc}")).await.assert_problem(400);
    }
    assert_eq!(
        s.get("/v0/drivers?limit=50").await.body["results"].as_array().unwrap().len(),
        nasty.len(),
        "no row lost"
    );
    // NUL cannot be stored in PostgreSQL text: refused with 400 on every database.
    let nul = s.post("/v0/depots", json!({ "name": "x\u{0}y" })).await;
    nul.assert_problem(400);
    assert_eq!(nul.error_fields(), ["name"]);
    s.get("/v0/depots?city=a%00b").await.assert_problem(400);
}

backends!(the_state_field_is_never_set_by_a_write, fleet::service());
async fn the_state_field_is_never_set_by_a_write(s: Server) {
    let d = depot(&s, "North", None).await;
    let dr = driver(&s, &d, "d@example.com").await;
    let v = s.post("/v0/vehicles", json!({ "plate": "AB1", "kind": "van" })).await.body;
    let body = json!({ "vehicle_id": v["id"], "driver_id": dr["id"], "starts_at": "2026-01-01T08:00:00Z" });
    let mut with_state = body.clone();
    with_state["status"] = json!("done");
    let refused = s.post("/v0/trips", with_state).await;
    refused.assert_problem(400);
    assert_eq!(refused.error_fields(), ["status"]);
    let trip = s.post("/v0/trips", body).await;
    assert_eq!(trip.status, 201, "{}", trip.text);
    assert_eq!(trip.body["status"], "planned", "a record starts in the initial state");
    let path = format!("/v0/trips/{}", trip.body["id"]);
    let patch = s.send("PATCH", &path, Some(json!({ "status": "done" }))).await;
    patch.assert_problem(400);
    assert_eq!(patch.error_fields(), ["status"]);
    let mut whole = s.get(&path).await.body;
    whole["status"] = json!("underway");
    let put = s.send("PUT", &path, Some(whole)).await;
    put.assert_problem(400);
    assert_eq!(put.error_fields(), ["status"]);
    assert_eq!(s.get(&path).await.body["status"], "planned");
}

backends!(list_parameters_are_held_to_what_the_document_says, fleet::service());
async fn list_parameters_are_held_to_what_the_document_says(s: Server) {
    for (name, city) in [("Alpha", "Oslo"), ("Bravo", "Bergen"), ("Charlie", "Oslo")] {
        depot(&s, name, Some(city)).await;
    }
    let names = |r: &crate::support::harness::Reply| -> Vec<String> {
        r.body["data"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap().to_owned()).collect()
    };
    // A later key on a column already sorted by cannot change the order: accepted.
    let redundant = s.get("/v0/depots?sort=name_desc,name_asc,id_asc,id_desc").await;
    assert_eq!(redundant.status, 200, "{}", redundant.text);
    assert_eq!(names(&redundant), ["Charlie", "Bravo", "Alpha"]);
    // More keys than sortable fields (name, city, id, created_at) is more than documented.
    let five = s.get("/v0/depots?sort=name_asc,city_asc,id_asc,created_at_asc,name_desc").await;
    five.assert_problem(400);
    assert_eq!(five.error_fields(), ["sort"]);
    // `sort` is an array: given once with commas or repeated (as generated clients send
    // it), it is the same list; a parameter that is one value stays one.
    let commas = s.get("/v0/depots?sort=city_asc,name_desc").await;
    let repeated = s.get("/v0/depots?sort=city_asc&sort=name_desc").await;
    assert_eq!((repeated.status, names(&repeated)), (200, names(&commas)), "{}", repeated.text);
    let twice = s.get("/v0/depots?limit=1&limit=2").await;
    twice.assert_problem(400);
    assert_eq!(twice.error_fields(), ["limit"]);
    // An empty key names nothing the document offers: leaving `sort` out is the default order.
    for empty in ["sort=", "sort=%20", "sort=name_asc,", "sort=,,"] {
        let r = s.get(&format!("/v0/depots?{empty}")).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), ["sort"], "{empty}");
    }

    // A filter value no record could hold breaks the field's own rules.
    for (bad, field) in [
        ("/v0/depots?name=A", "name"),                             // min_length 2
        (&*format!("/v0/depots?name={}", "n".repeat(61)), "name"), // max_length 60
        ("/v0/drivers?depot_id=abc", "depot_id"),
        ("/v0/vehicles?kind=rocket", "kind"),
    ] {
        let r = s.get(bad).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), [field], "{bad}");
    }
    assert_eq!(names(&s.get("/v0/depots?name=Alpha").await), ["Alpha"]);

    // Cursor lists: an empty cursor is the first page; a starting_after that names no
    // record is refused with the parameter named.
    let d = s.get("/v0/depots").await.body["data"][0].clone();
    let dr = driver(&s, &d, "d@example.com").await;
    let v = s.post("/v0/vehicles", json!({ "plate": "AB1", "kind": "van" })).await.body;
    let trip = json!({ "vehicle_id": v["id"], "driver_id": dr["id"], "starts_at": "2026-01-01T08:00:00Z" });
    assert_eq!(s.post("/v0/trips", trip).await.status, 201);
    let empty = s.get("/v0/trips?cursor=").await;
    assert_eq!(empty.status, 200, "{}", empty.text);
    assert_eq!(empty.body["data"].as_array().unwrap().len(), 1);
    for bad in ["/v0/trips?starting_after=999999", "/v0/trips?starting_after=", "/v0/trips?starting_after=x"] {
        let r = s.get(bad).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), ["starting_after"], "{bad}");
    }
    let long = s.get(&format!("/v0/trips?cursor={}", "A".repeat(4097))).await;
    long.assert_problem(400);
    assert_eq!(long.error_fields(), ["cursor"]);
}

backends!(the_next_link_is_rebuilt_canonically_from_the_request, fleet::service());
async fn the_next_link_is_rebuilt_canonically_from_the_request(s: Server) {
    for (name, city) in [("Alpha", "Oslo"), ("Bravo", "Oslo"), ("Charlie", "Oslo")] {
        depot(&s, name, Some(city)).await;
    }
    // Spaces, a redundant key, a zero-padded size: the link says the same canonically.
    let r = s.get("/v0/depots?sort=name_desc,%20name_asc&limit=002&city=Oslo").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("link"), Some("</v0/depots?city=Oslo&sort=name_desc&limit=2&offset=2>; rel=\"next\""));
    let next = s.get("/v0/depots?city=Oslo&sort=name_desc&limit=2&offset=2").await;
    assert_eq!(next.body["data"][0]["name"], "Alpha");
    // A parameter given twice is not one value.
    let twice = s.get("/v0/depots?city=Oslo&city=Bergen").await;
    twice.assert_problem(400);
    assert_eq!(twice.error_fields(), ["city"]);

    // A cursor over every sort key stays within the documented bound, and comes back.
    let doc: Value = serde_json::from_str(include_str!("../../../services/fleet/openapi.json")).unwrap();
    let bound = doc["paths"]["/v0/trips"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "cursor")
        .unwrap()["schema"]["maxLength"]
        .as_u64()
        .unwrap();
    let d = s.get("/v0/depots").await.body["data"][0].clone();
    let dr = driver(&s, &d, "d@example.com").await;
    let v = s.post("/v0/vehicles", json!({ "plate": "AB1", "kind": "van" })).await.body;
    for km in ["123456789012345678.123456789", "1.5"] {
        let trip = json!({ "vehicle_id": v["id"], "driver_id": dr["id"], "starts_at": "2026-01-01T08:00:00.123456Z", "distance_km": km });
        assert_eq!(s.post("/v0/trips", trip).await.status, 201);
    }
    let every = "sort=status_desc,distance_km_desc,starts_at_desc,created_at_desc,id_desc";
    let first = s.get(&format!("/v0/trips?{every}&limit=1")).await;
    let cursor = first.body["next_cursor"].as_str().expect("a next page").to_owned();
    assert!(cursor.len() as u64 <= bound, "{} > {bound}", cursor.len());
    let second = s.get(&format!("/v0/trips?{every}&limit=1&cursor={cursor}")).await;
    assert_eq!(second.status, 200, "{}", second.text);
    assert_eq!(second.body["data"][0]["distance_km"], "1.5");
}

backends!(
    beyond_max_in_flight_requests_are_shed_with_retry_after,
    restgen::serve::Service { max_in_flight: Some(1), ..fleet::service() }
);
async fn beyond_max_in_flight_requests_are_shed_with_retry_after(s: Server) {
    use tokio::io::AsyncWriteExt;
    // A request whose body is still arriving holds the one place.
    let addr = s.base.trim_start_matches("http://").to_owned();
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /v0/depots HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n{{\"name\":"
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    let mut shed = None;
    for _ in 0..200 {
        let r = s.get("/v0/depots").await;
        if r.status == 503 {
            shed = Some(r);
            break;
        }
        assert_eq!(r.status, 200, "{}", r.text);
    }
    let shed = shed.expect("a second request is shed while the first is in flight");
    shed.assert_problem(503);
    assert_eq!(shed.header("retry-after"), Some("1"));
    // The slow request finishes; the place is free again.
    slow.write_all(b"\"Slowpoke\",\"city\":null}      ").await.unwrap();
    drop(slow);
    let mut served = false;
    for _ in 0..200 {
        if s.get("/v0/depots").await.status == 200 {
            served = true;
            break;
        }
    }
    assert!(served, "requests are served again once the first is done");
}

// PATCH is JSON Merge Patch all the way down: every example of RFC 7396 Appendix A, run
// on a vehicle's `json` field, gives the RFC's result, answered and stored.
backends!(patch_merges_inside_json_fields_as_rfc_7396_says, fleet::service());
async fn patch_merges_inside_json_fields_as_rfc_7396_says(s: Server) {
    let examples: Vec<(Value, Value, Value)> =
        serde_json::from_str(include_str!("../../../fixtures/rfc7396-appendix-a.json")).expect("examples");
    for (i, (target, patch, want)) in examples.into_iter().enumerate() {
        let made = s.post("/v0/vehicles", json!({ "plate": format!("RFC{i}"), "kind": "van", "specs": target })).await;
        assert_eq!((made.status, &made.body["specs"]), (201, &target), "{}", made.text);
        let path = made.header("location").unwrap().to_owned();
        let body = serde_json::to_vec(&json!({ "specs": patch })).unwrap();
        let patched = s.raw("PATCH", &path, "application/merge-patch+json", body).await;
        assert_eq!((patched.status, &patched.body["specs"]), (200, &want), "{target} patched with {patch}");
        assert_eq!(s.get(&path).await.body["specs"], want, "as stored");
    }
}

// A body sent in chunks declares no length: it is counted as it is read, and one that
// passes the limit (16 KiB) is a 413 like a body declared too large; one within it is
// read whole.
backends!(a_body_sent_in_chunks_is_held_to_the_limit, fleet::service());
async fn a_body_sent_in_chunks_is_held_to_the_limit(s: Server) {
    let addr = s.base.trim_start_matches("http://");
    let send = |body: String| {
        let mut request = format!(
            "POST /v0/depots HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
             transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        );
        for chunk in body.as_bytes().chunks(4096) {
            request.push_str(&format!("{:x}\r\n{}\r\n", chunk.len(), String::from_utf8_lossy(chunk)));
        }
        request.push_str("0\r\n\r\n");
        let s = &s;
        async move { s.exchange(request.as_bytes()).await }
    };
    // Valid JSON of any length: whitespace between members.
    let padded = |name: &str, bytes: usize| format!(r#"{{"name": "{name}",{}"city": "Oslo"}}"#, " ".repeat(bytes));
    let within = send(padded("Chunked", 12 * 1024)).await;
    assert!(within.starts_with("HTTP/1.1 201"), "{within}");
    let past = send(padded("Too long", 20 * 1024)).await;
    assert!(past.starts_with("HTTP/1.1 413"), "{past}");
    assert!(past.contains("application/problem+json"), "{past}");
    assert_eq!(s.get("/v0/depots?name=Too%20long").await.body["data"], json!([]), "nothing stored");
}

// A client that writes the whole body before it reads (as Python's http.client does) gets
// the 413 for a body far over the limit (8 MiB against 16 KiB): the service reads the
// refused body and throws it away before answering, then closes the connection. The fleet
// has no layer around the frame, which reads it away itself (the shop's test is of one
// with layers: CORS, versions, load shedding).
backends!(an_oversized_upload_sent_whole_gets_its_413, fleet::service());
async fn an_oversized_upload_sent_whole_gets_its_413(s: Server) {
    let answer = s.upload_whole("/v0/depots", 8 * 1024 * 1024).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
    assert!(answer.contains("application/problem+json"), "{answer}");
}
