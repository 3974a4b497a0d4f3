//! The change feed as a service serves it and a client reads it: where it is, and the
//! events it sends, each a Server-Sent Event (`id:`, `event:`, `data:`).

/// The feed's path below its collection: `GET /orders/changes`.
pub const PATH: &str = "/changes";

/// The first event of a stream: where it starts (its id), so a client cut off before
/// any change resumes from there. Data: `{}`.
pub const READY: &str = "ready";
/// A record was created; data: the record as the caller may see it.
pub const CREATED: &str = "created";
/// A record was changed (a transition included); data: the record as it now is.
pub const UPDATED: &str = "updated";
/// A record was deleted; data: `{"id": ...}` alone.
pub const DELETED: &str = "deleted";
/// The stream cannot go on from the id the client resumed from (the log no longer keeps
/// it, or never gave it): the client lists the collection again, then reads on from this
/// event's id. Data: `{"detail": ...}`.
pub const RESET: &str = "reset";
/// The service ends the stream: data `{"reason": ..., "detail": ...}`, the reason one of
/// [`closed`]'s. The last change's id still resumes, where the reason allows.
pub const CLOSED: &str = "closed";

/// Why a stream was closed.
pub mod closed {
    /// The reader left too many events unread: resume with `Last-Event-ID`.
    pub const BEHIND: &str = "behind";
    /// The instance is stopping: resume, on it or another.
    pub const SHUTDOWN: &str = "shutdown";
    /// The bearer token expired: resume with a fresh one.
    pub const EXPIRED: &str = "expired";
    /// The caller's access is gone (the account, the key, or the right to read).
    pub const REVOKED: &str = "revoked";
    /// The log could not be read: resume.
    pub const UNAVAILABLE: &str = "unavailable";
}
