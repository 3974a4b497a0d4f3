//! `auth`: schemes, the principal resource, tokens, API keys and roles.

use crate::origin::{Located, Origin};
use crate::words::words;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Auth {
    pub schemes: Vec<Located<Scheme>>,
    /// The resource that holds accounts.
    pub principal: Option<Located<String>>,
    pub login: Login,
    pub jwt: Jwt,
    pub api_key: ApiKey,
    pub roles: Vec<Located<String>>,
    pub default_role: Option<Located<String>>,
    /// Roles that see and change every record.
    pub admin_roles: Vec<Located<String>>,
    #[serde(skip)]
    pub origin: Origin,
}

impl Auth {
    pub fn has_scheme(&self, scheme: Scheme) -> bool {
        self.schemes.iter().any(|s| s.value == scheme)
    }

    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r.value == role)
    }
}

words! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
    pub enum Scheme {
        Bearer = "bearer",
        ApiKey = "api_key",
        Basic = "basic",
    }
}

impl Scheme {
    /// What a service signs callers in with when `schemes` is not given.
    pub const DEFAULT: Scheme = Scheme::Bearer;
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Login {
    pub path: Located<String>,
    /// Field of the principal that identifies an account (`email`).
    pub identifier: Option<Located<String>>,
    #[serde(skip)]
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Jwt {
    pub algorithm: Located<JwtAlgorithm>,
    /// HS256: environment variable holding the shared secret.
    pub secret_env: Located<String>,
    /// RS256/ES256: environment variable holding the path of the PEM private key.
    pub private_key_env: Option<Located<String>>,
    /// RS256/ES256: environment variable holding the path of the PEM public key.
    pub public_key_env: Option<Located<String>>,
    pub ttl: Located<Duration>,
    pub issuer: Option<String>,
    pub audience: Option<String>,
    #[serde(skip)]
    pub origin: Origin,
}

words! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub enum JwtAlgorithm {
        Hs256 = "HS256",
        Rs256 = "RS256",
        Es256 = "ES256",
    }
}

impl JwtAlgorithm {
    pub const DEFAULT: JwtAlgorithm = JwtAlgorithm::Hs256;
}

impl Login {
    pub const PATH: &'static str = "/auth/login";
}

impl Jwt {
    pub const TTL: Duration = Duration::from_secs(15 * 60);
}

impl ApiKey {
    pub const HEADER: &'static str = "X-API-Key";
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ApiKey {
    pub header: Located<String>,
    pub query: Option<Located<String>>,
    #[serde(skip)]
    pub origin: Origin,
}
