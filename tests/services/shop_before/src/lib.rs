//! Shop API: the service as a library, so that `main.rs` serves it and tests can
//! mount it. Written once by `restgen generate`; yours to edit from now on.

pub mod generated;
pub mod hooks;

pub use generated::{models, service};
