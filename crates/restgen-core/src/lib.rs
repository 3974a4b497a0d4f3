//! restgen's core: the model both front-ends build, the semantic checks that run on it,
//! the diagnostics they report, and the emitters that turn it into files.
//!
//! Stages, each in its own module: `model` (plain data) -> `check` (collect every
//! problem) -> `emit` (pure: model in, files out) -> `output` (write or compare on disk).

pub mod check;
pub mod diagnostics;
pub mod emit;
pub mod evolution;
pub mod output;

/// The model and origins live in restgen-model, which the runtime shares.
pub use restgen_model::{features, migration, model, origin, predicates, vocabulary, words};

pub use diagnostics::{Diagnostic, Diagnostics, Severity};
pub use origin::{Located, Origin};
