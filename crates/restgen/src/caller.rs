//! Who is calling: the request's caller as authentication found it (anonymous, or a
//! verified account with its roles), and the 401 that asks for credentials.

use crate::problem::Problem;
use crate::spec::{AuthSpec, IdKind, Scheme};
use crate::store::SqlValue;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};

/// Who is calling: anonymous, or a verified principal.
#[derive(Clone, Debug, Default)]
pub struct Caller {
    pub principal: Option<Principal>,
    /// The service's auth settings, for the challenges of a 401.
    pub(crate) auth: Option<&'static AuthSpec>,
}

/// A verified account.
#[derive(Clone, Debug)]
pub struct Principal {
    /// The id of the principal's record, as text.
    pub id: String,
    pub roles: Vec<String>,
    /// Holds one of `admin_roles`: sees and changes every record.
    pub admin: bool,
    /// The id of the API key the request was signed with, when it was one.
    pub api_key: Option<String>,
    /// When the bearer token the request carried expires (Unix seconds): what an answer
    /// that lasts (a change feed) ends at. `None` for other credentials.
    pub expires_at: Option<u64>,
}

impl Caller {
    pub fn is_authenticated(&self) -> bool {
        self.principal.is_some()
    }

    pub fn id(&self) -> Option<&str> {
        self.principal.as_ref().map(|p| p.id.as_str())
    }

    pub fn is_admin(&self) -> bool {
        self.principal.as_ref().is_some_and(|p| p.admin)
    }

    pub fn has_role(&self, role: &str) -> bool {
        self.principal.as_ref().is_some_and(|p| p.roles.iter().any(|r| r == role))
    }

    /// The roles accounts may hold, as the service declares them.
    pub(crate) fn declared_roles(&self) -> &'static [&'static str] {
        self.auth.map_or(&[], |a| a.roles)
    }

    /// The caller's id as a value of an owner column of `kind`.
    pub fn id_value(&self, kind: IdKind) -> Option<SqlValue> {
        SqlValue::id(kind, self.id()?)
    }

    /// 401 with the challenges of this service's schemes.
    pub fn unauthorized(&self) -> Problem {
        unauthorized(self.auth, None)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.extensions.get::<Caller>().cloned().unwrap_or_default())
    }
}

/// 401 for valid credentials of an account deleted since they were issued (a bearer
/// token outlives its account until it expires).
pub(crate) fn account_gone(caller: &Caller) -> Problem {
    let mut p = unauthorized(caller.auth, Some("invalid_token"));
    p.detail = "the account these credentials belong to no longer exists".into();
    p
}

/// 401 for a bearer token past its expiry that verification's leeway still admitted, where
/// an answer would last beyond it (a change stream).
pub(crate) fn token_expired(caller: &Caller) -> Problem {
    let mut p = unauthorized(caller.auth, Some("invalid_token"));
    p.detail = "the token has expired".into();
    p
}

/// 401 with a `WWW-Authenticate` challenge for each scheme the service accepts.
pub(crate) fn unauthorized(spec: Option<&AuthSpec>, error: Option<&str>) -> Problem {
    let realm = spec.map_or("api", |s| s.realm);
    let mut challenges = Vec::new();
    let schemes = spec.map_or(&[Scheme::Bearer][..], |s| s.schemes);
    if schemes.contains(&Scheme::Bearer) {
        challenges.push(match error {
            Some(e) => format!("Bearer realm=\"{realm}\", error=\"{e}\""),
            None => format!("Bearer realm=\"{realm}\""),
        });
    }
    if schemes.contains(&Scheme::Basic) {
        challenges.push(format!("Basic realm=\"{realm}\", charset=\"UTF-8\""));
    }
    if schemes.contains(&Scheme::ApiKey) {
        let header = spec.map_or("X-API-Key", |s| s.api_key.header);
        challenges.push(format!("ApiKey realm=\"{realm}\", header=\"{header}\""));
    }
    let value = HeaderValue::from_str(&challenges.join(", ")).unwrap_or(HeaderValue::from_static("Bearer"));
    Problem::new(axum::http::StatusCode::UNAUTHORIZED, "this operation needs credentials")
        .with_header(header::WWW_AUTHENTICATE, value)
}
