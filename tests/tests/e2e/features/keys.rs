//! RS256 and ES256 bearer tokens from PEM files, algorithm confusion, and secret rotation.
//! The shop declares HS256; these tests serve it with the same model under the other
//! algorithms, as a schema declaring them would.

use crate::backends;
use crate::support::accounts::{PASSWORD, register};
use crate::support::harness::Server;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use restgen::auth::Secrets;
use restgen::serve::Service;
use restgen::spec::{ApiKeySpec, AuthSpec, JwtAlgorithm, JwtSpec, PrincipalSpec, Scheme};
use serde_json::json;

const RSA_PRIVATE: &[u8] = include_bytes!("../../../fixtures/keys/rsa-private.pem");
const RSA_PUBLIC: &[u8] = include_bytes!("../../../fixtures/keys/rsa-public.pem");
const EC_PRIVATE: &[u8] = include_bytes!("../../../fixtures/keys/ec-private.pem");
const EC_PUBLIC: &[u8] = include_bytes!("../../../fixtures/keys/ec-public.pem");

const fn shop_auth(algorithm: JwtAlgorithm) -> AuthSpec {
    AuthSpec {
        schemes: &[Scheme::Bearer],
        principal: Some(PrincipalSpec {
            resource: &shop::generated::resources::USER,
            login_path: "/api/auth/login",
            identifier: "email",
            password: "password",
            roles: Some("roles"),
        }),
        jwt: JwtSpec {
            algorithm,
            secret_env: "SHOP_JWT_SECRET",
            private_key_env: Some("SHOP_JWT_PRIVATE_KEY"),
            public_key_env: Some("SHOP_JWT_PUBLIC_KEY"),
            ttl_seconds: 900,
            issuer: Some("shop"),
            audience: None,
        },
        api_key: ApiKeySpec { header: "X-API-Key", query: None },
        roles: &["admin", "member"],
        default_role: Some("member"),
        admin_roles: &["admin"],
        env_prefix: "SHOP",
        realm: "shop",
    }
}

static RS256: AuthSpec = shop_auth(JwtAlgorithm::Rs256);
static ES256: AuthSpec = shop_auth(JwtAlgorithm::Es256);

fn shop_with(auth: &'static AuthSpec) -> Service {
    Service { auth: Some(auth), ..shop::service() }
}

fn pem_secrets(private: &[u8], public: &[u8]) -> Secrets {
    Secrets { private_key_pem: Some(private.to_vec()), public_key_pem: Some(public.to_vec()), ..Secrets::default() }
}

fn claims(sub: &str) -> serde_json::Value {
    let now = jsonwebtoken::get_current_timestamp();
    json!({ "sub": sub, "roles": ["admin"], "iat": now, "exp": now + 600, "iss": "shop" })
}

/// Logs in, checks the token's algorithm and that it opens the account; then a token
/// signed with HMAC over the public key (algorithm confusion) and one of the other
/// asymmetric algorithm are refused.
async fn asymmetric(s: &Server, alg: &str, public: &[u8], other: (Algorithm, EncodingKey)) {
    let ann = register(s, "ann").await;
    let header: serde_json::Value = serde_json::from_slice(
        &base64::Engine::decode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            ann.token.split('.').next().unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(header["alg"], alg);
    let me = format!("/api/users/{}", ann.id);
    let ok = s.send_with("GET", &me, None, &[("authorization", &ann.bearer())]).await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    let confused =
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims(&ann.id), &EncodingKey::from_secret(public))
            .unwrap();
    let wrong_family = jsonwebtoken::encode(&Header::new(other.0), &claims(&ann.id), &other.1).unwrap();
    for token in [confused, wrong_family] {
        let r = s.send_with("GET", &me, None, &[("authorization", &format!("Bearer {token}"))]).await;
        r.assert_problem(401);
        assert!(r.header("www-authenticate").unwrap_or_default().contains("error=\"invalid_token\""));
    }
}

backends!(
    rs256_tokens_are_signed_with_the_private_key_and_confusion_is_refused,
    shop_with(&RS256),
    pem_secrets(RSA_PRIVATE, RSA_PUBLIC)
);
async fn rs256_tokens_are_signed_with_the_private_key_and_confusion_is_refused(s: Server) {
    asymmetric(&s, "RS256", RSA_PUBLIC, (Algorithm::ES256, EncodingKey::from_ec_pem(EC_PRIVATE).unwrap())).await;
}

backends!(
    es256_tokens_are_signed_with_the_private_key_and_confusion_is_refused,
    shop_with(&ES256),
    pem_secrets(EC_PRIVATE, EC_PUBLIC)
);
async fn es256_tokens_are_signed_with_the_private_key_and_confusion_is_refused(s: Server) {
    asymmetric(&s, "ES256", EC_PUBLIC, (Algorithm::RS256, EncodingKey::from_rsa_pem(RSA_PRIVATE).unwrap())).await;
}

backends!(
    a_verifying_instance_without_the_private_key_issues_no_tokens,
    shop_with(&RS256),
    Secrets { public_key_pem: Some(RSA_PUBLIC.to_vec()), ..Secrets::default() }
);
async fn a_verifying_instance_without_the_private_key_issues_no_tokens(s: Server) {
    let r = s.post("/api/users", json!({ "name": "Ann", "email": "ann@example.com", "password": PASSWORD })).await;
    assert_eq!(r.status, 201);
    let login = s.post("/api/auth/login", json!({ "email": "ann@example.com", "password": PASSWORD })).await;
    login.assert_problem(503);
    // Tokens issued elsewhere with the private key still open the account.
    let token = jsonwebtoken::encode(
        &Header::new(Algorithm::RS256),
        &claims(r.body["id"].as_str().unwrap()),
        &EncodingKey::from_rsa_pem(RSA_PRIVATE).unwrap(),
    )
    .unwrap();
    let me = format!("/api/users/{}", r.body["id"].as_str().unwrap());
    assert_eq!(s.send_with("GET", &me, None, &[("authorization", &format!("Bearer {token}"))]).await.status, 200);
}

const OLD_SECRET: &[u8] = b"the secret before the rotation, 32+ bytes";
const NEW_SECRET: &[u8] = b"the secret after the rotation, 32 or more bytes";

backends!(
    during_a_rotation_tokens_of_the_previous_secret_still_verify,
    shop_with(&HS256),
    Secrets {
        jwt_secret: Some(NEW_SECRET.to_vec()),
        jwt_previous_secret: Some(OLD_SECRET.to_vec()),
        ..Secrets::default()
    }
);
async fn during_a_rotation_tokens_of_the_previous_secret_still_verify(s: Server) {
    let ann = register(&s, "ann").await;
    let me = format!("/api/users/{}", ann.id);
    let old =
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims(&ann.id), &EncodingKey::from_secret(OLD_SECRET))
            .unwrap();
    assert_eq!(s.send_with("GET", &me, None, &[("authorization", &format!("Bearer {old}"))]).await.status, 200);
    assert_eq!(s.send_with("GET", &me, None, &[("authorization", &ann.bearer())]).await.status, 200, "new tokens");
    let stranger = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims(&ann.id),
        &EncodingKey::from_secret(b"neither the old nor the new secret, 32+ bytes"),
    )
    .unwrap();
    s.send_with("GET", &me, None, &[("authorization", &format!("Bearer {stranger}"))]).await.assert_problem(401);
}

static HS256: AuthSpec = shop_auth(JwtAlgorithm::Hs256);

backends!(without_a_configured_secret_each_process_signs_with_its_own_random_one, shop::service(), Secrets::default());
async fn without_a_configured_secret_each_process_signs_with_its_own_random_one(s: Server) {
    let ann = register(&s, "ann").await;
    let me = format!("/api/users/{}", ann.id);
    assert_eq!(s.send_with("GET", &me, None, &[("authorization", &ann.bearer())]).await.status, 200);
    // Neither the test suite's secret nor any fixed one signs for this process.
    let guess = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims(&ann.id),
        &EncodingKey::from_secret(crate::support::harness::JWT_SECRET),
    )
    .unwrap();
    s.send_with("GET", &me, None, &[("authorization", &format!("Bearer {guess}"))]).await.assert_problem(401);
    // A second instance accepts none of the first one's tokens.
    let other =
        crate::support::harness::start_with(shop::service(), crate::support::harness::Db::Sqlite, Secrets::default())
            .await
            .unwrap();
    let r = other.send_with("GET", &me, None, &[("authorization", &ann.bearer())]).await;
    r.assert_problem(401);
}

#[test]
fn secrets_from_the_environment_name_what_is_wrong() {
    let auth = shop::generated::resources::AUTH.as_ref().unwrap();
    let none = Secrets::from_lookup(auth, |_| None).unwrap();
    assert!(none.jwt_secret.is_none(), "unset means a random per-process secret, made at start");
    let short = Secrets::from_lookup(auth, |n| (n == "SHOP_JWT_SECRET").then(|| "short".into())).unwrap_err();
    assert!(short.contains("SHOP_JWT_SECRET is too short"), "{short}");
    let long = "x".repeat(40);
    let set = Secrets::from_lookup(auth, |n| n.starts_with("SHOP_JWT_SECRET").then(|| long.clone())).unwrap();
    assert_eq!(set.jwt_secret.as_deref(), Some(long.as_bytes()));
    assert_eq!(set.jwt_previous_secret.as_deref(), Some(long.as_bytes()), "_PREVIOUS is read too");
    let missing_file =
        Secrets::from_lookup(&RS256, |n| (n == "SHOP_JWT_PUBLIC_KEY").then(|| "/nonexistent.pem".into())).unwrap_err();
    assert!(missing_file.starts_with("SHOP_JWT_PUBLIC_KEY: cannot read /nonexistent.pem"), "{missing_file}");
}
