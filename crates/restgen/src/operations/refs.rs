//! Refs a write names: each must name a record that exists and, where the target is
//! owned, one the caller may read; a missing one is refused naming its field.

use super::*;

/// The ref fields of `input`, which [`refs_exist`] checks: taken apart from the input where
/// the columns to write take its values.
pub(super) fn refs_of(spec: &ResourceSpec, input: &Record) -> Record {
    let refs = spec.fields.iter().filter(|f| f.kind == FieldKind::Ref);
    refs.filter_map(|f| Some((f.name, input.get(f.name)?.clone()))).collect()
}

/// Why the database refused a write for a record it refers to. A ref's foreign key refuses
/// a record that names nothing, so refs are not looked up before a write (a round trip
/// each, on every create, for a refusal the database makes anyway) but after a refusal,
/// to name every field that names nothing: 400. Where they all name something, the
/// refusal was the owner's: a bearer token outlived its account.
pub(super) async fn missing_ref(
    spec: &ResourceSpec,
    store: &Store,
    refs: &Record,
    owner: Option<(&SqlValue, &Caller)>,
    refused: StoreError,
) -> Problem {
    if let Err(problem) = refs_exist(spec, store, refs).await {
        return problem;
    }
    if let (Some((table, _)), Some((owner_id, caller))) = (spec.owner, owner) {
        match store.exists(table, owner_id).await {
            Ok(false) => return crate::caller::account_gone(caller),
            Err(e) => return e.into(),
            Ok(true) => {}
        }
    }
    refused.into()
}

/// Every ref of `input` that names no record, as the answer's field errors.
pub(super) async fn refs_exist(spec: &ResourceSpec, store: &Store, input: &Record) -> Result<(), Problem> {
    unnamed_refs(spec, store, input, None).await
}

/// Refs name only records the caller may read. Where the target's `read` rules let the
/// caller read only their own records (or none), each such ref is looked up before the
/// write with the owner in its `WHERE`, and one naming somebody else's record is refused
/// as one naming nothing, so the answer tells nothing of it. Where the caller may read
/// every record of the target, nothing is looked up: the foreign key guards the write.
pub(super) async fn refs_readable(
    spec: &ResourceSpec,
    store: &Store,
    caller: &Caller,
    input: &Record,
) -> Result<(), Problem> {
    unnamed_refs(spec, store, input, Some(caller)).await
}

/// The refs of `input` that name nothing `reader` may name (every ref, looked up as it
/// exists, without a reader), as the answer's field errors.
pub(super) async fn unnamed_refs(
    spec: &ResourceSpec,
    store: &Store,
    input: &Record,
    reader: Option<&Caller>,
) -> Result<(), Problem> {
    let mut errors = Vec::new();
    for f in spec.fields.iter().filter(|f| f.kind == FieldKind::Ref) {
        let (Some(v), Some((target, kind))) = (input.get(f.name), f.to) else { continue };
        if v.is_null() {
            continue;
        }
        let names_nothing = || FieldError { field: f.name.into(), message: format!("names no existing {target}") };
        let owner = match (reader, f.target) {
            (None, _) => None,
            (Some(_), None) => continue,
            (Some(caller), Some(Target(t))) => match access::collection(t.access.read, caller) {
                Ok(Scope::All) => continue,
                Ok(Scope::Own) => match access::owner_condition(t, caller) {
                    Some(condition) => Some(condition),
                    // No record of it is anybody's, or the caller has no id of its kind.
                    None => {
                        errors.push(names_nothing());
                        continue;
                    }
                },
                // The caller may read none of its records.
                Err(_) => {
                    errors.push(names_nothing());
                    continue;
                }
            },
        };
        let text = v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string());
        let found = match SqlValue::id(kind, &text) {
            Some(id) => store.exists_owned(target, &id, owner).await?,
            None => false,
        };
        if !found {
            errors.push(names_nothing());
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(Problem::validation(errors)) }
}
