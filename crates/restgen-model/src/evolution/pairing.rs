//! Which item of the schema before each item of the new one continues: the one of the same
//! name, or the one its `renamed_from` names. The migration planner and `restgen diff`
//! pair resources and fields this one way.

use crate::diagnostics::{Diagnostics, codes};
use crate::origin::Located;

/// What a new item continues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Partner {
    /// The item of the same name.
    Same,
    /// The item named here, renamed.
    Renamed(String),
    /// Nothing: the item is new.
    New,
}

impl Partner {
    /// The name the item had before, if it existed.
    pub fn old_name<'a>(&'a self, name: &'a str) -> Option<&'a str> {
        match self {
            Partner::Same => Some(name),
            Partner::Renamed(from) => Some(from),
            Partner::New => None,
        }
    }
}

/// The partner of `name` (`what` is "resource" or "field `x` of"), given the names before
/// and now. A `renamed_from` that names an item the schema still has is an error; one that
/// names nothing before is a warning (the item is new), unless the rename already
/// happened (the item's own name existed before).
pub fn partner(
    what: &str,
    name: &str,
    renamed_from: Option<&Located<String>>,
    before: &dyn Fn(&str) -> bool,
    now: &dyn Fn(&str) -> bool,
    diags: &mut Diagnostics,
) -> Partner {
    let Some(from) = renamed_from else {
        return if before(name) { Partner::Same } else { Partner::New };
    };
    if before(name) {
        // Renamed in an earlier generation: the rename is done, the key a leftover.
        return Partner::Same;
    }
    if from.value != name && now(&from.value) {
        diags
            .error(
                codes::BAD_RENAME,
                &from.origin,
                format!("{what} `{name}` is renamed from `{}`, which this schema still has", from.value),
            )
            .hint(format!(
                "one {what} takes over the old one's data: rename `{}` too, or drop `renamed_from`",
                from.value
            ));
        return Partner::New;
    }
    if before(&from.value) {
        return Partner::Renamed(from.value.clone());
    }
    diags
        .warning(
            codes::BAD_RENAME,
            &from.origin,
            format!("{what} `{name}` is renamed from `{}`, which the last generation did not have", from.value),
        )
        .hint("it is created new; check the old name");
    Partner::New
}
