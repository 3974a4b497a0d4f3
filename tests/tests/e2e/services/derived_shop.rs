//! The shop written with the derive macros (`tests/derive/shop.rs`) and mounted on an
//! `App` with accounts: sign-up and login, ownership, roles, nested lists and refs behave
//! as they do in the generated shop.

use crate::backends;
use crate::support::accounts::{PASSWORD, call, register};
use crate::support::harness::Server;
use restgen::spec::{RateAlgorithm, RateKey, RateSpec, Scheme, VersionSpec, VersioningSpec};
use restgen::{Accounts, App};
use serde_json::json;
use std::time::Duration;

// The derived shop writes every key the schema shop does.
#[allow(dead_code)]
mod shop {
    include!("../../../derive/shop.rs");
}

use shop::{Customer, Invoice, Order, User};

pub(crate) fn service() -> restgen::serve::Service {
    let accounts = Accounts::of::<User>()
        .schemes(&[Scheme::Bearer, Scheme::ApiKey])
        .roles(&["admin", "member", "staff"], Some("member"))
        .admin_roles(&["admin"])
        .tokens(Duration::from_secs(15 * 60), Some("shop"), Some("shop-clients"));
    let limit = RateSpec {
        name: "default",
        algorithm: RateAlgorithm::TokenBucket { capacity: 60, refill_per_second: 1.0 },
        key: RateKey::Principal,
    };
    App::new("shop")
        .base_path("/api")
        .auth(accounts)
        .rate_limit(limit)
        .versions(&VERSIONS)
        .resource::<User>()
        .resource::<Customer>()
        .resource::<Order>()
        .resource::<Invoice>()
        .into_service()
}

backends!(accounts_sign_up_sign_in_and_see_only_themselves, service());
async fn accounts_sign_up_sign_in_and_see_only_themselves(s: Server) {
    // What a client may not set at sign-up is refused, naming it.
    for field in ["is_admin", "roles"] {
        let mut body = json!({ "name": "Eve", "email": "eve@example.com", "password": PASSWORD });
        body[field] = if field == "roles" { json!(["admin"]) } else { json!(true) };
        let r = s.post("/api/users", body).await;
        assert!(matches!(r.status, 400 | 403), "{field}: {}", r.text);
    }
    let ann = register(&s, "ann").await;
    let bob = register(&s, "bob").await;
    let me = call(&s, &ann, "GET", &format!("/api/users/{}", ann.id), None).await;
    assert_eq!(me.status, 200, "{}", me.text);
    assert_eq!((me.body["is_admin"].as_bool(), me.body.get("password")), (Some(false), None));
    let typed: User = serde_json::from_value(me.body.clone()).unwrap();
    assert_eq!((typed.email.as_str(), typed.roles.len()), ("ann@example.com", 0));
    // Somebody else's account is hidden (`not_owned = not_found`).
    call(&s, &bob, "GET", &format!("/api/users/{}", ann.id), None).await.assert_problem(404);
    s.get(&format!("/api/users/{}", ann.id)).await.assert_problem(401);
    // Wrong credentials are one 401.
    let wrong = s.post("/api/auth/login", json!({ "email": "ann@example.com", "password": "not it at all" })).await;
    wrong.assert_problem(401);
    // API keys are issued for the accounts of a derived principal too.
    let key = call(&s, &ann, "POST", "/api/auth/api-keys", Some(json!({ "name": "ci" }))).await;
    assert_eq!(key.status, 201, "{}", key.text);
    let by_key = s
        .send_with("GET", &format!("/api/users/{}", ann.id), None, &[("x-api-key", key.body["key"].as_str().unwrap())])
        .await;
    assert_eq!(by_key.status, 200);
}

backends!(records_belong_to_their_owner_and_refs_must_exist, service());
async fn records_belong_to_their_owner_and_refs_must_exist(s: Server) {
    let ann = register(&s, "ann").await;
    let bob = register(&s, "bob").await;
    let customer = call(&s, &ann, "POST", "/api/customers", Some(json!({ "name": "Ada", "city": "Oslo" }))).await;
    assert_eq!(customer.status, 201, "{}", customer.text);
    assert_eq!(customer.body["owner_id"], ann.id.as_str(), "the owner is the caller, never the body");
    let path = customer.header("location").unwrap().to_owned();
    call(&s, &bob, "GET", &path, None).await.assert_problem(403);
    assert_eq!(call(&s, &bob, "GET", "/api/customers", None).await.body, json!([]), "a bare page of bob's own");

    // An order refers to a customer that must exist.
    let missing = "0190b6a4-0000-7000-8000-000000000000";
    let r = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 1, "customer_id": missing }))).await;
    assert_eq!(r.error_fields(), ["customer_id"], "{}", r.text);
    // And one bob may name: ann's customer is, to him, one that does not exist.
    let r =
        call(&s, &bob, "POST", "/api/orders", Some(json!({ "total_cents": 1, "customer_id": customer.body["id"] })))
            .await;
    assert_eq!((r.status, r.error_fields()), (400, vec!["customer_id".to_owned()]), "{}", r.text);
    let order =
        call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 1250, "customer_id": customer.body["id"] })))
            .await;
    assert_eq!(order.status, 201, "{}", order.text);
    assert_eq!(order.body["status"], "pending", "records start in the initial state");
    assert!(order.body["date"].is_string(), "`default = now` applied");
    // The state field is the lifecycle's: never set by a client.
    let r = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 1, "status": "paid" }))).await;
    assert_eq!(r.error_fields(), ["status"]);

    // Nested under the user: ann's orders at /users/{ann}/orders; bob sees none of them.
    let nested = call(&s, &ann, "GET", &format!("/api/users/{}/orders", ann.id), None).await;
    assert_eq!(nested.status, 200, "{}", nested.text);
    assert_eq!(nested.body["data"].as_array().unwrap().len(), 1);
    call(&s, &bob, "GET", &format!("/api/users/{}/orders", ann.id), None).await.assert_problem(404);
    // Invoices are read-only to clients.
    call(&s, &ann, "POST", "/api/invoices", Some(json!({}))).await.assert_problem(405);
    // The rate limit set on the App answers like a schema's.
    let listed = call(&s, &ann, "GET", "/api/customers", None).await;
    assert_eq!(listed.header("ratelimit-policy"), Some("\"default\";q=60000;w=60"), "scaled by the suite");
    let orders = call(&s, &ann, "GET", "/api/orders", None).await;
    assert_eq!(orders.header("ratelimit-policy"), Some("\"order\";q=30000;w=60"), "the resource's own limit");
}

backends!(admins_see_every_record_and_set_roles, service());
async fn admins_see_every_record_and_set_roles(s: Server) {
    let ann = register(&s, "ann").await;
    let auth = service().auth.expect("the app has accounts");
    let json = json!({ "name": "root", "email": "root@example.com", "password": PASSWORD }).to_string();
    restgen::auth::bootstrap_admin(&s.store, auth, &json).await.unwrap();
    let token = crate::support::accounts::login(&s, "root@example.com").await;
    let admin = crate::support::accounts::Account { id: String::new(), email: "root@example.com".into(), token };
    let customer = call(&s, &ann, "POST", "/api/customers", Some(json!({ "name": "Ada" }))).await;
    let path = customer.header("location").unwrap().to_owned();
    assert_eq!(call(&s, &admin, "GET", &path, None).await.status, 200, "admins see every record");
    // Roles are the admins' to set, held to the roles the App declares.
    let user = format!("/api/users/{}", ann.id);
    let r = call(&s, &admin, "PATCH", &user, Some(json!({ "roles": ["admin"] }))).await;
    assert_eq!((r.status, &r.body["roles"]), (200, &json!(["admin"])), "{}", r.text);
    let r = call(&s, &admin, "PATCH", &user, Some(json!({ "roles": ["emperor"] }))).await;
    r.assert_problem(400);
    assert_eq!(r.error_fields(), ["roles"]);
    call(&s, &ann, "PATCH", &user, Some(json!({ "roles": ["member"] }))).await.assert_problem(400);
}

/// The shop's versions, as a hand-written service declares them: 1 deprecated from
/// 2026-12-01 with its sunset on 2027-06-30, and 2.
static VERSIONS: VersioningSpec = VersioningSpec {
    versions: &[
        VersionSpec {
            number: 1,
            deprecated: Some(1_796_083_200),
            sunset: Some(1_814_313_600),
            media_type: "application/vnd.shop.v1+json",
        },
        VersionSpec { number: 2, deprecated: None, sunset: None, media_type: "application/vnd.shop.v2+json" },
    ],
    path: true,
    header: true,
    media_type: true,
    vendor: "shop",
};

/// The derived shop documents itself from the same models through the same emitter as
/// the schema's shop: with the App set as the schema's top level is, the documents are
/// the same, the unprefixed one and each version's.
#[test]
fn the_derived_shop_serves_the_schema_shops_document() {
    use restgen::serve::CorsSpec;
    let limit = RateSpec {
        name: "default",
        algorithm: RateAlgorithm::TokenBucket { capacity: 60, refill_per_second: 1.0 },
        key: RateKey::Principal,
    };
    let service = App::new("shop")
        .describe("Shop API", Some("Customers, their orders and invoices, for the accounts that own them."))
        .base_path("/api")
        .auth(
            Accounts::of::<User>()
                .schemes(&[Scheme::Bearer, Scheme::ApiKey])
                .roles(&["admin", "member", "staff"], Some("member"))
                .admin_roles(&["admin"])
                .tokens(Duration::from_secs(15 * 60), Some("shop"), Some("shop-clients")),
        )
        .rate_limit(limit)
        .cors(CorsSpec { allowed_origins: &["https://shop.example.com"], max_age: Some(Duration::from_secs(600)) })
        .trusted_proxies(&["127.0.0.1", "10.0.0.0/8"])
        .limits(1024 * 1024, Duration::from_secs(30), Some(512))
        .versions(&VERSIONS)
        .resource::<User>()
        .resource::<Customer>()
        .resource::<Order>()
        .resource::<Invoice>()
        .into_service();
    assert_same(service.openapi.expect("served"), include_str!("../../../../examples/shop/service/openapi.json"));
    let [(1, v1), (2, v2)] = service.openapi_versions else { panic!("a document per version") };
    assert_same(v1, include_str!("../../../../examples/shop/service/openapi.v1.json"));
    assert_same(v2, include_str!("../../../../examples/shop/service/openapi.v2.json"));
}

fn assert_same(derived: &str, schema: &str) {
    let derived: serde_json::Value = serde_json::from_str(derived).unwrap();
    let schema: serde_json::Value = serde_json::from_str(schema).unwrap();
    let (d, s) = (serde_json::to_string_pretty(&derived).unwrap(), serde_json::to_string_pretty(&schema).unwrap());
    let first = d.lines().zip(s.lines()).position(|(a, b)| a != b);
    let around = |text: &str, at: usize| text.lines().skip(at.saturating_sub(4)).take(8).collect::<Vec<_>>().join("\n");
    match first {
        Some(at) => panic!(
            "the documents differ at line {}:\n{}\n--- the schema's:\n{}",
            at + 1,
            around(&d, at),
            around(&s, at)
        ),
        None => assert_eq!(d.lines().count(), s.lines().count(), "one document goes on where the other ends"),
    }
}
