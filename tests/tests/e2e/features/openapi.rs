//! The OpenAPI document against the running services: it is what `/openapi.json` serves,
//! every operation it lists is routed, and real answers match the schemas it documents.

use crate::backends;
use crate::support::accounts::{call, register};
use crate::support::harness::{Reply, Server};
use serde_json::{Value, json};

const SHOP: &str = include_str!("../../../../examples/shop/service/openapi.json");
const FLEET: &str = include_str!("../../../services/fleet/openapi.json");
const LIBRARY: &str = include_str!("../../../services/library/openapi.json");
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// Asserts `value` matches the document's schema `schema` (a `$ref` or inline schema).
fn assert_matches(doc: &Value, schema: &Value, value: &Value, what: &str) {
    let mut root = schema.clone();
    root["components"] = doc["components"].clone();
    let validator = jsonschema::validator_for(&root).expect("the document's schemas compile");
    let errors: Vec<String> = validator.iter_errors(value).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{what}: {value} does not match its documented schema: {errors:?}");
}

/// `value`, or what its `$ref` names in `components.<kind>`.
fn resolve(doc: &Value, kind: &str, value: &Value) -> Value {
    match value["$ref"].as_str() {
        Some(r) => doc["components"][kind][r.rsplit('/').next().unwrap()].clone(),
        None => value.clone(),
    }
}

/// What the document says `method path` answers with `status`, following `$ref`s to
/// shared responses.
fn response(doc: &Value, path: &str, method: &str, status: u16) -> Value {
    let response = resolve(doc, "responses", &doc["paths"][path][method]["responses"][status.to_string()]);
    assert!(response.is_object(), "{method} {path} documents no {status}");
    response
}

/// The documented body schema; `None` for an answer without a body (204, 304).
fn response_schema(doc: &Value, path: &str, method: &str, status: u16) -> Option<Value> {
    let response = response(doc, path, method, status);
    let content = response.get("content")?;
    let media = if content.get("application/json").is_some() { "application/json" } else { "application/problem+json" };
    Some(content[media]["schema"].clone())
}

/// The answer's body matches its documented schema, every header documented as
/// required is sent, and every documented header sent matches its schema.
fn assert_documented(doc: &Value, path: &str, method: &str, r: &Reply) {
    let what = format!("{method} {path} -> {}", r.status);
    match response_schema(doc, path, method, r.status) {
        Some(schema) => assert_matches(doc, &schema, &r.body, &what),
        None => assert!(r.text.is_empty(), "{what}: documented without a body, answered {}", r.text),
    }
    let headers = response(doc, path, method, r.status)["headers"].clone();
    for (name, header) in headers.as_object().into_iter().flatten() {
        let header = resolve(doc, "headers", header);
        let Some(value) = r.header(name) else {
            assert_ne!(header["required"], true, "{what}: the required header {name} is missing");
            continue;
        };
        let typed = match header["schema"]["type"].as_str() {
            Some("integer") => json!(value.parse::<i64>().unwrap_or_else(|_| panic!("{what}: {name}: {value}"))),
            _ => json!(value),
        };
        assert_matches(doc, &header["schema"], &typed, &format!("{what}: header {name}"));
    }
}

backends!(every_document_is_served_in_3_1_and_in_3_0, shop::service());
async fn every_document_is_served_in_3_1_and_in_3_0(s: Server) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/shop/service");
    for file in [
        "openapi.json",
        "openapi.v1.json",
        "openapi.v2.json",
        "openapi.3.0.json",
        "openapi.v1.3.0.json",
        "openapi.v2.3.0.json",
    ] {
        let served = s.get(&format!("/{file}")).await;
        assert_eq!(served.status, 200, "{file}");
        assert_eq!(served.header("content-type"), Some("application/json"), "{file}");
        let written: Value = serde_json::from_str(&std::fs::read_to_string(format!("{dir}/{file}")).unwrap()).unwrap();
        assert_eq!(served.body, written, "{file}: the service serves the document written beside it");
        let version = if file.ends_with(".3.0.json") { "3.0.3" } else { "3.1.0" };
        assert_eq!(served.body["openapi"], version, "{file}");
    }
    assert_eq!(s.get("/openapi.v3.3.0.json").await.status, 404, "no version 3");
}

backends!(openapi_json_is_served_and_every_documented_operation_is_routed, shop::service());
async fn openapi_json_is_served_and_every_documented_operation_is_routed(s: Server) {
    let served = s.get("/openapi.json").await;
    assert_eq!(served.status, 200);
    let doc: Value = serde_json::from_str(SHOP).unwrap();
    assert_eq!(served.body, doc, "the service serves the document written beside it");
    assert_eq!(doc["openapi"], "3.1.0");
    let operations = assert_every_operation_routed(&s, &doc).await;
    assert!(operations >= 20, "{operations}");
    // And the other way: an operation the schema lacks is not documented.
    assert!(doc["paths"]["/api/invoices"].get("post").is_none());
}

/// Every operation `doc` lists is routed on `s` (neither "no such route" nor 405);
/// returns how many there are.
pub(crate) async fn assert_every_operation_routed(s: &Server, doc: &Value) -> usize {
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
    operations
}

backends!(a_derived_service_serves_its_document_and_routes_what_it_lists, crate::services::derived_shop::service());
async fn a_derived_service_serves_its_document_and_routes_what_it_lists(s: Server) {
    let served = s.get("/openapi.json").await;
    assert_eq!(served.status, 200, "{}", served.text);
    assert_eq!(served.body["openapi"], "3.1.0");
    let operations = assert_every_operation_routed(&s, &served.body).await;
    assert!(operations >= 20, "{operations}");
    assert!(served.body["components"]["securitySchemes"]["bearer"].is_object(), "the App's schemes");
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

    // The headers whose bounds matter most are sent, and so were checked above.
    assert!(order.header("location").is_some() && anonymous.header("www-authenticate").is_some());

    // A conditional read: the 304 and its headers are documented too, and the document
    // states the runtime's own bound for `If-None-Match`.
    let etag = item_read_etag(&s, &ann, &item).await;
    let unchanged =
        s.send_with("GET", &item, None, &[("authorization", &ann.bearer()), ("if-none-match", &etag)]).await;
    assert_eq!(unchanged.status, 304);
    assert_documented(&doc, "/api/orders/{order_id}", "get", &unchanged);
    let param = doc["paths"]["/api/orders/{order_id}"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "If-None-Match")
        .expect("If-None-Match is documented")
        .clone();
    assert_eq!(param["schema"]["maxLength"], restgen::conditional::MAX_IF_NONE_MATCH);
}

async fn item_read_etag(s: &Server, who: &crate::support::accounts::Account, path: &str) -> String {
    let read = call(s, who, "GET", path, None).await;
    assert_documented(&serde_json::from_str(SHOP).unwrap(), "/api/orders/{order_id}", "get", &read);
    read.header("etag").expect("reads are tagged").to_owned()
}

backends!(
    answers_past_a_rate_limit_match_the_document,
    shop::service(),
    settings = crate::support::harness::manual_clock(1.0)
);
async fn answers_past_a_rate_limit_match_the_document(s: Server) {
    let doc: Value = serde_json::from_str(SHOP).unwrap();
    let ann = register(&s, "ann").await;
    // A body over the limit is refused before it is read, and counted like any request.
    let big = json!({ "name": "x".repeat(2 << 20) });
    let too_large = s.send_with("POST", "/api/customers", Some(big), &[("authorization", &ann.bearer())]).await;
    too_large.assert_problem(413);
    assert_documented(&doc, "/api/customers", "post", &too_large);
    let mut last = call(&s, &ann, "GET", "/api/orders", None).await;
    assert_documented(&doc, "/api/orders", "get", &last);
    while last.status != 429 {
        last = call(&s, &ann, "GET", "/api/orders", None).await;
    }
    assert_documented(&doc, "/api/orders", "get", &last);
    let bad = s.send_with("GET", "/api/customers", None, &[("authorization", "Bearer x")]).await;
    assert_documented(&doc, "/api/customers", "get", &bad);
    // The probes document no rate limit, and none applies.
    assert!(doc["paths"]["/healthz"]["get"]["responses"].get("429").is_none());
    assert!(doc["paths"]["/readyz"]["get"]["responses"].get("429").is_none());
    assert!(doc["paths"]["/api/orders"]["get"]["responses"].get("429").is_some());
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

backends!(the_library_serves_its_document_and_routes_what_it_lists, library::service());
async fn the_library_serves_its_document_and_routes_what_it_lists(s: Server) {
    let doc: Value = serde_json::from_str(LIBRARY).unwrap();
    assert_eq!(s.get("/openapi.json").await.body, doc, "the service serves the document written beside it");
    let operations = assert_every_operation_routed(&s, &doc).await;
    assert!(operations >= 40, "{operations}");
    // Every nested list is documented, under each of its parents.
    for path in ["/books/{book_id}/reviews", "/members/{member_id}/reviews", "/loans/{loan_id}/renewals"] {
        assert!(doc["paths"][path]["get"].is_object(), "{path} is documented");
    }
}
