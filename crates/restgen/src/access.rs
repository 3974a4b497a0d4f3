//! Who may do what: the `access` rules of an operation against the caller and, for one
//! record, its owner. Missing credentials give 401, a caller the rules do not admit 403,
//! and a record of somebody else 403 or, with `not_owned: not_found`, the very 404 a
//! missing record gives. A field's own `read` and `write` narrow, field by field, what
//! the resource's rules admitted: a field the caller may not read is absent wherever the
//! record shows, one they may not write is not settable to them.

use crate::caller::Caller;
use crate::problem::Problem;
use crate::spec::{FieldSpec, IdKind, ResourceSpec, Rule};
use crate::store::{Record, SqlValue};
use serde_json::Value;

/// What a caller may reach of a collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every record.
    All,
    /// Only the caller's own records.
    Own,
}

/// How far the rules admit the caller before any record is seen.
fn scope(rules: &[Rule], caller: &Caller) -> Option<Scope> {
    if caller.is_admin() {
        return Some(Scope::All);
    }
    let mut best = None;
    for rule in rules {
        match rule {
            Rule::Anyone => return Some(Scope::All),
            Rule::Authenticated if caller.is_authenticated() => return Some(Scope::All),
            Rule::Role(role) if caller.has_role(role) => return Some(Scope::All),
            Rule::Owner if caller.is_authenticated() => best = Some(Scope::Own),
            _ => {}
        }
    }
    best
}

/// 401 for an anonymous caller, 403 for one the rules do not admit.
fn refused(caller: &Caller) -> Problem {
    if caller.is_authenticated() { Problem::forbidden("you may not do this") } else { caller.unauthorized() }
}

/// How much of a collection the rules let the caller reach; for an item operation, the
/// check made before its record is looked up.
pub fn collection(rules: &[Rule], caller: &Caller) -> Result<Scope, Problem> {
    scope(rules, caller).ok_or_else(|| refused(caller))
}

/// The check once the record is known.
pub fn record(spec: &ResourceSpec, scope: Scope, caller: &Caller, record: &Record) -> Result<(), Problem> {
    if scope == Scope::All || owns(spec, caller, record) {
        return Ok(());
    }
    Err(not_owned(spec))
}

/// The answer for somebody else's record: 403, or the 404 of a missing one.
pub fn not_owned(spec: &ResourceSpec) -> Problem {
    if spec.hide_not_owned {
        Problem::not_found(format!("no {} with this id", spec.name))
    } else {
        Problem::forbidden(format!("this {} belongs to somebody else", spec.name))
    }
}

/// How far a field's `read` or `write` reaches for the caller among the records the
/// resource's own rules admit them to: all of them where the field has no such list.
pub fn field(rules: Option<&[Rule]>, caller: &Caller) -> Option<Scope> {
    match rules {
        None => Some(Scope::All),
        Some(rules) => scope(rules, caller),
    }
}

/// Whether the caller may see `f` on `record`.
pub fn reads(spec: &ResourceSpec, f: &FieldSpec, caller: &Caller, record: &Record) -> bool {
    match field(f.read, caller) {
        Some(Scope::All) => true,
        Some(Scope::Own) => owns(spec, caller, record),
        None => false,
    }
}

/// Whether the caller may set `f` on a record that is theirs (`mine`) or not.
pub fn writes(f: &FieldSpec, caller: &Caller, mine: bool) -> bool {
    match field(f.write, caller) {
        Some(Scope::All) => true,
        Some(Scope::Own) => mine,
        None => false,
    }
}

/// Whether a list the caller reaches with `scope` may be filtered or sorted on `f`: only
/// where they see it on every record it could hold, so a query learns nothing of a value
/// they may not read.
pub fn queries(f: &FieldSpec, caller: &Caller, scope: Scope) -> bool {
    match field(f.read, caller) {
        Some(Scope::All) => true,
        Some(Scope::Own) => scope == Scope::Own,
        None => false,
    }
}

/// The column that says whose a record is, and the kind of id it holds: an account is its
/// own (`id`), an owned record is its owner's (`owner_id`); `None` where no record of the
/// resource is anybody's.
fn owner_column(spec: &ResourceSpec) -> Option<(&'static str, IdKind)> {
    if spec.principal { Some(("id", spec.id)) } else { spec.owner.map(|(_, kind)| ("owner_id", kind)) }
}

/// The owner column and the caller's id as its value: what a list filters on and a write
/// adds to its `WHERE` to reach only the caller's own. `None` when no record of the
/// resource is anybody's or the caller has no id of its kind.
pub fn owner_condition(spec: &ResourceSpec, caller: &Caller) -> Option<(&'static str, SqlValue)> {
    let (column, kind) = owner_column(spec)?;
    Some((column, caller.id_value(kind)?))
}

/// Whether `record` is the caller's: their own account, or a record they own.
pub fn owns(spec: &ResourceSpec, caller: &Caller, record: &Record) -> bool {
    let (Some(id), Some((column, _))) = (caller.id(), owner_column(spec)) else { return false };
    match record.get(column) {
        Some(Value::String(s)) => s == id,
        Some(Value::Number(n)) => n.to_string() == id,
        _ => false,
    }
}
