//! Problems found in a schema: collected, never returned early, and rendered all at once
//! with source snippets the way rustc does. The collector and the codes are restgen-model's.

pub use restgen_model::diagnostics::*;

use crate::origin::Origin;
use codespan_reporting::diagnostic::{Diagnostic as Report, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor};
use std::collections::BTreeMap;

/// The nearest of `candidates` to a misspelt `word`, if one is close enough to be meant.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

/// Source texts by file name, for snippets.
#[derive(Debug, Default)]
pub struct Sources {
    files: BTreeMap<String, String>,
}

impl Sources {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) {
        self.files.insert(name.into(), text.into());
    }
}

/// Renders diagnostics like rustc: `error[E0002]: ...`, the snippet with a caret, hints.
pub fn render(diagnostics: &[Diagnostic], sources: &Sources, color: bool) -> String {
    let mut files = SimpleFiles::new();
    let ids: BTreeMap<&str, usize> =
        sources.files.iter().map(|(name, text)| (name.as_str(), files.add(name.clone(), text.clone()))).collect();
    let mut out = termcolor::Buffer::no_color();
    if color {
        out = termcolor::Buffer::ansi();
    }
    let config = term::Config::default();
    for d in diagnostics {
        let mut report = match d.severity {
            Severity::Error => Report::error(),
            Severity::Warning => Report::warning(),
        }
        .with_code(d.code.id)
        .with_message(&d.message);
        let mut labels = Vec::new();
        let mut notes = Vec::new();
        match d.origin.file_pos().and_then(|p| ids.get(&*p.file).map(|id| (*id, p))) {
            Some((id, p)) => {
                labels.push(Label::primary(id, p.start..p.end).with_message(d.label.clone().unwrap_or_default()))
            }
            None => notes.push(format!("at {}", d.origin)),
        }
        for (origin, text) in &d.related {
            match origin.file_pos().and_then(|p| ids.get(&*p.file).map(|id| (*id, p))) {
                Some((id, p)) => labels.push(Label::secondary(id, p.start..p.end).with_message(text)),
                None => notes.push(text.clone()),
            }
        }
        if let Some(hint) = &d.hint {
            notes.push(format!("help: {hint}"));
        }
        report = report.with_labels(labels).with_notes(notes);
        term::emit_to_write_style(&mut out, &config, &files, &report).expect("writing to a buffer cannot fail");
    }
    String::from_utf8_lossy(out.as_slice()).into_owned()
}

/// The version of the JSON [`render_json`] writes: a field is only ever added within one
/// (docs/diagnostics.md, "Machine-readable output").
pub const JSON_VERSION: u32 = 1;

/// Every diagnostic as one JSON document, for editors and tools: each with its file, start
/// and end (1-based line and column, the column counting characters, and byte offsets),
/// code, severity, message, labels (the primary one first) and help.
pub fn render_json(diagnostics: &[Diagnostic], sources: &Sources) -> String {
    let place = |origin: &Origin| -> serde_json::Map<String, serde_json::Value> {
        let mut place = serde_json::Map::new();
        let Some(pos) = origin.file_pos() else {
            for key in ["file", "line", "column", "end_line", "end_column", "start", "end"] {
                place.insert(key.into(), serde_json::Value::Null);
            }
            return place;
        };
        let (end_line, end_column) = match sources.files.get(&*pos.file) {
            Some(text) => line_column(text, pos.end),
            None => (pos.line, pos.column),
        };
        place.insert("file".into(), (*pos.file).into());
        place.insert("line".into(), pos.line.into());
        place.insert("column".into(), pos.column.into());
        place.insert("end_line".into(), end_line.into());
        place.insert("end_column".into(), end_column.into());
        place.insert("start".into(), pos.start.into());
        place.insert("end".into(), pos.end.into());
        place
    };
    let severity = |s: Severity| match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let list: Vec<serde_json::Value> = diagnostics
        .iter()
        .map(|d| {
            let mut labels = Vec::new();
            let mut primary = place(&d.origin);
            primary.insert("primary".into(), true.into());
            primary.insert("message".into(), d.label.clone().unwrap_or_default().into());
            labels.push(serde_json::Value::Object(primary));
            for (origin, text) in &d.related {
                let mut related = place(origin);
                related.insert("primary".into(), false.into());
                related.insert("message".into(), text.clone().into());
                labels.push(serde_json::Value::Object(related));
            }
            let mut entry = place(&d.origin);
            entry.insert("severity".into(), severity(d.severity).into());
            entry.insert("code".into(), d.code.id.into());
            entry.insert("name".into(), d.code.name.into());
            entry.insert("message".into(), d.message.clone().into());
            entry.insert("labels".into(), labels.into());
            entry.insert("help".into(), d.hint.clone().into());
            serde_json::Value::Object(entry)
        })
        .collect();
    let errors = diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    let value = serde_json::json!({
        "version": JSON_VERSION,
        "diagnostics": list,
        "errors": errors,
        "warnings": diagnostics.len() - errors,
    });
    let mut text = serde_json::to_string_pretty(&value).expect("JSON serializes");
    text.push('\n');
    text
}

/// The 1-based line and column (in characters) of byte `offset` of `text`, as the schema's
/// positions count them; an offset past the end or inside a character is taken back to
/// the character it is in.
fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX))
}

/// One line per diagnostic: `file:line:col: error[E0002] message`, for tools and tests.
pub fn render_short(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| {
            let level = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            format!("{}: {level}[{}]: {}\n", d.origin, d.code.id, d.message)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::line_column;

    #[test]
    fn an_end_is_counted_in_lines_and_characters_as_starts_are() {
        let text = "a: 1\nnamé: { type: strng }\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 5), (2, 1), "the first byte of the second line");
        let end = text.find('}').unwrap();
        assert_eq!(line_column(text, end), (2, 21), "é is one character of two bytes");
        assert_eq!(line_column(text, text.find('é').unwrap() + 1), (2, 4), "inside é: é itself");
        assert_eq!(line_column(text, 10_000), (3, 1), "past the end: the end");
    }
}
