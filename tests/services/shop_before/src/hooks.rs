//! Business rules of Shop API. Written once by `restgen generate` and never
//! overwritten: regenerating keeps every edit you make here.
//!
//! `Rules` implements `crate::generated::hooks::Hooks`, whose methods run before each
//! write, after the input passed the schema's checks. Implement the ones you need; a
//! method may change the input, or refuse the write with a problem, e.g.
//! `restgen::Problem::unprocessable("...")` (422), or, when an upstream service the rule
//! calls fails, `Problem::bad_gateway` (502) or `Problem::gateway_timeout` (504).
//!
//! For example:
//!
//! ```ignore
//! fn before_create_user(&self, input: &mut crate::models::CreateUser) -> Result<(), restgen::Problem> {
//!     // Refuse, change or accept `input` here.
//!     Ok(())
//! }
//! ```

use crate::generated::hooks::Hooks;

/// This service's rules.
pub struct Rules;

impl Hooks for Rules {}
