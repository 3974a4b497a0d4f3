//! Calling a resource whose type implements [`Endpoint`] (what `#[derive(Resource)]`
//! implements): the typed operations of one collection, without a generated client crate.

use crate::error::Error;
use crate::list::{Envelope, List, Paging};
use crate::tagged::Tagged;
use crate::transport::Transport;
use restgen_wire::Endpoint;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Display;
use std::marker::PhantomData;

/// The collection of records `R` (under the service's base path, which the transport adds).
#[derive(Clone, Debug)]
pub struct Collection<R> {
    transport: Transport,
    path: String,
    record: PhantomData<fn() -> R>,
}

impl Transport {
    /// The collection of `R`: `transport.collection::<Order>().create(&input)`.
    pub fn collection<R: Endpoint>(&self) -> Collection<R> {
        Collection { transport: self.clone(), path: R::PATH.to_owned(), record: PhantomData }
    }
}

impl<R: Endpoint + DeserializeOwned> Collection<R>
where
    R::Create: Serialize,
    R::Replace: Serialize,
    R::Patch: Serialize,
{
    /// Creates a record (with an `Idempotency-Key`, kept across retries).
    pub async fn create(&self, input: &R::Create) -> Result<R, Error> {
        self.transport.create(&self.path, input).await
    }

    pub async fn get(&self, id: impl Display) -> Result<R, Error> {
        self.transport.get(&self.item(id)).await
    }

    /// Replaces a record's settable fields (an omitted one is cleared).
    pub async fn replace(&self, id: impl Display, input: &R::Replace) -> Result<R, Error> {
        self.transport.replace(&self.item(id), input).await
    }

    /// Changes only the fields `input` holds (JSON Merge Patch).
    pub async fn patch(&self, id: impl Display, input: &R::Patch) -> Result<R, Error> {
        self.transport.patch(&self.item(id), input).await
    }

    pub async fn delete(&self, id: impl Display) -> Result<(), Error> {
        self.transport.delete(&self.item(id)).await
    }

    /// A record with its `ETag`, for the conditional writes below.
    pub async fn get_tagged(&self, id: impl Display) -> Result<Tagged<R>, Error> {
        self.transport.get_tagged(&self.item(id)).await
    }

    /// Replaces a record only if it is still the one `etag` names: [`Error::Changed`]
    /// otherwise.
    pub async fn replace_if(&self, id: impl Display, etag: &str, input: &R::Replace) -> Result<Tagged<R>, Error> {
        self.transport.replace_if(&self.item(id), etag, input).await
    }

    /// Patches a record only if it is still the one `etag` names.
    pub async fn patch_if(&self, id: impl Display, etag: &str, input: &R::Patch) -> Result<Tagged<R>, Error> {
        self.transport.patch_if(&self.item(id), etag, input).await
    }

    /// Deletes a record only if it is still the one `etag` names.
    pub async fn delete_if(&self, id: impl Display, etag: &str) -> Result<(), Error> {
        self.transport.delete_if(&self.item(id), etag).await
    }

    /// Its change feed (a resource with `feed`); see [`Changes`](crate::Changes).
    pub fn changes(&self) -> crate::Changes<R> {
        self.transport.changes(&self.path)
    }

    /// A list request: set filters, `sort` and the page size, then `send` one page or
    /// `stream` every record.
    pub fn list(&self) -> List<R> {
        let envelope = R::ENVELOPE.map_or(Envelope::Bare, Envelope::Key);
        self.transport.list(self.path.clone(), Paging { style: R::PAGING, envelope })
    }

    fn item(&self, id: impl Display) -> String {
        format!("{}/{id}", self.path)
    }
}
