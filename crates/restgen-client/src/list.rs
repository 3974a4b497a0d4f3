//! List requests and their pages, in each of the three pagination styles, and streams
//! that walk every page.

use crate::error::Error;
use crate::transport::Transport;
use futures_core::Stream;
use futures_util::{StreamExt, TryStreamExt, stream};
use reqwest::Method;
use reqwest::header::LINK;
use restgen_wire::query;
use serde::de::DeserializeOwned;
use std::marker::PhantomData;

/// How a resource's lists are paged (the schema's `pagination.style`): the wire's one
/// definition, which the service's side names too.
pub use restgen_wire::Paging as Style;

/// How a list answer wraps its records (the schema's `envelope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Envelope {
    /// A bare JSON array; whether more follow is in the `Link` header.
    Bare,
    /// An object with the records under this key, `has_more` and the style's fields.
    Key(&'static str),
}

/// A resource's paging, as generated code declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Paging {
    pub style: Style,
    pub envelope: Envelope,
}

/// A list request: build it with the generated typed setters, then [`send`](List::send)
/// it for one page or [`stream`](List::stream) every record.
#[derive(Clone, Debug)]
pub struct List<T> {
    transport: Transport,
    path: String,
    paging: Paging,
    query: Vec<(String, String)>,
    record: PhantomData<fn() -> T>,
}

/// One page of records.
#[derive(Clone, Debug, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// Whether more records follow this page.
    pub has_more: bool,
    /// The cursor of the next page (cursor style), when there is one.
    pub next_cursor: Option<String>,
}

impl Transport {
    /// A list request on `path`; see [`List`].
    pub fn list<T>(&self, path: String, paging: Paging) -> List<T> {
        List::new(self.clone(), path, paging)
    }
}

impl<T> List<T> {
    pub(crate) fn new(transport: Transport, path: String, paging: Paging) -> List<T> {
        List { transport, path, paging, query: Vec::new(), record: PhantomData }
    }

    /// Sets query parameter `key`, replacing an earlier value.
    pub fn param(mut self, key: &str, value: impl ToString) -> List<T> {
        self.query.retain(|(k, _)| k != key);
        self.query.push((key.to_owned(), value.to_string()));
        self
    }

    /// The `sort` parameter: keys most significant first; none is the default order.
    pub fn sort<K: AsRef<str>>(mut self, keys: impl IntoIterator<Item = K>) -> List<T> {
        let keys: Vec<String> = keys.into_iter().map(|k| k.as_ref().to_owned()).collect();
        if keys.is_empty() {
            self.query.retain(|(k, _)| k != query::SORT);
            return self;
        }
        self.param(query::SORT, keys.join(","))
    }

    pub fn paging(&self) -> Paging {
        self.paging
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

impl<T: DeserializeOwned> List<T> {
    /// One page.
    pub async fn send(&self) -> Result<Page<T>, Error> {
        let mut call = self.transport.call(Method::GET, &self.path, None, false);
        call.query = &self.query;
        let response = self.transport.send(&call).await?;
        let status = response.status().as_u16();
        let link_cursor = next_link(response.headers()).map(|query| {
            form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == query::CURSOR).map(|(_, v)| v.into_owned())
        });
        let bytes = response.bytes().await.map_err(Error::from_reqwest)?;
        let decode = |message: String| Error::Decode { status, message };
        match self.paging.envelope {
            Envelope::Bare => {
                let items: Vec<T> = serde_json::from_slice(&bytes).map_err(|e| decode(e.to_string()))?;
                let next_cursor = link_cursor.clone().flatten();
                Ok(Page { items, has_more: link_cursor.is_some(), next_cursor })
            }
            Envelope::Key(key) => {
                let mut body: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_slice(&bytes).map_err(|e| decode(e.to_string()))?;
                let items = body.remove(key).ok_or_else(|| decode(format!("no `{key}` in the answer")))?;
                let items: Vec<T> = serde_json::from_value(items).map_err(|e| decode(e.to_string()))?;
                let has_more = body.get("has_more").and_then(serde_json::Value::as_bool).unwrap_or(false);
                let next_cursor = body
                    .get("next_cursor")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| link_cursor.flatten());
                Ok(Page { items, has_more, next_cursor })
            }
        }
    }
}

impl<T: DeserializeOwned + Send + 'static> List<T> {
    /// Every record from this request's first page on, fetching each page as the last
    /// one runs out: `next_cursor` for cursor paging, the next `page`, or `offset` moved
    /// past the records seen. A failed page ends the stream with its error.
    pub fn stream(self) -> impl Stream<Item = Result<T, Error>> + Send + 'static {
        self.pages().map_ok(|items| stream::iter(items.into_iter().map(Ok))).try_flatten()
    }

    /// Every page's records, page by page.
    pub fn pages(self) -> impl Stream<Item = Result<Vec<T>, Error>> + Send + 'static {
        stream::try_unfold(Some(self), |list| async move {
            let Some(list) = list else { return Ok(None) };
            let page = list.send().await?;
            let next = if page.has_more && !page.items.is_empty() { list.next(&page) } else { None };
            Ok(Some((page.items, next)))
        })
        .boxed()
    }

    /// The request for the page after `page`, in this list's style.
    fn next(self, page: &Page<T>) -> Option<List<T>> {
        match self.paging.style {
            Style::Cursor => {
                let cursor = page.next_cursor.clone()?;
                let mut list = self;
                list.query.retain(|(k, _)| k != query::STARTING_AFTER);
                Some(list.param(query::CURSOR, cursor))
            }
            Style::Page => {
                let current: u64 = self.get(query::PAGE).and_then(|p| p.parse().ok()).unwrap_or(1);
                Some(self.param(query::PAGE, current + 1))
            }
            Style::Offset => {
                let current: u64 = self.get(query::OFFSET).and_then(|p| p.parse().ok()).unwrap_or(0);
                Some(self.param(query::OFFSET, current + page.items.len() as u64))
            }
        }
    }
}

/// The query of the `Link: <...>; rel="next"` target, when the answer has one.
fn next_link(headers: &reqwest::header::HeaderMap) -> Option<String> {
    headers.get_all(LINK).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).find_map(|link| {
        let (target, params) = link.trim().split_once(';')?;
        let next = params.split(';').any(|p| matches!(p.trim(), "rel=\"next\"" | "rel=next"));
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        next.then(|| target.split_once('?').map_or(String::new(), |(_, q)| q.to_owned()))
    })
}

#[cfg(test)]
mod tests {
    use super::next_link;
    use reqwest::header::{HeaderMap, HeaderValue, LINK};

    #[test]
    fn the_next_link_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            LINK,
            HeaderValue::from_static("</api/x?page=1>; rel=\"prev\", </api/x?cursor=abc&limit=2>; rel=\"next\""),
        );
        assert_eq!(next_link(&h).as_deref(), Some("cursor=abc&limit=2"));
        h.insert(LINK, HeaderValue::from_static("</api/x?page=1>; rel=\"prev\""));
        assert_eq!(next_link(&h), None);
        assert_eq!(next_link(&HeaderMap::new()), None);
    }
}
