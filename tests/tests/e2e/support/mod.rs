//! What the suites share: starting a service on a fresh database (`harness`), signing
//! in as somebody (`accounts`), the shop in a process of its own (`child`), and what the
//! model-driven suites ask of a spec.

pub mod accounts;
pub mod child;
pub mod harness;
pub mod receiver;
pub mod relay;

use restgen::spec::{FieldSpec, Operation};

/// Whether a client may set `f` in the write `op` (create, replace, or else patch).
pub fn settable(f: &FieldSpec, op: Operation) -> bool {
    match op {
        Operation::Create => f.create,
        Operation::Replace => f.replace,
        _ => f.patch,
    }
}
