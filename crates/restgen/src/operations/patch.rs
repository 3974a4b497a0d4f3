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
    let Rules { before: hook, compute } = rules;
    cx.view.admits(spec)?;
    if in_one(spec, cx, headers, compute) {
        return patch_in_one(spec, cx, id, headers, body, hook).await;
    }
    let found = found(spec, cx, id, headers).await?;
    let mine = access::owns(spec, &cx.caller, &found.stored);
    let changes = changes::<P>(spec, cx, id, headers, body, hook, mine)?;
    patched(spec, cx, found, changes, compute).await
}

/// Whether the patch is one `UPDATE ... RETURNING` with the owner in its `WHERE`, no read
/// before: unless it needs the record as it stands (its tag for `If-Match`, the whole
/// record for a compute rule, a `json` field's value to merge into), or has a field that
/// this caller may set on their own records only while they may write others.
fn in_one(spec: &ResourceSpec, cx: &RequestContext, headers: &HeaderMap, compute: Option<&ComputeRule>) -> bool {
    let caller = &cx.caller;
    let unconditional = matches!(Precondition::of(headers, spec.require_if_match), Ok(c) if !c.is_some());
    let own_only = access::collection(spec.access.write, caller).is_ok_and(|scope| scope == Scope::Own);
    let whose = |f: &FieldSpec| f.patch && access::field(f.write, caller) == Some(Scope::Own);
    unconditional
        && compute.is_none()
        && !spec.fields.iter().any(|f| f.kind == FieldKind::Json || (whose(f) && !own_only))
}

/// The rest of a patch of two steps, once its body is typed and read ([`Boxed`]).
fn patched<'a>(
    spec: &'static ResourceSpec,
    cx: &'a RequestContext,
    found: Found<'a>,
    changes: Record,
    compute: Option<&'a ComputeRule>,
) -> Boxed<'a, Result<Response, Problem>> {
    Box::pin(async move {
        let (values, refs) = columns(spec, cx, changes, compute, &found.stored).await?;
        rewritten(spec, cx, &found, values, &refs).await
    })
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
    let owner = match access::collection(spec.access.write, &cx.caller)? {
        Scope::All => None,
        Scope::Own => match access::owner_condition(spec, &cx.caller) {
            Some(condition) => Some(condition),
            // Nothing of this resource is anybody's: the lookup answers (404 or 403).
            None => return why_not(spec, cx, id).await.and(Err(access::not_owned(spec))),
        },
    };
    let key = parse_id(spec, id)?;
    // Only the caller's own record is written where they may write only their own.
    let mine = owner.is_some();
    let changes = changes::<P>(spec, cx, id, headers, body, hook, mine);
    patched_in_one(spec, cx, id, key, owner, changes).await
}

/// The rest of a patch in one statement, once its body is typed and read (or refused, when
/// the lookup may have something else to say first) ([`Boxed`]).
fn patched_in_one<'a>(
    spec: &'static ResourceSpec,
    cx: &'a RequestContext,
    id: &'a str,
    key: SqlValue,
    owner: Option<(&'static str, SqlValue)>,
    changes: Result<Record, Problem>,
) -> Boxed<'a, Result<Response, Problem>> {
    Box::pin(async move {
        let store = &cx.store;
        let prepared = match changes {
            Ok(changes) => match columns(spec, cx, changes, None, &Record::new()).await {
                Ok((values, refs)) => refs_readable(spec, store, &cx.caller, &refs).await.map(|()| (values, refs)),
                Err(problem) => Err(problem),
            },
            Err(problem) => Err(problem),
        };
        let (values, refs) = match prepared {
            Ok(prepared) => prepared,
            Err(problem) => {
                why_not(spec, cx, id).await?;
                return Err(problem);
            }
        };
        let event = (!values.is_empty()).then_some("updated");
        match store.update_owned_row(spec, &key, values, owner, event).await {
            Ok(row) => written(spec, cx, StatusCode::OK, row),
            Err(StoreError::NotFound) => {
                why_not(spec, cx, id).await?;
                Err(missing(spec))
            }
            // Only a row the caller may write is written, and so refused.
            Err(refused @ StoreError::MissingRef { .. }) => Err(missing_ref(spec, store, &refs, None, refused).await),
            Err(e) => Err(e.into()),
        }
    })
}

/// Why a write of the record `id` did not happen, where the record says: 404 or 403 as
/// looking it up answers ([`Boxed`]).
fn why_not<'a>(spec: &'static ResourceSpec, cx: &'a RequestContext, id: &'a str) -> Boxed<'a, Result<(), Problem>> {
    Box::pin(async move { authorized(spec, spec.access.write, &cx.store, &cx.caller, id).await.map(drop) })
}

/// Columns to write and their values.
type Columns = Vec<(&'static str, SqlValue)>;

/// The fields a patch's body sets, read into `P` and through the hook (`mine`: whether the
/// record is the caller's).
fn changes<P: DeserializeOwned + Serialize>(
    spec: &ResourceSpec,
    cx: &RequestContext,
    id: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    hook: Option<&UpdateRule<P>>,
    mine: bool,
) -> Result<Record, Problem> {
    let hook = hook.map(|h| move |t: &mut P| h(id, t));
    settable::read::<P>(spec, &cx.view, &cx.caller, headers, body, Write::Patch { mine }, hook)
}

/// The columns a patch writes, from the fields its body sets (`stored` the record as it
/// stands, needed by a compute rule and a `json` field's merge), and the refs it names.
async fn columns(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    mut changes: Record,
    compute: Option<&ComputeRule>,
    stored: &Record,
) -> Result<(Columns, Record), Problem> {
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
