//! What the suites share: starting a service on a fresh database (`harness`), signing
//! in as somebody (`accounts`), the shop in a process of its own (`child`), and what the
//! model-driven suites ask of a spec.

pub mod accounts;
pub mod child;
pub mod harness;
pub mod receiver;
pub mod relay;

use restgen::spec::{FieldSpec, Operation, Rule};

/// Whether the record's owner, a plain account (the `member` role, none of the admin
/// roles), may set `f` in the write `op` (create, replace, or else patch): it is settable
/// there, and its `write` admits them.
pub fn settable(f: &FieldSpec, op: Operation) -> bool {
    let member = |rule: &Rule| matches!(rule, Rule::Anyone | Rule::Authenticated | Rule::Owner | Rule::Role("member"));
    let theirs = f.write.is_none_or(|rules| rules.iter().any(member));
    theirs
        && match op {
            Operation::Create => f.create,
            Operation::Replace => f.replace,
            _ => f.patch,
        }
}
