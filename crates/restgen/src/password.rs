//! Password hashing with Argon2id (the `argon2` crate's defaults, PHC strings): what a
//! `password` field holds in storage, for hand-written handlers and seeded accounts too.
//!
//! Argon2 is slow and memory-hard on purpose (19 MiB and tens of milliseconds a run), so a
//! request never runs it on an async worker, where it would stall every other request on
//! that thread, and never on an unbounded pool of blocking threads, where a flood of
//! logins would take hundreds of threads and gigabytes. [`hash_bounded`] and
//! [`verify_bounded`] run it on at most one thread per core; a request that waits longer
//! than [`MAX_WAIT`] for one is answered 503 with `Retry-After`.

use crate::problem::Problem;
#[cfg(feature = "password")]
use argon2::{Argon2, PasswordHasher};
use std::sync::LazyLock;
use std::time::Duration;
use tokio::sync::Semaphore;

/// The longest a request waits for a free hasher before it is told to come back.
pub const MAX_WAIT: Duration = Duration::from_secs(3);

/// Hashing runs at once: one per core, so that a flood of logins keeps the machine's
/// cores busy and no more (requests that do not hash still get their share of time).
static HASHERS: LazyLock<Semaphore> =
    LazyLock::new(|| Semaphore::new(std::thread::available_parallelism().map_or(2, std::num::NonZero::get)));

/// The PHC string stored for `password`, with a fresh salt. Runs on the calling thread:
/// for start-up and tools; a request uses [`hash_bounded`].
#[cfg(feature = "password")]
pub fn hash(password: &str) -> Result<String, Problem> {
    Argon2::default().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(|e| {
        tracing::error!(error = %e, "password hashing failed");
        Problem::internal()
    })
}

/// Whether `password` matches the PHC string `hash`. A malformed hash matches nothing.
/// Runs on the calling thread; a request uses [`verify_bounded`].
#[cfg(feature = "password")]
pub fn verify(password: &str, hash: &str) -> bool {
    use argon2::PasswordVerifier;
    argon2::PasswordHash::new(hash)
        .is_ok_and(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
}

/// Without the `password` feature nothing is hashed: a schema with a password field or
/// sign-in requires the feature (`require!`), so only a spec assembled by hand gets here.
#[cfg(not(feature = "password"))]
pub fn hash(_: &str) -> Result<String, Problem> {
    tracing::error!("a password is to be hashed, and this build of restgen leaves out its `password` feature");
    Err(Problem::internal())
}

/// Without the `password` feature no password matches.
#[cfg(not(feature = "password"))]
pub fn verify(_: &str, _: &str) -> bool {
    false
}

/// [`hash`] on a bounded hashing thread: 503 with `Retry-After` when none was free within
/// [`MAX_WAIT`].
pub async fn hash_bounded(password: String) -> Result<String, Problem> {
    bounded(MAX_WAIT, move || hash(&password)).await?
}

/// [`verify`] on a bounded hashing thread: 503 with `Retry-After` when none was free
/// within [`MAX_WAIT`].
pub async fn verify_bounded(password: String, hash: String) -> Result<bool, Problem> {
    bounded(MAX_WAIT, move || verify(&password, &hash)).await
}

/// Runs `work` on a blocking thread once one of [`HASHERS`] is free, if one is within `wait`.
async fn bounded<T: Send + 'static>(wait: Duration, work: impl FnOnce() -> T + Send + 'static) -> Result<T, Problem> {
    let permit = match tokio::time::timeout(wait, HASHERS.acquire()).await {
        Ok(Ok(permit)) => permit,
        // Closed never happens (the semaphore is never closed); a timeout is a flood.
        Ok(Err(_)) | Err(_) => return Err(busy()),
    };
    let result = crate::outlined::spawn_blocking(move || {
        let _permit = permit;
        work()
    })
    .await;
    result.map_err(|_| Problem::internal())
}

fn busy() -> Problem {
    Problem::unavailable("every password hasher is busy (too many logins or registrations at once); retry shortly")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With every hasher held, a request waits its bound and is told to come back; once
    /// one is free, it hashes.
    #[tokio::test]
    async fn a_request_that_finds_every_hasher_busy_is_answered_503_after_the_wait() {
        let wait = Duration::from_millis(50);
        let held = HASHERS.acquire_many(HASHERS.available_permits() as u32).await.unwrap();
        let started = std::time::Instant::now();
        let refused = bounded(wait, || hash("correct horse")).await.unwrap_err();
        assert_eq!(refused.status, axum::http::StatusCode::SERVICE_UNAVAILABLE);
        assert!(started.elapsed() >= wait, "refused after the wait, not before");
        let response = axum::response::IntoResponse::into_response(refused);
        assert!(response.headers().contains_key(axum::http::header::RETRY_AFTER));
        drop(held);
        let hashed = bounded(wait, || hash("correct horse")).await.unwrap().unwrap();
        assert!(verify_bounded("correct horse".into(), hashed).await.unwrap());
    }
}
