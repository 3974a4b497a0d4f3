//! The model: one service, as plain owned data with every default already resolved.
//!
//! Both front-ends (YAML and derive attributes) build this; the checks and emitters only
//! ever see this. Nothing here knows about YAML or `syn`.

mod auth;
mod field;
mod resource;

pub use auth::*;
pub use field::*;
pub use resource::*;

use crate::origin::{Located, Origin};
use crate::words::words;
use std::time::Duration;

/// One HTTP JSON service.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Service {
    /// Crate and binary name, lower snake or kebab case.
    pub name: Located<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub api: Api,
    /// `None`: the service is open, nobody authenticates.
    pub auth: Option<Auth>,
    /// Default limit for every route; resources may override.
    pub rate_limit: Option<RateLimit>,
    /// Default pagination for every resource (already merged into each resource).
    pub pagination: Pagination,
    pub webhooks: Webhooks,
    pub cors: Option<Cors>,
    pub trusted_proxies: Vec<Located<String>>,
    /// The one forwarding header the trusted proxies write (`proxy_header`).
    #[serde(default)]
    pub proxy_header: ProxyHeader,
    pub limits: Limits,
    /// In declaration order.
    pub resources: Vec<Resource>,
    #[serde(skip)]
    pub origin: Origin,
}

impl Service {
    /// The service as version `n` of its API shows it: the resources and fields that
    /// version has, the others gone (what its OpenAPI document describes).
    pub fn at_version(&self, n: u32) -> Service {
        let mut out = self.clone();
        out.resources.retain(|r| r.gate.includes(n));
        let names: Vec<String> = out.resources.iter().map(|r| r.name.value.clone()).collect();
        for r in &mut out.resources {
            r.fields.retain(|f| f.gate.includes(n));
            r.nested_under.retain(|p| names.contains(&p.value));
        }
        out
    }

    pub fn resource(&self, name: &str) -> Option<&Resource> {
        self.resources.iter().find(|r| r.name.value == name)
    }

    /// The resource that holds accounts, when auth declares one.
    pub fn principal(&self) -> Option<&Resource> {
        let name = self.auth.as_ref()?.principal.as_ref()?;
        self.resource(&name.value)
    }

    /// The version numbers served, oldest first.
    pub fn version_numbers(&self) -> impl Iterator<Item = u32> + '_ {
        self.api.versions.iter().map(|v| v.number.value)
    }

    /// Whether any resource publishes events, so webhook endpoints exist.
    pub fn has_events(&self) -> bool {
        self.resources.iter().any(|r| !r.events.is_empty())
    }
}

/// `api`: prefix, versions and how a request picks one.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Api {
    /// `""` for no prefix, else `/segment...` without a trailing slash.
    pub base_path: Located<String>,
    /// Oldest first.
    pub versions: Vec<ApiVersion>,
    pub versioning: Vec<Located<Versioning>>,
    /// For `application/vnd.{vendor}.v{n}+json`.
    pub vendor: String,
    /// The reference page at `/docs` (default on).
    pub docs: bool,
    #[serde(skip)]
    pub origin: Origin,
}

impl Api {
    /// `docs`: the reference page is served unless the schema says otherwise.
    pub const DOCS: bool = true;

    /// The media type of version `n` (`versioning: [media_type]`).
    pub fn media_type(&self, n: u32) -> String {
        version_media_type(&self.vendor, n)
    }
}

/// `application/vnd.{vendor}.v{n}+json`: how a request names version `n` by media type,
/// and the `Content-Type` it is answered with.
pub fn version_media_type(vendor: &str, n: u32) -> String {
    format!("application/vnd.{vendor}.v{n}+json")
}

/// The version a media type names in `vendor`'s form (`application/vnd.shop.v2+json` is
/// 2; case-insensitive, as media types are), whether or not it is served; `None` for any
/// other type.
pub fn version_of_media_type(vendor: &str, media: &str) -> Option<u32> {
    let media = media.to_ascii_lowercase();
    let rest = media.strip_prefix("application/vnd.")?.strip_prefix(&vendor.to_ascii_lowercase())?;
    let digits = rest.strip_prefix(".v")?.strip_suffix("+json")?;
    let canonical = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && !digits.starts_with('0');
    canonical.then(|| digits.parse().ok()).flatten()
}

/// The header that names a version (`versioning: [header]`).
pub const VERSION_HEADER: &str = "X-API-Version";

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ApiVersion {
    pub number: Located<u32>,
    /// Unix seconds from which the version is deprecated (`Deprecation: @<seconds>`).
    pub deprecated: Option<Located<i64>>,
    /// Unix seconds of the sunset (`Sunset: <HTTP date>`).
    pub sunset: Option<Located<i64>>,
    #[serde(skip)]
    pub origin: Origin,
}

words! {
    /// The forwarding header a service's trusted proxies write: only it is read, so a
    /// client cannot add the other one to pick its own address.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub enum ProxyHeader {
        /// `X-Forwarded-For`: the de facto header nginx, HAProxy and the cloud load
        /// balancers append to.
        #[default]
        XForwardedFor = "x-forwarded-for",
        /// `Forwarded` (RFC 7239).
        Forwarded = "forwarded",
    }
}

impl ProxyHeader {
    pub const DEFAULT: ProxyHeader = ProxyHeader::XForwardedFor;
}

words! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
    pub enum Versioning {
        Path = "path",
        Header = "header",
        MediaType = "media_type",
    }
}

/// Request rate limit.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RateLimit {
    pub algorithm: RateAlgorithm,
    pub key: Located<RateKey>,
    #[serde(skip)]
    pub origin: Origin,
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum RateAlgorithm {
    TokenBucket {
        capacity: u32,
        refill_per_second: f64,
    },
    /// A bucket that drains at a constant rate: requests leave one every
    /// `1 / leak_per_second` seconds, up to `capacity` wait their turn, and more are refused.
    LeakyBucket {
        capacity: u32,
        leak_per_second: f64,
    },
    FixedWindow {
        limit: u32,
        window: Duration,
    },
    SlidingWindow {
        limit: u32,
        window: Duration,
    },
}

impl RateAlgorithm {
    pub fn kind(&self) -> RateAlgorithmKind {
        match self {
            RateAlgorithm::TokenBucket { .. } => RateAlgorithmKind::TokenBucket,
            RateAlgorithm::LeakyBucket { .. } => RateAlgorithmKind::LeakyBucket,
            RateAlgorithm::FixedWindow { .. } => RateAlgorithmKind::FixedWindow,
            RateAlgorithm::SlidingWindow { .. } => RateAlgorithmKind::SlidingWindow,
        }
    }
}

words! {
    /// The rate limit algorithms, by name.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub enum RateAlgorithmKind {
        TokenBucket = "token_bucket",
        LeakyBucket = "leaky_bucket",
        FixedWindow = "fixed_window",
        SlidingWindow = "sliding_window",
    }
}

impl RateAlgorithmKind {
    pub const DEFAULT: RateAlgorithmKind = RateAlgorithmKind::TokenBucket;

    /// The keys this algorithm takes, and those of the others.
    pub fn settings(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            RateAlgorithmKind::TokenBucket => {
                (&["capacity", "refill_per_second"], &["leak_per_second", "limit", "window"])
            }
            RateAlgorithmKind::LeakyBucket => {
                (&["capacity", "leak_per_second"], &["refill_per_second", "limit", "window"])
            }
            _ => (&["limit", "window"], &["capacity", "refill_per_second", "leak_per_second"]),
        }
    }
}

words! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub enum RateKey {
        Principal = "principal",
        ApiKey = "api_key",
        Ip = "ip",
    }
}

impl RateKey {
    /// What a limit counts by when the schema says nothing: the account where callers
    /// sign in, else the address.
    pub fn default_for(has_auth: bool) -> RateKey {
        if has_auth { RateKey::Principal } else { RateKey::Ip }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pagination {
    pub style: PageStyle,
    pub default_size: Located<u32>,
    pub max_size: Located<u32>,
    #[serde(skip)]
    pub origin: Origin,
}

/// The paging styles: the wire's one definition, its words the schema's.
pub use restgen_wire::Paging as PageStyle;

impl crate::words::Word for PageStyle {
    const ALL: &'static [Self] = &[PageStyle::Page, PageStyle::Offset, PageStyle::Cursor];
    const WORDS: &'static [&'static str] =
        &[PageStyle::Page.word(), PageStyle::Offset.word(), PageStyle::Cursor.word()];

    fn word(self) -> &'static str {
        PageStyle::word(self)
    }
}

impl Pagination {
    pub const STYLE: PageStyle = PageStyle::Cursor;
    pub const DEFAULT_SIZE: u32 = 20;
    pub const MAX_SIZE: u32 = 100;
}

impl Default for Pagination {
    fn default() -> Self {
        Pagination {
            style: Pagination::STYLE,
            default_size: Located::bare(Pagination::DEFAULT_SIZE),
            max_size: Located::bare(Pagination::MAX_SIZE),
            origin: Origin::Unknown,
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Webhooks {
    /// Environment variable holding the signing secret.
    pub secret_env: Located<String>,
    pub max_attempts: u32,
    pub timeout: Duration,
    #[serde(skip)]
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Cors {
    /// `"*"` alone, or exact origins.
    pub allowed_origins: Vec<Located<String>>,
    pub max_age: Option<Duration>,
    #[serde(skip)]
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    pub max_body_bytes: u64,
    pub request_timeout: Located<Duration>,
    /// Beyond it: 503 with `Retry-After`. `None`: unlimited.
    pub max_in_flight: Option<Located<u32>>,
}

impl Webhooks {
    pub const MAX_ATTEMPTS: u32 = 8;
    pub const TIMEOUT: Duration = Duration::from_secs(5);

    /// The variable a service's signing secret is in when `secret_env` does not say:
    /// `<SERVICE>_WEBHOOK_SECRET`.
    pub fn default_secret_env(service: &str) -> String {
        service_env_name(service, "WEBHOOK_SECRET")
    }

    /// The format's defaults, signed with the secret in `secret_env`.
    pub fn with_defaults(secret_env: String) -> Webhooks {
        Webhooks {
            secret_env: Located::bare(secret_env),
            max_attempts: Webhooks::MAX_ATTEMPTS,
            timeout: Webhooks::TIMEOUT,
            origin: Origin::Unknown,
        }
    }
}

impl Limits {
    pub const MAX_BODY_BYTES: u64 = 1024 * 1024;
    pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: Limits::MAX_BODY_BYTES,
            request_timeout: Located::bare(Limits::REQUEST_TIMEOUT),
            max_in_flight: None,
        }
    }
}

/// The environment variable name derived from the service name: `my-shop` -> `MY_SHOP_<suffix>`.
pub fn service_env_name(service: &str, suffix: &str) -> String {
    format!("{}_{suffix}", service.to_ascii_uppercase().replace('-', "_"))
}

/// How a duration is written: seconds as a number, or a number with a unit.
pub const DURATION_HINT: &str =
    "write seconds as a number, or a number with a unit: `500ms`, `30s`, `15m`, `24h`, `7d`";

/// `30`, `500ms`, `30s`, `15m`, `24h`, `7d`; `None` for anything else.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits.parse().ok()?;
    match unit.trim() {
        "" | "s" => Some(Duration::from_secs(n)),
        "ms" => Some(Duration::from_millis(n)),
        "m" => n.checked_mul(60).map(Duration::from_secs),
        "h" => n.checked_mul(3600).map(Duration::from_secs),
        "d" => n.checked_mul(86400).map(Duration::from_secs),
        _ => None,
    }
}

#[cfg(test)]
mod version_media_type_tests {
    use super::{version_media_type, version_of_media_type};

    #[test]
    fn a_version_media_type_reads_back_as_its_version_and_nothing_else_does() {
        assert_eq!(version_media_type("shop", 2), "application/vnd.shop.v2+json");
        for n in [1, 2, 10] {
            assert_eq!(version_of_media_type("shop", &version_media_type("shop", n)), Some(n));
        }
        assert_eq!(version_of_media_type("shop", "Application/VND.Shop.V3+JSON"), Some(3));
        for other in [
            "application/json",
            "application/vnd.shop.v02+json",
            "application/vnd.shop.v+json",
            "application/vnd.shop.vx+json",
            "application/vnd.shop.v2+xml",
            "application/vnd.shopping.v2+json",
            "application/vnd.other.v2+json",
            "text/vnd.shop.v2+json",
        ] {
            assert_eq!(version_of_media_type("shop", other), None, "{other}");
        }
    }
}
