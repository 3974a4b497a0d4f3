//! Sending calls: the base URL, credentials, timeouts, retries and `Idempotency-Key`s.

use crate::auth::{Auth, Session};
use crate::error::{Error, Problem};
use crate::retry::{Retry, retry_after};
use crate::tagged::Tagged;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, ETAG, HeaderName, HeaderValue, IF_MATCH};
use reqwest::{Method, StatusCode};
use restgen_wire::http;
use restgen_wire::redact::Redacted;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// What a generated client knows about its service, from the schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceInfo {
    /// The schema's `api.base_path` (`/api`), prefixed to every resource path.
    pub base_path: &'static str,
    /// The login operation's path under `base_path`, when the service has one.
    pub login_path: Option<&'static str>,
    /// The JSON key of the login identifier (`email`).
    pub login_identifier: &'static str,
    /// The header that carries an API key, when the service takes them.
    pub api_key_header: Option<&'static str>,
    /// The API versions the service serves, and how a client names one.
    pub versions: Option<Versions>,
}

/// A service's API versions, as its client names one ([`Builder::version`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Versions {
    /// Each version served, oldest first, with its media type.
    pub served: &'static [(u32, &'static str)],
    /// How the client names the version it chose: the first way the service takes, in
    /// the order path, header, media type.
    pub by: VersionBy,
}

/// A way of naming a version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionBy {
    /// `{base_path}/v{n}/...`
    Path,
    /// `<header>: n`, the header the service names (`X-API-Version`)
    Header(&'static str),
    /// `Accept: application/vnd.{vendor}.v{n}+json`
    MediaType,
}

/// The answer of logging in.
#[derive(Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Token {
    pub access_token: String,
    pub token_type: String,
    /// Seconds until the token expires.
    pub expires_in: u64,
}

/// The token stays out of logs.
impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("access_token", &Redacted)
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .finish()
    }
}

/// An API key as listed: never the key itself.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct ApiKey {
    pub id: String,
    pub name: Option<String>,
    pub prefix: String,
    pub created_at: String,
}

/// A new API key: `key` appears in this answer only.
#[derive(Clone, PartialEq, Eq, serde::Deserialize)]
pub struct ApiKeyCreated {
    pub id: String,
    pub name: Option<String>,
    pub prefix: String,
    pub created_at: String,
    pub key: String,
}

/// The key stays out of logs; its prefix tells which key it is.
impl std::fmt::Debug for ApiKeyCreated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeyCreated")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("prefix", &self.prefix)
            .field("created_at", &self.created_at)
            .field("key", &Redacted)
            .finish()
    }
}

/// Settings of a client of type `C`; `build` makes it.
#[derive(Debug)]
pub struct Builder<C = Transport> {
    info: ServiceInfo,
    base_url: String,
    auth: Auth,
    retry: Retry,
    timeout: Duration,
    connect_timeout: Duration,
    user_agent: String,
    version: Option<u32>,
    client: PhantomData<fn() -> C>,
}

impl<C> Clone for Builder<C> {
    fn clone(&self) -> Self {
        Builder {
            info: self.info,
            base_url: self.base_url.clone(),
            auth: self.auth.clone(),
            retry: self.retry.clone(),
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            user_agent: self.user_agent.clone(),
            version: self.version,
            client: PhantomData,
        }
    }
}

impl<C: From<Transport>> Builder<C> {
    /// A client of the service at `base_url`: its origin, such as `https://shop.example.com`
    /// (the schema's base path is added).
    pub fn new(info: ServiceInfo, base_url: impl Into<String>) -> Builder<C> {
        Builder {
            info,
            base_url: base_url.into(),
            auth: Auth::None,
            retry: Retry::default(),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            user_agent: concat!("restgen-client/", env!("CARGO_PKG_VERSION")).to_owned(),
            version: None,
            client: PhantomData,
        }
    }

    pub fn auth(mut self, auth: Auth) -> Builder<C> {
        self.auth = auth;
        self
    }

    pub fn retry(mut self, retry: Retry) -> Builder<C> {
        self.retry = retry;
        self
    }

    /// The longest one attempt may take, from sending to the end of the answer (30 s).
    pub fn timeout(mut self, timeout: Duration) -> Builder<C> {
        self.timeout = timeout;
        self
    }

    /// The longest connecting may take (10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Builder<C> {
        self.connect_timeout = timeout;
        self
    }

    /// The API version every call is made in (by path, header or media type, as the
    /// service takes them); without one the service answers in its newest. `build` fails
    /// for a version the service does not serve.
    pub fn version(mut self, version: u32) -> Builder<C> {
        self.version = Some(version);
        self
    }

    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Builder<C> {
        self.user_agent = user_agent.into();
        self
    }

    /// The client (a generated client wraps the transport).
    pub fn build(self) -> Result<C, Error> {
        let origin = self.base_url.trim_end_matches('/').to_owned();
        let url = reqwest::Url::parse(&origin).map_err(|e| Error::Config(format!("base URL `{origin}`: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") || url.query().is_some() {
            return Err(Error::Config(format!("base URL `{origin}` must be an http(s) origin without a query")));
        }
        match (&self.auth, self.info.login_path, self.info.api_key_header) {
            (Auth::Login { .. }, None, _) => return Err(Error::Config("this service has no login operation".into())),
            (Auth::ApiKey(_), _, None) => return Err(Error::Config("this service takes no API keys".into())),
            _ => {}
        }
        // rustls's provider for the process: ring, unless the program chose one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout)
            .user_agent(self.user_agent)
            .build()
            .map_err(|e| Error::Config(e.to_string()))?;
        let root = format!("{origin}{}", self.info.base_path);
        let version = match (self.version, self.info.versions) {
            (None, _) => None,
            (Some(n), Some(v)) => match v.served.iter().find(|(m, _)| *m == n) {
                Some((_, media)) => Some((n, *media, v.by)),
                None => {
                    let served: Vec<String> = v.served.iter().map(|(m, _)| m.to_string()).collect();
                    let served = served.join(", ");
                    return Err(Error::Config(format!("the service serves no version {n}; served: {served}")));
                }
            },
            (Some(_), None) => return Err(Error::Config("this service has no API versions".into())),
        };
        let resources = match version {
            Some((n, _, VersionBy::Path)) => format!("{root}/v{n}"),
            _ => root.clone(),
        };
        let version_header = match version {
            Some((n, _, VersionBy::Header(name))) => Some((name, n.to_string())),
            Some((_, media, VersionBy::MediaType)) => Some(("Accept", media.to_owned())),
            _ => None,
        };
        Ok(C::from(Transport(Arc::new(Inner {
            http,
            origin,
            root,
            resources,
            version_header,
            info: self.info,
            auth: self.auth,
            retry: self.retry,
            session: tokio::sync::Mutex::new(None),
        }))))
    }
}

/// The connection to one service, shared by every call of a client (cheap to clone).
#[derive(Clone, Debug)]
pub struct Transport(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    http: reqwest::Client,
    origin: String,
    root: String,
    /// Where resources live: `root`, or `root/v{n}` when the chosen version is named by path.
    resources: String,
    /// The header that names the chosen version, when it is named by header or media type.
    version_header: Option<(&'static str, String)>,
    info: ServiceInfo,
    auth: Auth,
    retry: Retry,
    session: tokio::sync::Mutex<Option<Session>>,
}

/// The time limit of a lasting answer: none, in effect.
const LASTING: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// One call as the transport sends it, perhaps several times.
pub(crate) struct Call<'a> {
    pub method: Method,
    pub url: String,
    pub query: &'a [(String, String)],
    pub body: Option<(&'static str, Vec<u8>)>,
    /// Sent with an `Idempotency-Key`, the same one on every attempt.
    pub keyed: bool,
    /// Sends the client's credentials.
    pub signed: bool,
    /// Sent as `If-Match`: the write happens only on the record this tag names.
    pub if_match: Option<String>,
    /// Headers of its own (`Accept`, `Last-Event-ID`).
    pub headers: Vec<(&'static str, String)>,
    /// An answer read for as long as it lasts (a change stream): no time limit on it.
    pub lasting: bool,
}

impl Call<'_> {
    /// Whether a call that may have reached the service can be sent again.
    fn repeatable(&self) -> bool {
        self.keyed || matches!(self.method, Method::GET | Method::HEAD | Method::PUT | Method::DELETE | Method::PATCH)
    }
}

/// A list answer: `{"data": [...]}`.
#[derive(serde::Deserialize)]
struct Data<T> {
    data: Vec<T>,
}

impl Transport {
    pub fn info(&self) -> &ServiceInfo {
        &self.0.info
    }

    /// POST `body` to `path` (under the base path) with a new `Idempotency-Key`.
    pub async fn create<I: Serialize + ?Sized, T: DeserializeOwned>(&self, path: &str, body: &I) -> Result<T, Error> {
        let call = self.call(Method::POST, path, Some(json(body, http::media::JSON)?), true);
        self.json(&call).await
    }

    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        self.json(&self.call(Method::GET, path, None, false)).await
    }

    /// PUT: the body replaces the record.
    pub async fn replace<I: Serialize + ?Sized, T: DeserializeOwned>(&self, path: &str, body: &I) -> Result<T, Error> {
        let call = self.call(Method::PUT, path, Some(json(body, http::media::JSON)?), false);
        self.json(&call).await
    }

    /// PATCH as a JSON Merge Patch (RFC 7396).
    pub async fn patch<I: Serialize + ?Sized, T: DeserializeOwned>(&self, path: &str, body: &I) -> Result<T, Error> {
        let call = self.call(Method::PATCH, path, Some(json(body, http::media::MERGE_PATCH)?), false);
        self.json(&call).await
    }

    pub async fn delete(&self, path: &str) -> Result<(), Error> {
        self.send(&self.call(Method::DELETE, path, None, false)).await.map(drop)
    }

    /// GET with the answer's `ETag`, to send back in a conditional write.
    pub async fn get_tagged<T: DeserializeOwned>(&self, path: &str) -> Result<Tagged<T>, Error> {
        self.tagged(&self.call(Method::GET, path, None, false)).await
    }

    /// PUT only if the record is still the one `etag` names (`If-Match`): otherwise
    /// [`Error::Changed`], with the record's current tag.
    pub async fn replace_if<I: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        etag: &str,
        body: &I,
    ) -> Result<Tagged<T>, Error> {
        let mut call = self.call(Method::PUT, path, Some(json(body, http::media::JSON)?), false);
        call.if_match = Some(etag.to_owned());
        self.tagged(&call).await
    }

    /// PATCH (JSON Merge Patch) only if the record is still the one `etag` names.
    pub async fn patch_if<I: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        etag: &str,
        body: &I,
    ) -> Result<Tagged<T>, Error> {
        let mut call = self.call(Method::PATCH, path, Some(json(body, http::media::MERGE_PATCH)?), false);
        call.if_match = Some(etag.to_owned());
        self.tagged(&call).await
    }

    /// DELETE only if the record is still the one `etag` names.
    pub async fn delete_if(&self, path: &str, etag: &str) -> Result<(), Error> {
        let mut call = self.call(Method::DELETE, path, None, false);
        call.if_match = Some(etag.to_owned());
        self.send(&call).await.map(drop)
    }

    /// POST a transition (`{item}/{name}`), which takes no input, with a new
    /// `Idempotency-Key` (the same on every retry): the record as it now stands.
    pub async fn transition<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        self.json(&self.call(Method::POST, path, None, true)).await
    }

    /// A transition only if the record is still the one `etag` names.
    pub async fn transition_if<T: DeserializeOwned>(&self, path: &str, etag: &str) -> Result<Tagged<T>, Error> {
        let mut call = self.call(Method::POST, path, None, true);
        call.if_match = Some(etag.to_owned());
        self.tagged(&call).await
    }

    /// Logs in with `identifier` and `password` and returns the token (a client built
    /// with [`Auth::Login`] does this itself).
    pub async fn login(&self, identifier: &str, password: &str) -> Result<Token, Error> {
        let path = self.0.info.login_path.ok_or_else(|| Error::Config("this service has no login operation".into()))?;
        let mut body = serde_json::Map::new();
        body.insert(self.0.info.login_identifier.to_owned(), identifier.into());
        body.insert("password".to_owned(), password.into());
        let mut call = self.call(Method::POST, path, Some(json(&body, http::media::JSON)?), false);
        call.signed = false;
        self.json(&call).await
    }

    pub async fn create_api_key(&self, name: Option<&str>) -> Result<ApiKeyCreated, Error> {
        let body = serde_json::json!({ "name": name });
        self.json(&self.call(Method::POST, "/auth/api-keys", Some(json(&body, http::media::JSON)?), false)).await
    }

    pub async fn list_api_keys(&self) -> Result<Vec<ApiKey>, Error> {
        #[derive(serde::Deserialize)]
        struct Keys {
            data: Vec<ApiKey>,
        }
        self.get::<Keys>("/auth/api-keys").await.map(|k| k.data)
    }

    pub async fn revoke_api_key(&self, id: &str) -> Result<(), Error> {
        self.delete(&format!("/auth/api-keys/{}", segment(id))).await
    }

    /// Subscribes to events (`POST /webhooks`).
    pub async fn create_webhook(&self, webhook: &crate::NewWebhook) -> Result<crate::WebhookWithSecret, Error> {
        self.json(&self.call(Method::POST, "/webhooks", Some(json(webhook, http::media::JSON)?), false)).await
    }

    pub async fn list_webhooks(&self) -> Result<Vec<crate::Webhook>, Error> {
        self.get::<Data<crate::Webhook>>("/webhooks").await.map(|d| d.data)
    }

    pub async fn get_webhook(&self, id: &str) -> Result<crate::WebhookWithSecret, Error> {
        self.get(&format!("/webhooks/{}", segment(id))).await
    }

    pub async fn update_webhook(&self, id: &str, changes: &crate::WebhookChanges) -> Result<crate::Webhook, Error> {
        self.patch(&format!("/webhooks/{}", segment(id)), changes).await
    }

    pub async fn delete_webhook(&self, id: &str) -> Result<(), Error> {
        self.delete(&format!("/webhooks/{}", segment(id))).await
    }

    pub async fn list_webhook_deliveries(&self, id: &str) -> Result<Vec<crate::Delivery>, Error> {
        self.get::<Data<crate::Delivery>>(&format!("/webhooks/{}/deliveries", segment(id))).await.map(|d| d.data)
    }

    pub async fn resend_webhook_delivery(&self, id: &str, delivery: &str) -> Result<crate::Delivery, Error> {
        let path = format!("/webhooks/{}/deliveries/{}/resend", segment(id), segment(delivery));
        self.json(&self.call(Method::POST, &path, None, false)).await
    }

    /// `GET /healthz` (at the origin, not under the base path): `Ok` when the service
    /// process answers (liveness; the database is not asked).
    pub async fn healthz(&self) -> Result<(), Error> {
        self.probe("/healthz").await
    }

    /// `GET /readyz` (at the origin): `Ok` when the service and its database answer
    /// (readiness); [`Error::Api`] with status 503 when the database does not.
    pub async fn readyz(&self) -> Result<(), Error> {
        self.probe("/readyz").await
    }

    async fn probe(&self, path: &str) -> Result<(), Error> {
        let call = Call {
            method: Method::GET,
            url: format!("{}{path}", self.0.origin),
            query: &[],
            body: None,
            keyed: false,
            signed: false,
            if_match: None,
            headers: Vec::new(),
            lasting: false,
        };
        self.send(&call).await.map(drop)
    }

    pub(crate) fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<(&'static str, Vec<u8>)>,
        keyed: bool,
    ) -> Call<'static> {
        // Logging in and API keys never change with versions; resources do.
        let unversioned =
            Some(path) == self.0.info.login_path || path.starts_with("/auth/api-keys") || path.starts_with("/webhooks");
        let root = if unversioned { &self.0.root } else { &self.0.resources };
        Call {
            method,
            url: format!("{root}{path}"),
            query: &[],
            body,
            keyed,
            signed: true,
            if_match: None,
            headers: Vec::new(),
            lasting: false,
        }
    }

    async fn tagged<T: DeserializeOwned>(&self, call: &Call<'_>) -> Result<Tagged<T>, Error> {
        let response = self.send(call).await?;
        let status = response.status().as_u16();
        let etag = response.headers().get(ETAG).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let etag = etag.ok_or_else(|| Error::Decode { status, message: "the answer has no `ETag`".into() })?;
        let bytes = response.bytes().await.map_err(Error::from_reqwest)?;
        let value = serde_json::from_slice(&bytes).map_err(|e| Error::Decode { status, message: e.to_string() })?;
        Ok(Tagged { value, etag })
    }

    pub(crate) async fn json<T: DeserializeOwned>(&self, call: &Call<'_>) -> Result<T, Error> {
        let response = self.send(call).await?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.map_err(Error::from_reqwest)?;
        serde_json::from_slice(&bytes).map_err(|e| Error::Decode { status, message: e.to_string() })
    }

    /// Sends `call` until it succeeds, fails for good, or runs out of retries.
    pub(crate) async fn send(&self, call: &Call<'_>) -> Result<reqwest::Response, Error> {
        let retry = &self.0.retry;
        let key = call.keyed.then(idempotency_key);
        let mut relogged = false;
        let mut attempt = 0;
        loop {
            let mut request = self.0.http.request(call.method.clone(), &call.url);
            if !call.query.is_empty() {
                request = request.query(call.query);
            }
            if let Some((media, bytes)) = &call.body {
                request = request.header(CONTENT_TYPE, *media).body(bytes.clone());
            }
            if let Some(key) = &key {
                request = request.header(http::IDEMPOTENCY_KEY.name, key);
            }
            if let Some(tag) = &call.if_match {
                request = request.header(IF_MATCH, tag);
            }
            for (name, value) in &call.headers {
                request = request.header(*name, value);
            }
            if call.lasting {
                // The client's timeout bounds a whole answer; a stream's silence is
                // watched by its reader instead.
                request = request.timeout(LASTING);
            }
            if let Some((name, value)) = &self.0.version_header {
                request = request.header(*name, value);
            }
            if call.signed
                && let Some((name, value)) = self.credentials().await?
            {
                request = request.header(name, value);
            }
            let wait = match request.send().await {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status();
                    let asked = retry_after(response.headers(), SystemTime::now());
                    if status == StatusCode::UNAUTHORIZED && call.signed && !relogged && self.drop_session().await {
                        // The token was refused before it should have expired: log in again, once.
                        relogged = true;
                        continue;
                    }
                    // A keyed create answered 409 with `Retry-After`: the first attempt with
                    // this key still runs (a taken unique value is a 409 without one).
                    let running = status == StatusCode::CONFLICT && key.is_some() && asked.is_some();
                    let busy =
                        running || matches!(status, StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE);
                    let wait = asked.unwrap_or_else(|| retry.backoff(attempt));
                    if !busy || attempt >= retry.max_retries || wait > retry.max_retry_after {
                        let header =
                            |name| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
                        let etag = header(ETAG.as_str());
                        let id = header(http::REQUEST_ID.lowercase);
                        let bytes = response.bytes().await.unwrap_or_default();
                        let mut problem = Problem::from_answer(status.as_u16(), &bytes, asked);
                        problem.etag = etag;
                        // This answer's own (a replay's body names the first request's; a
                        // proxy's error page has no body to carry one).
                        problem.request_id = id.or(problem.request_id);
                        return Err(Error::from_problem(problem));
                    }
                    wait
                }
                // Not connected: the service never saw the call, so any call may go again.
                // Anything later: only calls that are safe to repeat.
                Err(e) if attempt < retry.max_retries && (e.is_connect() || call.repeatable()) && !e.is_builder() => {
                    retry.backoff(attempt)
                }
                Err(e) => return Err(Error::from_reqwest(e)),
            };
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// The header that proves who the client is, logging in first when needed.
    async fn credentials(&self) -> Result<Option<(HeaderName, HeaderValue)>, Error> {
        let header = |name: HeaderName, value: String| {
            HeaderValue::from_str(&value)
                .map(|mut v| {
                    v.set_sensitive(true);
                    Some((name, v))
                })
                .map_err(|_| Error::Config("credentials must be visible ASCII".into()))
        };
        match &self.0.auth {
            Auth::None => Ok(None),
            Auth::Bearer(token) => header(AUTHORIZATION, format!("Bearer {token}")),
            Auth::Basic { username, password } => header(AUTHORIZATION, Auth::basic_header(username, password)),
            Auth::ApiKey(key) => {
                let name = self.0.info.api_key_header.unwrap_or("X-API-Key");
                let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| Error::Config(e.to_string()))?;
                header(name, key.clone())
            }
            Auth::Login { identifier, password } => {
                // One login at a time: concurrent calls wait for the same token.
                let mut session = self.0.session.lock().await;
                let now = Instant::now();
                let token = match session.as_ref().filter(|s| s.fresh(now)) {
                    Some(s) => s.token.clone(),
                    None => {
                        let t = Box::pin(self.login(identifier, password)).await?;
                        *session = Some(Session::new(t.access_token.clone(), t.expires_in, now));
                        t.access_token
                    }
                };
                header(AUTHORIZATION, format!("Bearer {token}"))
            }
        }
    }

    /// Forgets the logged-in session, so the next call logs in again (a stream whose token
    /// expired).
    pub(crate) async fn forget_session(&self) {
        self.drop_session().await;
    }

    /// Forgets the logged-in session; false when there was none to forget.
    async fn drop_session(&self) -> bool {
        matches!(self.0.auth, Auth::Login { .. }) && self.0.session.lock().await.take().is_some()
    }
}

fn json<T: Serialize + ?Sized>(body: &T, media: &'static str) -> Result<(&'static str, Vec<u8>), Error> {
    serde_json::to_vec(body).map(|b| (media, b)).map_err(|e| Error::Config(format!("cannot encode the body: {e}")))
}

/// A fresh random key (a version 4 UUID), so a retried create is applied at most once.
fn idempotency_key() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system provides random numbers");
    uuid::Builder::from_random_bytes(bytes).into_uuid().to_string()
}

/// `value` as one path segment: percent-encoded where it must be.
pub(crate) fn segment(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect::<String>().replace('+', "%20")
}

#[cfg(test)]
mod redaction {
    /// A login's token and a new API key show as `***` when printed for debugging.
    #[test]
    fn tokens_and_new_keys_show_no_secret() {
        let token = super::Token { access_token: "eyJ.s3cret".into(), token_type: "Bearer".into(), expires_in: 900 };
        let shown = format!("{token:?}");
        assert!(shown.contains("***") && !shown.contains("s3cret") && shown.contains("Bearer"), "{shown}");
        let key = super::ApiKeyCreated {
            id: "k1".into(),
            name: None,
            prefix: "rk_abcd".into(),
            created_at: "2026-11-28T00:00:00Z".into(),
            key: "rk_abcd_s3cret".into(),
        };
        let shown = format!("{key:?}");
        assert!(shown.contains("***") && !shown.contains("s3cret") && shown.contains("rk_abcd"), "{shown}");
    }
}
