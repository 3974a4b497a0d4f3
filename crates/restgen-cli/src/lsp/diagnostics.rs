//! What `restgen check` says of a document, as the protocol's diagnostics: the same codes,
//! messages, labels and help, at the same places.

use super::text::position;
use lsp_types::{Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Range, Uri};
use restgen_core::diagnostics::Severity;
use restgen_core::origin::Origin;

/// The diagnostics of `text`, the document at `uri`.
pub fn of(uri: &Uri, text: &str) -> Vec<Diagnostic> {
    let name = file_name(uri);
    let found = match restgen_schema::load(&name, text) {
        Ok((_, found)) | Err(found) => found,
    };
    let range = |origin: &Origin| -> Range {
        match origin.file_pos() {
            Some(p) => Range::new(position(text, p.start), position(text, p.end.max(p.start))),
            // A problem of the whole file (no place in it): its first line.
            None => Range::new(position(text, 0), position(text, text.find('\n').unwrap_or(text.len()))),
        }
    };
    found
        .into_sorted()
        .into_iter()
        .map(|d| {
            let mut message = d.message.clone();
            if let Some(label) = d.label.as_ref().filter(|l| !l.is_empty()) {
                message.push_str(&format!("\n{label}"));
            }
            if let Some(help) = &d.hint {
                message.push_str(&format!("\nhelp: {help}"));
            }
            let related: Vec<DiagnosticRelatedInformation> = d
                .related
                .iter()
                .map(|(origin, text)| DiagnosticRelatedInformation {
                    location: Location { uri: uri.clone(), range: range(origin) },
                    message: text.clone(),
                })
                .collect();
            Diagnostic {
                range: range(&d.origin),
                severity: Some(match d.severity {
                    Severity::Error => DiagnosticSeverity::ERROR,
                    Severity::Warning => DiagnosticSeverity::WARNING,
                }),
                code: Some(NumberOrString::String(d.code.id.to_owned())),
                source: Some("restgen".to_owned()),
                message,
                related_information: (!related.is_empty()).then_some(related),
                ..Diagnostic::default()
            }
        })
        .collect()
}

/// The file a document is, as `restgen check` names it: its path.
fn file_name(uri: &Uri) -> String {
    let path = uri.path().as_str();
    if path.is_empty() { uri.as_str().to_owned() } else { path.to_owned() }
}
