//! `examples/derive-service`, the bakery written by hand with the derive macros: the
//! suite's CRUD, allow-list and paging cases, and its one business rule (an order's total
//! is the sum of its line items and its fulfilment's fee) held at create and at every
//! change, with the fulfilment a hand-written `#[derive(restgen::Enum)]` type.

use crate::backends;
use crate::support::harness::{Reply, Server};
use serde_json::{Value, json};

fn bakery() -> restgen::serve::Service {
    derive_service::app().into_service()
}

fn items(lines: &[(&str, i64, i64)]) -> Value {
    lines.iter().map(|(sku, q, p)| json!({ "sku": sku, "quantity": q, "unit_cents": p })).collect()
}

async fn order(s: &Server, customer: &str, lines: &[(&str, i64, i64)]) -> Reply {
    s.post("/api/orders", json!({ "customer": customer, "items": items(lines) })).await
}

backends!(an_order_is_created_read_replaced_patched_and_deleted, bakery());
async fn an_order_is_created_read_replaced_patched_and_deleted(s: Server) {
    let created = order(&s, "Ann", &[("croissant", 3, 250), ("baguette", 1, 320)]).await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(created.body["total_cents"], 3 * 250 + 320, "computed by the service");
    assert_eq!(created.body["status"], "open");
    let path = created.header("location").unwrap().to_owned();
    assert_eq!(s.get(&path).await.body, created.body);
    // The struct is the representation.
    let typed: derive_service::Order = serde_json::from_value(created.body.clone()).unwrap();
    assert_eq!((typed.items.len(), typed.total_cents), (2, 1070));

    // Replacing the items recomputes the total; the omitted note is cleared.
    let replaced =
        s.send("PUT", &path, Some(json!({ "customer": "Ann", "items": items(&[("baguette", 2, 320)]) }))).await;
    assert_eq!(replaced.status, 200, "{}", replaced.text);
    assert_eq!(replaced.body["total_cents"], 640);
    // A patch of other fields keeps the total as it is.
    let paid = s.send("PATCH", &path, Some(json!({ "status": "paid", "note": "at the door" }))).await;
    assert_eq!(paid.status, 200, "{}", paid.text);
    assert_eq!((paid.body["status"].as_str(), paid.body["total_cents"].as_i64()), (Some("paid"), Some(640)));
    assert_eq!(s.send("DELETE", &path, None).await.status, 204);
    assert_eq!(s.send("DELETE", &path, None).await.status, 404);
}

backends!(a_client_sets_only_what_the_attributes_allow, bakery());
async fn a_client_sets_only_what_the_attributes_allow(s: Server) {
    let base = json!({ "customer": "Bo", "items": items(&[("bun", 1, 100)]) });
    for (field, value) in [
        ("total_cents", json!(1)),
        ("status", json!("paid")),
        ("id", json!("0190b6a4-0000-7000-8000-000000000000")),
        ("created_at", json!("2026-01-01T00:00:00Z")),
    ] {
        let mut body = base.clone();
        body[field] = value;
        let r = s.post("/api/orders", body).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), [field], "{}", r.text);
    }
    let created = s.post("/api/orders", base).await;
    let path = created.header("location").unwrap().to_owned();
    // Items are fixed once paid for in a patch: settable at create and replace only.
    let r = s.send("PATCH", &path, Some(json!({ "items": items(&[("bun", 9, 100)]) }))).await;
    assert_eq!(r.error_fields(), ["items"]);
    let r = s.send("PATCH", &path, Some(json!({ "total_cents": 0 }))).await;
    assert_eq!(r.error_fields(), ["total_cents"]);
    assert_eq!(s.get(&path).await.body["total_cents"], 100, "nothing was applied");
    let r = s.post("/api/orders", json!({ "customer": "", "items": items(&[("bun", 1, 1)]) })).await;
    assert_eq!(r.error_fields(), ["customer"]);
}

backends!(the_total_rule_refuses_what_cannot_be_an_order, bakery());
async fn the_total_rule_refuses_what_cannot_be_an_order(s: Server) {
    for lines in [vec![], vec![("bun", 0, 100)], vec![("", 1, 100)], vec![("bun", 1, -5)], vec![("bun", i64::MAX, 2)]] {
        let r = order(&s, "Cy", &lines).await;
        r.assert_problem(422);
    }
    // A line item of the wrong shape names what is wrong with it.
    let r = s.post("/api/orders", json!({ "customer": "Cy", "items": [{ "sku": "bun", "quantity": 1 }] })).await;
    r.assert_problem(400);
    assert_eq!(r.error_fields(), ["unit_cents"], "{}", r.text);
    let r = s
        .post("/api/orders", json!({ "customer": "Cy", "items": [{ "sku": "bun", "qty": 1, "unit_cents": 1 }] }))
        .await;
    r.assert_problem(400);
    // Nothing of the refused orders was stored.
    assert_eq!(s.get("/api/orders").await.body["data"], json!([]));
    // A replace is held to the rule too.
    let created = order(&s, "Cy", &[("bun", 1, 100)]).await;
    let path = created.header("location").unwrap().to_owned();
    let r = s.send("PUT", &path, Some(json!({ "customer": "Cy", "items": [] }))).await;
    r.assert_problem(422);
    assert_eq!(s.get(&path).await.body["total_cents"], 100);
}

backends!(orders_page_by_cursor_sort_by_total_and_filter_by_status, bakery());
async fn orders_page_by_cursor_sort_by_total_and_filter_by_status(s: Server) {
    for i in 1..=45 {
        let r = order(&s, &format!("customer {i}"), &[("bun", i, 10)]).await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let mut totals = Vec::new();
    let mut next = Some("/api/orders?sort=total_cents_desc".to_owned());
    let mut pages = 0;
    while let Some(url) = next.take() {
        let page = s.get(&url).await;
        assert_eq!(page.status, 200, "{}", page.text);
        pages += 1;
        totals.extend(page.body["data"].as_array().unwrap().iter().map(|o| o["total_cents"].as_i64().unwrap()));
        next = page.header("link").map(|l| l.trim_start_matches('<').split('>').next().unwrap().to_owned());
    }
    assert_eq!(pages, 3, "pages of the default 20");
    assert_eq!(totals, (1..=45).rev().map(|i| i * 10).collect::<Vec<_>>());
    let first = s.get("/api/orders?limit=1&sort=total_cents_asc").await;
    let path = format!("/api/orders/{}", first.body["data"][0]["id"].as_str().unwrap());
    s.send("PATCH", &path, Some(json!({ "status": "cancelled" }))).await;
    let cancelled = s.get("/api/orders?status=cancelled").await;
    assert_eq!(cancelled.body["data"].as_array().unwrap().len(), 1);
    assert_eq!(cancelled.body["data"][0]["total_cents"], 10);
    s.get("/api/orders?limit=many").await.assert_problem(400);
}

backends!(a_client_calls_the_derived_resource_with_its_own_types, bakery());
async fn a_client_calls_the_derived_resource_with_its_own_types(s: Server) {
    use derive_service::{CreateOrder, LineItem, Order, OrderStatus, PatchOrder};
    use futures_util::TryStreamExt;
    use restgen_client::{Builder, ServiceInfo, Transport};
    let info =
        ServiceInfo { base_path: "/api", login_path: None, login_identifier: "", api_key_header: None, versions: None };
    let client: Transport = Builder::new(info, &s.base).build().unwrap();
    let orders = client.collection::<Order>();
    let line = |quantity| LineItem { sku: "bun".into(), quantity, unit_cents: 10 };
    let items = |quantity| serde_json::to_value(vec![line(quantity)]).unwrap();
    let created = orders
        .create(&CreateOrder {
            customer: "Ann".into(),
            items: items(2),
            note: restgen::Patch::Absent,
            fulfilment: None,
        })
        .await
        .unwrap();
    assert_eq!((created.total_cents, created.status), (20, OrderStatus::Open));
    assert_eq!(orders.get(created.id).await.unwrap().items, vec![line(2)]);
    let paid = orders.patch(created.id, &PatchOrder { status: Some(OrderStatus::Paid), ..PatchOrder::default() }).await;
    assert_eq!(paid.unwrap().status, OrderStatus::Paid);
    // The server's refusals are typed problems.
    let refused = orders
        .create(&CreateOrder { customer: "Bo".into(), items: items(0), note: restgen::Patch::Absent, fulfilment: None })
        .await;
    assert_eq!(refused.unwrap_err().status(), Some(422));
    // Paging in the resource's own style, page after page.
    for q in 1..=44 {
        orders
            .create(&CreateOrder {
                customer: format!("c{q}"),
                items: items(q),
                note: restgen::Patch::Absent,
                fulfilment: None,
            })
            .await
            .unwrap();
    }
    let all: Vec<Order> = orders.list().param("limit", 20).stream().try_collect().await.unwrap();
    assert_eq!(all.len(), 45);
    orders.delete(created.id).await.unwrap();
    assert_eq!(orders.get(created.id).await.unwrap_err().status(), Some(404));
}

backends!(a_hand_written_enum_is_a_fields_values, bakery());
async fn a_hand_written_enum_is_a_fields_values(s: Server) {
    use derive_service::{DELIVERY_FEE_CENTS, Fulfilment, Order, OrderStatus};
    use restgen::Enum;
    assert_eq!(Fulfilment::VALUES, ["pickup", "delivery"], "the variants, in snake case");
    assert_eq!(Fulfilment::from_value("delivery"), Some(Fulfilment::Delivery));
    assert_eq!(Fulfilment::from_value("Delivery"), None);
    // The enum the derive declares has the same trait.
    assert_eq!(OrderStatus::VALUES, ["open", "paid", "cancelled"]);
    assert_eq!(OrderStatus::from_value("paid").map(|s| s.value()), Some("paid"));

    let pickup = order(&s, "Ann", &[("bun", 2, 100)]).await;
    assert_eq!((pickup.body["fulfilment"].as_str(), pickup.body["total_cents"].as_i64()), (Some("pickup"), Some(200)));
    let body = json!({ "customer": "Bo", "items": items(&[("bun", 2, 100)]), "fulfilment": "delivery" });
    let delivery = s.post("/api/orders", body).await;
    assert_eq!(delivery.status, 201, "{}", delivery.text);
    assert_eq!(delivery.body["total_cents"], 200 + DELIVERY_FEE_CENTS, "the enum's own fee, from the rule");
    let typed: Order = serde_json::from_value(delivery.body.clone()).unwrap();
    assert_eq!(typed.fulfilment, Fulfilment::Delivery);

    // A value that is no variant is refused, naming the field; so is a filter by one.
    let body = json!({ "customer": "Cy", "items": items(&[("bun", 1, 100)]), "fulfilment": "drone" });
    let refused = s.post("/api/orders", body).await;
    refused.assert_problem(400);
    assert_eq!(refused.error_fields(), ["fulfilment"], "{}", refused.text);
    s.get("/api/orders?fulfilment=drone").await.assert_problem(400);

    let deliveries = s.get("/api/orders?fulfilment=delivery").await;
    assert_eq!(deliveries.status, 200, "{}", deliveries.text);
    let customers: Vec<&str> =
        deliveries.body["data"].as_array().unwrap().iter().map(|o| o["customer"].as_str().unwrap()).collect();
    assert_eq!(customers, ["Bo"]);
    // Not settable at patch: a patch cannot change it, so the total stays true.
    let path = delivery.header("location").unwrap().to_owned();
    let r = s.send("PATCH", &path, Some(json!({ "fulfilment": "pickup" }))).await;
    r.assert_problem(400);
    assert_eq!(r.error_fields(), ["fulfilment"], "{}", r.text);
}

backends!(the_bakery_documents_what_it_serves, bakery());
async fn the_bakery_documents_what_it_serves(s: Server) {
    let doc = s.get("/openapi.json").await;
    assert_eq!(doc.status, 200, "{}", doc.text);
    let doc = doc.body;
    assert!(crate::features::openapi::assert_every_operation_routed(&s, &doc).await >= 6);
    assert!(doc["components"].get("securitySchemes").is_none(), "the bakery is open");
    // Its 3.0 rendering, as a generated service's.
    let down = s.get("/openapi.3.0.json").await;
    assert_eq!((down.status, &down.body["openapi"]), (200, &serde_json::json!("3.0.3")), "{}", down.text);
    // The reference page over it, as a generated service's.
    let page = s.get("/docs").await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains(r#"data-document="/openapi.json""#), "{}", page.text);
    let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    assert_eq!(paths, ["/healthz", "/readyz", "/api/orders", "/api/orders/{order_id}"]);
    // The allow-listed create: what a client may send, the hand-written enum's values.
    let create = &doc["components"]["schemas"]["OrderCreate"];
    let fields: Vec<&String> = create["properties"].as_object().unwrap().keys().collect();
    assert_eq!(fields, ["customer", "items", "fulfilment", "note"]);
    assert_eq!(create["properties"]["fulfilment"]["enum"], json!(["pickup", "delivery"]));
}
