//! `jwt` in a build without any `jwt-*` feature: no token is signed or verified. A
//! service with `auth` requires its algorithm's feature (`require!`), so only a spec
//! assembled by hand in code gets here, and is refused at start.

use super::Secrets;
use crate::spec::AuthSpec;

pub(crate) struct Claims {
    pub sub: String,
    pub roles: Vec<String>,
    pub exp: u64,
}

pub(crate) enum Tokens {}

impl Tokens {
    pub(crate) fn new(spec: &AuthSpec, _: &Secrets) -> Result<Tokens, String> {
        Err(super::jwt_absent(spec.jwt.algorithm))
    }

    pub(crate) fn can_issue(&self) -> bool {
        match *self {}
    }

    pub(crate) fn ttl_seconds(&self) -> u64 {
        match *self {}
    }

    pub(crate) fn issue(&self, _: String, _: Vec<String>) -> Option<String> {
        match *self {}
    }

    pub(crate) fn verify(&self, _: &str) -> Result<Claims, &'static str> {
        match *self {}
    }
}
