//! Lifecycles' rules: the state a record is in, the transitions open from it to a caller,
//! and the 409 for one that is not. The operations that move a record and show its state
//! are `operations::transition`.

use crate::caller::Caller;
use crate::problem::Problem;
use crate::spec::{LifecycleSpec, ResourceSpec, TransitionSpec};
use crate::store::Record;
use serde_json::Value;

/// The state `record` is in.
pub(crate) fn state_of<'a>(lifecycle: &LifecycleSpec, record: &'a Record) -> &'a str {
    record.get(lifecycle.field).and_then(Value::as_str).unwrap_or_default()
}

/// Whether the caller holds what `t` asks beyond writing the record: one of its roles.
pub(crate) fn may_take(t: &TransitionSpec, caller: &Caller) -> bool {
    t.roles.is_empty() || t.roles.iter().any(|r| caller.has_role(r))
}

/// The transitions that start from `state` and that `caller` may take, in schema order.
pub(crate) fn open<'a>(
    lifecycle: &'a LifecycleSpec,
    state: &'a str,
    caller: &'a Caller,
) -> impl Iterator<Item = &'static TransitionSpec> + 'a {
    lifecycle.transitions.iter().filter(move |t| t.starts_from(state) && may_take(t, caller))
}

/// 409 for a transition that cannot start from the record's state: the problem names
/// the state and the transitions open from it (to this caller), also as extension
/// members a program can read.
pub(crate) fn wrong_state(
    spec: &ResourceSpec,
    lifecycle: &LifecycleSpec,
    t: &TransitionSpec,
    record: &Record,
    caller: &Caller,
) -> Problem {
    let state = state_of(lifecycle, record);
    let open: Vec<&str> = open(lifecycle, state, caller).map(|t| t.name).collect();
    let from = t.from.join(", ");
    let detail = match open.as_slice() {
        [] => {
            format!("this {} is {state}; `{}` starts from {from}, and nothing is open from {state}", spec.name, t.name)
        }
        names => format!(
            "this {} is {state}; `{}` starts from {from}; open from {state}: {}",
            spec.name,
            t.name,
            names.join(", ")
        ),
    };
    Problem::conflict(detail).with("state", state).with("transitions", open)
}
