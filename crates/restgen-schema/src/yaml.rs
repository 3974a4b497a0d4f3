//! A YAML document as a tree of nodes that each know their place in the file.
//!
//! Built from saphyr-parser's events rather than a DOM so that nothing is lost on the way:
//! every key keeps its own position, duplicate keys are caught (a hash map would keep
//! one silently), and plain scalars stay distinguishable from quoted ones.

use restgen_core::diagnostics::{Diagnostics, codes};
use restgen_core::origin::{FilePos, Origin};
use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    pub origin: Origin,
}

#[derive(Clone, Debug)]
pub enum NodeKind {
    /// Entries in file order; keys are nodes too, with their own origins.
    Map(Vec<(Node, Node)>),
    Seq(Vec<Node>),
    /// `plain` is false for quoted and block scalars, which are always strings.
    Scalar {
        text: String,
        plain: bool,
    },
}

impl Node {
    /// Null in the YAML 1.2 core schema: `null`, `~` or nothing at all.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, NodeKind::Scalar { text, plain: true } if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// A short description of what the node is, for "expected X, found Y".
    pub fn describe(&self) -> String {
        match &self.kind {
            NodeKind::Map(_) => "a map".into(),
            NodeKind::Seq(_) => "a list".into(),
            _ if self.is_null() => "nothing".into(),
            NodeKind::Scalar { text, plain: true } => format!("`{}`", text.chars().take(40).collect::<String>()),
            // Quoted: say so, or `"false"` would read as the boolean it is not.
            NodeKind::Scalar { text, plain: false } => {
                format!("the string \"{}\"", text.chars().take(40).collect::<String>())
            }
        }
    }

    /// The text of a scalar key.
    pub fn key_text(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// Maps character positions (what the parser reports) to byte offsets (what snippets use).
struct Positions {
    file: Arc<str>,
    /// Byte offset of each char index; empty when the text is ASCII and the two agree.
    bytes: Vec<usize>,
    len: usize,
}

impl Positions {
    fn new(file: Arc<str>, text: &str) -> Self {
        let bytes = if text.is_ascii() { Vec::new() } else { text.char_indices().map(|(b, _)| b).collect() };
        Positions { file, bytes, len: text.len() }
    }

    fn byte(&self, char_index: usize) -> usize {
        if self.bytes.is_empty() {
            char_index.min(self.len)
        } else {
            self.bytes.get(char_index).copied().unwrap_or(self.len)
        }
    }

    fn origin(&self, span: Span) -> Origin {
        let start = self.byte(span.start.index());
        let end = self.byte(span.end.index()).max(start);
        Origin::File(FilePos {
            file: self.file.clone(),
            line: span.start.line() as u32,
            column: span.start.col() as u32 + 1,
            start,
            end,
        })
    }
}

enum Frame {
    Map { entries: Vec<(Node, Node)>, key: Option<Node>, origin: Origin, anchor: usize },
    Seq { items: Vec<Node>, origin: Origin, anchor: usize },
}

/// Parses `text` (the contents of `file`) into its single document. Syntax errors and
/// unsupported constructs are reported; `None` when nothing usable was parsed.
pub fn parse(file: &Arc<str>, text: &str, diags: &mut Diagnostics) -> Option<Node> {
    let pos = Positions::new(file.clone(), text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut root: Option<Node> = None;
    let mut documents = 0;
    for event in Parser::new_from_str(text) {
        let (event, span) = match event {
            Ok(e) => e,
            Err(e) => {
                let m = e.marker();
                let at = pos.origin(Span::new(*m, *m));
                diags.error(codes::YAML_SYNTAX, &at, format!("YAML syntax error: {}", e.info()));
                return None;
            }
        };
        let node = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    diags.error(codes::UNSUPPORTED_YAML, &pos.origin(span), "a schema file holds one YAML document");
                    break;
                }
                continue;
            }
            Event::MappingStart(anchor, _) => {
                stack.push(Frame::Map { entries: Vec::new(), key: None, origin: pos.origin(span), anchor });
                continue;
            }
            Event::SequenceStart(anchor, _) => {
                stack.push(Frame::Seq { items: Vec::new(), origin: pos.origin(span), anchor });
                continue;
            }
            Event::MappingEnd => {
                let Some(Frame::Map { entries, origin, anchor, .. }) = stack.pop() else {
                    unreachable!("parser balances maps")
                };
                check_duplicate_keys(&entries, diags);
                remember(&mut anchors, anchor, Node { kind: NodeKind::Map(entries), origin })
            }
            Event::SequenceEnd => {
                let Some(Frame::Seq { items, origin, anchor }) = stack.pop() else {
                    unreachable!("parser balances lists")
                };
                remember(&mut anchors, anchor, Node { kind: NodeKind::Seq(items), origin })
            }
            Event::Scalar(text, style, anchor, _) => {
                let node = Node {
                    kind: NodeKind::Scalar { text: text.into_owned(), plain: style == ScalarStyle::Plain },
                    origin: pos.origin(span),
                };
                remember(&mut anchors, anchor, node)
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some(node) => Node { kind: node.kind.clone(), origin: pos.origin(span) },
                None => {
                    diags.error(codes::YAML_SYNTAX, &pos.origin(span), "alias to an unknown anchor");
                    continue;
                }
            },
            _ => continue,
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => {
                    if node.key_text() == Some("<<") {
                        diags
                            .error(codes::UNSUPPORTED_YAML, &node.origin, "merge keys (`<<`) are not supported")
                            .hint("write the keys out; anchors and aliases of whole values work");
                    }
                    *key = Some(node);
                }
                Some(k) => entries.push((k, node)),
            },
        }
    }
    root
}

fn remember(anchors: &mut HashMap<usize, Node>, anchor: usize, node: Node) -> Node {
    if anchor != 0 {
        anchors.insert(anchor, node.clone());
    }
    node
}

/// A key written twice in one map: YAML forbids it and most parsers keep one silently.
fn check_duplicate_keys(entries: &[(Node, Node)], diags: &mut Diagnostics) {
    let mut seen: HashMap<&str, &Node> = HashMap::new();
    for (key, _) in entries {
        let Some(text) = key.key_text() else { continue };
        if let Some(first) = seen.get(text) {
            diags
                .error(codes::DUPLICATE_KEY, &key.origin, format!("key `{text}` appears twice in this map"))
                .related(&first.origin, "first written here");
        } else {
            seen.insert(text, key);
        }
    }
}
