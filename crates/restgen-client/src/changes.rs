//! A resource's change feed as a typed stream: every change to the records the caller
//! may read, in the service's order, resumed by itself after a cut (a network failure, an
//! instance restarting, a token expiring) from the last change received, so none is
//! missed and none comes twice.

use crate::error::Error;
use crate::transport::Transport;
use eventsource_stream::{Event, Eventsource};
use futures_core::Stream;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use restgen_wire::{feed, http};
use serde::de::DeserializeOwned;
use std::marker::PhantomData;
use std::time::Duration;

/// One change the feed reports.
#[derive(Clone, Debug, PartialEq)]
pub enum Change<T> {
    /// A record the caller may read was created: as they may see it.
    Created(T),
    /// One was changed (a transition included): as it now is.
    Updated(T),
    /// One was deleted: its id alone.
    Deleted { id: String },
    /// The feed could not go on from where this stream stood (the service no longer keeps
    /// the changes since): list the collection again; the changes after it follow.
    Reset,
}

/// A change stream: set filters, then take changes with [`next`](Changes::next) or as a
/// [`Stream`] ([`stream`](Changes::stream)).
pub struct Changes<T> {
    transport: Transport,
    path: String,
    query: Vec<(String, String)>,
    /// The id of the last event taken: where the next connection resumes.
    last_id: Option<String>,
    events: Option<BoxStream<'static, Result<Event, String>>>,
    /// The longest a connection may stay silent (the service sends a comment every
    /// fifteen seconds by default) before it is taken for dead and opened again.
    silence: Duration,
    record: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Changes<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes").field("path", &self.path).field("last_id", &self.last_id).finish_non_exhaustive()
    }
}

impl Transport {
    /// The change stream of the collection at `path` (`/orders`); see [`Changes`].
    pub fn changes<T>(&self, path: &str) -> Changes<T> {
        Changes {
            transport: self.clone(),
            path: format!("{path}{}", feed::PATH),
            query: Vec::new(),
            last_id: None,
            events: None,
            silence: Duration::from_secs(45),
            record: PhantomData,
        }
    }
}

impl<T: DeserializeOwned> Changes<T> {
    /// Only changes to records whose field `name` equals `value`, as the list's filter.
    #[must_use]
    pub fn filter(mut self, name: &str, value: impl ToString) -> Self {
        self.query.push((name.to_owned(), value.to_string()));
        self
    }

    /// Starts after the change with this id (one [`last_id`](Changes::last_id) gave, kept
    /// across a restart of the client), rather than at the changes to come.
    #[must_use]
    pub fn after(mut self, id: impl Into<String>) -> Self {
        self.last_id = Some(id.into());
        self
    }

    /// How long a connection may stay silent before it is opened again (default 45 s; the
    /// service's heartbeat is 15 s unless its deployment says otherwise).
    #[must_use]
    pub fn silence(mut self, silence: Duration) -> Self {
        self.silence = silence;
        self
    }

    /// The id of the last change (or start) taken: keep it to resume with [`after`](Changes::after).
    pub fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The next change, waiting for one. A cut connection is opened again from the last
    /// change taken, with the transport's retries; an error comes back when those are spent
    /// or the service refuses the stream (401, 403, a bad filter), and calling `next` again
    /// tries again from the same place.
    pub async fn next(&mut self) -> Result<Change<T>, Error> {
        loop {
            let events = match &mut self.events {
                Some(events) => events,
                None => {
                    let response = self.open().await?;
                    self.events
                        .insert(response.bytes_stream().eventsource().map(|e| e.map_err(|e| e.to_string())).boxed())
                }
            };
            let event = match tokio::time::timeout(self.silence, events.next()).await {
                Ok(Some(Ok(event))) => event,
                // Silent for too long, ended, or broken: opened again where it stood.
                Err(_) | Ok(None) | Ok(Some(Err(_))) => {
                    self.events = None;
                    continue;
                }
            };
            if let Some(change) = self.take(event).await? {
                return Ok(change);
            }
        }
    }

    /// Every change, as a stream that ends at the first error [`next`](Changes::next) returns.
    pub fn stream(self) -> impl Stream<Item = Result<Change<T>, Error>> {
        futures_util::stream::unfold(Some(self), |state| async move {
            let mut changes = state?;
            match changes.next().await {
                Ok(change) => Some((Ok(change), Some(changes))),
                Err(e) => Some((Err(e), None)),
            }
        })
    }

    async fn open(&self) -> Result<reqwest::Response, Error> {
        let mut call = self.transport.call(reqwest::Method::GET, &self.path, None, false);
        call.query = &self.query;
        call.lasting = true;
        call.headers.push(("accept", http::media::EVENT_STREAM.to_owned()));
        if let Some(id) = &self.last_id {
            call.headers.push((http::LAST_EVENT_ID.lowercase, id.clone()));
        }
        self.transport.send(&call).await
    }

    /// What one event is to the caller: a change, nothing (a start, or an event this
    /// client does not know), or the end of the stream.
    async fn take(&mut self, event: Event) -> Result<Option<Change<T>>, Error> {
        let decode = |message: String| Error::Decode { status: 200, message };
        let record = |data: &str| serde_json::from_str::<T>(data).map_err(|e| decode(e.to_string()));
        let change = match event.event.as_str() {
            feed::READY => None,
            feed::CREATED => Some(Change::Created(record(&event.data)?)),
            feed::UPDATED => Some(Change::Updated(record(&event.data)?)),
            feed::DELETED => {
                let tombstone: serde_json::Value =
                    serde_json::from_str(&event.data).map_err(|e| decode(e.to_string()))?;
                let id = match &tombstone["id"] {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Some(Change::Deleted { id })
            }
            feed::RESET => Some(Change::Reset),
            feed::CLOSED => {
                let closed: serde_json::Value = serde_json::from_str(&event.data).unwrap_or_default();
                // Whatever the reason, the stream is opened again: one the service will
                // not serve (revoked access) is refused then, and that refusal returned.
                self.events = None;
                if closed["reason"] == feed::closed::EXPIRED {
                    self.transport.forget_session().await;
                }
                return Ok(None);
            }
            _ => return Ok(None),
        };
        if !event.id.is_empty() {
            self.last_id = Some(event.id);
        }
        Ok(change)
    }
}
