//! The OpenAPI document against the running services: it is what `/openapi.json` serves,
//! every operation it lists is routed, and real answers match the schemas it documents.

use crate::accounts::{call, register};
use crate::backends;
use crate::harness::{Reply, Server};
use serde_json::{Value, json};

const SHOP: &str = include_str!("../../../examples/shop/service/openapi.json");
const FLEET: &str = include_str!("../../services/fleet/openapi.json");
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// Asserts `value` matches the document's schema `schema` (a `$ref` or inline schema).
fn assert_matches(doc: &Value, schema: &Value, value: &Value, what: &str) {
    let mut root = schema.clone();
    root["components"] = doc["components"].clone();
    let validator = jsonschema::validator_for(&root).expect("the document's schemas compile");
    let errors: Vec<String> = validator.iter_errors(value).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{what}: {value} does not match its documented schema: {errors:?}");
}

/// The schema the document gives for `status` of `method path`, following `$ref`s to
/// shared responses.
fn response_schema(doc: &Value, path: &str, method: &str, status: u16) -> Value {
    let mut response = doc["paths"][path][method]["responses"][status.to_string()].clone();
    if let Some(r) = response["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap();
        response = doc["components"]["responses"][name].clone();
    }
    assert!(response.is_object(), "{method} {path} documents no {status}");
    let content = &response["content"];
    let media = if content.get("application/json").is_some() { "application/json" } else { "application/problem+json" };
    content[media]["schema"].clone()
}

fn assert_documented(doc: &Value, path: &str, method: &str, r: &Reply) {
    let schema = response_schema(doc, path, method, r.status);
    assert_matches(doc, &schema, &r.body, &format!("{method} {path} -> {}", r.status));
}

backends!(openapi_json_is_served_and_every_documented_operation_is_routed, shop::service());
async fn openapi_json_is_served_and_every_documented_operation_is_routed(s: Server) {
    let served = s.get("/openapi.json").await;
    assert_eq!(served.status, 200);
    let doc: Value = serde_json::from_str(SHOP).unwrap();
    assert_eq!(served.body, doc, "the service serves the document written beside it");
    assert_eq!(doc["openapi"], "3.1.0");
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        // Any id will do: the route must exist, whatever the record.
        let concrete = path
            .split('/')
            .map(|seg| if seg.starts_with('{') { "0190b6a4-0000-7000-8000-000000000000" } else { seg })
            .collect::<Vec<_>>()
            .join("/");
        for method in METHODS.iter().filter(|m| item.get(**m).is_some()) {
            let r = s.send(&method.to_uppercase(), &concrete, Some(json!({}))).await;
            assert_ne!(r.status, 405, "{method} {path} is documented but not allowed");
            assert!(!(r.status == 404 && r.body["detail"] == "no such route"), "{method} {path} is not routed");
            operations += 1;
        }
    }
    assert!(operations >= 20, "{operations}");
    // And the other way: an operation the schema lacks is not documented.
    assert!(doc["paths"]["/api/invoices"].get("post").is_none());
}

backends!(answers_match_the_documented_schemas, shop::service());
async fn answers_match_the_documented_schemas(s: Server) {
    let doc: Value = serde_json::from_str(SHOP).unwrap();
    let reg =
        s.post("/api/users", json!({ "name": "Ann", "email": "ann@example.com", "password": "correct horse" })).await;
    assert_documented(&doc, "/api/users", "post", &reg);
    let bad = s.post("/api/users", json!({ "name": "Ann", "email": "not an address", "password": "x" })).await;
    assert_documented(&doc, "/api/users", "post", &bad);
    let login = s.post("/api/auth/login", json!({ "email": "ann@example.com", "password": "correct horse" })).await;
    assert_documented(&doc, "/api/auth/login", "post", &login);
    let ann = register(&s, "bob").await;
    let order = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    assert_documented(&doc, "/api/orders", "post", &order);
    let list = call(&s, &ann, "GET", "/api/orders?limit=1", None).await;
    assert_documented(&doc, "/api/orders", "get", &list);
    let item = format!("/api/orders/{}", order.body["id"].as_str().unwrap());
    let patched = call(&s, &ann, "PATCH", &item, Some(json!({ "note": null }))).await;
    assert_documented(&doc, "/api/orders/{order_id}", "patch", &patched);
    let customers = call(&s, &ann, "GET", "/api/customers", None).await;
    assert_documented(&doc, "/api/customers", "get", &customers);
    let anonymous = s.get("/api/orders").await;
    assert_documented(&doc, "/api/orders", "get", &anonymous);
    let key = call(&s, &ann, "POST", "/api/auth/api-keys", Some(json!({}))).await;
    assert_documented(&doc, "/api/auth/api-keys", "post", &key);
    let keys = call(&s, &ann, "GET", "/api/auth/api-keys", None).await;
    assert_documented(&doc, "/api/auth/api-keys", "get", &keys);

    // Texts that quote the request are cut to the documented bounds.
    let flood = call(&s, &ann, "GET", &format!("/api/orders?{}=1", "x".repeat(5000)), None).await;
    flood.assert_problem(400);
    assert_documented(&doc, "/api/orders", "get", &flood);
    // A login password longer than any account's may be is refused before Argon2 sees it.
    let long = s.post("/api/auth/login", json!({ "email": "ann@example.com", "password": "p".repeat(2000) })).await;
    long.assert_problem(400);
    assert_eq!(long.error_fields(), ["password"]);
    assert_documented(&doc, "/api/auth/login", "post", &long);

    // Headers stay within their documented lengths.
    for (reply, path, method, status, header) in [
        (&order, "/api/orders", "post", "201", "Location"),
        (&anonymous, "/api/orders", "get", "401", "WWW-Authenticate"),
    ] {
        let mut response = doc["paths"][path][method]["responses"][status].clone();
        if let Some(r) = response["$ref"].as_str() {
            response = doc["components"]["responses"][r.rsplit('/').next().unwrap()].clone();
        }
        let max = response["headers"][header]["schema"]["maxLength"].as_u64().expect("a documented bound");
        let value = reply.header(header).expect("the header is sent");
        assert!(value.len() as u64 <= max, "{header}: {value} is longer than {max}");
    }
}

backends!(the_open_fleet_documents_no_security, fleet::service());
async fn the_open_fleet_documents_no_security(s: Server) {
    let doc: Value = serde_json::from_str(FLEET).unwrap();
    assert_eq!(s.get("/openapi.json").await.body, doc);
    assert!(doc["components"].get("securitySchemes").is_none());
    let depot = s.post("/v0/depots", json!({ "name": "North" })).await;
    assert_documented(&doc, "/v0/depots", "post", &depot);
    let trips = s.get("/v0/trips?limit=2").await;
    assert_documented(&doc, "/v0/trips", "get", &trips);
    let vehicles = s.get("/v0/vehicles").await;
    assert_documented(&doc, "/v0/vehicles", "get", &vehicles);
}
