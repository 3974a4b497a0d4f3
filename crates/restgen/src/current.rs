//! The request being answered, as the code answering it can ask and tell: its id, which a
//! problem body quotes, and what it did, which the metrics count (the operation that
//! answered it, the rate limit that refused it, a replayed answer). Set by
//! [`crate::observe`] around each request's future, task-local so that nothing between
//! (a layer, a handler, an extractor) passes it along.

use axum::http::HeaderValue;
use std::cell::Cell;

tokio::task_local! {
    /// The request whose future is being polled.
    pub(crate) static REQUEST: Request;
}

/// One request, while it is answered.
pub(crate) struct Request {
    pub id: HeaderValue,
    pub facts: Cell<Facts>,
}

/// What a request did, in the schema's names (never the request's own text: each is a
/// label of the metrics, and a caller must not be able to make new ones).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Facts {
    /// The resource whose operation answered (`order`); empty for other routes.
    pub resource: &'static str,
    /// The operation (`list`, `create`, a transition's name, `login`, `healthz`); empty
    /// where none answered (no such route, a method not allowed, refused before it ran).
    pub operation: &'static str,
    /// The rate limit policy that refused the request (`default`, a resource's name).
    pub refused_by: Option<&'static str>,
    /// Whether the answer was a kept one given again (`Idempotency-Key`).
    pub replayed: bool,
}

impl Request {
    pub fn new(id: HeaderValue) -> Request {
        Request { id, facts: Cell::new(Facts::default()) }
    }
}

/// The id of the request being answered, where there is one (not in a background task).
pub(crate) fn request_id() -> Option<String> {
    REQUEST.try_with(|r| r.id.to_str().map(str::to_owned).ok()).ok().flatten()
}

/// Notes what the request being answered did (nothing outside a request).
fn note(change: impl FnOnce(&mut Facts)) {
    let _ = REQUEST.try_with(|r| {
        let mut facts = r.facts.get();
        change(&mut facts);
        r.facts.set(facts);
    });
}

/// The operation answering the request.
pub(crate) fn operation(resource: &'static str, operation: &'static str) {
    note(|f| {
        f.resource = resource;
        f.operation = operation;
    });
}

/// The request was refused by the rate limit `policy`.
pub(crate) fn refused_by(policy: &'static str) {
    note(|f| f.refused_by = Some(policy));
}

/// The request's answer is one kept for its `Idempotency-Key`, given again.
pub(crate) fn replayed() {
    note(|f| f.replayed = true);
}
