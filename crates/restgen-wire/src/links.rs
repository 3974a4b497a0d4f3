//! `_links` of a representation (`links: true`), as HAL writes them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A record's links by relation: `self`, `collection`, a parent's name, `status`, and each
/// transition open to the caller.
pub type Links = BTreeMap<String, Link>;

/// One link: where, and for an action (a transition) the method to use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    pub href: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}
