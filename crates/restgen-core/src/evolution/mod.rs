//! Schema evolution: the storage record, the migration planner and the pairing of renamed
//! items are restgen-model's (the runtime runs them for derived services too); `diff`
//! classifies what a change does to the clients of each served version.

pub mod diff;

pub use restgen_model::evolution::*;
