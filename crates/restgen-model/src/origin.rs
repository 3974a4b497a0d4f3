//! Where a model node came from: a place in a schema file, or a span of derive input.
//!
//! Origins never take part in equality: a model built from YAML equals the same model
//! built from derive attributes, so the two front-ends can be compared node for node.

use std::fmt;
use std::sync::Arc;

/// The source of one model node.
#[derive(Clone, Default)]
pub enum Origin {
    /// A place in a schema file. Line and column are 1-based; column counts characters.
    File(FilePos),
    /// A token of derive input; compile errors are reported on it.
    Span(proc_macro2::Span),
    /// Built by hand, with no source to point at.
    #[default]
    Unknown,
}

/// A position in a schema file, with the byte range of the node for snippets.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FilePos {
    pub file: Arc<str>,
    pub line: u32,
    pub column: u32,
    pub start: usize,
    pub end: usize,
}

impl Origin {
    /// The file position, when the node came from a file.
    pub fn file_pos(&self) -> Option<&FilePos> {
        match self {
            Origin::File(pos) => Some(pos),
            _ => None,
        }
    }
}

impl PartialEq for Origin {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(p) => write!(f, "{}:{}:{}", p.file, p.line, p.column),
            Origin::Span(s) => write!(f, "span {s:?}"),
            Origin::Unknown => f.write_str("unknown"),
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(p) => write!(f, "{}:{}:{}", p.file, p.line, p.column),
            Origin::Span(_) => f.write_str("derive input"),
            Origin::Unknown => f.write_str("<unknown>"),
        }
    }
}

/// A value together with the place it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub origin: Origin,
}

impl<T> Located<T> {
    pub fn new(value: T, origin: Origin) -> Self {
        Located { value, origin }
    }

    /// A value with no place in any source (defaults applied to a hand-built model).
    pub fn bare(value: T) -> Self {
        Located { value, origin: Origin::Unknown }
    }
}

impl<T> std::ops::Deref for Located<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// A located value is written as its value alone: origins point into one build's inputs
/// and mean nothing elsewhere (a derived resource's model read back at run time).
impl<T: serde::Serialize> serde::Serialize for Located<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Located<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Located::bare)
    }
}
