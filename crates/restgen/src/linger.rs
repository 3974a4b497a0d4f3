//! A body larger than the service takes is refused (413) before it is read. A client that
//! writes the whole body before it reads the answer (Python's `http.client`, say) would
//! then meet a closed connection mid-write and never see the 413. So, as nginx's lingering
//! close does, the refused body is read and thrown away — up to a bound of size and time —
//! before the answer goes, and the connection is closed after it.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::StreamExt;
use std::time::Duration;

/// The most of a refused body read and thrown away.
const MAX_BYTES: usize = 64 * 1024 * 1024;
/// The longest a refused body is read for.
const MAX_TIME: Duration = Duration::from_secs(10);

/// Runs the request; one whose `Content-Length` is over `limit` reaches the service
/// without its body (the body limit refuses it by its declared length), and the body is
/// drained before the refusal is answered.
pub(crate) async fn linger(limit: usize, request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_none_or(|n| n <= limit as u64) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let mut response = next.run(Request::from_parts(parts, Body::empty())).await;
    let drain = async {
        let mut stream = body.into_data_stream();
        let mut read = 0;
        while let Some(Ok(chunk)) = stream.next().await {
            read += chunk.len();
            if read > MAX_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(MAX_TIME, drain).await;
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
