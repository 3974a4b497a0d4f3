//! Problems found in a schema: collected, never returned early, and rendered all at once
//! with source snippets the way rustc does. The collector and the codes are restgen-model's.

pub use restgen_model::diagnostics::*;

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
