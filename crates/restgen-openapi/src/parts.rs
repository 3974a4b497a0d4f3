//! A document made as it is written. All of it but its resources' paths and schemas is
//! made first ([`Parts::new`]); each resource's paths and schemas are made, finished
//! (deprecation, rate limit and CORS headers) and written one resource at a time, so a
//! large service's paths are never all alive at once: a thousand resources' paths were
//! 150 MB of values for 40 MB of text, memory each run had to fault in and clear.

use crate::headers::{self, Deprecated, cors_headers, etag_header};
use crate::paths::{auth_paths, probes, resource_paths};
use crate::problems::{error_responses, problem_schema};
use crate::security::security_schemes;
use crate::{rate, webhooks};
use restgen_model::model::{ApiVersion, Resource, Service};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};
use std::cell::RefCell;
use std::io::Write;

pub(crate) struct Parts<'s> {
    service: &'s Service,
    resource_base: &'s str,
    /// The document, but for its resources' paths and `components.schemas` (an empty
    /// place, filled as it is written).
    pub doc: Value,
    /// The schemas of the service's own endpoints; each resource's are added as its paths
    /// are written, before `components` is.
    schemas: RefCell<Map<String, Value>>,
    finish: Finish,
}

/// What every path gets once made: a deprecated version's marks on its resources' paths,
/// the rate limit fields on limited paths, `Access-Control-Allow-Origin` on every answer.
struct Finish {
    deprecated: Option<Deprecated>,
    rate: Option<Value>,
    cors: Option<Value>,
}

impl Finish {
    fn item(&self, service: &Service, path: &str, resource: Option<&Resource>, item: &mut Value) {
        if let (Some(d), Some(_)) = (&self.deprecated, resource) {
            headers::deprecate(item, d);
        }
        if let Some(refs) = self.rate.as_ref().filter(|_| rate::limited(service, path, resource)) {
            rate::limit(item, refs);
        }
        if let Some(header) = &self.cors {
            headers::cors_item(item, header);
        }
    }
}

impl<'s> Parts<'s> {
    /// The document with auth endpoints under `base` and resources under `resource_base`,
    /// those of a `deprecated` version marked as such.
    pub fn new(service: &'s Service, base: &str, resource_base: &'s str, deprecated: Option<&ApiVersion>) -> Self {
        let mut paths = Map::new();
        let mut schemas = Map::new();
        schemas.insert("Problem".into(), problem_schema());
        for (path, item) in probes() {
            paths.insert(path.into(), item);
        }
        if let Some(auth) = &service.auth {
            auth_paths(service, auth, base, &mut paths, &mut schemas);
        }
        if webhooks::published(service) {
            webhooks::paths(service, base, &mut paths, &mut schemas);
        }
        let version = service.api.versions.last().map_or_else(|| "1".to_owned(), |v| v.number.value.to_string());
        let mut info = json!({
            "title": service.title.clone().unwrap_or_else(|| service.name.value.clone()),
            "version": version,
        });
        if let Some(d) = &service.description {
            info["description"] = json!(d);
        }
        let mut tags = vec![json!({ "name": "service", "description": "The service itself." })];
        if service.auth.is_some() {
            tags.push(json!({ "name": "auth", "description": "Signing in and API keys." }));
        }
        if webhooks::published(service) {
            tags.push(json!({ "name": "webhooks", "description": "Subscriptions to the events the service publishes, and their deliveries." }));
        }
        for r in &service.resources {
            let description = r.description.clone().unwrap_or_else(|| format!("The {} collection.", r.path.value));
            tags.push(json!({ "name": r.name.value, "description": description }));
        }
        let mut doc = json!({
            "openapi": "3.1.0",
            "info": info,
            "servers": [{
                "url": "/",
                "description": "The instance serving this document, whichever environment it runs in (local, staging or production).",
                "x-internal": false,
            }],
            "tags": [],
            "paths": {},
            "components": { "schemas": {}, "responses": error_responses(service) },
        });
        // Moved in, not through `json!`, which copies every value it is given.
        doc["tags"] = Value::Array(tags);
        if let Some(auth) = &service.auth {
            doc["components"]["securitySchemes"] = security_schemes(auth);
        }
        if webhooks::published(service) {
            doc["webhooks"] = webhooks::events(service);
        }
        if !service.resources.is_empty() {
            doc["components"]["headers"] = json!({ "ETag": etag_header() });
        }
        let finish = Finish {
            deprecated: deprecated.map(|v| headers::deprecation(&mut doc, v)),
            rate: rate::document(&mut doc, service),
            cors: service.cors.as_ref().map(|cors| cors_headers(&mut doc, cors)),
        };
        for (path, item) in paths.iter_mut() {
            finish.item(service, path, None, item);
        }
        doc["paths"] = Value::Object(paths);
        Parts { service, resource_base, doc, schemas: RefCell::new(schemas), finish }
    }

    /// The document as pretty JSON text, ending in a newline.
    pub fn text(self) -> String {
        let mut out = Chunks::default();
        if Whole(&self).serialize(&mut serde_json::Serializer::pretty(&mut out)).is_err() {
            return String::new();
        }
        out.into_text()
    }
}

/// The document, its resources' paths made as they are written.
struct Whole<'p, 's>(&'p Parts<'s>);

impl Serialize for Whole<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let doc = self.0.doc.as_object().expect("a document is an object");
        let mut map = serializer.serialize_map(Some(doc.len()))?;
        for (key, value) in doc {
            match key.as_str() {
                "paths" => map.serialize_entry(key, &Paths(self.0))?,
                "components" => map.serialize_entry(key, &Components(self.0))?,
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// The service's own paths, then each resource's, made, finished and written in turn.
struct Paths<'p, 's>(&'p Parts<'s>);

impl Serialize for Paths<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let parts = self.0;
        let mut map = serializer.serialize_map(None)?;
        for (path, item) in parts.doc["paths"].as_object().into_iter().flatten() {
            map.serialize_entry(path, item)?;
        }
        for r in &parts.service.resources {
            let mut paths = Map::new();
            resource_paths(parts.service, r, parts.resource_base, &mut paths, &mut parts.schemas.borrow_mut());
            let collection = format!("{}{}", parts.resource_base, r.path.value);
            crate::feed::feed_paths(parts.service, r, &collection, &mut paths);
            for (path, mut item) in paths {
                parts.finish.item(parts.service, &path, Some(r), &mut item);
                map.serialize_entry(&path, &item)?;
            }
        }
        map.end()
    }
}

/// `components`, its schemas those of every resource written before it.
struct Components<'p, 's>(&'p Parts<'s>);

impl Serialize for Components<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let components = self.0.doc["components"].as_object().expect("components is an object");
        let mut map = serializer.serialize_map(Some(components.len()))?;
        for (key, value) in components {
            if key == "schemas" {
                map.serialize_entry(key, &*self.0.schemas.borrow())?;
            } else {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

/// Text written in pieces of a few MiB, joined once into a string of the exact length:
/// a buffer grown by doubling is copied at every step, each step fresh memory.
#[derive(Default)]
struct Chunks {
    done: Vec<Vec<u8>>,
    current: Vec<u8>,
}

const CHUNK: usize = 4 << 20;

impl Write for Chunks {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    // serde_json writes a document a few bytes at a time, through `write_all`.
    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.current.capacity() - self.current.len() < bytes.len() {
            self.next_chunk(bytes.len());
        }
        self.current.extend_from_slice(bytes);
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Chunks {
    #[cold]
    fn next_chunk(&mut self, at_least: usize) {
        let full = std::mem::replace(&mut self.current, Vec::with_capacity(CHUNK.max(at_least)));
        if !full.is_empty() {
            self.done.push(full);
        }
    }

    /// The text, with the newline a file ends in.
    fn into_text(self) -> String {
        let len = self.done.iter().map(Vec::len).sum::<usize>() + self.current.len() + 1;
        let mut text = Vec::with_capacity(len);
        for chunk in self.done.iter().chain([&self.current]) {
            text.extend_from_slice(chunk);
        }
        text.push(b'\n');
        String::from_utf8(text).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_written_in_pieces_is_joined_whole_in_order() {
        let mut chunks = Chunks::default();
        let mut expected = Vec::new();
        // Small writes across a chunk's end, a write larger than a chunk, and an empty one.
        let pieces: Vec<Vec<u8>> = (0..3000)
            .map(|i| vec![b'a' + (i % 26) as u8; 1 + i % 4000])
            .chain([vec![b'X'; CHUNK * 2 + 3], Vec::new(), b"end".to_vec()])
            .collect();
        for piece in &pieces {
            chunks.write_all(piece).unwrap();
            expected.extend_from_slice(piece);
        }
        assert!(chunks.done.len() > 2, "the text spans several chunks");
        expected.push(b'\n');
        assert_eq!(chunks.into_text().as_bytes(), expected);
    }

    #[test]
    fn an_empty_text_is_the_newline_alone() {
        assert_eq!(Chunks::default().into_text(), "\n");
    }
}
