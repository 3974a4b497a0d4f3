//! API versions served side by side from one store. Before routing, every request to a
//! resource is given the version it names — by path (`{base}/v{n}/...`, which is then
//! routed as the unprefixed path), by `X-API-Version`, or by media type (`Accept:
//! application/vnd.{vendor}.v{n}+json`), the newest when it names none — and every
//! answer in a deprecated version says so (`Deprecation`, `Sunset`, `Link` to the
//! successor), errors and 304s included. Handlers read the version as a [`View`].

use crate::clock::Clock;
use crate::problem::{FieldError, Problem};
use crate::spec::{FieldSpec, Gate, ResourceSpec, VersionSpec, VersioningSpec};
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use mediatype::MediaTypeList;
use restgen_model::model::version_of_media_type;
use restgen_wire::http;
use std::convert::Infallible;
use std::sync::Arc;

/// The header that names a version (`versioning: [header]`).
pub use restgen_model::model::VERSION_HEADER as HEADER;

/// The version a request is answered in, and whether it named it by media type (then its
/// JSON answers carry that type).
#[derive(Clone, Copy, Debug)]
pub struct View {
    pub version: Option<&'static VersionSpec>,
    pub by_media: bool,
    /// The request named its version by path (`/api/v1/...`).
    pub by_path: bool,
}

impl View {
    /// A service without versions.
    pub const NONE: View = View { version: None, by_media: false, by_path: false };

    pub fn number(&self) -> Option<u32> {
        self.version.map(|v| v.number)
    }

    /// Whether the version has what `gate` gates.
    pub fn has(&self, gate: &Gate) -> bool {
        gate.includes(self.number())
    }

    /// Whether a representation in this version shows `field`: not where it is
    /// write-only, nor where the version lacks it.
    pub fn shows(&self, field: &FieldSpec) -> bool {
        !field.write_only && self.has(&field.gate)
    }

    /// `Content-Type` of a JSON answer: the version's media type when the request named
    /// it so, else `application/json`.
    pub fn json_type(&self) -> &'static str {
        match self.version {
            Some(v) if self.by_media => v.media_type,
            _ => http::media::JSON,
        }
    }

    /// Who a resource is to this version: 404 where the version does not have it.
    pub fn admits(&self, spec: &ResourceSpec) -> Result<(), Problem> {
        if self.has(&spec.gate) {
            return Ok(());
        }
        let n = self.number().unwrap_or_default();
        Err(Problem::not_found(format!("version {n} of the API has no `{}`", spec.path.trim_start_matches('/'))))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for View {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<View, Infallible> {
        Ok(parts.extensions.get::<View>().copied().unwrap_or(View::NONE))
    }
}

/// What the version middleware needs: the versions, where resources live, the clock.
pub(crate) struct Versions {
    pub spec: &'static VersioningSpec,
    pub base: &'static str,
    /// The collection paths of every resource, current and former: what lives under a
    /// version prefix (auth endpoints, `/openapi.json` and the probes do not).
    pub roots: Vec<&'static str>,
    pub clock: Clock,
}

impl Versions {
    /// Whether `path` (below the base path) is a resource's.
    fn is_resource(&self, path: &str) -> bool {
        self.roots
            .iter()
            .any(|root| path.strip_prefix(root).is_some_and(|rest| rest.is_empty() || rest.starts_with('/')))
    }
}

/// Gives the request its version (or answers why it has none), routes a path-versioned
/// one as its unprefixed path, and marks the answer of a deprecated version.
pub(crate) async fn resolve(versions: Arc<Versions>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let Some(below) = path.strip_prefix(versions.base) else { return next.run(request).await };
    let (by_path, rest) = match versions.spec.path.then(|| prefix(below)).flatten() {
        Some((n, rest)) => (Some(n), rest),
        None => (None, below),
    };
    if !versions.is_resource(rest) {
        return next.run(request).await;
    }
    let rest = rest.to_owned();
    let view = match choose(&versions, by_path, request.headers()) {
        Ok(view) => view,
        Err(problem) => return problem.into_response(),
    };
    let version = view.version.expect("a versioned service has a newest version");
    let mut marks = HeaderMap::new();
    mark(&versions, version, &rest, &mut marks);
    if let Some(sunset) = version.sunset
        && versions.clock.now() / 1_000_000 >= sunset
    {
        let successor =
            versions.spec.successor(version.number).map_or(String::new(), |s| format!("; use version {}", s.number));
        let mut gone = Problem::new(
            StatusCode::GONE,
            format!("version {} of the API reached its sunset on {}{successor}", version.number, http_date(sunset)),
        )
        .into_response();
        gone.headers_mut().extend(marks);
        return gone;
    }
    if by_path.is_some() {
        let query = request.uri().query().map_or(String::new(), |q| format!("?{q}"));
        if let Ok(uri) = format!("{}{rest}{query}", versions.base).parse::<Uri>() {
            // What the caller asked for, for links and `Location` (the router keeps the
            // first it is given).
            let asked = axum::extract::OriginalUri(std::mem::replace(request.uri_mut(), uri));
            request.extensions_mut().insert(asked);
        }
    }
    request.extensions_mut().insert(view);
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in &marks {
        // A read that negotiated its format already varies by `Accept`.
        if name == header::VARY && headers.get_all(header::VARY).iter().any(|v| v == value) {
            continue;
        }
        headers.append(name, value.clone());
    }
    response
}

/// `/v2/orders` -> `(2, "/orders")`; `None` where the path names no version (`/v02`,
/// `/vx`, `/orders`).
fn prefix(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix("/v")?;
    let end = rest.find('/').unwrap_or(rest.len());
    let digits = &rest[..end];
    let canonical = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && !digits.starts_with('0');
    canonical.then(|| (digits, &rest[end..]))
}

/// The version the request names by each scheme it uses; they must agree, and a request
/// naming none gets the newest.
fn choose(versions: &Versions, by_path: Option<&str>, headers: &HeaderMap) -> Result<View, Problem> {
    let spec = versions.spec;
    let served = spec.served();
    let mut named: Vec<(&str, u32)> = Vec::new();
    if let Some(text) = by_path {
        match text.parse().ok().and_then(|n| spec.version(n)) {
            Some(v) => named.push(("path", v.number)),
            None => return Err(Problem::not_found(format!("there is no version {text} of the API; served: {served}"))),
        }
    }
    if spec.header {
        let lines: Vec<&HeaderValue> = headers.get_all(HEADER).iter().collect();
        let bad = |message: String| Problem::validation(vec![FieldError { field: HEADER.into(), message }]);
        match lines.as_slice() {
            [] => {}
            [one] => {
                match one.to_str().ok().map(str::trim).and_then(|t| t.parse().ok()).and_then(|n| spec.version(n)) {
                    Some(v) => named.push(("`X-API-Version`", v.number)),
                    None => return Err(bad(format!("names no version served: {served}"))),
                }
            }
            _ => return Err(bad("is given more than once".into())),
        }
    }
    let mut by_media = false;
    if spec.media_type
        && let Some(n) = media_version(versions, headers)?
    {
        named.push(("`Accept`", n));
        by_media = true;
    }
    if let [(a, n), rest @ ..] = named.as_slice()
        && let Some((b, m)) = rest.iter().find(|(_, m)| m != n)
    {
        return Err(Problem::bad_request(format!(
            "the request names version {n} in its {a} and version {m} in its {b}: name one"
        )));
    }
    let version = match named.first() {
        Some((_, n)) => spec.version(*n),
        None => spec.newest(),
    };
    Ok(View { version, by_media, by_path: by_path.is_some() })
}

/// The version `Accept` names by media type: that of the heaviest of the vendor's types
/// naming a served version (the newest on a tie). One that names only the vendor's types,
/// none of them served, is a 406 listing those that are.
fn media_version(versions: &Versions, headers: &HeaderMap) -> Result<Option<u32>, Problem> {
    let mut best: Option<(u16, u32)> = None;
    let (mut members, mut vendor_members) = (0, 0);
    for line in headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()) {
        for range in MediaTypeList::new(line).flatten() {
            members += 1;
            let essence = match &range.suffix {
                Some(suffix) => format!("{}/{}+{}", range.ty, range.subty, suffix),
                None => format!("{}/{}", range.ty, range.subty),
            };
            let Some(n) = version_of_media_type(versions.spec.vendor, &essence) else { continue };
            vendor_members += 1;
            let q = crate::accept::weight_of(&range).unwrap_or(0);
            let Some(v) = versions.spec.version(n) else { continue };
            if q > 0 && best.is_none_or(|(bq, bn)| q > bq || (q == bq && v.number > bn)) {
                best = Some((q, v.number));
            }
        }
    }
    if best.is_none() && vendor_members > 0 && vendor_members == members {
        let types: Vec<&str> = versions.spec.versions.iter().map(|v| v.media_type).collect();
        return Err(Problem::new(
            StatusCode::NOT_ACCEPTABLE,
            format!("`Accept` names no version served; the versions' types are {}", types.join(", ")),
        ));
    }
    Ok(best.map(|(_, n)| n))
}

/// The headers every answer in `version` carries: `Deprecation` and `Sunset` where it has
/// them, with a `Link` to its successor; and `Vary` on the headers that name a version.
fn mark(versions: &Versions, version: &VersionSpec, rest: &str, out: &mut HeaderMap) {
    if versions.spec.header {
        out.append(header::VARY, HeaderValue::from_static("x-api-version"));
    }
    if versions.spec.media_type {
        out.append(header::VARY, HeaderValue::from_static("accept"));
    }
    if let Some(at) = version.deprecated
        && let Ok(v) = HeaderValue::from_str(&format!("@{at}"))
    {
        out.insert(http::DEPRECATION.lowercase, v);
    }
    if let Some(at) = version.sunset
        && let Ok(v) = HeaderValue::from_str(&http_date(at))
    {
        out.insert(http::SUNSET.lowercase, v);
    }
    if version.deprecated.is_some() || version.sunset.is_some() {
        // The same place in the successor: under its prefix where paths name versions.
        let successor = versions.spec.successor(version.number).or(versions.spec.newest());
        let target = match successor {
            Some(s) if versions.spec.path => format!("{}/v{}{rest}", versions.base, s.number),
            _ => format!("{}{rest}", versions.base),
        };
        if let Ok(v) = HeaderValue::from_str(&format!("<{target}>; rel=\"successor-version\"")) {
            out.append(header::LINK, v);
        }
    }
}

/// `Tue, 30 Jun 2027 00:00:00 GMT`.
fn http_date(unix_seconds: i64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(u64::try_from(unix_seconds).unwrap_or(0));
    httpdate::fmt_http_date(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_prefix_is_v_and_a_canonical_number() {
        assert_eq!(prefix("/v2/orders"), Some(("2", "/orders")));
        assert_eq!(prefix("/v12"), Some(("12", "")));
        for none in ["/orders", "/v", "/v02/orders", "/vx/orders", "/v2x/orders", "/V2/orders", ""] {
            assert_eq!(prefix(none), None, "{none}");
        }
    }

    #[test]
    fn dates_are_http_dates() {
        assert_eq!(http_date(1_814_313_600), "Wed, 30 Jun 2027 00:00:00 GMT");
    }
}
