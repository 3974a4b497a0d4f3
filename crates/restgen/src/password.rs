//! Password hashing with Argon2id (the `argon2` crate's defaults, PHC strings): what a
//! `password` field holds in storage, for hand-written handlers and seeded accounts too.

use crate::problem::Problem;
use argon2::{Argon2, PasswordHasher};

/// The PHC string stored for `password`, with a fresh salt.
pub fn hash(password: &str) -> Result<String, Problem> {
    Argon2::default().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(|e| {
        tracing::error!(error = %e, "password hashing failed");
        Problem::internal()
    })
}

/// Whether `password` matches the PHC string `hash`. A malformed hash matches nothing.
pub fn verify(password: &str, hash: &str) -> bool {
    use argon2::PasswordVerifier;
    argon2::PasswordHash::new(hash)
        .is_ok_and(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
}
