//! restgen's model of a service: the plain data the YAML and derive front-ends build
//! (`model`, with the `origin` of every node), the `vocabulary` of the format they read
//! (with the `words` its enums are written with), and what the checks, the runtime and the
//! OpenAPI document share: `predicates` of well-formed values, `bounds` the runtime
//! keeps and the runtime `features` a service uses. A crate of its own, without syn or templates, so the runtime can use it;
//! restgen-core re-exports all of it.

pub mod bounds;
pub mod diagnostics;
pub mod evolution;
pub mod features;
pub mod migration;
pub mod model;
pub mod origin;
pub mod predicates;
pub mod vocabulary;
pub mod words;

pub use origin::{Located, Origin};
/// The query parameters of a list (`sort`, paging), shared with the runtime and the client.
pub use restgen_wire::query;
