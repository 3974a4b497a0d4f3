//! restgen's model of a service: the plain data the YAML and derive front-ends build
//! (`model`, with the `origin` of every node), and the OpenAPI document emitted from it
//! (`openapi`). A crate of its own so that the runtime can emit a derived service's
//! document at start without depending on the code emitters (syn, prettyplease,
//! minijinja); restgen-core re-exports all of it.

pub mod bounds;
pub mod model;
pub mod openapi;
pub mod origin;
pub mod predicates;
pub mod vocabulary;
pub mod words;

pub use origin::{Located, Origin};
