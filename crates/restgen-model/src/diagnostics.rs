//! Problems found in a model: collected, never returned early, each with a stable code
//! and a place. Rendering them with source snippets is restgen-core's (`diagnostics`);
//! they live here so what judges a model without the core (schema evolution, which the
//! runtime also runs for derived services) reports the same way.

use crate::origin::Origin;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

/// A stable diagnostic code (`E0102`) with a short name; listed in `docs/diagnostics.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Code {
    pub id: &'static str,
    pub name: &'static str,
}

/// Every code restgen reports. Codes never change meaning once released.
pub mod codes {
    use super::Code;

    macro_rules! codes {
        ($($konst:ident = $id:literal $name:literal;)*) => {
            $(pub const $konst: Code = Code { id: $id, name: $name };)*
            /// All codes, in order.
            pub const ALL: &[Code] = &[$($konst),*];
        };
    }

    codes! {
        YAML_SYNTAX = "E0001" "yaml-syntax";
        UNKNOWN_KEY = "E0002" "unknown-key";
        WRONG_TYPE = "E0003" "wrong-type";
        MISSING_KEY = "E0004" "missing-key";
        INVALID_VALUE = "E0005" "invalid-value";
        DUPLICATE_KEY = "E0006" "duplicate-key";
        DUPLICATE_ENTRY = "E0007" "duplicate-entry";
        UNSUPPORTED_YAML = "E0008" "unsupported-yaml";
        UNKNOWN_FIELD_TYPE = "E0101" "unknown-field-type";
        ENUM_WITHOUT_VALUES = "E0102" "enum-without-values";
        BAD_DEFAULT = "E0103" "bad-default";
        MIN_ABOVE_MAX = "E0104" "min-above-max";
        BAD_PATTERN = "E0105" "bad-pattern";
        RESERVED_FIELD = "E0106" "reserved-field";
        KEY_NOT_FOR_TYPE = "E0107" "key-not-for-type";
        FILTER_UNSUPPORTED = "E0108" "filter-unsupported";
        SORT_UNSUPPORTED = "E0109" "sort-unsupported";
        SETTABLE_SERVER_FIELD = "E0110" "settable-server-field";
        REQUIRED_NOT_SETTABLE = "E0111" "required-not-settable";
        CONFLICTING_FLAGS = "E0112" "conflicting-flags";
        BAD_NAME = "E0113" "bad-name";
        DISCLOSING_UNIQUE = "E0114" "disclosing-unique";
        FIELD_ACCESS = "E0115" "field-access";
        UNKNOWN_RESOURCE = "E0201" "unknown-resource";
        OWNER_NOT_PRINCIPAL = "E0202" "owner-not-principal";
        NESTED_WITHOUT_LINK = "E0203" "nested-without-link";
        UNKNOWN_FIELD = "E0204" "unknown-field";
        REF_NAMES_ONLY_SELF = "E0205" "ref-names-only-self";
        OWNER_WITHOUT_PRINCIPAL = "E0301" "owner-without-principal";
        PRINCIPAL_INCOMPLETE = "E0302" "principal-incomplete";
        UNDECLARED_ROLE = "E0303" "undeclared-role";
        AUTH_CONFIG = "E0304" "auth-config";
        ACCESS_WITHOUT_AUTH = "E0305" "access-without-auth";
        WEAK_CREDENTIALS = "E0306" "weak-credentials";
        BAD_PATH = "E0401" "bad-path";
        PATH_CLASH = "E0402" "path-clash";
        STATES_NOT_ENUM = "E0501" "states-not-enum";
        UNKNOWN_STATE = "E0502" "unknown-state";
        UNREACHABLE_STATE = "E0503" "unreachable-state";
        UNKNOWN_EVENT = "E0504" "unknown-event";
        STATUS_WITHOUT_STATES = "E0505" "status-without-states";
        STATUS_WITHOUT_TIMESTAMPS = "E0506" "status-without-timestamps";
        FEED_WITHOUT_LIST = "E0507" "feed-without-list";
        CACHE_PUBLIC_PRIVATE = "E0601" "cache-public-on-private";
        BAD_PAGINATION = "E0602" "bad-pagination";
        BAD_CORS = "E0603" "bad-cors";
        UNDECLARED_VERSION = "E0701" "undeclared-version";
        EMPTY_VERSION_RANGE = "E0702" "empty-version-range";
        VERSION_ORDER = "E0703" "version-order";
        REQUIRED_GATED = "E0704" "required-gated-field";
        NOT_SERVED = "E0801" "not-served";
        DERIVE_SHAPE = "E0901" "derive-shape";
        RUST_TYPE = "E0902" "rust-type";
        BAD_RENAME = "E1001" "bad-rename";
        DATA_LOSS = "E1002" "data-loss";
        NARROWING_CHANGE = "E1003" "narrowing-change";
        NOTHING_TO_FILL = "E1004" "nothing-to-fill";
    }
}

/// One problem, at one place.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    pub origin: Origin,
    /// Text under the primary caret.
    pub label: Option<String>,
    /// Other places that explain the problem ("first declared here").
    pub related: Vec<(Origin, String)>,
    /// What to do about it ("did you mean `settable`?").
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn label(&mut self, text: impl Into<String>) -> &mut Self {
        self.label = Some(text.into());
        self
    }

    pub fn hint(&mut self, text: impl Into<String>) -> &mut Self {
        self.hint = Some(text.into());
        self
    }

    pub fn hint_opt(&mut self, text: Option<String>) -> &mut Self {
        if text.is_some() {
            self.hint = text;
        }
        self
    }

    pub fn related(&mut self, origin: &Origin, text: impl Into<String>) -> &mut Self {
        self.related.push((origin.clone(), text.into()));
        self
    }
}

/// The collector every stage writes into.
#[derive(Debug, Default)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn error(&mut self, code: Code, origin: &Origin, message: impl Into<String>) -> &mut Diagnostic {
        self.push(Severity::Error, code, origin, message.into())
    }

    pub fn warning(&mut self, code: Code, origin: &Origin, message: impl Into<String>) -> &mut Diagnostic {
        self.push(Severity::Warning, code, origin, message.into())
    }

    fn push(&mut self, severity: Severity, code: Code, origin: &Origin, message: String) -> &mut Diagnostic {
        self.items.push(Diagnostic {
            severity,
            code,
            message,
            origin: origin.clone(),
            label: None,
            related: Vec::new(),
            hint: None,
        });
        self.items.last_mut().expect("just pushed")
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// The diagnostics in source order (file, position, code), the order they are shown,
    /// without repeats of one problem at one place (a default inherited by many resources
    /// is reported once).
    pub fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.items.sort_by_cached_key(sort_key);
        self.items.dedup_by(|a, b| sort_key(a) == sort_key(b) && a.origin.file_pos().is_some());
        self.items
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }
}

fn sort_key(d: &Diagnostic) -> (String, usize, usize, Code, String) {
    match d.origin.file_pos() {
        Some(p) => (p.file.to_string(), p.start, p.end, d.code, d.message.clone()),
        None => (String::new(), 0, 0, d.code, d.message.clone()),
    }
}
