//! What every operation is given: the store, the caller and the version the middleware
//! found, and the base path its links are under.

use crate::caller::Caller;
use crate::store::Store;
use crate::version::View;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use std::convert::Infallible;

/// Who asks, in which version, of which store: what every operation is given, taken from
/// the request (the caller and version the middleware found) and the router's store.
pub struct RequestContext {
    pub store: Store,
    pub caller: Caller,
    pub view: View,
    /// The service's `base_path`, under which its links are.
    pub base: &'static str,
}

impl RequestContext {
    /// Where the request's resources live: the base path, and the version's prefix where
    /// the request named its version by path (`/api/v1`), so links lead to the same version.
    pub fn prefix(&self) -> String {
        match self.view.number() {
            Some(n) if self.view.by_path => format!("{}/v{n}", self.base),
            _ => self.base.to_owned(),
        }
    }
}

/// A [`RequestContext`] as the request gives it: all but the base path, which its route knows
/// (`PartialContext::under`).
pub(crate) struct PartialContext {
    store: Store,
    caller: Caller,
    view: View,
}

impl PartialContext {
    /// The context, its links under `base`.
    pub(crate) fn under(self, base: &'static str) -> RequestContext {
        let PartialContext { store, caller, view } = self;
        RequestContext { store, caller, view, base }
    }
}

impl FromRequestParts<Store> for PartialContext {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, store: &Store) -> Result<PartialContext, Infallible> {
        let caller = Caller::from_request_parts(parts, store).await?;
        let view = View::from_request_parts(parts, store).await?;
        Ok(PartialContext { store: store.clone(), caller, view })
    }
}
