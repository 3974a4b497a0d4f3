//! What a call can fail with. An error answer of the service is a typed [`Problem`]
//! (RFC 9457), whatever produced it: a body that is not problem+json (from a proxy, say)
//! still becomes one, with its status and the start of its text.

use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

/// One invalid input the service named.
pub use restgen_wire::FieldError;
use restgen_wire::ProblemBody;

/// An error answer of the service: the wire's [`ProblemBody`] it sent, and what its
/// headers said.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(from = "ProblemBody<'static>")]
pub struct Problem {
    /// The HTTP status of the answer.
    pub status: u16,
    /// A URI naming the problem type; `about:blank` when the status says it all.
    pub kind: String,
    pub title: String,
    pub detail: String,
    /// The invalid inputs, for a 400.
    pub errors: Vec<FieldError>,
    /// Extension members: what else the service said (on a 409 from a transition, the
    /// record's `state` and the `transitions` open from it).
    pub extensions: serde_json::Map<String, serde_json::Value>,
    /// How long the service asked callers to wait (`Retry-After`), when it said.
    pub retry_after: Option<Duration>,
    /// The answer's `ETag`: on a 412, the current tag of the record that changed.
    pub etag: Option<String>,
    /// The request's id (`X-Request-Id`): what to quote when reporting the error, and what
    /// the service's log lines of the request carry.
    pub request_id: Option<String>,
}

impl From<ProblemBody<'_>> for Problem {
    fn from(body: ProblemBody<'_>) -> Problem {
        Problem {
            status: body.status,
            kind: body.kind.into_owned(),
            title: body.title.into_owned(),
            detail: body.detail.into_owned(),
            errors: body.errors.into_owned(),
            extensions: body.extensions.into_owned(),
            retry_after: None,
            etag: None,
            request_id: body.request_id.map(Cow::into_owned),
        }
    }
}

/// The most of a non-problem body kept in `detail`.
const MAX_DETAIL: usize = 512;

impl Problem {
    /// The problem an answer with `status` and `body` describes.
    pub(crate) fn from_answer(status: u16, body: &[u8], retry_after: Option<Duration>) -> Problem {
        let parsed =
            serde_json::from_slice::<Problem>(body).ok().filter(|p| !p.title.is_empty() || !p.detail.is_empty());
        let mut problem = parsed.unwrap_or_else(|| {
            let text = String::from_utf8_lossy(body);
            let mut end = text.len().min(MAX_DETAIL);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            Problem {
                status,
                kind: restgen_wire::ABOUT_BLANK.to_owned(),
                title: reqwest::StatusCode::from_u16(status)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .unwrap_or("Error")
                    .to_owned(),
                detail: text[..end].trim().to_owned(),
                errors: Vec::new(),
                extensions: serde_json::Map::new(),
                retry_after: None,
                etag: None,
                request_id: None,
            }
        });
        // The status line is the truth; a body could say anything.
        problem.status = status;
        problem.retry_after = retry_after;
        problem
    }

    /// The message the service gave for `field`, if it named it.
    pub fn field(&self, field: &str) -> Option<&str> {
        self.errors.iter().find(|e| e.field == field).map(|e| e.message.as_str())
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status, self.title)?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        if let Some(id) = &self.request_id {
            write!(f, " (request {id})")?;
        }
        Ok(())
    }
}

/// A failed call.
#[derive(Debug)]
pub enum Error {
    /// The service answered with an error status (other than the two below).
    Api(Box<Problem>),
    /// 412: the record changed since the tag sent in `If-Match` was read. `etag` on the
    /// problem is its current tag: read it again, and decide whether to write.
    Changed(Box<Problem>),
    /// 428: the resource takes writes only with `If-Match` (the `_if` methods).
    ConditionRequired(Box<Problem>),
    /// No answer in time (the client's `timeout`), after any retries.
    Timeout,
    /// The request could not be sent or the answer not read, after any retries.
    Transport(reqwest::Error),
    /// A success answer whose body is not what the operation returns.
    Decode { status: u16, message: String },
    /// The client was configured in a way it cannot work with.
    Config(String),
}

impl Error {
    /// The problem, when the service answered with one.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Error::Api(p) | Error::Changed(p) | Error::ConditionRequired(p) => Some(p),
            _ => None,
        }
    }

    /// The HTTP status, when the service answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Api(p) | Error::Changed(p) | Error::ConditionRequired(p) => Some(p.status),
            Error::Decode { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The error an answer's problem is: 412 and 428 by their own variants.
    pub(crate) fn from_problem(problem: Problem) -> Error {
        match problem.status {
            412 => Error::Changed(Box::new(problem)),
            428 => Error::ConditionRequired(Box::new(problem)),
            _ => Error::Api(Box::new(problem)),
        }
    }

    pub(crate) fn from_reqwest(e: reqwest::Error) -> Error {
        if e.is_timeout() { Error::Timeout } else { Error::Transport(e) }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Api(p) | Error::Changed(p) | Error::ConditionRequired(p) => p.fmt(f),
            Error::Timeout => f.write_str("the service did not answer in time"),
            Error::Transport(e) => write!(f, "cannot reach the service: {e}"),
            Error::Decode { status, message } => write!(f, "unexpected answer body (status {status}): {message}"),
            Error::Config(message) => write!(f, "client configuration: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Transport(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Problem;

    #[test]
    fn a_problem_body_keeps_its_fields_and_takes_the_status_line() {
        let body = br#"{"type":"about:blank","title":"Bad Request","status":400,"detail":"`name` is required","errors":[{"field":"name","message":"is required"}]}"#;
        let p = Problem::from_answer(400, body, None);
        assert_eq!(p.field("name"), Some("is required"));
        assert_eq!(p.detail, "`name` is required");
        assert_eq!(p.status, 400);
        assert_eq!(p.request_id, None);
    }

    #[test]
    fn the_request_id_is_kept_and_quoted_in_the_message() {
        let body = br#"{"title":"Conflict","status":409,"detail":"taken","request_id":"0c1f9a2e5d7b4c3a9e8f1d2c"}"#;
        let p = Problem::from_answer(409, body, None);
        assert_eq!(p.request_id.as_deref(), Some("0c1f9a2e5d7b4c3a9e8f1d2c"));
        assert!(p.extensions.is_empty(), "not an extension: {:?}", p.extensions);
        assert_eq!(p.to_string(), "409 Conflict: taken (request 0c1f9a2e5d7b4c3a9e8f1d2c)");
    }

    #[test]
    fn any_other_body_becomes_a_problem_with_the_status_and_the_text() {
        let p = Problem::from_answer(502, "<html>bad gateway</html>".as_bytes(), None);
        assert_eq!((p.status, p.title.as_str(), p.detail.as_str()), (502, "Bad Gateway", "<html>bad gateway</html>"));
        let long = "é".repeat(600);
        let p = Problem::from_answer(500, long.as_bytes(), None);
        assert!(p.detail.len() <= super::MAX_DETAIL && p.detail.starts_with('é'));
    }
}
