//! Turning schema names into Rust identifiers.

use heck::ToUpperCamelCase;
use proc_macro2::{Ident, Span};

/// Words Rust reserves; a field so named is emitted as a raw identifier (`r#type`), which
/// serde still names `type` on the wire.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn", "else", "enum",
    "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut",
    "override", "priv", "pub", "ref", "return", "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe",
    "unsized", "use", "virtual", "where", "while", "yield",
];

/// The identifier of a field, resource or transition written in snake case.
pub fn field_ident(name: &str) -> Ident {
    if KEYWORDS.contains(&name) { Ident::new_raw(name, Span::call_site()) } else { Ident::new(name, Span::call_site()) }
}

/// `order_item` -> `OrderItem`.
pub fn type_name(name: &str) -> String {
    name.to_upper_camel_case()
}

pub(crate) fn type_ident(name: &str) -> Ident {
    Ident::new(&type_name(name), Span::call_site())
}

/// Variant names for enum values, unique even when two values camel-case alike
/// (`a-b`, `a_b`): later ones get a numeric suffix.
pub(crate) fn variant_idents<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<Ident> {
    let mut seen: Vec<String> = Vec::new();
    values
        .into_iter()
        .map(|v| {
            let mut base = v.to_upper_camel_case();
            if base.is_empty() || !base.starts_with(|c: char| c.is_ascii_alphabetic()) {
                base = format!("V{base}");
            }
            let mut name = base.clone();
            let mut n = 2;
            while seen.contains(&name) {
                name = format!("{base}{n}");
                n += 1;
            }
            seen.push(name.clone());
            Ident::new(&name, Span::call_site())
        })
        .collect()
}
