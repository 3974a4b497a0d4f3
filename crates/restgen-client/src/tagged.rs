//! A record with the tag of the representation it was read from, for conditional writes.

use std::ops::Deref;

/// A record and the `ETag` of the answer that carried it: what a conditional write
/// (`replace_*_if`, `update_*_if`, `delete_*_if`) sends back in `If-Match`, so it fails
/// with [`Error::Changed`](crate::Error::Changed) instead of overwriting a change it
/// never saw.
#[derive(Clone, Debug, PartialEq)]
pub struct Tagged<T> {
    pub value: T,
    /// The strong tag, quotes included (`"..."`), as the service sent it.
    pub etag: String,
}

impl<T> Deref for Tagged<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> Tagged<T> {
    pub fn into_inner(self) -> T {
        self.value
    }
}

/// What a status endpoint answers (`GET {item}/status`): the record's state and when it
/// last changed.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct Status<S> {
    pub status: S,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}
