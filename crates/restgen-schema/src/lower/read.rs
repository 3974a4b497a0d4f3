//! Reading typed values out of nodes, reporting every misfit with its place.

use crate::yaml::{Node, NodeKind};
use restgen_core::diagnostics::{Diagnostics, codes, did_you_mean};
use restgen_core::origin::{Located, Origin};
use restgen_core::vocabulary::{Fronts, Table};
use restgen_core::words::Word;
use std::time::Duration;

/// The lowering's context: where diagnostics go.
pub(crate) struct Cx<'d> {
    pub diags: &'d mut Diagnostics,
}

/// The entries of one map whose keys have been checked against its table.
pub(crate) struct Map<'a> {
    entries: &'a [(Node, Node)],
    table: &'static Table,
    pub origin: &'a Origin,
}

impl<'a> Map<'a> {
    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&'a Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// The key node and value under `key`.
    pub fn entry(&self, key: &str) -> Option<(&'a Node, &'a Node)> {
        // The lowering asks only for keys of the vocabulary: a misspelt key here would
        // silently never be read.
        debug_assert!(
            self.table.key(key).is_some_and(|k| k.spelled_in(Fronts::Yaml)),
            "`{key}` is not a key of `{}` in the vocabulary",
            self.table.name
        );
        self.entries.iter().find(|(k, _)| k.key_text() == Some(key)).map(|(k, v)| (k, v))
    }
}

impl Cx<'_> {
    fn wrong_type(&mut self, node: &Node, what: &str, expected: &str) {
        self.diags.error(
            codes::WRONG_TYPE,
            &node.origin,
            format!("{what} must be {expected}, found {}", node.describe()),
        );
    }

    /// `node` as a map whose keys all come from `table`; unknown keys are reported with the
    /// nearest known one.
    pub fn map<'a>(&mut self, node: &'a Node, what: &str, table: &'static Table) -> Option<Map<'a>> {
        let NodeKind::Map(entries) = &node.kind else {
            self.wrong_type(node, what, "a map");
            return None;
        };
        let keys = table.names(Fronts::Yaml);
        for (key, _) in entries {
            match key.key_text() {
                Some(k) if keys.contains(&k) => {}
                Some(k) => {
                    let hint = match did_you_mean(k, keys.iter().copied()) {
                        Some(m) => format!("did you mean `{m}`?"),
                        None => format!("{what} takes: {}", keys.join(", ")),
                    };
                    self.diags
                        .error(codes::UNKNOWN_KEY, &key.origin, format!("unknown key `{k}` in {what}"))
                        .hint(hint);
                }
                None => self.wrong_type(key, "a key", "a string"),
            }
        }
        Some(Map { entries, table, origin: &node.origin })
    }

    /// `node` as a map of user-chosen names (resources, fields, transitions).
    pub fn named_map<'a>(&mut self, node: &'a Node, what: &str) -> Vec<(Located<String>, &'a Node)> {
        let NodeKind::Map(entries) = &node.kind else {
            if !node.is_null() {
                self.wrong_type(node, what, "a map");
            }
            return Vec::new();
        };
        entries
            .iter()
            .filter_map(|(k, v)| match k.key_text() {
                Some(name) => Some((Located::new(name.to_owned(), k.origin.clone()), v)),
                None => {
                    self.wrong_type(k, "a name", "a string");
                    None
                }
            })
            .collect()
    }

    /// Items of a list; a single scalar is not promoted to a list.
    pub fn seq<'a>(&mut self, node: &'a Node, what: &str) -> &'a [Node] {
        match &node.kind {
            NodeKind::Seq(items) => items,
            _ if node.is_null() => &[],
            _ => {
                self.wrong_type(node, what, "a list");
                &[]
            }
        }
    }

    pub fn string(&mut self, node: &Node, what: &str) -> Option<Located<String>> {
        match &node.kind {
            NodeKind::Scalar { text, .. } if !node.is_null() => Some(Located::new(text.clone(), node.origin.clone())),
            _ => {
                self.wrong_type(node, what, "a string");
                None
            }
        }
    }

    pub fn strings(&mut self, node: &Node, what: &str) -> Vec<Located<String>> {
        self.seq(node, what).iter().filter_map(|n| self.string(n, &format!("an entry of {what}"))).collect()
    }

    pub fn bool(&mut self, node: &Node, what: &str) -> Option<Located<bool>> {
        let value = match &node.kind {
            NodeKind::Scalar { text, plain: true } => match text.as_str() {
                "true" | "True" | "TRUE" => Some(true),
                "false" | "False" | "FALSE" => Some(false),
                _ => None,
            },
            _ => None,
        };
        if value.is_none() {
            let d = self.diags.error(
                codes::WRONG_TYPE,
                &node.origin,
                format!("{what} must be `true` or `false`, found {}", node.describe()),
            );
            if matches!(&node.kind, NodeKind::Scalar { text, .. } if ["yes", "no", "on", "off", "y", "n"].contains(&text.to_lowercase().as_str()))
            {
                d.hint("YAML 1.2 reads only `true` and `false` as booleans");
            }
        }
        value.map(|v| Located::new(v, node.origin.clone()))
    }

    /// A non-negative whole number.
    pub fn uint(&mut self, node: &Node, what: &str) -> Option<Located<u64>> {
        match &node.kind {
            NodeKind::Scalar { text, plain: true } if text.bytes().all(|b| b.is_ascii_digit()) && !text.is_empty() => {
                match text.parse() {
                    Ok(n) => Some(Located::new(n, node.origin.clone())),
                    Err(_) => {
                        self.diags.error(codes::INVALID_VALUE, &node.origin, format!("{what} is too large"));
                        None
                    }
                }
            }
            _ => {
                self.wrong_type(node, what, "a whole number of at least 0");
                None
            }
        }
    }

    /// A whole number that fits in u32 and is at least `min`.
    pub fn u32_at_least(&mut self, node: &Node, what: &str, min: u32) -> Option<Located<u32>> {
        let n = self.uint(node, what)?;
        match u32::try_from(n.value) {
            Ok(v) if v >= min => Some(Located::new(v, n.origin)),
            _ => {
                self.diags.error(
                    codes::INVALID_VALUE,
                    &node.origin,
                    format!("{what} must be between {min} and {}", u32::MAX),
                );
                None
            }
        }
    }

    pub fn number(&mut self, node: &Node, what: &str) -> Option<Located<f64>> {
        match &node.kind {
            NodeKind::Scalar { text, plain: true } => match text.parse::<f64>() {
                Ok(n) if n.is_finite() => Some(Located::new(n, node.origin.clone())),
                _ => {
                    self.wrong_type(node, what, "a number");
                    None
                }
            },
            _ => {
                self.wrong_type(node, what, "a number");
                None
            }
        }
    }

    /// One of the words of `W`.
    pub fn word_of<W: Word>(&mut self, node: &Node, what: &str) -> Option<Located<W>> {
        self.word(node, what, &pairs::<W>())
    }

    /// A list of words of `W`; repeats are reported.
    pub fn words_of<W: Word>(&mut self, node: &Node, what: &str) -> Vec<Located<W>> {
        self.words(node, what, &pairs::<W>())
    }

    /// One of a fixed set of words.
    pub fn word<T: Copy>(&mut self, node: &Node, what: &str, words: &[(&str, T)]) -> Option<Located<T>> {
        let text = self.string(node, what)?;
        if let Some((_, v)) = words.iter().find(|(w, _)| *w == text.value) {
            return Some(Located::new(*v, node.origin.clone()));
        }
        let names: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
        let hint = match did_you_mean(&text.value, names.iter().copied()) {
            Some(m) => format!("did you mean `{m}`?"),
            None => format!("expected one of: {}", names.join(", ")),
        };
        self.diags
            .error(codes::INVALID_VALUE, &node.origin, format!("`{}` is not a valid {what}", text.value))
            .hint(hint);
        None
    }

    /// A list of words from a fixed set; repeats are reported.
    pub fn words<T: Copy + PartialEq>(&mut self, node: &Node, what: &str, words: &[(&str, T)]) -> Vec<Located<T>> {
        let mut out: Vec<Located<T>> = Vec::new();
        for item in self.seq(node, what) {
            if let Some(w) = self.word(item, what, words) {
                if let Some(first) = out.iter().find(|o| o.value == w.value) {
                    self.diags
                        .error(codes::DUPLICATE_ENTRY, &w.origin, format!("{what} listed twice"))
                        .related(&first.origin, "first listed here");
                } else {
                    out.push(w);
                }
            }
        }
        out
    }

    /// Seconds as an integer, or `<n>ms|s|m|h|d`.
    pub fn duration(&mut self, node: &Node, what: &str) -> Option<Located<Duration>> {
        let text = self.string(node, what)?;
        let d = restgen_core::model::parse_duration(&text.value);
        if d.is_none() {
            self.diags
                .error(codes::INVALID_VALUE, &node.origin, format!("{what} `{}` is not a duration", text.value))
                .hint(restgen_core::model::DURATION_HINT);
        }
        d.map(|d| Located::new(d, node.origin.clone()))
    }

    /// Bytes as an integer, or a number with a unit (`512KiB`, `1MiB`, `2MB`).
    pub fn size(&mut self, node: &Node, what: &str) -> Option<Located<u64>> {
        let text = self.string(node, what)?;
        let t = text.value.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (digits, unit) = t.split_at(split);
        let factor = match unit.trim() {
            "" | "B" => Some(1u64),
            "KB" => Some(1000),
            "KiB" => Some(1024),
            "MB" => Some(1000 * 1000),
            "MiB" => Some(1024 * 1024),
            "GB" => Some(1000 * 1000 * 1000),
            "GiB" => Some(1024 * 1024 * 1024),
            _ => None,
        };
        let size = digits.parse::<u64>().ok().zip(factor).and_then(|(n, f)| n.checked_mul(f));
        if size.is_none() {
            self.diags
                .error(codes::INVALID_VALUE, &node.origin, format!("{what} `{}` is not a size", text.value))
                .hint("write bytes as a number, or a number with a unit: `512KiB`, `1MiB`, `2MB`");
        }
        size.map(|s| Located::new(s, node.origin.clone()))
    }

    /// An RFC 3339 datetime or a date (midnight UTC), as unix seconds.
    pub fn timestamp(&mut self, node: &Node, what: &str) -> Option<Located<i64>> {
        let text = self.string(node, what)?;
        let secs = chrono::DateTime::parse_from_rfc3339(&text.value).map(|t| t.timestamp()).ok().or_else(|| {
            chrono::NaiveDate::parse_from_str(&text.value, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|t| t.and_utc().timestamp())
        });
        if secs.is_none() {
            self.diags
                .error(codes::INVALID_VALUE, &node.origin, format!("{what} `{}` is not a date or datetime", text.value))
                .hint("write `2027-06-30` or `2027-06-30T00:00:00Z`");
        }
        secs.map(|s| Located::new(s, node.origin.clone()))
    }

    /// A required key that is missing.
    pub fn missing(&mut self, origin: &Origin, key: &str, what: &str) {
        self.diags.error(codes::MISSING_KEY, origin, format!("{what} needs `{key}`"));
    }
}

/// The words of `W` with their variants.
fn pairs<W: Word>() -> Vec<(&'static str, W)> {
    W::WORDS.iter().copied().zip(W::ALL.iter().copied()).collect()
}

/// A node as JSON, reading plain scalars by the YAML 1.2 core schema (for defaults).
pub(crate) fn to_json(node: &Node) -> serde_json::Value {
    use serde_json::Value;
    match &node.kind {
        NodeKind::Map(entries) => Value::Object(
            entries.iter().map(|(k, v)| (k.key_text().unwrap_or_default().to_owned(), to_json(v))).collect(),
        ),
        NodeKind::Seq(items) => Value::Array(items.iter().map(to_json).collect()),
        _ if node.is_null() => Value::Null,
        NodeKind::Scalar { text, plain: false } => Value::String(text.clone()),
        NodeKind::Scalar { text, plain: true } => match text.as_str() {
            "true" | "True" | "TRUE" => Value::Bool(true),
            "false" | "False" | "FALSE" => Value::Bool(false),
            t => {
                if let Ok(i) = t.parse::<i64>() {
                    Value::from(i)
                } else if let Some(f) = t.parse::<f64>().ok().filter(|f| f.is_finite() && looks_numeric(t)) {
                    Value::from(f)
                } else {
                    Value::String(t.to_owned())
                }
            }
        },
    }
}

fn looks_numeric(t: &str) -> bool {
    t.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
}
