//! `restgen lsp`: a language server over standard input and output (lsp-server, the
//! protocol loop rust-analyzer runs on). It checks each open schema as it is typed, with
//! the very checks and words of `restgen check`, a moment after the typing stops; it
//! completes keys and the words of closed sets, says what a key means on hover, and goes
//! from a resource's name where another one refers to it to where it is declared.

mod diagnostics;
mod format;
mod place;
mod text;

use format::{Format, RESOURCE_REFERENCES};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument, Notification as _,
    PublishDiagnostics,
};
use lsp_types::request::{Completion, GotoDefinition, HoverRequest, Request as _};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionOptions, CompletionParams, CompletionResponse, Documentation,
    GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverContents, HoverParams, HoverProviderCapability, Location,
    MarkupContent, MarkupKind, OneOf, PublishDiagnosticsParams, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncKind, Uri,
};
use place::{At, Place};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long typing must pause before a document is checked again: long enough not to
/// check at every key, short enough to feel immediate.
const SETTLE: Duration = Duration::from_millis(250);

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// Serves one editor until it says `exit`.
pub fn run() -> Result<(), Failure> {
    let (connection, threads) = Connection::stdio();
    let capabilities = ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some([":", " ", "-", "[", ","].map(String::from).to_vec()),
            ..CompletionOptions::default()
        }),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        ..ServerCapabilities::default()
    };
    connection.initialize(serde_json::to_value(capabilities)?)?;
    Server { connection: &connection, documents: HashMap::new(), format: Format::new() }.serve()?;
    drop(connection);
    threads.join()?;
    Ok(())
}

/// One open document: its text, and when it is due to be checked, if it is.
struct Document {
    text: String,
    version: Option<i32>,
    due: Option<Instant>,
}

struct Server<'a> {
    connection: &'a Connection,
    documents: HashMap<Uri, Document>,
    format: Format,
}

impl Server<'_> {
    fn serve(&mut self) -> Result<(), Failure> {
        loop {
            let due = self.documents.values().filter_map(|d| d.due).min();
            let message = match due {
                Some(due) => match self.connection.receiver.recv_timeout(due.saturating_duration_since(Instant::now()))
                {
                    Ok(message) => Some(message),
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => None,
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Ok(()),
                },
                None => match self.connection.receiver.recv() {
                    Ok(message) => Some(message),
                    Err(_) => return Ok(()),
                },
            };
            match message {
                Some(Message::Request(request)) => {
                    if self.connection.handle_shutdown(&request)? {
                        return Ok(());
                    }
                    self.answer(request)?;
                }
                Some(Message::Notification(notification)) => self.notice(notification)?,
                Some(Message::Response(_)) | None => {}
            }
            self.check_due()?;
        }
    }

    /// A document changed, opened, was saved or closed.
    fn notice(&mut self, notification: Notification) -> Result<(), Failure> {
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let p: lsp_types::DidOpenTextDocumentParams = serde_json::from_value(notification.params)?;
                let d = p.text_document;
                self.documents.insert(d.uri.clone(), Document { text: d.text, version: Some(d.version), due: None });
                self.check(&d.uri)?;
            }
            DidChangeTextDocument::METHOD => {
                let p: lsp_types::DidChangeTextDocumentParams = serde_json::from_value(notification.params)?;
                // Whole texts only (`TextDocumentSyncKind::FULL`): the last is the document.
                if let (Some(change), Some(d)) =
                    (p.content_changes.into_iter().last(), self.documents.get_mut(&p.text_document.uri))
                {
                    d.text = change.text;
                    d.version = Some(p.text_document.version);
                    d.due = Some(Instant::now() + SETTLE);
                }
            }
            DidSaveTextDocument::METHOD => {
                let p: lsp_types::DidSaveTextDocumentParams = serde_json::from_value(notification.params)?;
                if self.documents.contains_key(&p.text_document.uri) {
                    self.check(&p.text_document.uri)?;
                }
            }
            DidCloseTextDocument::METHOD => {
                let p: lsp_types::DidCloseTextDocumentParams = serde_json::from_value(notification.params)?;
                self.documents.remove(&p.text_document.uri);
                self.publish(p.text_document.uri, Vec::new(), None)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn check_due(&mut self) -> Result<(), Failure> {
        let now = Instant::now();
        let due: Vec<Uri> =
            self.documents.iter().filter(|(_, d)| d.due.is_some_and(|at| at <= now)).map(|(u, _)| u.clone()).collect();
        for uri in due {
            self.check(&uri)?;
        }
        Ok(())
    }

    /// Checks a document now and publishes what `restgen check` would say of it.
    fn check(&mut self, uri: &Uri) -> Result<(), Failure> {
        let Some(document) = self.documents.get_mut(uri) else { return Ok(()) };
        document.due = None;
        let found = diagnostics::of(uri, &document.text);
        let version = document.version;
        self.publish(uri.clone(), found, version)
    }

    fn publish(&self, uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) -> Result<(), Failure> {
        let params = PublishDiagnosticsParams { uri, diagnostics, version };
        let notification = Notification::new(PublishDiagnostics::METHOD.to_owned(), params);
        self.connection.sender.send(Message::Notification(notification))?;
        Ok(())
    }

    fn answer(&mut self, request: Request) -> Result<(), Failure> {
        let id = request.id.clone();
        let result = match request.method.as_str() {
            Completion::METHOD => {
                let p: CompletionParams = serde_json::from_value(request.params)?;
                serde_json::to_value(
                    self.complete(&p.text_document_position.text_document.uri, p.text_document_position.position),
                )?
            }
            HoverRequest::METHOD => {
                let p: HoverParams = serde_json::from_value(request.params)?;
                let at = p.text_document_position_params;
                serde_json::to_value(self.hover(&at.text_document.uri, at.position))?
            }
            GotoDefinition::METHOD => {
                let p: GotoDefinitionParams = serde_json::from_value(request.params)?;
                let at = p.text_document_position_params;
                serde_json::to_value(self.definition(&at.text_document.uri, at.position))?
            }
            other => return self.refuse(id, format!("restgen lsp does not answer {other}")),
        };
        self.connection.sender.send(Message::Response(Response::new_ok(id, result)))?;
        Ok(())
    }

    fn refuse(&self, id: RequestId, message: String) -> Result<(), Failure> {
        let response = Response::new_err(id, ErrorCode::MethodNotFound as i32, message);
        self.connection.sender.send(Message::Response(response))?;
        Ok(())
    }

    /// The place of `position` in the document `uri`, with its text.
    fn place(&self, uri: &Uri, position: lsp_types::Position) -> Option<(&str, Place, usize)> {
        let text = self.documents.get(uri)?.text.as_str();
        let (line, column) = text::byte_column(text, position);
        Some((text, place::place(text, line, column), line))
    }

    fn complete(&self, uri: &Uri, position: lsp_types::Position) -> Option<CompletionResponse> {
        let (text, place, _) = self.place(uri, position)?;
        let items: Vec<CompletionItem> = match &place.at {
            At::Key => self.format.keys(&place.path).into_iter().map(key_item).collect(),
            At::Item(key) if self.format.holds_maps(&place.path, key) => {
                let mut path = place.path.clone();
                path.extend([key.clone(), "[]".to_owned()]);
                self.format.keys(&path).into_iter().map(key_item).collect()
            }
            At::Value(key) | At::Item(key) => {
                let about = self.format.key(&place.path, key).map(|k| k.about).unwrap_or_default();
                let (words, kind) = if RESOURCE_REFERENCES.contains(&key.as_str()) {
                    (text::resources(text).into_iter().map(|(name, ..)| name).collect(), CompletionItemKind::REFERENCE)
                } else {
                    (self.format.words(&place.path, key), CompletionItemKind::ENUM_MEMBER)
                };
                words
                    .into_iter()
                    .map(|word| CompletionItem {
                        label: word,
                        kind: Some(kind),
                        detail: Some(format!("`{key}`")),
                        documentation: markdown(about.clone()),
                        ..CompletionItem::default()
                    })
                    .collect()
            }
        };
        Some(CompletionResponse::Array(items))
    }

    fn hover(&self, uri: &Uri, position: lsp_types::Position) -> Option<Hover> {
        let (text, place, line) = self.place(uri, position)?;
        if place.word.is_empty() {
            return None;
        }
        let key = self.format.key_at(&place)?;
        let value = match &place.at {
            // On the key itself: what it is.
            At::Key => format!("**`{}`**: {}\n\n{}", key.name, key.takes, key.about),
            // On a word of its value: the key it belongs to, and the word's set.
            _ => {
                let words = self.format.words(&place.path, &key.name);
                let of = if words.contains(&place.word) {
                    format!(
                        "`{}` is one of: {}.",
                        place.word,
                        words.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", ")
                    )
                } else {
                    String::new()
                };
                format!("**`{}`**: {}\n\n{}\n\n{of}", key.name, key.takes, key.about).trim_end().to_owned()
            }
        };
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }),
            range: Some(text::line_range(text, line, place.word_range.0, place.word_range.1)),
        })
    }

    fn definition(&self, uri: &Uri, position: lsp_types::Position) -> Option<GotoDefinitionResponse> {
        let (text, place, _) = self.place(uri, position)?;
        let refers = match &place.at {
            At::Value(key) | At::Item(key) => RESOURCE_REFERENCES.contains(&key.as_str()),
            At::Key => false,
        };
        if !refers {
            return None;
        }
        let (_, line, (start, end)) = text::resources(text).into_iter().find(|(name, ..)| *name == place.word)?;
        let range = text::line_range(text, line, start, end);
        Some(GotoDefinitionResponse::Scalar(Location { uri: uri.clone(), range }))
    }
}

/// Text for the editor to render as Markdown.
fn markdown(value: String) -> Option<Documentation> {
    Some(Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value }))
}

/// A key offered where a map's key goes, written with its colon.
fn key_item(key: format::KeyInfo) -> CompletionItem {
    CompletionItem {
        label: key.name.clone(),
        kind: Some(CompletionItemKind::PROPERTY),
        detail: Some(key.takes),
        documentation: markdown(key.about),
        insert_text: Some(format!("{}: ", key.name)),
        ..CompletionItem::default()
    }
}
