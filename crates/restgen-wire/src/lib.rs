//! The wire shapes a generated service and its generated client share: the three states
//! of a patched field and the serde helpers input structs name. Both sides re-export this
//! crate, so a model emitted once means the same JSON on either side.

mod endpoint;
mod enumeration;
pub mod http;
pub mod input;
mod links;
mod patch;
mod problem;
pub mod query;
pub mod redact;
pub mod retries;
pub mod signature;
pub mod time;
pub mod webhook;

pub use endpoint::{Endpoint, Paging};
pub use enumeration::Enum;
pub use links::{Link, Links};
pub use patch::Patch;
pub use problem::FieldError;

/// What `string_enum!` expands to names through here.
#[doc(hidden)]
pub mod __private {
    pub use crate::enumeration::Values;
    pub use serde;
}
