//! Representations and conditional requests (RFC 9110 §8.8.3, §13): every answer that
//! carries a record or a page has a strong `ETag` computed from its bytes, and a `GET`
//! or `HEAD` whose `If-None-Match` names the current one gets `304 Not Modified` without
//! a body. Reads carry the resource's `Cache-Control` either way. A write whose
//! `If-Match` names no current representation is `412` (and, where the resource requires
//! the condition, a write without one is `428`).

use crate::negotiate;
use crate::problem::{FieldError, Problem};
use crate::spec::{Format, ResourceSpec};
use crate::version::View;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// The longest `If-None-Match` taken (the OpenAPI document states the same): room for
/// dozens of tags, far less than a header flood.
pub const MAX_IF_NONE_MATCH: usize = restgen_model::bounds::MAX_IF_NONE_MATCH;

/// Bytes of SHA-256 an ETag keeps: 128 bits, 22 characters of base64url.
const TAG_BYTES: usize = 16;
/// Characters of the tag's base64url (unpadded) between its quotes.
const TAG_LEN: usize = TAG_BYTES.div_ceil(3) * 4 - (3 - TAG_BYTES % 3) % 3;

/// `"<base64url of the first 128 bits of SHA-256>"`: equal bytes, equal tag, so it is
/// strong, and the same for every caller who sees the same representation. In a service
/// with versions the version and media type are part of what is hashed, so a tag of one
/// version never stands for another's representation, even where their bytes agree.
fn etag(view: &View, content_type: &str, bytes: &[u8]) -> HeaderValue {
    let mut hasher = Sha256::new();
    if let Some(n) = view.number() {
        hasher.update(format!("v{n};{content_type}\n"));
    }
    hasher.update(bytes);
    let digest = hasher.finalize();
    // Quoted and encoded in place: a tag is made for every answer that carries a record.
    let mut quoted = [b'"'; TAG_LEN + 2];
    let written = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode_slice(&digest[..TAG_BYTES], &mut quoted[1..=TAG_LEN])
        .expect("room for the encoded tag");
    debug_assert_eq!(written, TAG_LEN);
    HeaderValue::from_bytes(&quoted).expect("base64url is a valid header value")
}

/// The strong tag of `body` as JSON in `view`: the tag its answer would carry.
pub(crate) fn tag_of(view: &View, body: &impl Serialize) -> Option<HeaderValue> {
    serde_json::to_vec(body).ok().map(|bytes| etag(view, view.json_type(), &bytes))
}

/// `body` as JSON with its `ETag`: what a create, replace or patch answers.
pub(crate) fn tagged(status: StatusCode, view: &View, body: &impl Serialize) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => with_tag(status, view, bytes, view.json_type()),
        Err(_) => Problem::internal().into_response(),
    }
}

/// `bytes` as `content_type` with their `ETag`.
fn with_tag(status: StatusCode, view: &View, bytes: Vec<u8>, content_type: &'static str) -> Response {
    let tag = etag(view, content_type, &bytes);
    answer(status, bytes, content_type, tag)
}

fn answer(status: StatusCode, bytes: Vec<u8>, content_type: &'static str, tag: HeaderValue) -> Response {
    let mut response = (status, bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::ETAG, tag);
    response
}

/// A read's answer: `bytes`, the representation in `format`, with their `ETag`, the
/// resource's `Cache-Control`, `Vary: Accept` where it offers more than one format, and
/// `extra` headers (`Link`); or 304 with the same headers and no body when the request's
/// `If-None-Match` names the tag. Each representation has its own tag, as its bytes
/// differ, so a tag of one format never answers 304 for another.
pub(crate) fn read(
    spec: &ResourceSpec,
    view: &View,
    request: &HeaderMap,
    format: Format,
    bytes: Vec<u8>,
    mut extra: HeaderMap,
) -> Result<Response, Problem> {
    let content_type = match format {
        Format::Json => view.json_type(),
        other => negotiate::offer(other).content_type,
    };
    negotiate::vary(spec, &mut extra);
    read_as(view, request, content_type, bytes, spec.cache_control, extra)
}

/// `bytes` as `content_type`, answered as [`read`] answers, with `cache_control`.
pub(crate) fn read_as(
    view: &View,
    request: &HeaderMap,
    content_type: &'static str,
    bytes: Vec<u8>,
    cache_control: &'static str,
    extra: HeaderMap,
) -> Result<Response, Problem> {
    let tag = etag(view, content_type, &bytes);
    let matched = match if_none_match(request)? {
        Some(Tags::Any) => true,
        Some(Tags::List(tags)) => tags.iter().any(|t| weakly_equal(t, tag.as_bytes())),
        None => false,
    };
    // A 304 is made as such, not as the 200 it stands for with its body taken off.
    let mut response = if matched {
        let mut response = StatusCode::NOT_MODIFIED.into_response();
        response.headers_mut().insert(header::ETAG, tag);
        response
    } else {
        answer(StatusCode::OK, bytes, content_type, tag)
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache_control));
    headers.extend(extra);
    Ok(response)
}

/// The tags of a request's header: borrowed from its one line, or owned where its lines
/// had to be joined.
pub(crate) enum Tags<'h> {
    Any,
    List(Vec<Cow<'h, str>>),
}

/// The condition of a write (PUT, PATCH, DELETE): its `If-Match`, held against the record
/// as it stands when the write happens.
pub(crate) struct Precondition<'h>(Option<Tags<'h>>);

impl<'h> Precondition<'h> {
    /// The request's `If-Match`. One that is not `*` or a list of entity tags names no
    /// version of anything, so the condition is false and the write is refused (412, with
    /// the current tag to show the form), never done unconditionally. Without one, a
    /// resource that `require`s the condition refuses the write with 428.
    pub(crate) fn of(request: &'h HeaderMap, require: bool) -> Result<Precondition<'h>, Problem> {
        match tags(request, header::IF_MATCH, "If-Match", MAX_IF_MATCH)? {
            Parsed::Absent if require => Err(Problem::new(
                StatusCode::PRECONDITION_REQUIRED,
                "this resource is only changed conditionally: send `If-Match` with the ETag of the record you read",
            )),
            Parsed::Absent => Ok(Precondition(None)),
            Parsed::Malformed => Ok(Precondition(Some(Tags::List(Vec::new())))),
            Parsed::Tags(t) => Ok(Precondition(Some(t))),
        }
    }

    /// Whether a write may go ahead on a record whose representation's tag is `current`
    /// (strong comparison, RFC 9110 §13.1.1: a weak tag matches nothing).
    pub(crate) fn admits(&self, current: Option<&HeaderValue>) -> bool {
        match (&self.0, current) {
            (None, _) | (Some(Tags::Any), Some(_)) => true,
            (Some(Tags::List(tags)), Some(current)) => tags.iter().any(|t| t.as_bytes() == current.as_bytes()),
            (Some(_), None) => false,
        }
    }

    /// Whether there is a condition to hold the write to.
    pub(crate) fn is_some(&self) -> bool {
        self.0.is_some()
    }
}

/// The longest `If-Match` taken (the OpenAPI document states the same).
pub const MAX_IF_MATCH: usize = restgen_model::bounds::MAX_IF_MATCH;

enum Parsed<'h> {
    Absent,
    Malformed,
    Tags(Tags<'h>),
}

/// The lines of a tag-list header (`If-Match`, `If-None-Match`) joined as one list; one
/// longer than `max` is a 400 naming `field`.
fn tags<'h>(request: &'h HeaderMap, name: header::HeaderName, field: &str, max: usize) -> Result<Parsed<'h>, Problem> {
    let lines = request.get_all(&name);
    let mut each = lines.iter();
    let Some(first) = each.next() else { return Ok(Parsed::Absent) };
    let several = each.next().is_some();
    let total: usize = if several { lines.iter().map(|v| v.len() + 2).sum::<usize>() - 2 } else { first.len() };
    if total > max {
        return Err(Problem::validation(vec![FieldError {
            field: field.into(),
            message: format!("is longer than {max} characters"),
        }]));
    }
    let mut list = Vec::new();
    let read = if several {
        // Lines are one list, joined by commas: a copy only where there are several.
        let Ok(texts) = lines.iter().map(|v| v.to_str()).collect::<Result<Vec<_>, _>>() else {
            return Ok(Parsed::Malformed);
        };
        let joined = texts.join(", ");
        if joined == "*" {
            return Ok(Parsed::Tags(Tags::Any));
        }
        tag_list(&joined, |tag| list.push(Cow::Owned(tag.to_owned())))
    } else {
        let Ok(value) = first.to_str() else { return Ok(Parsed::Malformed) };
        if value == "*" {
            return Ok(Parsed::Tags(Tags::Any));
        }
        tag_list(value, |tag| list.push(Cow::Borrowed(tag)))
    };
    Ok(if read { Parsed::Tags(Tags::List(list)) } else { Parsed::Malformed })
}

/// What may stand around a list's commas.
const BLANKS: [char; 2] = [' ', '\t'];

/// Gives `take` each entity tag of `text`; `false` unless `text` is a comma-separated
/// list of them (RFC 9110 §13.1: `#entity-tag`, each `"..."` or weak `W/"..."`, blanks
/// around the commas): read in place, where a regular expression and a joined copy of the
/// lines were a large share of a conditional read's work.
fn tag_list<'t>(text: &'t str, mut take: impl FnMut(&'t str)) -> bool {
    let mut rest = text;
    loop {
        let body = rest.strip_prefix("W/").unwrap_or(rest);
        let Some(inner) = body.strip_prefix('"') else { return false };
        let Some(end) = inner.find('"') else { return false };
        let tag_len = (rest.len() - body.len()) + 1 + end + 1;
        take(&rest[..tag_len]);
        let after = rest[tag_len..].trim_start_matches(BLANKS);
        if after.is_empty() {
            return rest.len() == tag_len;
        }
        let Some(next) = after.strip_prefix(',') else { return false };
        rest = next.trim_start_matches(BLANKS);
    }
}

/// The request's `If-None-Match`, its lines joined as one list. A value that is not `*`
/// or a list of entity tags names no representation, so it is ignored and the caller
/// gets the full answer (RFC 9110 lets a server ignore a condition it cannot parse, and
/// ignoring can never wrongly answer 304); one longer than the documented bound is a 400.
fn if_none_match(request: &HeaderMap) -> Result<Option<Tags<'_>>, Problem> {
    Ok(match tags(request, header::IF_NONE_MATCH, "If-None-Match", MAX_IF_NONE_MATCH)? {
        Parsed::Tags(t) => Some(t),
        Parsed::Absent | Parsed::Malformed => None,
    })
}

/// Weak comparison (RFC 9110 §8.8.3.2), which `If-None-Match` uses: the opaque tags are
/// equal, whether or not either is weak.
fn weakly_equal(given: &str, current: &[u8]) -> bool {
    let given = given.strip_prefix("W/").unwrap_or(given);
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
        let tag = |bytes: &[u8]| etag(&View::NONE, "application/json", bytes);
        assert_eq!(tag(b"{\"a\":1}"), tag(b"{\"a\":1}"));
        assert_ne!(tag(b"{\"a\":1}"), tag(b"{\"a\":2}"));
        assert_eq!(tag(b"x").len(), 24);
    }

    #[test]
    fn if_none_match_is_a_list_of_tags_or_a_star_and_anything_else_names_no_tag() {
        assert!(matches!(if_none_match(&HeaderMap::new()), Ok(None)));
        assert!(matches!(if_none_match(&request(&["*"])), Ok(Some(Tags::Any))));
        let lines = request(&["\"a\", W/\"b\"", "\"c\""]);
        let Ok(Some(Tags::List(tags))) = if_none_match(&lines) else { panic!() };
        assert_eq!(tags, ["\"a\"", "W/\"b\"", "\"c\""]);
        for malformed in ["abc", "\"a", "W/abc", "\"a\"b\"", " , ", "\"a\",", "*, \"a\"", "", "0"] {
            assert!(matches!(if_none_match(&request(&[malformed])), Ok(None)), "{malformed} names no tag");
        }
        let long = HeaderValue::from_str(&format!("\"{}\"", "a".repeat(MAX_IF_NONE_MATCH))).unwrap();
        let mut h = HeaderMap::new();
        h.insert(header::IF_NONE_MATCH, long);
        assert_eq!(if_none_match(&h).err().expect("too long").errors[0].field, "If-None-Match");
    }

    /// Every list of up to five of these pieces, on one line or two, is read as RFC 9110's
    /// grammar reads it: the expression it was first written as is the oracle.
    #[test]
    fn a_tag_list_is_read_as_the_grammar_reads_it() {
        let grammar = regex::Regex::new(r#"^(\*|(W/)?"[^"]*"(\s*,\s*(W/)?"[^"]*")*)$"#).unwrap();
        let tag = regex::Regex::new(r#"(W/)?"[^"]*""#).unwrap();
        let pieces = ["\"", "a", "W/", ",", " ", "\t", "*", "\"x\""];
        let mut lists = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> =
                lists.iter().flat_map(|l| pieces.iter().map(move |p| format!("{l}{p}"))).collect();
            lists.extend(longer);
            lists.dedup();
        }
        lists.sort();
        lists.dedup();
        let mut read = 0;
        for list in &lists {
            for lines in [vec![list.as_str()], list.splitn(2, ',').collect::<Vec<_>>()] {
                let Ok(values) = lines.iter().map(|l| HeaderValue::from_str(l)).collect::<Result<Vec<_>, _>>() else {
                    continue;
                };
                let mut h = HeaderMap::new();
                for v in values {
                    h.append(header::IF_NONE_MATCH, v);
                }
                let joined = lines.join(", ");
                let expected = match grammar.is_match(&joined) {
                    false => None,
                    true if joined == "*" => Some(vec!["*".to_owned()]),
                    true => Some(tag.find_iter(&joined).map(|m| m.as_str().to_owned()).collect()),
                };
                let got = match if_none_match(&h).unwrap() {
                    None => None,
                    Some(Tags::Any) => Some(vec!["*".to_owned()]),
                    Some(Tags::List(tags)) => Some(tags.into_iter().map(Cow::into_owned).collect()),
                };
                assert_eq!(got, expected, "{lines:?}");
                read += usize::from(got.is_some());
            }
        }
        assert!(read > 500, "only {read} well-formed lists among {}", lists.len());
    }

    #[test]
    fn weak_comparison_ignores_the_weak_marker() {
        assert!(weakly_equal("\"a\"", b"\"a\""));
        assert!(weakly_equal("\"a\"", b"W/\"a\""));
        assert!(weakly_equal("W/\"a\"", b"\"a\""));
        assert!(!weakly_equal("\"a\"", b"\"b\""));
    }

    fn condition(values: &[&'static str], require: bool) -> Result<Precondition<'static>, Problem> {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::IF_MATCH, HeaderValue::from_static(v));
        }
        // The condition borrows the request's headers; a test's may live as long as it runs.
        Precondition::of(Box::leak(Box::new(h)), require)
    }

    #[test]
    fn if_match_compares_strongly_and_refuses_what_it_cannot_read() {
        let current = HeaderValue::from_static("\"a\"");
        let admits = |values: &[&'static str]| condition(values, false).expect("parses").admits(Some(&current));
        assert!(admits(&["\"a\""]));
        assert!(admits(&["\"x\", \"a\""]));
        assert!(admits(&["\"x\"", "\"a\""]), "lines are one list");
        assert!(admits(&["*"]));
        assert!(admits(&[]), "no condition");
        assert!(!admits(&["\"x\""]));
        assert!(!admits(&["W/\"a\""]), "a weak tag never matches a write's condition");
        assert!(!condition(&["*"], false).ok().unwrap().admits(None), "`*` needs a current record");
        for malformed in ["abc", "\"a", "*, \"a\"", "0", "a\"a\""] {
            let parsed = condition(&[malformed], false).expect("read");
            assert!(parsed.is_some() && !parsed.admits(Some(&current)), "{malformed} names no version");
        }
        let long = HeaderValue::from_str(&format!("\"{}\"", "a".repeat(MAX_IF_MATCH))).unwrap();
        let mut h = HeaderMap::new();
        h.insert(header::IF_MATCH, long);
        assert_eq!(Precondition::of(&h, false).err().expect("too long").errors[0].field, "If-Match");
        assert_eq!(condition(&[], true).err().expect("a 428").status.as_u16(), 428);
        assert!(condition(&["\"a\""], true).is_ok());
    }
}
