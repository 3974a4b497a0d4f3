//! The part of a problem body (RFC 9457) both sides name the same way: one invalid input,
//! as the service lists it under `errors` and the client reads it back.

use serde::{Deserialize, Serialize};

/// One invalid input, named by its JSON path (`total_cents`, `items[2].qty`), or by the
/// query parameter or header it came in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}
