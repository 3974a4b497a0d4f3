//! The document's text as the protocol counts it: positions are lines and UTF-16 code
//! units (LSP's default encoding); the schema's own are bytes and characters.

use lsp_types::{Position, Range};

/// The LSP position of byte `offset` of `text`.
pub fn position(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |n| n + 1);
    let character: usize = text[start..offset].chars().map(char::len_utf16).sum();
    Position::new(u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(character).unwrap_or(u32::MAX))
}

/// The byte column of LSP `position` in its line, and the line's number (from 0).
pub fn byte_column(text: &str, position: Position) -> (usize, usize) {
    let line_no = position.line as usize;
    let line = text.lines().nth(line_no).unwrap_or("");
    let mut units = 0;
    for (i, c) in line.char_indices() {
        if units >= position.character as usize {
            return (line_no, i);
        }
        units += c.len_utf16();
    }
    (line_no, line.len())
}

/// The range of bytes `start..end` of line `line` (from 0).
pub fn line_range(text: &str, line: usize, start: usize, end: usize) -> Range {
    let line_start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    Range::new(position(text, line_start + start), position(text, line_start + end))
}

/// The resources of the schema, each with the line and byte range of its name under
/// `resources:`, read from the text (it need not parse).
pub fn resources(text: &str) -> Vec<(String, usize, (usize, usize))> {
    let mut found = Vec::new();
    let mut inside = false;
    let mut child_indent = None;
    for (n, line) in text.lines().enumerate() {
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let indent = line.len() - content.len();
        if indent == 0 {
            inside = content.starts_with("resources:");
            child_indent = None;
            continue;
        }
        if !inside {
            continue;
        }
        let indent_of_children = *child_indent.get_or_insert(indent);
        if indent != indent_of_children {
            continue;
        }
        if let Some((name, _)) = content.split_once(':') {
            let name = name.trim();
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                found.push((name.to_owned(), n, (indent, indent + name.len())));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let text = "a: 1\nnamé: 😀x\n";
        assert_eq!(position(text, text.find('x').unwrap()), Position::new(1, 8), "é is one unit, 😀 two");
        assert_eq!(byte_column(text, Position::new(1, 8)), (1, text.find('x').unwrap() - 5));
        assert_eq!(position(text, 1000), Position::new(2, 0));
    }

    #[test]
    fn the_resources_and_where_they_are_named() {
        let text = "service: s\nresources:\n  # c\n  user:\n    fields: {}\n  order:\n    owner: user\nauth: {}\n";
        let names: Vec<(String, usize)> = resources(text).into_iter().map(|(n, l, _)| (n, l)).collect();
        assert_eq!(names, [("user".to_owned(), 3), ("order".to_owned(), 5)]);
    }
}
