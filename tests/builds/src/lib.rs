//! Nothing but the home of `tests/compile.rs` and `tests/derive_ui.rs` (the crate's
//! description says why they stand apart from `restgen-tests`).
