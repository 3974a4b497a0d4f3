//! Where a position is in a schema file, read from the text alone, so that it works on a
//! file being typed, which rarely parses: the keys above the position, and whether it is
//! at a key, at a key's value, or at an item of a list.

/// A position's place in the document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The keys from the top down to the map the position is in; `[]` stands for an item
    /// of a list (`versions: [...]`, `- version: 2`).
    pub path: Vec<String>,
    pub at: At,
    /// The word the position is in, whole, and its byte range in the line.
    pub word: String,
    pub word_range: (usize, usize),
}

/// What a position is at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum At {
    /// A key of the map at `path`.
    Key,
    /// The value of this key of the map at `path`.
    Value(String),
    /// An item of this key's list (`- create`, `[create, li`): a word, or a map's key where
    /// the list holds maps.
    Item(String),
}

/// The place of byte `column` of line `line` (both from 0) of `text`.
pub fn place(text: &str, line: usize, column: usize) -> Place {
    let lines: Vec<&str> = text.lines().collect();
    let current = lines.get(line).copied().unwrap_or("");
    let column = floor_char_boundary(current, column.min(current.len()));
    let before = &current[..column];
    let (word, word_range) = word_at(current, column);

    let indent = before.len() - before.trim_start().len();
    let item = before.trim_start().strip_prefix('-').filter(|rest| rest.is_empty() || rest.starts_with(' '));
    let mut path = ancestors(&lines[..line.min(lines.len())], indent);
    let at = match item {
        Some(rest) => {
            let flow = flow(rest.trim_start());
            if flow.depth > 0 || matches!(flow.at, Some(At::Value(_))) {
                // An item that is a map: `- version: 2`, `- { version: 2, ... }`.
                path.push("[]".into());
                path.extend(flow.path);
                flow.at.unwrap_or(At::Key)
            } else {
                // A word of the list whose key is the last ancestor.
                match path.pop() {
                    Some(list) => At::Item(list),
                    None => At::Key,
                }
            }
        }
        None => {
            let flow = flow(before.trim_start());
            path.extend(flow.path);
            flow.at.unwrap_or(At::Key)
        }
    };
    Place { path, at, word: word.to_owned(), word_range }
}

/// The keys of the maps that hold a line indented by `indent`, from the top: each nearest
/// line above that is indented less, in turn.
fn ancestors(above: &[&str], indent: usize) -> Vec<String> {
    let mut keys = Vec::new();
    let mut limit = indent;
    for line in above.iter().rev() {
        if limit == 0 {
            break;
        }
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let depth = line.len() - content.len();
        if depth >= limit {
            continue;
        }
        if let Some(item) = content.strip_prefix('-') {
            let item = item.trim_start();
            let inner = depth + (content.len() - item.len());
            // `- key:` opening a map deeper than the item's own keys.
            if limit > inner
                && let Some(key) = key_of(item).filter(|_| opens(item))
            {
                keys.push(key);
            }
            keys.push("[]".into());
        } else if let Some(key) = key_of(content) {
            keys.push(key);
        }
        limit = depth;
    }
    keys.reverse();
    keys
}

/// The key of `key: ...`, when the text starts with one.
fn key_of(text: &str) -> Option<String> {
    let colon = text.find(':')?;
    let key = text[..colon].trim().trim_matches(['"', '\'']);
    let after = &text[colon + 1..];
    (!key.is_empty() && !key.contains([' ', '{', '[', ',']) && (after.is_empty() || after.starts_with([' ', '\t'])))
        .then(|| key.to_owned())
}

/// Whether `key:` has nothing after it on its line but a comment: a map or list below.
fn opens(text: &str) -> bool {
    text.split_once(':').is_some_and(|(_, after)| {
        let after = after.trim();
        after.is_empty() || after.starts_with('#')
    })
}

/// What the flow collections of one line say, up to the position: the keys of the maps
/// open there, and what the position is at (`None`: a key of the line's own map).
struct Flow {
    path: Vec<String>,
    at: Option<At>,
    /// How many collections are open at the position.
    depth: usize,
}

fn flow(text: &str) -> Flow {
    // Each open `{` or `[` with the key it is the value of.
    let mut open: Vec<(char, Option<String>)> = Vec::new();
    let mut key: Option<String> = None;
    let mut start = 0;
    let mut quote: Option<char> = None;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (n, &(i, c)) in chars.iter().enumerate() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' if text[start..i].trim().is_empty() => quote = Some(c),
            '#' if text[..i].ends_with(' ') || i == 0 => break,
            '{' | '[' => {
                open.push((c, key.take()));
                start = i + 1;
            }
            '}' | ']' => {
                key = open.pop().and_then(|(_, k)| k);
                start = i + 1;
            }
            ',' if !open.is_empty() => {
                key = None;
                start = i + 1;
            }
            ':' if chars.get(n + 1).is_none_or(|(_, next)| next.is_whitespace()) => {
                key = Some(text[start..i].trim().trim_matches(['"', '\'']).to_owned());
                start = i + 1;
            }
            _ => {}
        }
    }
    let mut path = Vec::new();
    for (bracket, k) in &open {
        path.extend(k.clone());
        if *bracket == '[' {
            path.push("[]".into());
        }
    }
    let at = match (open.last(), key) {
        // Directly inside `[`: an item of the list whose key opened it.
        (Some(('[', list)), None) => {
            path.pop();
            if list.is_some() {
                path.pop();
            }
            list.clone().map(At::Item)
        }
        (_, Some(k)) => Some(At::Value(k)),
        (_, None) => None,
    };
    Flow { path, at, depth: open.len() }
}

/// The identifier-like word around byte `column` of `line`, and its range.
fn word_at(line: &str, column: usize) -> (&str, (usize, usize)) {
    let is_word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    let start = line[..column].char_indices().rev().take_while(|(_, c)| is_word(*c)).last().map_or(column, |(i, _)| i);
    let end = line[column..].char_indices().find(|(_, c)| !is_word(*c)).map_or(line.len(), |(i, _)| column + i);
    (&line[start..end], (start, end))
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The place of the `|` in `text` (which is taken out).
    fn at(text: &str) -> Place {
        let offset = text.find('|').expect("a | marks the position");
        let text = text.replacen('|', "", 1);
        let line = text[..offset].matches('\n').count();
        let column = offset - text[..offset].rfind('\n').map_or(0, |n| n + 1);
        place(&text, line, column)
    }

    fn path(p: &Place) -> Vec<&str> {
        p.path.iter().map(String::as_str).collect()
    }

    #[test]
    fn a_key_below_its_maps() {
        let p = at("service: shop\nresources:\n  order:\n    fields:\n      total:\n        ty|\n");
        assert_eq!((path(&p), &p.at, p.word.as_str()), (vec!["resources", "order", "fields", "total"], &At::Key, "ty"));
        let p = at("service: shop\n|");
        assert_eq!((path(&p), &p.at), (vec![], &At::Key));
        let p = at("resources:\n  order:\n    path: /orders\n\n    # a comment\n    |\n");
        assert_eq!((path(&p), &p.at), (vec!["resources", "order"], &At::Key));
    }

    #[test]
    fn a_value_after_its_key() {
        let p = at("resources:\n  order:\n    fields:\n      total:\n        type: str|\n");
        assert_eq!(
            (path(&p), &p.at, p.word.as_str()),
            (vec!["resources", "order", "fields", "total"], &At::Value("type".into()), "str")
        );
    }

    #[test]
    fn inside_flow_maps_and_lists() {
        let p = at("resources:\n  order:\n    fields:\n      total: { type: integer, req| }\n");
        assert_eq!((path(&p), &p.at), (vec!["resources", "order", "fields", "total"], &At::Key));
        let p = at("resources:\n  order:\n    fields:\n      total: { type: in| }\n");
        assert_eq!((path(&p), &p.at), (vec!["resources", "order", "fields", "total"], &At::Value("type".into())));
        let p = at("resources:\n  order:\n    operations: [create, li|]\n");
        assert_eq!(
            (path(&p), &p.at, p.word.as_str()),
            (vec!["resources", "order"], &At::Item("operations".into()), "li")
        );
        let p = at("api:\n  versions: [1, { version: 2, dep| }]\n");
        assert_eq!((path(&p), &p.at), (vec!["api", "versions", "[]"], &At::Key));
    }

    #[test]
    fn items_of_block_lists() {
        let p = at("resources:\n  order:\n    operations:\n      - create\n      - li|\n");
        assert_eq!((path(&p), &p.at), (vec!["resources", "order"], &At::Item("operations".into())));
        let p = at("api:\n  versions:\n    - version: 2\n      dep|\n");
        assert_eq!((path(&p), &p.at), (vec!["api", "versions", "[]"], &At::Key));
        let p = at("api:\n  versions:\n    - version: 2\n      deprecated: 2026|\n");
        assert_eq!((path(&p), &p.at), (vec!["api", "versions", "[]"], &At::Value("deprecated".into())));
    }

    #[test]
    fn a_position_past_its_line_or_the_document_or_inside_a_character_is_a_place() {
        let text = "resources:\n  caf\u{e9}:\n    path: /x\n";
        let inside = text.find('\u{e9}').unwrap() + 1 - text.find("  caf").unwrap();
        assert_eq!(place(text, 1, inside).word, "caf\u{e9}", "inside é: the word it is in");
        assert_eq!(path(&place(text, 2, 1000)), vec!["resources", "caf\u{e9}"], "past the line's end");
        let past = place(text, 99, 0);
        assert_eq!((path(&past), &past.at, past.word.as_str()), (vec![], &At::Key, ""), "past the document");
        assert_eq!(place("", 0, 0).at, At::Key, "an empty document");
    }

    #[test]
    fn the_whole_word_around_a_position() {
        let p = at("resources:\n  order:\n    owner: us|er\n");
        assert_eq!((p.word.as_str(), p.word_range), ("user", (11, 15)));
    }
}
