//! What an attacker tries in an afternoon against a generated service, each tried on the
//! shop and refused: taking over the operator's first admin, tokens minted for another
//! audience, duplicate keys that two parsers read differently, secrets in `Debug`.

use crate::backends;
use crate::support::accounts::{self, PASSWORD, register};
use crate::support::child::{Process, shop_command};
use crate::support::harness::Server;
use serde_json::json;
use std::process::Stdio;

/// The operator's first admin, by the identifier a squatter registered first.
const ROOT: &str = "root@example.com";
const SQUATTERS: &str = "the squatter's own password";

backends!(a_squatted_admin_identifier_is_not_promoted_without_its_password, shop::service());
async fn a_squatted_admin_identifier_is_not_promoted_without_its_password(s: Server) {
    let squatter = s.post("/api/users", json!({ "name": "Mallory", "email": ROOT, "password": SQUATTERS })).await;
    assert_eq!(squatter.status, 201, "{}", squatter.text);
    let auth = shop::generated::resources::AUTH.as_ref().unwrap();
    let operator = json!({ "name": "Root", "email": ROOT, "password": PASSWORD }).to_string();
    let refused = restgen::auth::bootstrap_admin(&s.store, auth, &operator).await.unwrap_err();
    assert!(refused.contains("exists already") && refused.contains("not its password"), "{refused}");
    // Nothing changed: the squatter is a member, the operator's password opens nothing.
    let token = login(&s, SQUATTERS).await.expect("the squatter's password still works");
    assert_eq!(accounts::claims(&token)["roles"], json!(["member"]), "not promoted");
    assert!(login(&s, PASSWORD).await.is_none(), "the operator's password was never the account's");
    // The account's own password proves it is the operator's: then, and only then, admin.
    let owner = json!({ "name": "Mallory", "email": ROOT, "password": SQUATTERS }).to_string();
    let done = restgen::auth::bootstrap_admin(&s.store, auth, &owner).await.unwrap();
    assert!(done.contains("now holds the admin role"), "{done}");
    let token = login(&s, SQUATTERS).await.unwrap();
    assert_eq!(accounts::claims(&token)["roles"], json!(["admin"]));
}

/// A token for `ROOT` with `password`, `None` when the login is refused.
async fn login(s: &Server, password: &str) -> Option<String> {
    let r = s.post("/api/auth/login", json!({ "email": ROOT, "password": password })).await;
    (r.status == 200).then(|| r.body["access_token"].as_str().unwrap().to_owned())
}

/// The shop's process refuses to start with `SHOP_ADMIN` naming an account whose password
/// it does not hold, and says which variable and why.
#[test]
fn the_shop_refuses_to_start_when_shop_admin_names_an_account_it_cannot_prove() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("admin.db").display());
    let admin = |password: &str| json!({ "name": "Root", "email": ROOT, "password": password }).to_string();
    // The first start creates the account; stopped once it listens.
    serves_with_admin(&url, &admin(PASSWORD));
    // The same identifier with another password: no start.
    let out = shop_command(&url).env("SHOP_ADMIN", admin(SQUATTERS)).stdout(Stdio::null()).output().unwrap();
    assert!(!out.status.success(), "started with an admin it could not prove");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SHOP_ADMIN: an account root@example.com exists already"), "{err}");
    // The right password starts it again, as every restart of a deployment does.
    serves_with_admin(&url, &admin(PASSWORD));
}

/// Starts the shop on `url` with `SHOP_ADMIN` set to `admin`, until it serves; then stops it.
fn serves_with_admin(url: &str, admin: &str) {
    let mut command = shop_command(url);
    command.env("SHOP_ADMIN", admin).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut shop = Process(command.spawn().unwrap());
    let out = std::io::BufReader::new(shop.0.stdout.take().unwrap());
    let served = std::io::BufRead::lines(out).map_while(Result::ok).any(|l| l.contains("listening on "));
    assert!(served, "the shop serves with SHOP_ADMIN={admin}");
    shop.kill();
}

backends!(tokens_without_the_declared_issuer_or_audience_are_refused, shop::service());
async fn tokens_without_the_declared_issuer_or_audience_are_refused(s: Server) {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let ann = register(&s, "ann").await;
    let key = EncodingKey::from_secret(crate::support::harness::JWT_SECRET);
    let now = jsonwebtoken::get_current_timestamp();
    let me = format!("/api/users/{}", ann.id);
    let full = json!({ "sub": ann.id, "roles": ["member"], "iat": now, "exp": now + 600, "iss": "shop", "aud": "shop-clients" });
    for (missing, detail) in
        [(None, None), (Some("iss"), Some("names no issuer")), (Some("aud"), Some("names no audience"))]
    {
        let mut claims = full.clone();
        if let Some(claim) = missing {
            claims.as_object_mut().unwrap().remove(claim);
        }
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &key).unwrap();
        let r = s.send_with("GET", &me, None, &[("authorization", &format!("Bearer {token}"))]).await;
        match detail {
            None => assert_eq!(r.status, 200, "the shop's own claims: {}", r.text),
            Some(detail) => {
                r.assert_problem(401);
                assert!(r.body["detail"].as_str().unwrap().contains(detail), "{}", r.text);
            }
        }
    }
}

backends!(per_owner_limits_hold_under_concurrent_requests, shop::service());
async fn per_owner_limits_hold_under_concurrent_requests(s: Server) {
    let ann = register(&s, "ann").await;
    let key = || accounts::call(&s, &ann, "POST", "/api/auth/api-keys", Some(json!({ "name": "k" })));
    last_place_taken_once(restgen::auth::MAX_API_KEYS as usize, key).await;
    let listed = accounts::call(&s, &ann, "GET", "/api/auth/api-keys", None).await;
    let keys = listed.body["data"].as_array().map(Vec::len);
    assert_eq!(keys, Some(restgen::auth::MAX_API_KEYS as usize), "{}", listed.text);
    let hook = || {
        let body = json!({ "url": "http://127.0.0.1:9/hooks", "events": ["order.created"] });
        accounts::call(&s, &ann, "POST", "/api/webhooks", Some(body))
    };
    last_place_taken_once(restgen::webhooks::MAX_WEBHOOKS as usize, hook).await;
}

/// `limit - 1` made one at a time, then twenty asking at once for the one place left:
/// exactly one gets it, the others are 409.
async fn last_place_taken_once<F: std::future::Future<Output = crate::support::harness::Reply>>(
    limit: usize,
    make: impl Fn() -> F,
) {
    for _ in 0..limit - 1 {
        assert_eq!(make().await.status, 201);
    }
    let answers = futures_util::future::join_all((0..20).map(|_| make())).await;
    let statuses: Vec<u16> = answers.iter().map(|r| r.status).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 1, "{statuses:?}");
    assert!(statuses.iter().all(|s| matches!(s, 201 | 409)), "{statuses:?}");
}

/// An account's password shows as `***` when an input holding it is printed for
/// debugging, on the service's side and in the generated client.
#[test]
fn inputs_holding_a_password_show_it_as_stars() {
    let secret = "correct horse battery staple";
    let service = shop::generated::models::CreateUser {
        name: "Ann".into(),
        email: "ann@example.com".into(),
        password: secret.into(),
    };
    let client = shop_client::models::CreateUser {
        name: "Ann".into(),
        email: "ann@example.com".into(),
        password: secret.into(),
    };
    for shown in [format!("{service:?}"), format!("{client:?}")] {
        assert!(shown.contains("password: ***") && shown.contains("ann@example.com"), "{shown}");
        assert!(!shown.contains(secret), "{shown}");
    }
}

backends!(
    failed_logins_are_budgeted_per_identifier_whatever_the_address,
    shop::service(),
    settings = crate::support::harness::manual_clock(1000.0)
);
async fn failed_logins_are_budgeted_per_identifier_whatever_the_address(s: Server) {
    let ann = register(&s, "ann").await;
    // Each guess from another address, as a botnet sends them through the shop's proxy.
    let guess = |n: usize, password: &'static str| {
        let s = &s;
        let email = ann.email.clone();
        async move {
            let from = format!("203.0.113.{}", n % 250 + 1);
            let body = json!({ "email": email, "password": password });
            s.send_with("POST", "/api/auth/login", Some(body), &[("x-forwarded-for", &from)]).await
        }
    };
    for n in 0..=restgen::auth::FREE_FAILURES as usize {
        guess(n, "wrong guess").await.assert_problem(401);
    }
    // Past the free failures the identifier waits, even for its right password, and
    // wherever the request comes from; another instance of the service sees the same.
    let waiting = guess(100, PASSWORD).await;
    waiting.assert_problem(429);
    assert_eq!(waiting.header("retry-after"), Some("2"), "{}", waiting.text);
    let twin = s.twin(shop::service()).await;
    let body = json!({ "email": ann.email, "password": PASSWORD });
    twin.post("/api/auth/login", body.clone()).await.assert_problem(429);
    // Another account is not slowed.
    let bob = register(&s, "bob").await;
    assert!(!bob.token.is_empty());
    // Each further failure waits twice as long.
    s.settings.clock.advance(std::time::Duration::from_secs(2));
    guess(101, "wrong again").await.assert_problem(401);
    assert_eq!(guess(102, PASSWORD).await.header("retry-after"), Some("4"));
    // Never locked out for good: once the wait is over the right password opens the
    // account, and the count starts again.
    s.settings.clock.advance(std::time::Duration::from_secs(4));
    let r = s.post("/api/auth/login", body).await;
    assert_eq!(r.status, 200, "{}", r.text);
    guess(103, "one slip").await.assert_problem(401);
    assert_eq!(guess(104, PASSWORD).await.status, 200, "a slip after a success costs nothing");
}

backends!(one_address_is_one_account_whatever_its_spelling, shop::service());
async fn one_address_is_one_account_whatever_its_spelling(s: Server) {
    let ann = register(&s, "ann").await;
    for spelling in ["Ann@EXAMPLE.com", "ANN@example.COM"] {
        let r =
            s.post("/api/users", json!({ "name": "Ann 2", "email": spelling, "password": "another password" })).await;
        r.assert_problem(409);
        assert_eq!(r.error_fields(), ["email"], "{spelling}: {}", r.text);
        let token = accounts::login(&s, spelling).await;
        assert_eq!(accounts::claims(&token)["sub"], ann.id.as_str(), "{spelling} signs in as Ann");
    }
    let made =
        s.post("/api/users", json!({ "name": "Jürgen", "email": "JÜRGEN@Bücher.DE", "password": PASSWORD })).await;
    assert_eq!(made.status, 201, "{}", made.text);
    assert_eq!(made.body["email"], "jürgen@xn--bcher-kva.de", "stored and shown in one form");
    // A filter finds the address however it is spelled.
    let c = accounts::call(
        &s,
        &ann,
        "POST",
        "/api/customers",
        Some(json!({ "name": "Acme", "email": "Sales@Acme.EXAMPLE" })),
    )
    .await;
    assert_eq!(c.status, 201, "{}", c.text);
    assert_eq!(c.body["email"], "sales@acme.example");
    let found = accounts::call(&s, &ann, "GET", "/api/customers?email=SALES@acme.example", None).await;
    assert_eq!(found.status, 200, "{}", found.text);
    assert!(found.text.contains(c.body["id"].as_str().unwrap()), "{}", found.text);
}
