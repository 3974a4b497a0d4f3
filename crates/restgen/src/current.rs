//! The request being answered, as the code answering it can ask: its id, which a problem
//! body quotes. Set by [`crate::observe`] around each request's future, task-local so that
//! nothing between (a layer, a handler, an extractor) passes it along.

use axum::http::HeaderValue;

tokio::task_local! {
    /// The id of the request whose future is being polled.
    pub(crate) static REQUEST_ID: HeaderValue;
}

/// The id of the request being answered, where there is one (not in a background task).
pub(crate) fn request_id() -> Option<String> {
    REQUEST_ID.try_with(|id| id.to_str().map(str::to_owned).ok()).ok().flatten()
}
