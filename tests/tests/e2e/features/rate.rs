//! Rate limits on the shop, as its schema declares them: a token bucket of 60 refilled at
//! one a second for the service, a sliding window of 30 a minute for orders, both per
//! account (per address for anonymous callers). The limits run on a manual clock, so no
//! test waits for a budget to refill, and the answers say exactly what is left.

use crate::backends;
use crate::support::accounts::{Account, call, register};
use crate::support::harness::{Reply, Server};
use futures_util::future::join_all;
use restgen::rate::RateSettings;
use restgen::store::Dialect;
use serde_json::json;
use std::time::Duration;

fn manual() -> restgen::serve::Settings {
    crate::support::harness::manual_clock(1.0)
}

fn advance(s: &Server, seconds: u64) {
    s.settings.clock.advance(Duration::from_secs(seconds));
}

/// `(policy, r, t)` of the answer's `RateLimit` field.
fn budget(r: &Reply) -> (String, u64, u64) {
    let value = r.header("ratelimit").unwrap_or_else(|| panic!("no RateLimit on {}: {}", r.status, r.text));
    let mut parts = value.split(';');
    let policy = parts.next().unwrap().trim_matches('"').to_owned();
    let mut number = |key: &str| {
        let part = parts.next().unwrap_or_else(|| panic!("{value}"));
        part.strip_prefix(key).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{value}: no {key}"))
    };
    let remaining = number("r=");
    let reset = number("t=");
    (policy, remaining, reset)
}

/// Asserts `r` is the 429 of `policy`, and returns its `Retry-After` in seconds.
fn refused(r: &Reply, policy: &str) -> u64 {
    r.assert_problem(429);
    assert!(r.body["detail"].as_str().unwrap().contains(&format!("`{policy}`")), "{}", r.text);
    assert_eq!(budget(r).0, policy);
    assert_eq!(budget(r).1, 0, "nothing left");
    r.header("retry-after").and_then(|v| v.parse().ok()).expect("Retry-After in whole seconds")
}

async fn customers(s: &Server, who: &Account) -> Reply {
    call(s, who, "GET", "/api/customers", None).await
}

backends!(a_burst_past_the_service_limit_gets_429_until_the_bucket_refills, shop::service(), settings = manual());
async fn a_burst_past_the_service_limit_gets_429_until_the_bucket_refills(s: Server) {
    let ann = register(&s, "ann").await;
    for i in 0..60 {
        let r = customers(&s, &ann).await;
        assert_eq!(r.status, 200, "request {i}: {}", r.text);
        assert_eq!(r.header("ratelimit-policy"), Some("\"default\";q=60;w=60"));
        assert_eq!(budget(&r), ("default".into(), 59 - i, i + 1), "request {i}");
    }
    let r = customers(&s, &ann).await;
    assert_eq!(refused(&r, "default"), 1, "one request comes back each second");
    assert_eq!(budget(&r).2, 60, "the whole bucket in a minute");
    // The budget is the caller's across the service's routes, not per route.
    refused(&call(&s, &ann, "GET", "/api/invoices", None).await, "default");
    refused(&call(&s, &ann, "GET", "/api/nothing-here", None).await, "default");
    // The probes are never limited and say nothing of budgets.
    for probe in ["/healthz", "/readyz"] {
        let health = s.get(probe).await;
        assert_eq!(health.status, 200, "{probe}");
        assert!(health.header("ratelimit").is_none() && health.header("ratelimit-policy").is_none(), "{probe}");
    }

    advance(&s, 1);
    assert_eq!(customers(&s, &ann).await.status, 200, "one refilled");
    refused(&customers(&s, &ann).await, "default");
    advance(&s, 60);
    let r = customers(&s, &ann).await;
    assert_eq!(budget(&r), ("default".into(), 59, 1), "a full bucket again, never more");
}

backends!(every_caller_has_a_budget_of_their_own, shop::service(), settings = manual());
async fn every_caller_has_a_budget_of_their_own(s: Server) {
    let ann = register(&s, "ann").await;
    let bob = register(&s, "bob").await;
    while customers(&s, &ann).await.status == 200 {}
    let r = customers(&s, &bob).await;
    assert_eq!(r.status, 200);
    assert_eq!(budget(&r).1, 59, "ann's requests cost bob nothing");
    // Anonymous callers count against their address, not against any account.
    let carl =
        s.post("/api/users", json!({ "name": "carl", "email": "carl@example.com", "password": "correct horse" }));
    assert_eq!(carl.await.status, 201);
}

backends!(orders_count_against_their_own_sliding_window, shop::service(), settings = manual());
async fn orders_count_against_their_own_sliding_window(s: Server) {
    let ann = register(&s, "ann").await;
    let created = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 }))).await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(created.header("ratelimit-policy"), Some("\"order\";q=30;w=60"));
    assert_eq!(budget(&created).1, 29);
    let item = format!("/api/orders/{}", created.body["id"].as_str().unwrap());
    let nested = format!("/api/users/{}/orders", ann.id);
    // The item, the collection and the list under the user all count as orders.
    for i in 1..30 {
        let path = [item.as_str(), "/api/orders", nested.as_str()][i % 3];
        let r = call(&s, &ann, "GET", path, None).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text);
        assert_eq!(budget(&r), ("order".into(), 29 - i as u64, 120), "{path}");
    }
    let wait = refused(&call(&s, &ann, "GET", &nested, None).await, "order");
    // Orders have their own limit: the service's is untouched by them.
    let other = customers(&s, &ann).await;
    assert_eq!(budget(&other), ("default".into(), 59, 1));

    // Retry-After is honest: a second earlier is still too early, then one passes.
    advance(&s, wait - 1);
    refused(&call(&s, &ann, "GET", &item, None).await, "order");
    advance(&s, 1);
    assert_eq!(call(&s, &ann, "GET", &item, None).await.status, 200);
}

backends!(failed_credentials_count_against_the_address_they_came_from, shop::service(), settings = manual());
async fn failed_credentials_count_against_the_address_they_came_from(s: Server) {
    // Registering and logging in are anonymous: two requests of this address's 60.
    let ann = register(&s, "ann").await;
    let forged = [("authorization", "Bearer not.a.token")];
    let mut unauthorized = 0;
    loop {
        let r = s.send_with("GET", "/api/customers", None, &forged).await;
        if r.status == 429 {
            refused(&r, "default");
            break;
        }
        r.assert_problem(401);
        assert_eq!(budget(&r).0, "default");
        unauthorized += 1;
        assert!(unauthorized <= 60, "guessing credentials is never unlimited");
    }
    assert_eq!(unauthorized, 58);
    // The address has spent its budget: anonymous requests from it wait too.
    let r = s.post("/api/auth/login", json!({ "email": ann.email, "password": "wrong password" })).await;
    refused(&r, "default");
    // A signed-in caller counts against their own budget, wherever they call from.
    assert_eq!(customers(&s, &ann).await.status, 200);
}

backends!(behind_a_trusted_proxy_the_client_it_names_is_counted, shop::service(), settings = manual());
async fn behind_a_trusted_proxy_the_client_it_names_is_counted(s: Server) {
    // The shop trusts 127.0.0.1, where the test connects from; an anonymous list is a 401.
    let from = |s: &'static str| [("x-forwarded-for", s)];
    for _ in 0..60 {
        s.send_with("GET", "/api/customers", None, &from("203.0.113.7")).await.assert_problem(401);
    }
    refused(&s.send_with("GET", "/api/customers", None, &from("203.0.113.7")).await, "default");
    // A client that writes its own first hop still gets the address the proxy saw.
    refused(&s.send_with("GET", "/api/customers", None, &from("192.0.2.99, 203.0.113.7")).await, "default");
    // The shop's proxies write `X-Forwarded-For` (`proxy_header`'s default) and pass a
    // `Forwarded` the client wrote through as it is: that one is never read.
    let forged = [("forwarded", "for=198.51.100.1"), ("x-forwarded-for", "203.0.113.7")];
    refused(&s.send_with("GET", "/api/customers", None, &forged).await, "default");
    // Another client, and the proxy's own address, have budgets of their own.
    let r = s.send_with("GET", "/api/customers", None, &from("203.0.113.8")).await;
    assert_eq!((r.status, budget(&r).1), (401, 59));
    let r = s.get("/api/customers").await;
    assert_eq!((r.status, budget(&r).1), (401, 59));
    // A `Forwarded` of the client's own choosing buys no budget of its own: each counts
    // against the address the proxy saw (here, none: its own).
    for (n, value) in ["for=198.51.100.2", "for=198.51.100.3", "for=\"[2001:db8::9]\""].iter().enumerate() {
        let r = s.send_with("GET", "/api/customers", None, &[("forwarded", value)]).await;
        assert_eq!((r.status, budget(&r).1), (401, 58 - n as u64), "{value}");
    }
}

/// The shop behind proxies that write `Forwarded` (`proxy_header: forwarded`).
fn shop_behind_forwarded() -> restgen::serve::Service {
    restgen::serve::Service { proxy_header: restgen::spec::ProxyHeader::Forwarded, ..shop::service() }
}

backends!(behind_proxies_that_write_forwarded_only_forwarded_is_read, shop_behind_forwarded(), settings = manual());
async fn behind_proxies_that_write_forwarded_only_forwarded_is_read(s: Server) {
    let standard = |s: &'static str| [("forwarded", s)];
    for _ in 0..60 {
        s.send_with("GET", "/api/customers", None, &standard("for=203.0.113.7;proto=https")).await.assert_problem(401);
    }
    refused(&s.send_with("GET", "/api/customers", None, &standard("for=203.0.113.7")).await, "default");
    let forged = [("x-forwarded-for", "198.51.100.1"), ("forwarded", "for=203.0.113.7")];
    refused(&s.send_with("GET", "/api/customers", None, &forged).await, "default");
    // An `X-Forwarded-For` of the client's own choosing counts against the proxy's address.
    for (n, value) in ["198.51.100.2", "198.51.100.3"].iter().enumerate() {
        let r = s.send_with("GET", "/api/customers", None, &[("x-forwarded-for", value)]).await;
        assert_eq!((r.status, budget(&r).1), (401, 59 - n as u64), "{value}");
    }
}

backends!(concurrent_requests_never_overspend_a_budget, shop::service(), settings = manual());
async fn concurrent_requests_never_overspend_a_budget(s: Server) {
    let ann = register(&s, "ann").await;
    let replies = join_all((0..90).map(|_| customers(&s, &ann))).await;
    let passed = replies.iter().filter(|r| r.status == 200).count();
    let refused = replies.iter().filter(|r| r.status == 429).count();
    assert_eq!((passed, refused), (60, 30));
    let mut left: Vec<u64> = replies.iter().filter(|r| r.status == 200).map(|r| budget(r).1).collect();
    left.sort_unstable();
    assert_eq!(left, (0..60).collect::<Vec<_>>(), "each request saw its own count");
}

backends!(instances_on_postgresql_share_budgets_and_on_sqlite_keep_their_own, shop::service(), settings = manual());
async fn instances_on_postgresql_share_budgets_and_on_sqlite_keep_their_own(s: Server) {
    let twin = s.twin(shop::service()).await;
    let ann = register(&s, "ann").await;
    for _ in 0..30 {
        assert_eq!(customers(&s, &ann).await.status, 200);
        assert_eq!(customers(&twin, &ann).await.status, 200);
    }
    let r = customers(&twin, &ann).await;
    match s.store.dialect() {
        Dialect::Postgres => {
            refused(&r, "default");
            refused(&customers(&s, &ann).await, "default");
        }
        // SQLite is a single machine's database: budgets are per process.
        Dialect::Sqlite => assert_eq!((r.status, budget(&r).1), (200, 29)),
    }
}

backends!(
    postgres_only an_emptied_budget_is_full_again_for_a_caller_seen_at_the_limit,
    shop::service(),
    settings = manual()
);
/// An instance decides a request first on the state it last wrote of the budget; a refusal
/// is decided again on the database's. PostgreSQL empties the budgets' unlogged table after
/// a crash, and every budget starts full again: a caller this instance saw at the limit is
/// let through. (SQLite keeps budgets in the process; it has no table to empty.)
async fn an_emptied_budget_is_full_again_for_a_caller_seen_at_the_limit(s: Server) {
    let pool = s.store.postgres().expect("a PostgreSQL store");
    let ann = register(&s, "ann").await;
    for _ in 0..60 {
        assert_eq!(customers(&s, &ann).await.status, 200);
    }
    refused(&customers(&s, &ann).await, "default");
    let mut connection = pool.acquire().await.unwrap();
    sqlx::query("DELETE FROM \"restgen_rate_limit\"").execute(&mut *connection).await.unwrap();
    connection.settle();
    drop(connection);
    let r = customers(&s, &ann).await;
    assert_eq!((r.status, budget(&r).1), (200, 59), "{}", r.text);
    // And counted from there, as a new budget is.
    for _ in 0..59 {
        assert_eq!(customers(&s, &ann).await.status, 200);
    }
    refused(&customers(&s, &ann).await, "default");
}

backends!(
    a_deployment_scales_every_limit_at_once,
    shop::service(),
    settings = crate::support::harness::manual_clock(2.0)
);
async fn a_deployment_scales_every_limit_at_once(s: Server) {
    let ann = register(&s, "ann").await;
    let r = customers(&s, &ann).await;
    assert_eq!(r.header("ratelimit-policy"), Some("\"default\";q=120;w=60"), "twice the bucket, twice the rate");
    let order = call(&s, &ann, "GET", "/api/orders", None).await;
    assert_eq!(order.header("ratelimit-policy"), Some("\"order\";q=60;w=60"));
}

#[test]
fn the_scale_comes_from_the_environment_and_must_be_a_positive_number() {
    let var = |value: &'static str| move |name: &str| (name == "SHOP_RATE_LIMIT_SCALE").then(|| value.to_owned());
    assert_eq!(RateSettings::from_lookup("shop", |_| None).unwrap().scale, 1.0);
    assert_eq!(RateSettings::from_lookup("shop", var("2.5")).unwrap().scale, 2.5);
    for bad in ["0", "-1", "lots", "NaN", "inf"] {
        let e = RateSettings::from_lookup("shop", var(bad)).unwrap_err();
        assert!(e.contains("SHOP_RATE_LIMIT_SCALE must be a positive number"), "{bad}: {e}");
    }
}
