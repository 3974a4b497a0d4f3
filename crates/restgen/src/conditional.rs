//! Representations and conditional requests (RFC 9110 §8.8.3, §13): every answer that
//! carries a record or a page has a strong `ETag` computed from its bytes, and a `GET`
//! or `HEAD` whose `If-None-Match` names the current one gets `304 Not Modified` without
//! a body. Reads carry the resource's `Cache-Control` either way.

use crate::problem::{FieldError, Problem};
use crate::spec::ResourceSpec;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use regex::Regex;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::sync::LazyLock;

/// The longest `If-None-Match` taken (the OpenAPI document states the same): room for
/// dozens of tags, far less than a header flood.
pub const MAX_IF_NONE_MATCH: usize = restgen_model::bounds::MAX_IF_NONE_MATCH;

/// Bytes of SHA-256 an ETag keeps: 128 bits, 22 characters of base64url.
const TAG_BYTES: usize = 16;

/// `"<base64url of the first 128 bits of SHA-256>"`: equal bytes, equal tag, so it is
/// strong, and the same for every caller who sees the same representation.
fn etag(bytes: &[u8]) -> HeaderValue {
    let digest = Sha256::digest(bytes);
    let tag = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..TAG_BYTES]);
    HeaderValue::from_str(&format!("\"{tag}\"")).expect("base64url is a valid header value")
}

/// `body` as JSON with its `ETag`: what a create, replace or patch answers.
pub(crate) fn tagged(status: StatusCode, body: &impl Serialize) -> Response {
    let bytes = match serde_json::to_vec(body) {
        Ok(b) => b,
        Err(_) => return Problem::internal().into_response(),
    };
    let tag = etag(&bytes);
    let mut response = (status, bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::ETAG, tag);
    response
}

/// A read's answer: `body` as JSON with its `ETag`, the resource's `Cache-Control` and
/// `extra` headers (`Link`), or 304 with the same headers and no body when the request's
/// `If-None-Match` names the tag.
pub(crate) fn read(
    spec: &ResourceSpec,
    request: &HeaderMap,
    body: &impl Serialize,
    extra: HeaderMap,
) -> Result<Response, Problem> {
    let mut response = tagged(StatusCode::OK, body);
    let tag = response.headers().get(header::ETAG).cloned();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(spec.cache_control));
    headers.extend(extra);
    let matched = match (if_none_match(request)?, tag) {
        (Some(Tags::Any), Some(_)) => true,
        (Some(Tags::List(tags)), Some(tag)) => tags.iter().any(|t| weakly_equal(t, tag.as_bytes())),
        _ => false,
    };
    if !matched {
        return Ok(response);
    }
    let (mut parts, _) = response.into_parts();
    parts.status = StatusCode::NOT_MODIFIED;
    parts.headers.remove(header::CONTENT_TYPE);
    parts.headers.remove(header::CONTENT_LENGTH);
    Ok(Response::from_parts(parts, axum::body::Body::empty()))
}

enum Tags {
    Any,
    List(Vec<String>),
}

/// The shape of a well-formed `If-None-Match`: `*`, or a comma-separated list of entity
/// tags, each optionally weak (`W/"..."`).
const IF_NONE_MATCH_PATTERN: &str = r#"^(\*|(W/)?"[^"]*"(\s*,\s*(W/)?"[^"]*")*)$"#;

static IF_NONE_MATCH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(IF_NONE_MATCH_PATTERN).expect("the If-None-Match pattern compiles"));
static OPAQUE_TAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#""[^"]*""#).expect("compiles"));

/// The request's `If-None-Match`, its lines joined as one list. A value that is not `*`
/// or a list of entity tags names no representation, so it is ignored and the caller
/// gets the full answer (RFC 9110 lets a server ignore a condition it cannot parse, and
/// ignoring can never wrongly answer 304); one longer than the documented bound is a 400.
fn if_none_match(request: &HeaderMap) -> Result<Option<Tags>, Problem> {
    let lines: Vec<&HeaderValue> = request.get_all(header::IF_NONE_MATCH).iter().collect();
    let total: usize = lines.iter().map(|v| v.len()).sum::<usize>() + 2 * lines.len().saturating_sub(1);
    if total > MAX_IF_NONE_MATCH {
        return Err(Problem::validation(vec![FieldError {
            field: "If-None-Match".into(),
            message: format!("is longer than {MAX_IF_NONE_MATCH} characters"),
        }]));
    }
    let Ok(texts) = lines.iter().map(|v| v.to_str()).collect::<Result<Vec<_>, _>>() else { return Ok(None) };
    let value = texts.join(", ");
    if lines.is_empty() || !IF_NONE_MATCH.is_match(&value) {
        return Ok(None);
    }
    if value == "*" {
        return Ok(Some(Tags::Any));
    }
    Ok(Some(Tags::List(OPAQUE_TAG.find_iter(&value).map(|m| m.as_str().to_owned()).collect())))
}

/// Weak comparison (RFC 9110 §8.8.3.2), which `If-None-Match` uses: the opaque tags are
/// equal, whether or not either is weak.
fn weakly_equal(given: &str, current: &[u8]) -> bool {
    let current = current.strip_prefix(b"W/").unwrap_or(current);
    given.as_bytes() == current
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(values: &[&'static str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::IF_NONE_MATCH, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn equal_bytes_have_equal_tags_and_any_change_changes_the_tag() {
        assert_eq!(etag(b"{\"a\":1}"), etag(b"{\"a\":1}"));
        assert_ne!(etag(b"{\"a\":1}"), etag(b"{\"a\":2}"));
        assert_eq!(etag(b"x").len(), 24);
    }

    #[test]
    fn if_none_match_is_a_list_of_tags_or_a_star_and_anything_else_names_no_tag() {
        assert!(matches!(if_none_match(&HeaderMap::new()), Ok(None)));
        assert!(matches!(if_none_match(&request(&["*"])), Ok(Some(Tags::Any))));
        let Ok(Some(Tags::List(tags))) = if_none_match(&request(&["\"a\", W/\"b\"", "\"c\""])) else { panic!() };
        assert_eq!(tags, ["\"a\"", "\"b\"", "\"c\""]);
        for malformed in ["abc", "\"a", "W/abc", "\"a\"b\"", " , ", "\"a\",", "*, \"a\"", "", "0"] {
            assert!(matches!(if_none_match(&request(&[malformed])), Ok(None)), "{malformed} names no tag");
        }
        let long = HeaderValue::from_str(&format!("\"{}\"", "a".repeat(MAX_IF_NONE_MATCH))).unwrap();
        let mut h = HeaderMap::new();
        h.insert(header::IF_NONE_MATCH, long);
        assert_eq!(if_none_match(&h).err().expect("too long").errors[0].field, "If-None-Match");
    }

    #[test]
    fn weak_comparison_ignores_the_weak_marker() {
        assert!(weakly_equal("\"a\"", b"\"a\""));
        assert!(weakly_equal("\"a\"", b"W/\"a\""));
        assert!(!weakly_equal("\"a\"", b"\"b\""));
    }
}
