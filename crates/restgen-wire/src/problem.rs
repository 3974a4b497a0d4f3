//! A problem body (RFC 9457, `application/problem+json`) as both sides name it: the
//! service writes every error answer in this shape and the client reads it back.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The problem type of a problem the status says all of (RFC 9457 §4.2.1).
pub const ABOUT_BLANK: &str = "about:blank";

/// One invalid input, named by its JSON path (`total_cents`, `items[2].qty`), or by the
/// query parameter or header it came in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// The body of an error answer. Borrowed where the service writes one from what it holds;
/// owned where the client reads one, missing members taking their RFC 9457 defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProblemBody<'a> {
    /// A URI naming the problem type; [`ABOUT_BLANK`] when the status says it all.
    #[serde(rename = "type", default = "about_blank")]
    pub kind: Cow<'a, str>,
    #[serde(default)]
    pub title: Cow<'a, str>,
    /// The HTTP status, repeated for whoever reads the body alone (a log, a queue).
    #[serde(default)]
    pub status: u16,
    #[serde(default)]
    pub detail: Cow<'a, str>,
    /// The invalid inputs, for a 400; left out when there are none.
    #[serde(default, skip_serializing_if = "<[FieldError]>::is_empty")]
    pub errors: Cow<'a, [FieldError]>,
    /// Extension members (RFC 9457 §3.2) that say more of this problem to a program: the
    /// current `state` of a record a transition cannot start from, say.
    #[serde(flatten)]
    pub extensions: Cow<'a, Map<String, Value>>,
    /// The request's id, as its `X-Request-Id` header says: what to quote in a report, and
    /// what the service's log lines of the request carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<Cow<'a, str>>,
}

fn about_blank() -> Cow<'static, str> {
    Cow::Borrowed(ABOUT_BLANK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_the_service_left_out_take_their_defaults_and_unknown_ones_are_extensions() {
        let body: ProblemBody = serde_json::from_str(r#"{"title":"Conflict","state":"paid"}"#).unwrap();
        assert_eq!(body.kind, ABOUT_BLANK);
        assert_eq!((body.status, body.detail.as_ref(), body.errors.len()), (0, "", 0));
        assert_eq!(body.extensions.get("state"), Some(&Value::from("paid")));
    }

    #[test]
    fn a_body_reads_back_as_it_was_written_and_no_errors_leave_the_member_out() {
        let mut extensions = Map::new();
        extensions.insert("state".into(), "paid".into());
        let body = ProblemBody {
            kind: Cow::Borrowed(ABOUT_BLANK),
            title: Cow::Borrowed("Conflict"),
            status: 409,
            detail: Cow::Borrowed("the order is paid"),
            errors: Cow::Borrowed(&[]),
            extensions: Cow::Owned(extensions),
            request_id: Some(Cow::Borrowed("0c1f9a2e5d7b4c3a9e8f1d2c")),
        };
        let text = serde_json::to_string(&body).unwrap();
        assert_eq!(
            text,
            r#"{"type":"about:blank","title":"Conflict","status":409,"detail":"the order is paid","state":"paid","request_id":"0c1f9a2e5d7b4c3a9e8f1d2c"}"#
        );
        assert_eq!(serde_json::from_str::<ProblemBody>(&text).unwrap(), body);
    }
}
