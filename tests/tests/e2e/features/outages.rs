//! A database that cannot be reached, or that ends a transaction for another's sake, is
//! "unavailable, try again": 503 with `Retry-After` (and `/readyz` not ready), never 500;
//! the service serves again by itself once the database is back. A serialization failure
//! or deadlock is run again a few times before it is a 503. PostgreSQL only: SQLite is a
//! file the process opens, and writes one transaction at a time.

use crate::support::accounts::{call, register};
use crate::support::harness::{Reply, fresh_schema, start_on_url};
use crate::support::relay::Relay;
use restgen::__private::tokio;
use serde_json::json;
use std::time::Duration;

/// Bounds a wait that must end, so a regression fails rather than hangs.
const AT_MOST: Duration = Duration::from_secs(30);

fn assert_unavailable(r: &Reply, what: &str) {
    assert_eq!(r.status, 503, "{what}: {}", r.text);
    r.assert_problem(503);
    assert!(r.header("retry-after").is_some(), "{what}: no Retry-After");
}

#[tokio::test]
async fn a_database_out_of_reach_is_503_with_retry_after_and_the_service_recovers() {
    let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
        eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
        return;
    };
    let (relay, relayed) = Relay::to(&fresh_schema(&url, "shop").await).await;
    let s = start_on_url(shop::service(), relayed).await;
    let ann = register(&s, "ann").await;
    assert_eq!(call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await.status, 201);

    relay.take_down();
    for _ in 0..3 {
        let list = call(&s, &ann, "GET", "/api/orders", None).await;
        assert_unavailable(&list, "a list");
        let create = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 200 }))).await;
        assert_unavailable(&create, "a create");
        let login = s
            .post("/api/auth/login", json!({ "email": ann.email, "password": crate::support::accounts::PASSWORD }))
            .await;
        assert_unavailable(&login, "a login");
    }
    // Readiness follows within its second.
    let not_ready = tokio::time::timeout(AT_MOST, async {
        loop {
            let r = s.get("/readyz").await;
            if r.status == 503 {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    not_ready.await.expect("/readyz said ready with the database gone").assert_problem(503);
    assert_eq!(s.get("/healthz").await.status, 200, "liveness does not ask the database");

    relay.bring_back();
    let served = tokio::time::timeout(AT_MOST, async {
        loop {
            let r = call(&s, &ann, "GET", "/api/orders", None).await;
            if r.status == 200 {
                return r;
            }
            assert_unavailable(&r, "while the database comes back");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let orders = served.await.expect("the service never served again");
    assert_eq!(orders.body["data"].as_array().unwrap().len(), 1, "the write refused meanwhile wrote nothing");
}

#[tokio::test]
async fn a_write_ended_for_another_transactions_sake_is_run_again_then_503() {
    let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
        eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
        return;
    };
    let url = fresh_schema(&url, "shop").await;
    let s = start_on_url(shop::service(), url.clone()).await;
    let ann = register(&s, "ann").await;
    // Each insert of an order fails with `serialization_failure` while the sequence is at
    // or below the failures asked for (a sequence moves whatever the transaction does).
    let db = sqlx::PgPool::connect(&url).await.unwrap();
    let inject = r#"
        CREATE SEQUENCE tries;
        CREATE TABLE failures (n BIGINT NOT NULL);
        INSERT INTO failures VALUES (2);
        CREATE FUNCTION flaky() RETURNS trigger AS $$
        BEGIN
          IF nextval('tries') <= (SELECT n FROM failures) THEN
            RAISE EXCEPTION 'injected' USING ERRCODE = '40001';
          END IF;
          RETURN NEW;
        END $$ LANGUAGE plpgsql;
        CREATE TRIGGER flaky BEFORE INSERT ON "order" FOR EACH ROW EXECUTE FUNCTION flaky();"#;
    sqlx::raw_sql(inject).execute(&db).await.unwrap();
    let tries = async || -> i64 { sqlx::query_scalar("SELECT last_value FROM tries").fetch_one(&db).await.unwrap() };

    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    assert_eq!(created.status, 201, "two failures, then the third run passes: {}", created.text);
    assert_eq!(tries().await, 3);

    sqlx::raw_sql("UPDATE failures SET n = 1000; ALTER SEQUENCE tries RESTART").execute(&db).await.unwrap();
    let refused = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 200 }))).await;
    assert_unavailable(&refused, "a write that keeps failing");
    assert_eq!(tries().await, 4, "run once and retried three times, no more");
    let orders = call(&s, &ann, "GET", "/api/orders", None).await;
    assert_eq!(orders.body["data"].as_array().unwrap().len(), 1, "nothing of the refused write was stored");
}
