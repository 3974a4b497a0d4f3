//! Where a model node came from: a place in a schema file, or a span of derive input.
//!
//! Origins never take part in equality: a model built from YAML equals the same model
//! built from derive attributes, so the two front-ends can be compared node for node.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

/// The source of one model node.
#[derive(Clone, Default)]
pub enum Origin {
    /// A place in a schema file. Line and column are 1-based; column counts characters.
    File(FilePos),
    /// A token of derive input; compile errors are reported on it.
    Span(DeriveSpan),
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
            Origin::Span(s) => write!(f, "span {:?}", s.span()),
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

/// A token of derive input, by its place in a table of the spans this thread's derive
/// read. A `proc_macro2::Span` may not leave its thread (the compiler's spans belong to
/// the macro call), so a model holding one could not be shared by the threads that
/// generate from it at once; an index can, and only the derive, on its own thread, turns
/// it back into the span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeriveSpan(u32);

thread_local! {
    static SPANS: RefCell<Vec<proc_macro2::Span>> = const { RefCell::new(Vec::new()) };
}

impl DeriveSpan {
    pub fn new(span: proc_macro2::Span) -> DeriveSpan {
        SPANS.with_borrow_mut(|spans| {
            spans.push(span);
            DeriveSpan(u32::try_from(spans.len() - 1).unwrap_or(u32::MAX))
        })
    }

    /// The span, on the thread that read it; on any other (or after [`Self::forget_all`])
    /// the macro's call site.
    pub fn span(self) -> proc_macro2::Span {
        SPANS.with_borrow(|spans| spans.get(self.0 as usize).copied()).unwrap_or_else(proc_macro2::Span::call_site)
    }

    /// Empties this thread's table: a derive starts with it, so a compiler or language
    /// server that runs many derives on one thread keeps no spans from the ones before.
    pub fn forget_all() {
        SPANS.with_borrow_mut(Vec::clear);
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

impl Located<bool> {
    /// Whether a flag is off: a flag added to the model after records of it were written
    /// is left out of them while off, so they read back the same.
    pub fn is_false(flag: &Located<bool>) -> bool {
        !flag.value
    }
}

/// A flag missing from a record written before it existed is off.
impl Default for Located<bool> {
    fn default() -> Self {
        Located::bare(false)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI generates from one model on several threads at once.
    #[test]
    fn a_model_is_shared_by_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<crate::model::Service>();
    }

    /// Each derive starts its table again, so a compiler or language server running many
    /// keeps none of the spans of the ones before. (Spans given back where the derive read
    /// them: the trybuild cases of tests/builds/tests/derive_ui.rs, whose errors land on their
    /// attributes.)
    #[test]
    fn a_derive_keeps_no_spans_of_the_ones_before() {
        let span = proc_macro2::Span::call_site();
        DeriveSpan::forget_all();
        let first = DeriveSpan::new(span);
        assert_ne!(DeriveSpan::new(span), first, "each span has its own place");
        DeriveSpan::forget_all();
        assert_eq!(DeriveSpan::new(span), first, "the table starts again");
        DeriveSpan::forget_all();
    }
}
