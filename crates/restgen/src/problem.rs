//! Errors as RFC 9457 problem details (`application/problem+json`), from one type.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use restgen_wire::ProblemBody;
use serde::Serialize;
use std::borrow::Cow;

/// The most field errors one answer lists, so a request with thousands of bad keys gets
/// a bounded answer; the longest `detail`, `errors[].field` and `errors[].message`, in
/// characters: they can quote the request (an unknown parameter's name). The OpenAPI
/// document states the same bounds, from the same definitions.
pub use restgen_model::bounds::{MAX_DETAIL, MAX_FIELD, MAX_FIELD_ERRORS, MAX_MESSAGE};

/// `text` cut to `max` characters, the cut marked with an ellipsis.
fn bounded(text: &mut String, max: usize) {
    if let Some((at, _)) = text.char_indices().nth(max) {
        let keep = text[..at].char_indices().nth(max - 1).map_or(at, |(i, _)| i);
        text.truncate(keep);
        text.push('…');
    }
}

/// One invalid input, named by its JSON path (`total_cents`, `items[2].qty`): the wire's
/// one definition, which clients read back.
pub use restgen_wire::FieldError;

/// A problem answer, written as the wire's [`ProblemBody`]. `detail` is for the caller:
/// it never holds internals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// A URI naming the problem type; `about:blank` when the status says it all.
    pub kind: &'static str,
    pub title: &'static str,
    pub status: StatusCode,
    pub detail: String,
    pub errors: Vec<FieldError>,
    /// Extension members (RFC 9457 §3.2) that say more of this problem to a program: the
    /// current `state` of a record a transition cannot start from, say.
    /// Boxed: most problems have none, and every `Result` carries the size of a problem.
    pub extensions: Option<Box<serde_json::Map<String, serde_json::Value>>>,
    /// Extra response headers (`Allow`, `Retry-After`, `WWW-Authenticate`).
    pub headers: Vec<(header::HeaderName, HeaderValue)>,
}

impl Serialize for Problem {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ProblemBody {
            kind: Cow::Borrowed(self.kind),
            title: Cow::Borrowed(self.title),
            status: self.status.as_u16(),
            detail: Cow::Borrowed(&self.detail),
            errors: Cow::Borrowed(&self.errors),
            extensions: self.extensions.as_deref().map_or_else(Cow::default, Cow::Borrowed),
            request_id: crate::current::request_id().map(Cow::Owned),
        }
        .serialize(s)
    }
}

/// The detail of every 413, whichever part of the service refuses the body.
pub(crate) const TOO_LARGE: &str = "the body is larger than this service accepts";

impl Problem {
    /// A problem of `status` with the standard title and the `about:blank` type.
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        Problem {
            kind: restgen_wire::ABOUT_BLANK,
            title: status.canonical_reason().unwrap_or("Error"),
            status,
            detail: detail.into(),
            errors: Vec::new(),
            extensions: None,
            headers: Vec::new(),
        }
    }

    /// 400 for input that breaks the rules, naming each field (the first
    /// [`MAX_FIELD_ERRORS`]; `detail` counts them all).
    pub fn validation(mut errors: Vec<FieldError>) -> Self {
        let detail = match errors.as_slice() {
            [one] => format!("`{}` {}", one.field, one.message),
            many => format!("{} fields are invalid", many.len()),
        };
        errors.truncate(MAX_FIELD_ERRORS);
        Problem { errors, ..Problem::new(StatusCode::BAD_REQUEST, detail) }
    }

    pub fn bad_request(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::BAD_REQUEST, detail)
    }

    /// 403: the caller is known, and not permitted.
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::FORBIDDEN, detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::NOT_FOUND, detail)
    }

    /// 503 with `Retry-After: 1`: the service cannot take the request now and expects to
    /// shortly (load shed at `limits.max_in_flight`, a database that refused for now).
    pub(crate) fn unavailable(detail: &str) -> Self {
        Problem::new(StatusCode::SERVICE_UNAVAILABLE, detail)
            .with_header(header::RETRY_AFTER, HeaderValue::from_static("1"))
    }

    /// 413: a body larger than the service accepts (`limits.max_body_bytes`).
    pub(crate) fn too_large() -> Self {
        Problem::new(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE)
    }

    /// 422: well-formed input a business rule refuses (what hooks answer).
    pub fn unprocessable(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::UNPROCESSABLE_ENTITY, detail)
    }

    pub fn conflict(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::CONFLICT, detail)
    }

    /// 412: the record is not the one the client's `If-Match` names; its current `ETag` says
    /// which one it is, so the client can read it again and decide.
    pub(crate) fn precondition_failed(current: Option<HeaderValue>) -> Self {
        let p = Problem::new(
            StatusCode::PRECONDITION_FAILED,
            "`If-Match` names no current version of the record: it changed since you read it (read it again), \
             or the header is not `*` or a list of entity tags such as the `ETag` here",
        );
        match current {
            Some(tag) => p.with_header(header::ETAG, tag),
            None => p,
        }
    }

    /// 502: an upstream service a rule called (a payment provider, an address check) gave
    /// an answer it could not use: an error, or one it could not read. `detail` says which
    /// service failed, for the caller; what it answered belongs in the log, not here.
    pub fn bad_gateway(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::BAD_GATEWAY, detail)
    }

    /// 504: an upstream service a rule called did not answer in the time the rule gave it.
    /// The write was not made; the caller may retry (with the same `Idempotency-Key` for
    /// a create).
    pub fn gateway_timeout(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::GATEWAY_TIMEOUT, detail)
    }

    /// 500 with a fixed detail; what went wrong is logged, never sent.
    pub fn internal() -> Self {
        Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "the server failed to answer; the fault is logged")
    }

    /// The problem with the extension member `name` set to `value`.
    pub fn with(mut self, name: &str, value: impl Into<serde_json::Value>) -> Self {
        self.extensions.get_or_insert_default().insert(name.to_owned(), value.into());
        self
    }

    pub fn with_header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }
}

impl IntoResponse for Problem {
    fn into_response(mut self) -> Response {
        bounded(&mut self.detail, MAX_DETAIL);
        for e in &mut self.errors {
            bounded(&mut e.field, MAX_FIELD);
            bounded(&mut e.message, MAX_MESSAGE);
        }
        let body = serde_json::to_vec(&self).expect("a problem always serializes");
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(restgen_wire::http::media::PROBLEM));
        for (name, value) in self.headers {
            headers.insert(name, value);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_texts_are_cut_to_their_bound_with_an_ellipsis() {
        for (text, max, want) in [("abcdef", 4, "abc…"), ("abcd", 4, "abcd"), ("ééééé", 3, "éé…")] {
            let mut t = text.to_owned();
            super::bounded(&mut t, max);
            assert_eq!(t, want);
            assert!(t.chars().count() <= max);
        }
    }
}
