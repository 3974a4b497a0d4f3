//! Identity on the shop: login, bearer tokens, Basic, API keys, ownership, admins, roles.

use crate::backends;
use crate::support::accounts::{self, PASSWORD, call, register};
use crate::support::harness::Server;
use base64::Engine;
use serde_json::json;

backends!(login_issues_a_bearer_token_that_opens_the_callers_own_account, shop::service());
async fn login_issues_a_bearer_token_that_opens_the_callers_own_account(s: Server) {
    let ann = register(&s, "ann").await;
    let r = s.post("/api/auth/login", json!({ "email": ann.email, "password": PASSWORD })).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["token_type"], "Bearer");
    assert_eq!(r.body["expires_in"], 900);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let me = call(&s, &ann, "GET", &format!("/api/users/{}", ann.id), None).await;
    assert_eq!(me.status, 200, "{}", me.text);
    assert_eq!(me.body["email"], "ann@example.com");
    assert!(me.body.get("password").is_none());
    // The token names the account and its default role.
    let claims = accounts::claims(&ann.token);
    assert_eq!(claims["sub"], ann.id.as_str());
    assert_eq!(claims["roles"], json!(["member"]));
    assert_eq!(claims["iss"], "shop");
    assert_eq!(claims["aud"], "shop-clients");
    assert!(claims["exp"].as_u64().unwrap() > claims["iat"].as_u64().unwrap());
}

backends!(wrong_credentials_get_one_answer_whichever_part_was_wrong, shop::service());
async fn wrong_credentials_get_one_answer_whichever_part_was_wrong(s: Server) {
    let ann = register(&s, "ann").await;
    let wrong_password = s.post("/api/auth/login", json!({ "email": ann.email, "password": "not the password" })).await;
    let no_account = s.post("/api/auth/login", json!({ "email": "nobody@example.com", "password": PASSWORD })).await;
    for r in [&wrong_password, &no_account] {
        r.assert_problem(401);
        assert!(r.header("www-authenticate").is_some_and(|c| c.starts_with("Bearer realm=\"shop\"")));
    }
    assert_eq!(wrong_password.body, no_account.body, "the answer never says which part was wrong");
    let missing = s.post("/api/auth/login", json!({ "email": ann.email })).await;
    missing.assert_problem(400);
    assert_eq!(missing.error_fields(), ["password"]);
    let extra =
        s.post("/api/auth/login", json!({ "email": ann.email, "password": PASSWORD, "roles": ["admin"] })).await;
    extra.assert_problem(400);
    assert_eq!(extra.error_fields(), ["roles"]);
}

backends!(owned_records_belong_to_their_creator_and_lists_show_only_the_callers, shop::service());
async fn owned_records_belong_to_their_creator_and_lists_show_only_the_callers(s: Server) {
    let (ann, bob) = (register(&s, "ann").await, register(&s, "bob").await);
    let a = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 500 }))).await;
    assert_eq!(a.status, 201, "{}", a.text);
    assert_eq!(a.body["owner_id"], ann.id.as_str(), "owner_id comes from the caller");
    let b = call(&s, &bob, "POST", "/api/orders", Some(json!({ "total_cents": 700 }))).await;
    assert_eq!(b.body["owner_id"], bob.id.as_str());
    let forged = call(&s, &bob, "POST", "/api/orders", Some(json!({ "total_cents": 1, "owner_id": ann.id }))).await;
    forged.assert_problem(400);
    assert_eq!(forged.error_fields(), ["owner_id"]);

    let list = call(&s, &ann, "GET", "/api/orders", None).await;
    let ids: Vec<&str> = list.body["data"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [a.body["id"].as_str().unwrap()]);
    // Cursors cannot start from somebody else's record either.
    let after =
        call(&s, &ann, "GET", &format!("/api/orders?starting_after={}", b.body["id"].as_str().unwrap()), None).await;
    after.assert_problem(400);

    // Nested: Ann's orders through her account; Bob may not list them.
    let nested = call(&s, &ann, "GET", &format!("/api/users/{}/orders", ann.id), None).await;
    assert_eq!(nested.status, 200, "{}", nested.text);
    assert_eq!(nested.body["data"].as_array().unwrap().len(), 1);
    let other = call(&s, &bob, "GET", &format!("/api/users/{}/orders", ann.id), None).await;
    // `user` hides what is not yours: the same 404 as an account that does not exist.
    other.assert_problem(404);
    let ghost = call(&s, &bob, "GET", "/api/users/0190b6a4-0000-7000-8000-000000000000/orders", None).await;
    assert_eq!(other.body, ghost.body);

    // Somebody else's order: 403 (`not_owned` defaults to forbidden), and nothing changes.
    let item = format!("/api/orders/{}", a.body["id"].as_str().unwrap());
    call(&s, &bob, "GET", &item, None).await.assert_problem(403);
    call(&s, &bob, "PATCH", &item, Some(json!({ "note": "mine now" }))).await.assert_problem(403);
    call(&s, &bob, "DELETE", &item, None).await.assert_problem(403);
    let still = call(&s, &ann, "GET", &item, None).await;
    assert_eq!(still.body, a.body);
}

backends!(the_principal_hides_other_accounts_and_never_takes_roles_from_members, shop::service());
async fn the_principal_hides_other_accounts_and_never_takes_roles_from_members(s: Server) {
    let (ann, bob) = (register(&s, "ann").await, register(&s, "bob").await);
    let hidden = call(&s, &bob, "GET", &format!("/api/users/{}", ann.id), None).await;
    let missing = call(&s, &bob, "GET", "/api/users/0190b6a4-0000-7000-8000-000000000000", None).await;
    hidden.assert_problem(404);
    assert_eq!(hidden.body, missing.body, "another account looks exactly like no account");
    let users = call(&s, &bob, "GET", "/api/users", None).await;
    let ids: Vec<&str> = users.body["data"].as_array().unwrap().iter().map(|u| u["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [bob.id.as_str()], "a member lists only their own account");
    let me = format!("/api/users/{}", bob.id);
    let r = call(&s, &bob, "PATCH", &me, Some(json!({ "roles": ["admin"] }))).await;
    r.assert_problem(400);
    assert_eq!(r.error_fields(), ["roles"]);
    let r = call(&s, &bob, "PATCH", &me, Some(json!({ "is_admin": true }))).await;
    r.assert_problem(400);
    let after = call(&s, &bob, "GET", &me, None).await;
    assert_eq!(after.body["roles"], json!([]));
    assert_eq!(after.body["is_admin"], false);
    // Deleting accounts is for admins only.
    call(&s, &bob, "DELETE", &me, None).await.assert_problem(403);
}

backends!(admins_see_and_change_every_record_and_alone_set_roles, shop::service());
async fn admins_see_and_change_every_record_and_alone_set_roles(s: Server) {
    let ann = register(&s, "ann").await;
    let root = accounts::admin(&s, "root").await;
    assert_eq!(accounts::claims(&root.token)["roles"], json!(["admin"]));
    let order = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 500 }))).await;
    let item = format!("/api/orders/{}", order.body["id"].as_str().unwrap());
    assert_eq!(call(&s, &root, "GET", &item, None).await.status, 200);
    let all = call(&s, &root, "GET", "/api/users", None).await;
    assert_eq!(all.body["data"].as_array().unwrap().len(), 2, "admins list every account");
    let nested = call(&s, &root, "GET", &format!("/api/users/{}/orders", ann.id), None).await;
    assert_eq!(nested.body["data"].as_array().unwrap().len(), 1);

    // Roles: only declared ones, set by an admin, in force at the next login.
    let user = format!("/api/users/{}", ann.id);
    let bad = call(&s, &root, "PATCH", &user, Some(json!({ "roles": ["owner"] }))).await;
    bad.assert_problem(400);
    assert_eq!(bad.error_fields(), ["roles"]);
    let promoted = call(&s, &root, "PATCH", &user, Some(json!({ "roles": ["admin"] }))).await;
    assert_eq!(promoted.status, 200, "{}", promoted.text);
    assert_eq!(promoted.body["roles"], json!(["admin"]));
    let token = accounts::login(&s, &ann.email).await;
    assert_eq!(accounts::claims(&token)["roles"], json!(["admin"]));
    // In a replace too, though `roles` is not settable there; a replace without it keeps it.
    let put = call(&s, &root, "PUT", &user, Some(json!({ "name": "Ann", "roles": ["member"] }))).await;
    assert_eq!(put.status, 200, "{}", put.text);
    assert_eq!(put.body["roles"], json!(["member"]));
    let put = call(&s, &root, "PUT", &user, Some(json!({ "name": "Ann B." }))).await;
    assert_eq!(put.body["roles"], json!(["member"]));
    assert_eq!(put.body["name"], "Ann B.");

    // Bootstrapping again changes nothing; the account stays one.
    let json = json!({ "name": "root", "email": root.email, "password": PASSWORD }).to_string();
    let said = restgen::auth::bootstrap_admin(&s.store, shop::generated::resources::AUTH.as_ref().unwrap(), &json)
        .await
        .unwrap();
    assert!(said.contains("already exists"), "{said}");
    let bad = restgen::auth::bootstrap_admin(
        &s.store,
        shop::generated::resources::AUTH.as_ref().unwrap(),
        &json!({ "email": "x@example.com", "password": "short", "is_admin": true }).to_string(),
    )
    .await
    .unwrap_err();
    assert!(bad.contains("`is_admin`") && bad.contains("`name` is required") && bad.contains("`password`"), "{bad}");
}

backends!(basic_credentials_open_the_account_and_wrong_ones_are_401, crate::support::harness::shop_with_every_scheme());
async fn basic_credentials_open_the_account_and_wrong_ones_are_401(s: Server) {
    let ann = register(&s, "ann").await;
    let basic = |user: &str, pass: &str| {
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}")))
    };
    let me = format!("/api/users/{}", ann.id);
    let ok = s.send_with("GET", &me, None, &[("authorization", &basic(&ann.email, PASSWORD))]).await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    let too_long = basic(&ann.email, &"p".repeat(2000)); // refused without an Argon2 run
    for header in [basic(&ann.email, "wrong"), basic("nobody@example.com", PASSWORD), "Basic !!!".into(), too_long] {
        let r = s.send_with("GET", &me, None, &[("authorization", &header)]).await;
        r.assert_problem(401);
        assert!(r.header("www-authenticate").is_some_and(|c| c.contains("Basic realm=\"shop\"")));
    }
    // An unknown scheme is not ignored.
    let r = s.send_with("GET", &me, None, &[("authorization", "Digest abc")]).await;
    r.assert_problem(401);
}

backends!(api_keys_are_shown_once_stored_hashed_and_revocable, crate::support::harness::shop_with_every_scheme());
async fn api_keys_are_shown_once_stored_hashed_and_revocable(s: Server) {
    let (ann, bob) = (register(&s, "ann").await, register(&s, "bob").await);
    let created = call(&s, &ann, "POST", "/api/auth/api-keys", Some(json!({ "name": "ci" }))).await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(created.header("cache-control"), Some("no-store"));
    let key = created.body["key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("rk_") && key.starts_with(created.body["prefix"].as_str().unwrap()));
    // A name is bounded text without NUL, each refusal saying which rule it broke.
    for (name, message) in
        [("a\u{0}b".to_owned(), "must not contain NUL characters"), ("n".repeat(101), "must be at most 100 characters")]
    {
        let r = call(&s, &ann, "POST", "/api/auth/api-keys", Some(json!({ "name": name }))).await;
        r.assert_problem(400);
        assert_eq!(r.body["errors"][0]["message"], message);
    }
    let me = format!("/api/users/{}", ann.id);
    let by_header = s.send_with("GET", &me, None, &[("x-api-key", &key)]).await;
    assert_eq!(by_header.status, 200, "{}", by_header.text);
    let by_query = s.get(&format!("{me}?api_key={key}")).await;
    assert_eq!(by_query.status, 200, "{}", by_query.text);
    // On a list the key is no list parameter, and no `Link` repeats it.
    for _ in 0..2 {
        call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 1 }))).await;
    }
    let page = s.get(&format!("/api/orders?limit=1&api_key={key}")).await;
    assert_eq!(page.status, 200, "{}", page.text);
    let link = page.header("link").unwrap_or_default();
    assert!(link.contains("limit=1") && !link.contains("api_key"), "{link}");

    let listed = call(&s, &ann, "GET", "/api/auth/api-keys", None).await;
    assert_eq!(listed.body["data"].as_array().unwrap().len(), 1);
    assert!(!listed.text.contains(&key[20..]), "the key is never shown again");
    assert_eq!(call(&s, &bob, "GET", "/api/auth/api-keys", None).await.body["data"], json!([]));

    // Forged keys: a wrong secret for a real id, and a made-up one.
    let mut wrong = key.clone();
    wrong.pop();
    wrong.push(if key.ends_with('A') { 'B' } else { 'A' });
    for forged in [wrong.as_str(), "rk_0190b6a40000700080000000000000ff_secret", "not-a-key"] {
        s.send_with("GET", &me, None, &[("x-api-key", forged)]).await.assert_problem(401);
    }

    let id = created.body["id"].as_str().unwrap();
    call(&s, &bob, "DELETE", &format!("/api/auth/api-keys/{id}"), None).await.assert_problem(404);
    assert_eq!(s.send_with("GET", &me, None, &[("x-api-key", &key)]).await.status, 200, "Bob revoked nothing");
    assert_eq!(call(&s, &ann, "DELETE", &format!("/api/auth/api-keys/{id}"), None).await.status, 204);
    s.send_with("GET", &me, None, &[("x-api-key", &key)]).await.assert_problem(401);
    s.post("/api/auth/api-keys", json!({})).await.assert_problem(401);
}

backends!(an_account_holds_at_most_a_hundred_api_keys, shop::service());
async fn an_account_holds_at_most_a_hundred_api_keys(s: Server) {
    let (ann, bob) = (register(&s, "ann").await, register(&s, "bob").await);
    let mut last = String::new();
    for n in 0..100 {
        let r = call(&s, &ann, "POST", "/api/auth/api-keys", Some(json!({ "name": format!("k{n}") }))).await;
        assert_eq!(r.status, 201, "key {n}: {}", r.text);
        last = r.body["id"].as_str().unwrap().to_owned();
    }
    let full = call(&s, &ann, "POST", "/api/auth/api-keys", Some(json!({}))).await;
    full.assert_problem(409);
    assert!(full.body["detail"].as_str().unwrap().contains("revoke one"), "{}", full.text);
    assert_eq!(call(&s, &ann, "GET", "/api/auth/api-keys", None).await.body["data"].as_array().unwrap().len(), 100);
    // The cap is per account, and revoking makes room.
    assert_eq!(call(&s, &bob, "POST", "/api/auth/api-keys", Some(json!({}))).await.status, 201);
    assert_eq!(call(&s, &ann, "DELETE", &format!("/api/auth/api-keys/{last}"), None).await.status, 204);
    assert_eq!(call(&s, &ann, "POST", "/api/auth/api-keys", Some(json!({}))).await.status, 201);
}

backends!(a_token_that_outlived_its_account_creates_nothing, shop::service());
async fn a_token_that_outlived_its_account_creates_nothing(s: Server) {
    let ann = register(&s, "ann").await;
    let root = accounts::admin(&s, "root").await;
    assert_eq!(call(&s, &root, "DELETE", &format!("/api/users/{}", ann.id), None).await.status, 204);
    // The token still verifies (no lookup), but nothing can be owned by a missing account.
    let order = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 1 }))).await;
    order.assert_problem(401);
    assert!(order.header("www-authenticate").is_some_and(|c| c.contains("invalid_token")));
    call(&s, &ann, "POST", "/api/auth/api-keys", Some(json!({}))).await.assert_problem(401);
}
