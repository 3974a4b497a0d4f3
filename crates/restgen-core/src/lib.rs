//! restgen's core: the model both front-ends build, the semantic checks that run on it,
//! the diagnostics they report, and the emitters that turn it into files.
//!
//! Stages, each in its own module: `model` (plain data) -> `check` (collect every
//! problem) -> `emit` (pure: model in, files out) -> `output` (write or compare on disk).

pub mod check;
pub mod diagnostics;
pub mod emit;
pub mod model;
pub mod origin;
pub mod output;

pub use diagnostics::{Diagnostic, Diagnostics, Severity};
pub use origin::{Located, Origin};
