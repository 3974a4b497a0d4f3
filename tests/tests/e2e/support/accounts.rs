//! Shop accounts for the identity tests: register, log in, call as somebody.

use crate::support::harness::{Reply, Server};
use serde_json::{Value, json};

pub const PASSWORD: &str = "correct horse battery";

/// A registered shop user with a bearer token.
#[derive(Clone, Debug)]
pub struct Account {
    pub id: String,
    pub email: String,
    pub token: String,
}

impl Account {
    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }
}

/// Registers `name` (e-mail `<name>@example.com`) and logs in.
pub async fn register(s: &Server, name: &str) -> Account {
    let email = format!("{name}@example.com");
    let r = s.post("/api/users", json!({ "name": name, "email": email, "password": PASSWORD })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["id"].as_str().unwrap().to_owned();
    let token = login(s, &email).await;
    Account { id, email, token }
}

/// A fresh token for `email`.
pub async fn login(s: &Server, email: &str) -> String {
    let r = s.post("/api/auth/login", json!({ "email": email, "password": PASSWORD })).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["access_token"].as_str().unwrap().to_owned()
}

/// Makes `name` the first admin through the environment bootstrap, and logs in.
pub async fn admin(s: &Server, name: &str) -> Account {
    let email = format!("{name}@example.com");
    let json = json!({ "name": name, "email": email, "password": PASSWORD }).to_string();
    let auth = shop::generated::resources::AUTH.as_ref().unwrap();
    restgen::auth::bootstrap_admin(&s.store, auth, &json).await.unwrap();
    let token = login(s, &email).await;
    let id = claims(&token)["sub"].as_str().unwrap().to_owned();
    Account { id, email, token }
}

/// An account holding `role`, given by `admin`, signed in again so its token holds it too.
pub async fn with_role(s: &Server, admin: &Account, name: &str, role: &str) -> Account {
    let mut account = register(s, name).await;
    let r = call(s, admin, "PATCH", &format!("/api/users/{}", account.id), Some(json!({ "roles": [role] }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    account.token = login(s, &account.email).await;
    account
}

/// The claims of a token, read without verifying it.
pub fn claims(token: &str) -> Value {
    use base64::Engine;
    let payload = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

/// A request as `who`.
pub async fn call(s: &Server, who: &Account, method: &str, path: &str, body: Option<Value>) -> Reply {
    s.send_with(method, path, body, &[("authorization", &who.bearer())]).await
}
