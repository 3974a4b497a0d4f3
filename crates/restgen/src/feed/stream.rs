//! One caller's stream: `GET {collection}/changes` answered with the changes the caller's
//! list would show, as they may see them, from where they resume.

use super::{FeedSettings, Seat};
use crate::access::{self, Scope};
use crate::caller::Caller;
use crate::context::RequestContext;
use crate::problem::{FieldError, Problem};
use crate::spec::{FieldSpec, ResourceSpec};
use crate::store::changes::{Change, ChangeKind};
use crate::store::{Filter, StoreError};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::Response;
use restgen_wire::feed::{self, closed};
use restgen_wire::http::{LAST_EVENT_ID, X_ACCEL_BUFFERING, media};
use serde_json::json;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, mpsc, watch};

/// What a reader who fell behind is told.
const BEHIND: &str = "too many events went unread: resume with `Last-Event-ID`";

/// How many changes one read of the log takes while a stream catches up.
const PAGE: u32 = 200;

/// `GET {collection}/changes`: 200 and a stream of events, or the problem that stops it
/// before it starts (the list's own refusals, 406 for a client that takes no event
/// stream, 400 for a bad filter or `Last-Event-ID`, 429 beyond the open streams allowed).
pub(crate) async fn changes(
    spec: &'static ResourceSpec,
    cx: RequestContext,
    uri: &Uri,
    headers: &HeaderMap,
    peer: Option<IpAddr>,
) -> Result<Response, Problem> {
    let hub = super::hub(&cx.store).ok_or_else(|| Problem::not_found("no such route"))?;
    let expires = cx.caller.principal.as_ref().and_then(|p| p.expires_at);
    // A bearer token verifies a little past its expiry (clock skew between instances),
    // but a stream ends at it: one opened then would end at once, and be opened again.
    if expires.is_some_and(|at| at <= now_seconds()) {
        return Err(crate::caller::token_expired(&cx.caller));
    }
    cx.view.admits(spec)?;
    crate::negotiate::event_stream(headers)?;
    let scope = access::collection(spec.access.read, &cx.caller)?;
    let filters = {
        let queries = |f: &FieldSpec| cx.view.has(&f.gate) && access::queries(f, &cx.caller, scope);
        crate::list::feed_filters(spec, &queries, &crate::list::query_pairs(uri))?
    };
    let resume = last_event_id(headers)?;
    let who = match (cx.caller.id(), peer) {
        (Some(id), _) => format!("account:{id}"),
        (None, Some(ip)) => crate::rate::address::key(hub.proxies.client(ip, headers)),
        (None, None) => "anonymous".to_owned(),
    };
    let seat = hub.seat(who)?;
    // Subscribed before the log is read, so nothing numbered between the two is missed;
    // what arrives twice is told apart by its position.
    let live = hub.changes().subscribe();
    let bounds = cx.store.change_bounds().await?;
    let (at, first) = match resume {
        Some(id) if id + 1 >= bounds.first && id <= bounds.last => (id, ready(id)),
        Some(id) if id > bounds.last => (bounds.last, reset(bounds.last, "this log never gave that id")),
        Some(_) => (bounds.last, reset(bounds.last, "the log no longer keeps the changes after that id")),
        None => (bounds.last, ready(bounds.last)),
    };
    let (tx, rx) = mpsc::channel(hub.settings.buffer.max(1));
    tx.try_send(first).map_err(|_| Problem::internal())?;
    let last = Arc::new(Mutex::new(None));
    let reader =
        Reader { spec, cx, scope, filters, at, tx, last: last.clone(), settings: hub.settings.clone(), _seat: seat };
    // In the request's span, so that its lines carry the request's id.
    crate::outlined::spawn(tracing::Instrument::in_current_span(reader.run(live, super::stopping(), expires)));
    // The buffered events, then the word that ended the stream, if one did.
    let body = futures_util::stream::unfold((rx, Some(last)), |(mut rx, last)| async move {
        match rx.recv().await {
            Some(frame) => Some((Ok::<_, std::convert::Infallible>(frame), (rx, last))),
            None => {
                let word = last?.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()?;
                Some((Ok(word), (rx, None)))
            }
        }
    });
    let mut response = Response::new(Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media::EVENT_STREAM));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // nginx holds a proxied answer back until its buffer fills unless told not to.
    headers.insert(X_ACCEL_BUFFERING.lowercase, HeaderValue::from_static("no"));
    Ok(response)
}

/// `Last-Event-ID`: the position a client resumes after, a whole number as the feed's
/// events carry it.
fn last_event_id(headers: &HeaderMap) -> Result<Option<i64>, Problem> {
    let Some(value) = headers.get(LAST_EVENT_ID.lowercase) else { return Ok(None) };
    let text = value.to_str().unwrap_or("").trim();
    // An `EventSource` that has received no id sends an empty one.
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<i64>() {
        Ok(n) if n >= 0 => Ok(Some(n)),
        _ => Err(Problem::validation(vec![FieldError {
            field: LAST_EVENT_ID.name.into(),
            message: "is not the id of an event of this feed".into(),
        }])),
    }
}

/// An event: its id where it has one, its type, its data.
fn event(id: Option<i64>, kind: &str, data: &serde_json::Value) -> Bytes {
    let id = id.map(|n| format!("id: {n}\n")).unwrap_or_default();
    Bytes::from(format!("{id}event: {kind}\ndata: {data}\n\n"))
}

fn ready(at: i64) -> Bytes {
    event(Some(at), feed::READY, &json!({}))
}

fn reset(at: i64, detail: &str) -> Bytes {
    event(Some(at), feed::RESET, &json!({ "detail": format!("{detail}: list the collection again, then read on") }))
}

fn closing(reason: &str, detail: &str) -> Bytes {
    event(None, feed::CLOSED, &json!({ "reason": reason, "detail": detail }))
}

/// What a stream holds while it runs.
struct Reader {
    spec: &'static ResourceSpec,
    cx: RequestContext,
    scope: Scope,
    filters: Vec<Filter>,
    /// The last position handled (sent, or not the caller's to see).
    at: i64,
    tx: mpsc::Sender<Bytes>,
    /// Why the stream ended, sent after what the buffer holds.
    last: Arc<Mutex<Option<Bytes>>>,
    settings: FeedSettings,
    _seat: Seat,
}

/// Whether a stream goes on.
type Going = Result<(), ()>;

impl Reader {
    /// Sends every change after `at`, then each as it comes, until the client leaves or
    /// a limit ends the stream.
    async fn run(
        mut self,
        mut live: broadcast::Receiver<Arc<Change>>,
        stopping: Option<watch::Receiver<bool>>,
        expires: Option<u64>,
    ) {
        if self.catch_up().await.is_err() {
            return;
        }
        let mut heartbeat =
            tokio::time::interval_at(tokio::time::Instant::now() + self.settings.heartbeat, self.settings.heartbeat);
        let mut recheck =
            tokio::time::interval_at(tokio::time::Instant::now() + self.settings.recheck, self.settings.recheck);
        let expiry = tokio::time::sleep_until(until(expires));
        tokio::pin!(expiry);
        // A service served another way than by `serve` is told of no shutdown: a sender
        // kept for the stream's life stands for it, never changed.
        let (_never, unwatched) = watch::channel(false);
        let mut stopping = stopping.unwrap_or(unwatched);
        loop {
            let going = tokio::select! {
                got = live.recv() => match got {
                    Ok(change) if change.seq <= self.at => Ok(()),
                    Ok(change) if change.seq == self.at + 1 => {
                        self.at = change.seq;
                        self.offer(&change)
                    }
                    // A gap, or changes the channel dropped before this stream took them:
                    // the log has them all.
                    Ok(_) | Err(RecvError::Lagged(_)) => self.catch_up().await,
                    Err(RecvError::Closed) => self.close(closed::SHUTDOWN, "the service is stopping: resume with `Last-Event-ID`"),
                },
                _ = heartbeat.tick() => self.send(Bytes::from_static(b": keep-alive\n\n")),
                _ = recheck.tick() => self.recheck().await,
                () = &mut expiry, if expires.is_some() => {
                    self.close(closed::EXPIRED, "the bearer token has expired: resume with a fresh one")
                }
                changed = stopping.changed() => {
                    let stopped = changed.is_err() || *stopping.borrow_and_update();
                    if stopped {
                        self.close(closed::SHUTDOWN, "the service is stopping: resume with `Last-Event-ID`")
                    } else {
                        Ok(())
                    }
                }
                () = self.tx.closed() => Err(()),
            };
            if going.is_err() {
                return;
            }
        }
    }

    /// Reads the log on from `at` to its end, sending what is the caller's as fast as the
    /// client takes it; a client that takes nothing for a heartbeat's time is behind.
    async fn catch_up(&mut self) -> Going {
        loop {
            let page = match self.cx.store.changes_after(self.at, PAGE).await {
                Ok(page) => page,
                Err(e) => return self.failed(&e),
            };
            let full = page.len() == PAGE as usize;
            for change in page {
                self.at = change.seq;
                if let Some(frame) = self.frame(&change) {
                    match tokio::time::timeout(self.settings.heartbeat, self.tx.send(frame)).await {
                        Ok(sent) => sent.map_err(drop)?,
                        Err(_) => return self.close(closed::BEHIND, BEHIND),
                    }
                }
            }
            if !full {
                return Ok(());
            }
        }
    }

    /// Sends a live change if it is the caller's to see.
    fn offer(&self, change: &Change) -> Going {
        match self.frame(change) {
            Some(frame) => self.send(frame),
            None => Ok(()),
        }
    }

    /// The event `change` is to this caller: `None` when it is not of this resource, not
    /// of a record their list would show, or not one the filters ask for.
    fn frame(&self, change: &Change) -> Option<Bytes> {
        let (spec, record) = (self.spec, &change.record);
        if change.resource != spec.name {
            return None;
        }
        if self.scope == Scope::Own && !access::owns(spec, &self.cx.caller, record) {
            return None;
        }
        if !self.filters.iter().all(|f| crate::list::matches(spec, f, record)) {
            return None;
        }
        let data = match change.kind {
            // The id alone: what else the record held is gone with it.
            ChangeKind::Deleted => json!({ "id": record.get("id") }),
            ChangeKind::Created | ChangeKind::Updated => {
                serde_json::to_value(crate::operations::representation(spec, &self.cx, record.clone())).ok()?
            }
        };
        Some(event(Some(change.seq), change.kind.word(), &data))
    }

    /// Sends a frame into the stream's buffer; a reader who has left it full is behind.
    fn send(&self, frame: Bytes) -> Going {
        match self.tx.try_send(frame) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => self.close(closed::BEHIND, BEHIND),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(()),
        }
    }

    /// Ends the stream, saying why once what the buffer holds is read.
    fn close(&self, reason: &str, detail: &str) -> Going {
        *self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(closing(reason, detail));
        Err(())
    }

    fn failed(&self, e: &StoreError) -> Going {
        tracing::warn!(error = %e, resource = self.spec.name, "a change stream could not read the log");
        self.close(closed::UNAVAILABLE, "the change log could not be read: resume with `Last-Event-ID`")
    }

    /// Looks at the caller again: an account that is gone, a key revoked or a right to
    /// read the list taken away ends the stream; a narrower right narrows it.
    async fn recheck(&mut self) -> Going {
        let Some(now) = self.caller_now().await else {
            return self.close(closed::REVOKED, "the credentials this stream was opened with no longer hold");
        };
        let Ok(scope) = access::collection(self.spec.access.read, &now) else {
            return self.close(closed::REVOKED, "you may no longer read this collection");
        };
        let spec = self.spec;
        let queries = |column: &str| spec.fields.iter().any(|f| f.name == column && access::queries(f, &now, scope));
        if !self.filters.iter().all(|f| queries(f.column)) {
            return self.close(closed::REVOKED, "you may no longer filter on a field this stream filters on");
        }
        self.cx.caller = now;
        self.scope = scope;
        Ok(())
    }

    /// The caller as their credentials stand now: the account still there with its roles
    /// (a bearer token's roles, less those the account no longer holds), the API key not
    /// revoked; `None` where the credentials no longer hold.
    async fn caller_now(&self) -> Option<Caller> {
        let caller = &self.cx.caller;
        let (Some(then), Some(auth)) = (&caller.principal, caller.auth) else { return Some(caller.clone()) };
        let mut now = crate::auth::caller_of(auth, &self.cx.store, &then.id).await?;
        let principal = now.principal.as_mut()?;
        if let Some(key) = &then.api_key {
            let owner = auth.principal.as_ref()?.resource.id;
            self.cx.store.api_key(key, owner).await.ok()??;
        }
        if then.expires_at.is_some() {
            principal.roles.retain(|r| then.roles.contains(r));
            principal.admin &= then.admin;
        }
        principal.api_key.clone_from(&then.api_key);
        principal.expires_at = then.expires_at;
        Some(now)
    }
}

/// How long until `expires` (Unix seconds); far off where there is none.
fn until(expires: Option<u64>) -> tokio::time::Instant {
    let now = now_seconds();
    let left = expires.map_or(Duration::from_secs(86_400 * 365), |at| Duration::from_secs(at.saturating_sub(now)));
    tokio::time::Instant::now() + left
}

/// Now, in Unix seconds, as token expiries are written.
fn now_seconds() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}
