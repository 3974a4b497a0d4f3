//! `PATCH`: an RFC 7396 merge patch of a record, held to the patch's allow-list, hook and
//! checks; one `UPDATE ... RETURNING` where nothing needs the record first.

use super::*;

pub async fn patch<P: DeserializeOwned + Serialize>(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    id: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    rules: Rules<'_, UpdateRule<P>>,
) -> Result<Response, Problem> {
    let (store, caller, view) = (&cx.store, &cx.caller, &cx.view);
    let Rules { before: hook, compute } = rules;
    view.admits(spec)?;
    // What the write needs of the record as it stands: its tag for `If-Match`, the whole
    // record for a compute rule, a `json` field's value to merge into. Without those the
    // patch is one `UPDATE ... RETURNING` with the owner in its `WHERE`, no read before.
    // So does a field that this caller may set on their own records only, unless they
    // may write no other.
    let unconditional = matches!(Precondition::of(headers, spec.require_if_match), Ok(c) if !c.is_some());
    let own_only = access::collection(spec.access.write, caller).is_ok_and(|scope| scope == Scope::Own);
    let whose = |f: &FieldSpec| f.patch && access::field(f.write, caller) == Some(Scope::Own);
    if unconditional
        && compute.is_none()
        && !spec.fields.iter().any(|f| f.kind == FieldKind::Json || (whose(f) && !own_only))
    {
        return patch_in_one(spec, cx, id, headers, body, hook).await;
    }
    let (id_value, stored_record) = authorized(spec, spec.access.write, store, caller, id).await?;
    let condition = precondition(spec, cx, headers, &representation(spec, cx, stored_record.clone()))?;
    let mine = access::owns(spec, caller, &stored_record);
    let (values, refs) = patch_values(spec, cx, id, headers, body, hook, compute, &stored_record, mine).await?;
    refs_readable(spec, store, caller, &refs).await?;
    let record = update(spec, cx, &id_value, values, &condition, &refs).await?;
    Ok(conditional::tagged(StatusCode::OK, view, &representation(spec, cx, record)))
}

/// A patch written in one statement. The answers are a two-statement patch's: a caller
/// who may not write the record, or names none, learns that before anything about the
/// body, so whenever the write does not happen the record is looked up to say why.
async fn patch_in_one<P: DeserializeOwned + Serialize>(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    id: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    hook: Option<&UpdateRule<P>>,
) -> Result<Response, Problem> {
    let (store, caller) = (&cx.store, &cx.caller);
    let why_not = || async { authorized(spec, spec.access.write, store, caller, id).await.map(drop) };
    let owner = match access::collection(spec.access.write, caller)? {
        Scope::All => None,
        Scope::Own => match access::owner_condition(spec, caller) {
            Some(condition) => Some(condition),
            // Nothing of this resource is anybody's: the lookup answers (404 or 403).
            None => return why_not().await.and(Err(access::not_owned(spec))),
        },
    };
    let key = parse_id(spec, id)?;
    // Only the caller's own record is written where they may write only their own.
    let mine = owner.is_some();
    let prepared = match patch_values(spec, cx, id, headers, body, hook, None, &Record::new(), mine).await {
        Ok((values, refs)) => refs_readable(spec, store, caller, &refs).await.map(|()| (values, refs)),
        Err(problem) => Err(problem),
    };
    let (values, refs) = match prepared {
        Ok(prepared) => prepared,
        Err(problem) => {
            why_not().await?;
            return Err(problem);
        }
    };
    let event = (!values.is_empty()).then_some("updated");
    match store.update_owned_row(spec, &key, values, owner, event).await {
        Ok(row) => written(spec, cx, StatusCode::OK, row),
        Err(StoreError::NotFound) => {
            why_not().await?;
            Err(missing(spec))
        }
        // Only a row the caller may write is written, and so refused.
        Err(refused @ StoreError::MissingRef { .. }) => Err(missing_ref(spec, store, &refs, None, refused).await),
        Err(e) => Err(e.into()),
    }
}

/// Columns to write and their values.
type Columns = Vec<(&'static str, SqlValue)>;

/// The columns a patch writes, from its body (`stored` the record as it stands, needed
/// by a compute rule and a `json` field's merge; `mine` whether it is the caller's), and
/// the refs it names.
#[allow(clippy::too_many_arguments)]
async fn patch_values<P: DeserializeOwned + Serialize>(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    id: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    hook: Option<&UpdateRule<P>>,
    compute: Option<&ComputeRule>,
    stored: &Record,
    mine: bool,
) -> Result<(Columns, Record), Problem> {
    let hook = hook.map(|h| move |t: &mut P| h(id, t));
    let mut changes = settable::read::<P>(spec, &cx.view, &cx.caller, headers, body, Write::Patch { mine }, hook)?;
    let refs = refs_of(spec, &changes);
    changes.retain(|k| spec.field(k).is_some_and(|f| f.patch || f.kind == FieldKind::Roles));
    // JSON Merge Patch reaches inside a `json` field: an object there is merged into what
    // the field holds, member by member, at every depth (RFC 7396 §2).
    let mut merged = Record::new();
    for f in spec.fields.iter().filter(|f| f.kind == FieldKind::Json) {
        if let Some(patch @ Value::Object(_)) = changes.get(f.name) {
            let value = merge_patch(stored.get(f.name).cloned().unwrap_or(Value::Null), patch);
            merged.insert(f.name, value);
        }
    }
    // What the merge made is held to the fields' rules like any value sent whole.
    settable::check(spec, &merged)?;
    changes.extend(merged);
    let mut values = changed_values(spec, stored, changes, compute).await?;
    if spec.timestamps && !values.is_empty() {
        values.push(("updated_at", SqlValue::Text(Some(cx.store.now()))));
    }
    Ok((values, refs))
}

/// RFC 7396's MergePatch: an object patch merges into the target (made an object if it is
/// not), a `null` member removing the target's, any other value replacing it.
pub(super) fn merge_patch(target: Value, patch: &Value) -> Value {
    let Value::Object(members) = patch else { return patch.clone() };
    let mut target = match target {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    for (name, value) in members {
        if value.is_null() {
            target.shift_remove(name);
        } else if let Some(slot) = target.get_mut(name) {
            // In place, so the members keep their order.
            *slot = merge_patch(slot.take(), value);
        } else {
            target.insert(name.clone(), merge_patch(Value::Null, value));
        }
    }
    Value::Object(target)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    #[test]
    fn merge_patch_does_what_rfc_7396_appendix_a_says() {
        // `[target, patch, result]`, each example of the RFC's Appendix A.
        let examples: Vec<(Value, Value, Value)> =
            serde_json::from_str(include_str!("../../../../tests/fixtures/rfc7396-appendix-a.json")).expect("examples");
        assert_eq!(examples.len(), 15);
        for (target, patch, want) in examples {
            assert_eq!(super::merge_patch(target.clone(), &patch), want, "{target} patched with {patch}");
        }
    }
}
