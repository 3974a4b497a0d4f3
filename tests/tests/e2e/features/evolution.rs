//! A schema's evolution on a populated database: the shop as an earlier generation had it
//! (`tests/fixtures/evolution/shop-before.yaml`, served by `tests/services/shop_before`)
//! takes records; then the shop of today starts on the same database and applies its
//! second migration, `0002` (a resource and a field renamed, fields and a resource added,
//! a field made optional, a unique constraint and indexes added and dropped), its third,
//! `0003` (a customer's e-mail unique per owner instead of across accounts), and its fourth,
//! `0004` (e-mail addresses stored in canonical form). The records come through whole, in
//! the new shape.

use crate::backends;
use crate::support::accounts::{call, register};
use crate::support::harness::Server;
use restgen::store::Store;
use serde_json::{Value, json};

/// The shop's own migrations: the first is the one the earlier generation wrote.
fn shop_migrations() -> &'static [restgen::store::MigrationSpec] {
    shop::generated::migrations::MIGRATIONS
}

#[test]
fn the_shop_history_starts_where_the_earlier_generation_did() {
    let (before, now) = (shop_before::generated::migrations::MIGRATIONS, shop_migrations());
    assert_eq!(before.len(), 1);
    assert_eq!(now.len(), 5, "the shop's history: the earlier generation's migration, then 0002 to 0005");
    let body = restgen_core::migration::body;
    assert_eq!(body(before[0].sqlite), body(now[0].sqlite));
    assert_eq!(body(before[0].postgres), body(now[0].postgres));
}

/// The first column of every row `sql` returns, on the database at `url`.
async fn numbers(url: &str, sql: &'static str) -> Result<Vec<i64>, sqlx::Error> {
    let rows: Vec<(i64,)> = if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await?;
        let rows = sqlx::query_as(sql).fetch_all(&pool).await;
        pool.close().await;
        rows?
    } else {
        let pool = sqlx::PgPool::connect(url).await?;
        let rows = sqlx::query_as(sql).fetch_all(&pool).await;
        pool.close().await;
        rows?
    };
    Ok(rows.into_iter().map(|(n,)| n).collect())
}

/// The versions applied to the database, in order.
async fn applied(url: &str) -> Vec<i64> {
    numbers(url, "SELECT version FROM _sqlx_migrations WHERE success ORDER BY version").await.unwrap()
}

backends!(a_populated_shop_keeps_every_record_across_its_schema_change, shop_before::service());
async fn a_populated_shop_keeps_every_record_across_its_schema_change(old: Server) {
    let ann = register(&old, "ann").await;
    let made = call(
        &old,
        &ann,
        "POST",
        "/api/customers",
        Some(json!({ "name": "Acme", "email": "acme@example.com", "town": "Oslo" })),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.text);
    let client = made.body.clone();
    let id = client["id"].as_str().unwrap().to_owned();
    let order =
        call(&old, &ann, "POST", "/api/v1/orders", Some(json!({ "total_cents": 1200, "customer_id": id }))).await;
    assert_eq!(order.status, 201, "{}", order.text);
    let order_id = order.body["id"].as_str().unwrap().to_owned();
    assert_eq!(call(&old, &ann, "POST", &format!("/api/v1/orders/{order_id}/pay"), None).await.status, 200);
    let paid = call(&old, &ann, "GET", &format!("/api/v1/orders/{order_id}"), None).await.body;
    assert_eq!(applied(old.database_url()).await, [1]);

    // The shop of today starts on the same database, and migrates it.
    let new = old.twin(shop::service()).await;
    drop(old);
    assert_eq!(applied(new.database_url()).await, [1, 2, 3, 4, 5]);

    // The customer, renamed from client, with `town` now `city`: every value kept.
    let got = call(&new, &ann, "GET", &format!("/api/customers/{id}"), None).await;
    assert_eq!(got.status, 200, "{}", got.text);
    let mut expected = client.clone();
    let town = expected.as_object_mut().unwrap().remove("town").unwrap();
    expected["city"] = town;
    // The fields added since are empty; `staff_note` is not the owner's to see.
    expected["phone"] = Value::Null;
    assert_eq!(got.body, expected, "the client as the shop shows it now");
    // The order still refers to it, in its state, with the new fields filled.
    let now = call(&new, &ann, "GET", &format!("/api/v1/orders/{order_id}"), None).await;
    assert_eq!(now.status, 200, "{}", now.text);
    for key in ["id", "status", "total_cents", "date", "customer_id", "created_at", "updated_at"] {
        assert_eq!(now.body[key], paid[key], "order `{key}`");
    }
    assert_eq!(now.body["status"], "paid");
    assert_eq!(now.body["gift_wrap"], false, "the new field with a default fills the rows stored");
    let v2 = call(&new, &ann, "GET", &format!("/api/v2/orders/{order_id}"), None).await;
    assert_eq!(v2.body["note"], Value::Null, "the new nullable field is null for the rows stored");

    // The new shape is served: the renamed field filters and sorts, the new resource lists,
    // the field made optional may be left out, the new unique constraint holds.
    let by_city = call(&new, &ann, "GET", "/api/customers?city=Oslo&sort=name_asc", None).await;
    assert_eq!(by_city.status, 200, "{}", by_city.text);
    assert_eq!(by_city.body.as_array().map(Vec::len), Some(1), "{}", by_city.text);
    let invoices = call(&new, &ann, "GET", "/api/invoices", None).await;
    assert_eq!(invoices.status, 200, "{}", invoices.text);
    let cityless = call(&new, &ann, "POST", "/api/customers", Some(json!({ "name": "Bolt" }))).await;
    assert_eq!(cityless.status, 201, "{}", cityless.text);
    let taken =
        call(&new, &ann, "POST", "/api/customers", Some(json!({ "name": "Acme 2", "email": "acme@example.com" })))
            .await;
    taken.assert_problem(409);
    let noted =
        call(&new, &ann, "PATCH", &format!("/api/v2/orders/{order_id}"), Some(json!({ "note": "ring twice" }))).await;
    assert_eq!(noted.status, 200, "{}", noted.text);
    assert_eq!(noted.body["note"], "ring twice");
    // A customer referred to by an order is still protected by the reference.
    let linked = call(
        &new,
        &ann,
        "POST",
        "/api/v1/orders",
        Some(json!({ "total_cents": 1, "customer_id": "01a20433-c924-7155-9db6-0a7a4c0df275" })),
    )
    .await;
    assert_eq!(linked.status, 400, "{}", linked.text);
}

backends!(a_migration_that_fails_at_start_changes_nothing_and_names_itself, shop_before::service());
async fn a_migration_that_fails_at_start_changes_nothing_and_names_itself(old: Server) {
    let ann = register(&old, "ann").await;
    // Two clients share an address, which the shop of today makes unique.
    for name in ["Acme", "Acme Ltd"] {
        let r = call(
            &old,
            &ann,
            "POST",
            "/api/customers",
            Some(json!({ "name": name, "email": "acme@example.com", "town": "Oslo" })),
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let store = Store::connect(old.database_url()).await.unwrap();
    let err = store.migrate(shop_migrations()).await.expect_err("duplicates refuse the unique constraint");
    let message = err.to_string();
    let name = restgen_core::evolution::stem(2, shop_migrations()[1].description);
    assert!(message.contains(&name) && message.contains("rolled back"), "{message}");
    // Nothing of it applied: the earlier shop serves on, its table under its old name.
    assert_eq!(applied(old.database_url()).await, [1]);
    let listed = call(&old, &ann, "GET", "/api/customers", None).await;
    assert_eq!(listed.status, 200, "{}", listed.text);
    assert_eq!(listed.body.as_array().map(Vec::len), Some(2), "{}", listed.text);
    assert!(numbers(old.database_url(), "SELECT count(*) FROM invoice").await.is_err(), "no invoice table");

    // Once the duplicate is gone, the same migration applies.
    let dup = listed.body[1]["id"].as_str().unwrap().to_owned();
    assert_eq!(call(&old, &ann, "DELETE", &format!("/api/customers/{dup}"), None).await.status, 204);
    let new = old.twin(shop::service()).await;
    assert_eq!(applied(new.database_url()).await, [1, 2, 3, 4, 5]);
    let one = call(&new, &ann, "GET", "/api/customers", None).await;
    assert_eq!(one.body.as_array().map(Vec::len), Some(1), "{}", one.text);
}

backends!(a_database_of_another_history_is_refused_with_the_reason, shop::service());
async fn a_database_of_another_history_is_refused_with_the_reason(new: Server) {
    use restgen::store::MigrationSpec;
    let store = Store::connect(new.database_url()).await.unwrap();
    // Today's shop applied all of its migrations; the earlier one, started on it again,
    // carries 0001 alone.
    let back = store.migrate(shop_before::generated::migrations::MIGRATIONS).await.expect_err("no going back");
    let lacked =
        shop_migrations()[1..].iter().any(|m| back.to_string().contains(&format!("migration {:04}", m.version)));
    assert!(lacked && back.to_string().contains("only go forward"), "{back}");
    // A migration edited after it was applied.
    let mut edited =
        vec![MigrationSpec { version: 1, description: "initial", sqlite: "SELECT 1;", postgres: "SELECT 1;" }];
    edited.extend(shop_migrations()[1..].iter().map(|m| MigrationSpec { ..*m }));
    let changed = store.migrate(&edited).await.expect_err("an applied migration never changes");
    assert!(changed.to_string().contains("0001_initial was applied to this database with other contents"), "{changed}");
    // The shop itself still starts on it.
    store.migrate(shop_migrations()).await.expect("nothing to apply");
}

/// An account as an earlier runtime stored it: its address as it was sent.
async fn stored_as_sent(store: &Store, email: &str) -> String {
    use restgen::store::SqlValue;
    let spec = shop_before::generated::resources::RESOURCES.iter().find(|r| r.name == "user").unwrap();
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let id = format!("0190b6a4-0000-7000-8000-{:012x}", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
    let at = "2026-01-01T00:00:00.000000Z";
    let values = vec![
        ("id", SqlValue::Text(Some(id.clone()))),
        ("name", SqlValue::Text(Some("Early".into()))),
        ("email", SqlValue::Text(Some(email.into()))),
        ("password", SqlValue::Text(Some(restgen::password::hash(crate::support::accounts::PASSWORD).unwrap()))),
        ("is_admin", SqlValue::Bool(Some(false))),
        ("roles", SqlValue::Text(Some("[]".into()))),
        ("created_at", SqlValue::Text(Some(at.into()))),
        ("updated_at", SqlValue::Text(Some(at.into()))),
    ];
    store.insert(spec, values, None).await.unwrap();
    id
}

backends!(stored_addresses_are_put_in_canonical_form_by_a_migration, shop_before::service());
async fn stored_addresses_are_put_in_canonical_form_by_a_migration(old: Server) {
    stored_as_sent(&old.store, "Bob@Example.COM").await;
    let new = old.twin(shop::service()).await;
    assert_eq!(applied(new.database_url()).await, (1..=shop_migrations().len() as i64).collect::<Vec<_>>());
    // Any spelling signs in; the account shows its one form; a second spelling is taken.
    let token = crate::support::accounts::login(&new, "bob@example.com").await;
    assert!(!token.is_empty());
    crate::support::accounts::login(&new, "BOB@example.com").await;
    let r = new
        .post("/api/users", json!({ "name": "Bob 2", "email": "bob@EXAMPLE.com", "password": "another password" }))
        .await;
    r.assert_problem(409);
    assert_eq!(r.error_fields(), ["email"], "{}", r.text);
}

backends!(addresses_that_become_one_refuse_the_migration_naming_them, shop_before::service());
async fn addresses_that_become_one_refuse_the_migration_naming_them(old: Server) {
    let first = stored_as_sent(&old.store, "dup@example.com").await;
    let second = stored_as_sent(&old.store, "DUP@Example.com").await;
    let store = Store::connect(old.database_url()).await.unwrap();
    let err = store.migrate(shop_migrations()).await.expect_err("two accounts become one address").to_string();
    assert!(err.contains("dup@example.com") && err.contains(&first) && err.contains(&second), "{err}");
    assert!(err.contains("rolled back"), "{err}");
    // The migrations before it are applied; the refused one left nothing behind.
    let applied = applied(old.database_url()).await;
    assert!(!applied.contains(&(shop_migrations().len() as i64)), "{applied:?}");
    let both = numbers(
        old.database_url(),
        "SELECT count(*) FROM \"user\" WHERE email IN ('dup@example.com', 'DUP@Example.com')",
    );
    assert_eq!(both.await.unwrap(), [2], "both accounts as they were");
}
