//! Hypermedia (`links: true`): each representation carries `_links`, relation to link
//! object as HAL writes them, so a client follows links and offers only the actions that
//! are open instead of knowing the paths and the state machine:
//!
//! - `self`: the record; `collection`: the list it belongs to;
//! - one per parent (`nested_under`), named for it: the list of its records under that
//!   parent (`user`: `/api/users/{owner}/orders`);
//! - `status`: its status endpoint;
//! - one per transition open now to this caller (it may change the record, holds the
//!   transition's roles, and the record stands in a state it starts from), with
//!   `"method": "POST"`.
//!
//! Links stay in the request's version (`/api/v1/...` where it named the version by path).

use crate::access;
use crate::context::RequestContext;
use crate::lifecycle;
use crate::spec::{Operation, ResourceSpec};
use crate::store::Record;
use serde_json::{Map, Value, json};

/// Adds `_links` to `record` as `cx`'s caller sees it.
pub(crate) fn add(spec: &ResourceSpec, cx: &RequestContext, record: &mut Record) {
    let prefix = cx.prefix();
    let item = format!("{prefix}{}/{}", spec.path, record.id_text());
    let mut links = Map::new();
    links.insert("self".into(), json!({ "href": item }));
    if spec.has(Operation::List) {
        links.insert("collection".into(), json!({ "href": format!("{prefix}{}", spec.path) }));
        for parent in spec.parents {
            let Some(parent_id) = record.get(parent.column).filter(|v| !v.is_null()) else { continue };
            let parent_id = parent_id.as_str().map_or_else(|| parent_id.to_string(), str::to_owned);
            let href = format!("{prefix}{}/{parent_id}{}", parent.path, spec.path);
            links.insert(parent.resource.into(), json!({ "href": href }));
        }
    }
    if let Some(lifecycle) = &spec.lifecycle {
        if lifecycle.status_endpoint {
            links.insert("status".into(), json!({ "href": format!("{item}/status") }));
        }
        if may_write(spec, cx, record) {
            let state = lifecycle::state_of(lifecycle, record);
            for t in lifecycle::open(lifecycle, state, &cx.caller) {
                links.insert(t.name.into(), json!({ "href": format!("{item}/{}", t.name), "method": "POST" }));
            }
        }
    }
    record.insert("_links", Value::Object(links));
}

/// Whether the caller may change `record`, as a transition would ask.
fn may_write(spec: &ResourceSpec, cx: &RequestContext, record: &Record) -> bool {
    access::collection(spec.access.write, &cx.caller)
        .is_ok_and(|scope| access::record(spec, scope, &cx.caller, record).is_ok())
}
