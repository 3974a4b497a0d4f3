//! Lowering one field.

use super::read::{Cx, to_json};
use super::resource::gate;
use crate::yaml::{Node, NodeKind};
use restgen_core::diagnostics::{codes, did_you_mean};
use restgen_core::model::*;
use restgen_core::origin::Located;
use restgen_core::vocabulary as keys;
use restgen_core::words::Word;

const TYPES: &[&str] = <FieldKind as Word>::WORDS;

pub(super) fn field(cx: &mut Cx, name: Located<String>, node: &Node) -> Option<Field> {
    let what = format!("field `{}`", name.value);
    let m = cx.map(node, &what, &keys::FIELD)?;
    let origin = name.origin.clone();
    let ty = match m.get("type") {
        Some(n) => field_type(cx, n, &m),
        None => {
            cx.diags
                .error(codes::MISSING_KEY, &origin, format!("{what} needs a `type`"))
                .hint(format!("types: {}", TYPES.join(", ")));
            Located::new(FieldType::String, origin.clone())
        }
    };
    for (key, applies) in
        [("values", matches!(ty.value, FieldType::Enum { .. })), ("to", matches!(ty.value, FieldType::Ref { .. }))]
    {
        if let Some((k, _)) = m.entry(key)
            && !applies
        {
            let owner = if key == "values" { "enum" } else { "ref" };
            cx.diags.error(
                codes::KEY_NOT_FOR_TYPE,
                &k.origin,
                format!("`{key}` applies to {owner} fields, not to a {} field", ty.value.keyword()),
            );
        }
    }
    let flag = |cx: &mut Cx, key: &str| {
        m.get(key).and_then(|n| cx.bool(n, &format!("`{key}`"))).unwrap_or_else(|| Located::new(false, origin.clone()))
    };
    let settable = match m.get("settable") {
        None => Located::new(Settable::NEVER, origin.clone()),
        Some(n) if matches!(n.kind, NodeKind::Seq(_)) => {
            let ops = cx.words_of::<WriteOp>(n, "operation `settable` applies to");
            let mut s = Settable::NEVER;
            for op in ops {
                match op.value {
                    WriteOp::Create => s.create = true,
                    WriteOp::Replace => s.replace = true,
                    WriteOp::Patch => s.patch = true,
                }
            }
            Located::new(s, n.origin.clone())
        }
        Some(n) => {
            let b = cx.bool(n, "`settable` (or a list of create, replace and patch)").map(|b| b.value);
            Located::new(if b == Some(true) { Settable::ALWAYS } else { Settable::NEVER }, n.origin.clone())
        }
    };
    let default = m.get("default").map(|n| {
        let now = matches!(&n.kind, NodeKind::Scalar { text, plain: true } if text == "now");
        let value = if now && matches!(ty.value, FieldType::Date | FieldType::DateTime) {
            DefaultValue::Now
        } else {
            DefaultValue::Value(to_json(n))
        };
        Located::new(value, n.origin.clone())
    });
    let number = |cx: &mut Cx, key: &str| m.get(key).and_then(|n| cx.number(n, &format!("`{key}`")));
    let length = |cx: &mut Cx, key: &str| m.get(key).and_then(|n| cx.uint(n, &format!("`{key}`")));
    let is_password = ty.value == FieldType::Password;
    // `unique: true`, or `unique: global` for one value across every owner's records.
    let (unique, unique_global) = match m.get("unique") {
        Some(n) if matches!(&n.kind, NodeKind::Scalar { text, .. } if text == keys::UNIQUE_GLOBAL) => {
            (Located::new(true, n.origin.clone()), true)
        }
        _ => (flag(cx, "unique"), false),
    };
    Some(Field {
        renamed_from: m.get("renamed_from").and_then(|n| cx.string(n, "`renamed_from`")),
        description: m.get("description").and_then(|n| cx.string(n, "`description`")).map(|d| d.value),
        required: flag(cx, "required"),
        nullable: flag(cx, "nullable"),
        default,
        settable,
        write_only: flag(cx, "write_only").value || is_password,
        read_only: flag(cx, "read_only").value,
        unique,
        unique_global,
        min: number(cx, "min"),
        max: number(cx, "max"),
        min_length: length(cx, "min_length"),
        max_length: length(cx, "max_length"),
        pattern: m.get("pattern").and_then(|n| cx.string(n, "`pattern`")),
        filter: flag(cx, "filter"),
        sort: flag(cx, "sort"),
        gate: gate(cx, m.get("since"), m.get("until")),
        read: m.get("read").map(|n| rules(cx, n, "read")),
        write: m.get("write").map(|n| rules(cx, n, "write")),
        ty,
        name,
        origin,
    })
}

/// A field's `read` or `write`: the access words of who may see or set it.
fn rules(cx: &mut Cx, node: &Node, key: &str) -> Vec<Located<AccessRule>> {
    let words = cx.strings(node, &format!("`{key}`"));
    words.into_iter().map(|s| Located::new(AccessRule::from_word(&s.value), s.origin)).collect()
}

fn field_type(cx: &mut Cx, node: &Node, m: &super::read::Map) -> Located<FieldType> {
    let origin = node.origin.clone();
    let Some(word) = cx.string(node, "`type`") else { return Located::new(FieldType::String, origin) };
    let ty = match FieldKind::from_word(&word.value) {
        Some(FieldKind::Enum) => {
            let values = m.get("values").map(|n| cx.strings(n, "`values`")).unwrap_or_default();
            FieldType::Enum { values }
        }
        Some(FieldKind::Ref) => match m.get("to").and_then(|n| cx.string(n, "`to`")) {
            Some(to) => FieldType::Ref { to },
            None => {
                if m.get("to").is_none() {
                    cx.diags
                        .error(codes::MISSING_KEY, &origin, "a ref field needs `to`, the resource it points at")
                        .hint("write `{ type: ref, to: order }`");
                }
                // Typed as the default id so later checks do not repeat this problem.
                FieldType::Uuid
            }
        },
        Some(kind) => FieldType::of_kind(kind).expect("a type that carries nothing"),
        None => {
            let other = word.value.as_str();
            let hint = match did_you_mean(other, TYPES.iter().copied()) {
                Some(m) => format!("did you mean `{m}`?"),
                None => format!("types: {}", TYPES.join(", ")),
            };
            cx.diags.error(codes::UNKNOWN_FIELD_TYPE, &origin, format!("unknown field type `{other}`")).hint(hint);
            FieldType::String
        }
    };
    Located::new(ty, origin)
}
