//! The protocol a generated service and its generated client share, each fact named once:
//! the three states of a patched field and the serde helpers input structs name, the
//! header names and media types (`http`), the problem body, the paging styles, the
//! webhook shapes (`webhook`), signatures and retry schedule (`signature`, `retries`).
//! Both sides re-export this crate, so a model emitted once means the same JSON on either
//! side.

mod endpoint;
mod enumeration;
pub mod feed;
pub mod http;
pub mod input;
mod links;
mod patch;
mod problem;
pub mod query;
pub mod redact;
pub mod retries;
pub mod signature;
#[cfg(feature = "time")]
pub mod time;
pub mod webhook;

pub use endpoint::{Endpoint, Paging};
pub use enumeration::Enum;
pub use links::{Link, Links};
pub use patch::Patch;
pub use problem::{ABOUT_BLANK, FieldError, ProblemBody};

/// What `string_enum!` expands to names through here.
#[doc(hidden)]
pub mod __private {
    pub use crate::enumeration::Values;
    pub use serde;
}
