//! Identity: who is calling, proved by a bearer JWT, an API key or Basic credentials, and
//! what they may do (`access`). A middleware turns credentials into a [`Caller`] before any
//! handler runs; invalid credentials are refused there with 401, whatever the route.

mod api_keys;
mod bootstrap;
mod guesses;
#[cfg(any(feature = "jwt-hs256", feature = "jwt-rs256", feature = "jwt-es256"))]
mod jwt;
#[cfg(not(any(feature = "jwt-hs256", feature = "jwt-rs256", feature = "jwt-es256")))]
#[path = "jwt/absent.rs"]
mod jwt;
mod login;

pub use crate::caller::{Caller, Principal};
pub(crate) use crate::caller::{account_gone, unauthorized};
pub use api_keys::MAX_KEYS as MAX_API_KEYS;
pub use bootstrap::bootstrap_admin;
pub use guesses::{FORGET_AFTER, FREE_FAILURES, MAX_BLOCK};

use crate::outlined::Outlined;
use crate::problem::Problem;
use crate::spec::{AuthSpec, Scheme};
use crate::store::{Record, SqlValue, Store};
use axum::Router;
use axum::extract::Request;
use axum::http::header;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::Value;
use std::sync::Arc;
use tracing::Instrument;

/// Key material, read from the environment by [`Secrets::from_env`] or given directly.
#[derive(Clone, Default)]
pub struct Secrets {
    /// HS256 shared secret; `None` makes a random one for this process (with a warning).
    pub jwt_secret: Option<Vec<u8>>,
    /// HS256 secret of the previous rotation, still accepted for verification.
    pub jwt_previous_secret: Option<Vec<u8>>,
    /// RS256/ES256 private key, PEM (signing at login).
    pub private_key_pem: Option<Vec<u8>>,
    /// RS256/ES256 public key, PEM (verifying).
    pub public_key_pem: Option<Vec<u8>>,
    /// Public key of the previous rotation, still accepted for verification.
    pub previous_public_key_pem: Option<Vec<u8>>,
    /// Webhook signing keys, current first (`webhooks::keys_from_lookup`); none makes a
    /// random one for this process.
    pub webhook_keys: Vec<Vec<u8>>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secrets { .. }")
    }
}

/// Shortest HS256 secret accepted: as long as the hash (RFC 7518 §3.2).
const MIN_SECRET_BYTES: usize = 32;

impl Secrets {
    /// `<secret_env>` and `<secret_env>_PREVIOUS` for HS256; for RS256/ES256 the PEM files
    /// named by `<private_key_env>`, `<public_key_env>` and `<public_key_env>_PREVIOUS`.
    pub fn from_env(spec: &AuthSpec) -> Result<Secrets, String> {
        Secrets::from_lookup(spec, |name| std::env::var(name).ok())
    }

    /// [`Secrets::from_env`] with variables looked up by `var`.
    pub fn from_lookup(spec: &AuthSpec, var: impl Fn(&str) -> Option<String>) -> Result<Secrets, String> {
        let var = |name: &str| var(name).filter(|v| !v.is_empty());
        let secret = |name: &str| -> Result<Option<Vec<u8>>, String> {
            match var(name) {
                Some(s) if s.len() < MIN_SECRET_BYTES => {
                    Err(format!("{name} is too short: use at least {MIN_SECRET_BYTES} random bytes"))
                }
                other => Ok(other.map(String::into_bytes)),
            }
        };
        let file = |name: Option<String>| -> Result<Option<Vec<u8>>, String> {
            let Some(name) = name else { return Ok(None) };
            match var(&name) {
                Some(path) => std::fs::read(&path).map(Some).map_err(|e| format!("{name}: cannot read {path}: {e}")),
                None => Ok(None),
            }
        };
        let jwt = &spec.jwt;
        Ok(Secrets {
            jwt_secret: secret(jwt.secret_env)?,
            jwt_previous_secret: secret(&format!("{}_PREVIOUS", jwt.secret_env))?,
            private_key_pem: file(jwt.private_key_env.map(str::to_owned))?,
            public_key_pem: file(jwt.public_key_env.map(str::to_owned))?,
            previous_public_key_pem: file(jwt.public_key_env.map(|e| format!("{e}_PREVIOUS")))?,
            webhook_keys: Vec::new(),
        })
    }
}

/// Verifies credentials; shared by the middleware and the auth endpoints.
pub struct Authenticator {
    spec: &'static AuthSpec,
    store: Store,
    tokens: jwt::Tokens,
    /// Failed logins by identifier, across instances.
    guesses: guesses::Guesses,
    /// Verified when an identifier names no account, so a wrong identifier costs as
    /// much time as a wrong password.
    decoy_hash: String,
}

impl Authenticator {
    /// `clock` measures how long an identifier waits after failed logins.
    pub fn new(
        spec: &'static AuthSpec,
        store: Store,
        secrets: &Secrets,
        clock: crate::clock::Clock,
    ) -> Result<Authenticator, String> {
        let tokens = jwt::Tokens::new(spec, secrets)?;
        let decoy = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random_bytes(24));
        let decoy_hash = crate::password::hash(&decoy).map_err(|_| "cannot hash with Argon2id".to_owned())?;
        let guesses = guesses::Guesses::new(store.clone(), clock);
        Ok(Authenticator { spec, store, tokens, guesses, decoy_hash })
    }

    /// The caller a request's credentials prove, anonymous without any.
    async fn caller(&self, parts: &Parts) -> Result<Caller, Problem> {
        let principal = match parts.headers.get(header::AUTHORIZATION) {
            Some(value) => {
                let text = value.to_str().map_err(|_| self.invalid(None, "the Authorization header is not text"))?;
                let (scheme, credentials) = text.split_once(' ').unwrap_or((text, ""));
                let credentials = credentials.trim();
                if scheme.eq_ignore_ascii_case("bearer") && self.spec.has(Scheme::Bearer) {
                    Some(self.bearer(credentials)?)
                } else if scheme.eq_ignore_ascii_case("basic") && self.spec.has(Scheme::Basic) {
                    Some(self.basic(credentials).await?)
                } else {
                    return Err(self.invalid(None, "this authorization scheme is not accepted here"));
                }
            }
            None => match self.api_key_of(parts) {
                Some(key) => Some(self.api_key(&key).await?),
                None => None,
            },
        };
        Ok(Caller { principal, auth: Some(self.spec) })
    }

    fn bearer(&self, token: &str) -> Result<Principal, Problem> {
        let claims = self.tokens.verify(token).map_err(|why| self.invalid(Some("invalid_token"), why))?;
        Ok(Principal { expires_at: Some(claims.exp), ..self.principal(claims.sub, claims.roles) })
    }

    async fn basic(&self, credentials: &str) -> Result<Principal, Problem> {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(credentials)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| self.invalid(None, "Basic credentials must be base64 of identifier:password"))?;
        let (identifier, password) = decoded
            .split_once(':')
            .ok_or_else(|| self.invalid(None, "Basic credentials must be identifier:password"))?;
        match self.check_password(identifier, password).await? {
            Some(record) => Ok(self.principal_of(&record)),
            None => Err(self.invalid(None, "the identifier or password is wrong")),
        }
    }

    fn api_key_of(&self, parts: &Parts) -> Option<String> {
        if !self.spec.has(Scheme::ApiKey) {
            return None;
        }
        if let Some(v) = parts.headers.get(self.spec.api_key.header) {
            return Some(v.to_str().unwrap_or("").to_owned());
        }
        let name = self.spec.api_key.query?;
        form_urlencoded::parse(parts.uri.query()?.as_bytes()).find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
    }

    /// Takes an API key sent as a query parameter out of the request, so that it is not a
    /// list parameter, and never echoed in a `Link` or a log line.
    fn strip_query_key(&self, parts: &mut Parts) {
        let Some(name) = self.spec.api_key.query.filter(|_| self.spec.has(Scheme::ApiKey)) else { return };
        let Some(query) = parts.uri.query() else { return };
        let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes()).into_owned().collect();
        if !pairs.iter().any(|(k, _)| k == name) {
            return;
        }
        let rest = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs.iter().filter(|(k, _)| k != name))
            .finish();
        let path_and_query =
            if rest.is_empty() { parts.uri.path().to_owned() } else { format!("{}?{rest}", parts.uri.path()) };
        let Ok(path_and_query) = path_and_query.parse() else { return };
        let mut uri = parts.uri.clone().into_parts();
        uri.path_and_query = Some(path_and_query);
        if let Ok(uri) = axum::http::Uri::from_parts(uri) {
            parts.extensions.insert(axum::extract::OriginalUri(uri.clone()));
            parts.uri = uri;
        }
    }

    async fn api_key(&self, key: &str) -> Result<Principal, Problem> {
        let Some(principal) = &self.spec.principal else {
            return Err(self.invalid(None, "API keys are not accepted here"));
        };
        let (owner, key_id) = api_keys::verify(&self.store, principal.resource.id, key)
            .await?
            .ok_or_else(|| self.invalid(None, "the API key is not valid"))?;
        let record = self
            .store
            .get(principal.resource, &owner)
            .await
            .map_err(|_| self.invalid(None, "the API key's account no longer exists"))?;
        Ok(Principal { api_key: Some(key_id), ..self.principal_of(&record) })
    }

    /// The account `identifier` names, when `password` is its password. Takes as long
    /// whether or not the account exists. A 429 while the identifier waits after failed
    /// logins ([`guesses`]), whatever the password.
    ///
    /// [`Outlined`]: login and Basic authentication both await it, and its body is large.
    fn check_password<'a>(
        &'a self,
        identifier: &'a str,
        password: &'a str,
    ) -> impl Future<Output = Result<Option<Record>, Problem>> + Send + 'a {
        Outlined::new(self.check_password_body(identifier, password))
    }

    async fn check_password_body(&self, identifier: &str, password: &str) -> Result<Option<Record>, Problem> {
        let Some(principal) = &self.spec.principal else { return Ok(None) };
        let field = principal.resource.field(principal.identifier).ok_or_else(Problem::internal)?;
        // Longer than any account's could be: wrong, and not worth an Argon2 run.
        let too_long = |name: &str, value: &str| {
            principal
                .resource
                .field(name)
                .and_then(|f| f.max_length)
                .is_some_and(|max| value.chars().count() as u64 > max)
        };
        if too_long(principal.identifier, identifier) || too_long(principal.password, password) {
            return Ok(None);
        }
        // An address is stored and compared in one form: any spelling of it signs in, and
        // counts against one budget of guesses.
        let identifier = principal_identifier(field, identifier);
        let identifier = identifier.as_str();
        let admitted = self.guesses.admit(identifier).await?;
        let record = self
            .store
            .find_by(
                principal.resource,
                principal.identifier,
                SqlValue::from_owned_json(field, Value::from(identifier)),
            )
            .await?;
        let hash = record
            .as_ref()
            .and_then(|r| r.get(principal.password))
            .and_then(Value::as_str)
            .unwrap_or(&self.decoy_hash)
            .to_owned();
        // Argon2 is deliberately slow: off the async workers, on the bounded hashers.
        let matches = crate::password::verify_bounded(password.to_owned(), hash).await?;
        if matches && record.is_some() {
            self.guesses.succeeded(admitted).await?;
            Ok(record)
        } else {
            self.guesses.failed(admitted).await?;
            Ok(None)
        }
    }

    fn principal(&self, id: String, roles: Vec<String>) -> Principal {
        let admin = roles.iter().any(|r| self.spec.admin_roles.contains(&r.as_str()));
        Principal { id, roles, admin, api_key: None, expires_at: None }
    }

    /// The principal a stored account stands for, with its roles (or the default role).
    fn principal_of(&self, record: &Record) -> Principal {
        principal_of(self.spec, record)
    }

    fn invalid(&self, error: Option<&str>, detail: &str) -> Problem {
        let mut p = unauthorized(Some(self.spec), error);
        p.detail = detail.to_owned();
        p
    }
}

/// `identifier` as the identifier field stores it: an e-mail address in canonical form
/// (one that has none is looked up as given, and finds nothing).
pub(crate) fn principal_identifier(field: &crate::spec::FieldSpec, identifier: &str) -> String {
    match field.kind {
        crate::spec::FieldKind::Email => crate::email::canonical(identifier).unwrap_or_else(|| identifier.to_owned()),
        _ => identifier.to_owned(),
    }
}

/// The principal a stored account stands for, with its roles (or the default role).
fn principal_of(spec: &AuthSpec, record: &Record) -> Principal {
    let id = record.id_text();
    let mut roles: Vec<String> = spec
        .principal
        .as_ref()
        .and_then(|p| p.roles)
        .and_then(|field| record.get(field))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|r| r.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    if roles.is_empty() {
        roles.extend(spec.default_role.map(str::to_owned));
    }
    let admin = roles.iter().any(|r| spec.admin_roles.contains(&r.as_str()));
    Principal { id, roles, admin, api_key: None, expires_at: None }
}

/// Why this build cannot sign or verify with `algorithm`. The generated code requires the
/// feature (`require!`), so only a spec assembled by hand in code meets this, at start.
fn jwt_absent(algorithm: crate::spec::JwtAlgorithm) -> String {
    format!(
        "`auth.jwt.algorithm: {}` needs restgen's `{}` feature, which this build leaves out",
        algorithm.word(),
        restgen_model::features::jwt(algorithm)
    )
}

/// The caller an account is, as it stands now (a webhook's subscriber when an event is
/// matched to it, a feed's reader as its stream goes on): `None` when the account no
/// longer exists.
pub(crate) async fn caller_of(spec: &'static AuthSpec, store: &Store, id: &str) -> Option<Caller> {
    let principal = spec.principal.as_ref()?;
    let key = SqlValue::id(principal.resource.id, id)?;
    let record = store.get(principal.resource, &key).await.ok()?;
    Some(Caller { principal: Some(principal_of(spec, &record)), auth: Some(spec) })
}

/// The middleware: resolves the caller, or answers 401 for credentials that fail (and
/// counts the failure against the rate limit of the address it came from).
pub(crate) async fn authenticate(
    auth: Arc<Authenticator>,
    limiter: Option<Arc<crate::rate::Limiter>>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let span = crate::traces::authenticating();
    let caller = auth.caller(&parts).instrument(span.clone()).await;
    crate::traces::authenticated(&span, scheme_of(&parts, &caller), caller.is_err());
    match caller {
        Ok(caller) => {
            auth.strip_query_key(&mut parts);
            parts.extensions.insert(caller);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(problem) => crate::rate::refuse(limiter.as_deref(), &parts, problem.into_response()).await,
    }
}

/// How a request's credentials came, as its trace says (never the credentials).
fn scheme_of(parts: &Parts, caller: &Result<Caller, Problem>) -> &'static str {
    match (parts.headers.get(header::AUTHORIZATION), caller) {
        (Some(value), _) => {
            let scheme = value.as_bytes().split(|b| *b == b' ').next().unwrap_or_default();
            if scheme.eq_ignore_ascii_case(b"bearer") {
                "bearer"
            } else if scheme.eq_ignore_ascii_case(b"basic") {
                "basic"
            } else {
                "other"
            }
        }
        (None, Ok(Caller { principal: None, .. })) => "none",
        (None, _) => "api_key",
    }
}

/// Login and API key routes under `base`.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>(auth: Arc<Authenticator>, base: &str) -> Router<S> {
    let mut router = Router::new();
    if let Some(principal) = &auth.spec.principal
        && auth.spec.has(Scheme::Bearer)
    {
        router = router.merge(login::routes(auth.clone(), principal.login_path));
    }
    if auth.spec.has(Scheme::ApiKey) && auth.spec.principal.is_some() {
        router = router.merge(api_keys::routes(auth, base));
    }
    router
}

/// `n` bytes from the operating system's generator.
pub(crate) fn random_bytes(n: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("the operating system's random generator works");
    bytes
}
