//! Reading a JSON request body: media type (415), size (413), syntax and types (400,
//! naming the field); `forms` reads bodies that are not resources with the same rules.

pub mod forms;
mod keys;
pub(crate) mod limit;

use crate::problem::{FieldError, Problem};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};
use restgen_wire::http::media;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::convert::Infallible;

/// What a request with a body sends: its headers, moved out of the request (axum's
/// `HeaderMap` extractor copies every one of them), and its body read whole. The handler's
/// last argument: `HeadersAndBody { headers, body }: HeadersAndBody`.
pub(crate) struct HeadersAndBody {
    pub headers: HeaderMap,
    pub body: Result<Bytes, BytesRejection>,
}

impl<S: Send + Sync> FromRequest<S> for HeadersAndBody {
    type Rejection = Infallible;

    async fn from_request(request: Request, state: &S) -> Result<Self, Infallible> {
        let (mut parts, body) = request.into_parts();
        // Reading the body looks at the request's extensions (the body limit), not its headers.
        let headers = std::mem::take(&mut parts.headers);
        let body = Bytes::from_request(Request::from_parts(parts, body), state).await;
        Ok(HeadersAndBody { headers, body })
    }
}

/// The body as a JSON object. `merge_patch` also admits `application/merge-patch+json`.
pub fn object(
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    merge_patch: bool,
) -> Result<Map<String, Value>, Problem> {
    object_of(&json(headers, body, merge_patch)?)
}

/// The bytes of a JSON body: 415 for another media type (`merge_patch` also admits
/// `application/merge-patch+json`), 413 for one larger than the service accepts, 400
/// naming a key one object of it names twice.
pub fn json(headers: &HeaderMap, body: Result<Bytes, BytesRejection>, merge_patch: bool) -> Result<Bytes, Problem> {
    let media = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let essence = media.split(';').next().unwrap_or("").trim().as_bytes();
    // Media types are case-insensitive (RFC 9110 §8.3.1).
    let (kind, subtype) = essence.split_at(essence.len().min(b"application/".len()));
    let json = kind.eq_ignore_ascii_case(b"application/")
        && (subtype.eq_ignore_ascii_case(b"json")
            || subtype.len() >= b"+json".len() && subtype[subtype.len() - 5..].eq_ignore_ascii_case(b"+json"));
    if !json {
        let accepted =
            if merge_patch { format!("{} or {}", media::MERGE_PATCH, media::JSON) } else { media::JSON.into() };
        return Err(Problem::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, format!("send the body as {accepted}")));
    }
    let bytes = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Problem::too_large()
        } else {
            Problem::bad_request("the body could not be read")
        }
    })?;
    if let Some(path) = keys::first_duplicate(&bytes) {
        let message = "is named more than once in the body: say it once".to_owned();
        return Err(Problem::validation(vec![FieldError { field: path, message }]));
    }
    Ok(bytes)
}

/// JSON text as an object: 400 for anything else.
pub fn object_of(bytes: &[u8]) -> Result<Map<String, Value>, Problem> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| Problem::bad_request(format!("the body is not valid JSON: {e}")))?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(Problem::bad_request(format!("the body must be a JSON object, not {}", kind(&other)))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What a 400 says of a field the body may not set.
pub(crate) const NOT_SETTABLE: &str = "is not a field you may set here";
/// What a 400 says of a required field the body lacks.
pub(crate) const REQUIRED: &str = "is required";

/// The object as the operation's input type: unknown or non-settable fields, wrong types
/// and missing required fields become a 400 naming the field.
pub fn typed<T: DeserializeOwned>(object: Map<String, Value>) -> Result<T, Problem> {
    serde_path_to_error::deserialize(Value::Object(object)).map_err(refusal)
}

/// What `T` refused of a body, named by its field (not generic: compiled once).
fn refusal(e: serde_path_to_error::Error<serde_json::Error>) -> Problem {
    let path = e.path().to_string();
    let inner = e.into_inner().to_string();
    let (field, message) = if let Some(rest) = inner.strip_prefix("unknown field `") {
        let name = rest.split('`').next().unwrap_or_default().to_owned();
        (name, NOT_SETTABLE.to_owned())
    } else if let Some(rest) = inner.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or_default().to_owned();
        (name, REQUIRED.to_owned())
    } else {
        (path, inner)
    };
    Problem::validation(vec![FieldError { field, message }])
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, StatusCode, header};

    fn read_as(media: &str) -> Option<StatusCode> {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_str(media).unwrap());
        super::json(&headers, Ok(axum::body::Bytes::from_static(b"{}")), true).err().map(|p| p.status)
    }

    #[test]
    fn a_body_is_json_by_its_media_type_whatever_its_case_and_parameters() {
        for json in [
            "application/json",
            "Application/JSON",
            " application/json ; charset=utf-8",
            "application/merge-patch+json",
            "APPLICATION/VND.SHOP.V2+JSON",
        ] {
            assert_eq!(read_as(json), None, "{json} is JSON");
        }
        for other in
            ["text/json", "application/jsonx", "application/json-seq", "json", "", "application/", "text/plain"]
        {
            assert_eq!(read_as(other), Some(StatusCode::UNSUPPORTED_MEDIA_TYPE), "{other} is not JSON");
        }
    }
}
