//! `PUT`: a record replaced by its body, held to the replace's allow-list, hook and checks;
//! what the body leaves out goes back to its default, except what the caller may not set
//! or see.

use super::*;

pub async fn replace<R: DeserializeOwned + Serialize>(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    id: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    rules: Rules<'_, UpdateRule<R>>,
) -> Result<Response, Problem> {
    let Rules { before: hook, compute } = rules;
    cx.view.admits(spec)?;
    let found = found(spec, cx, id, headers).await?;
    let write = Write::Replace { current: &found.current };
    let hook = hook.map(|h| move |t: &mut R| h(id, t));
    let input = settable::read::<R>(spec, &cx.view, &cx.caller, headers, body, write, hook)?;
    replaced(spec, cx, found, input, compute).await
}

/// The rest of a replace, once its input is typed and read ([`Boxed`]).
fn replaced<'a>(
    spec: &'static ResourceSpec,
    cx: &'a RequestContext,
    found: Found<'a>,
    input: Record,
    compute: Option<&'a ComputeRule>,
) -> Boxed<'a, Result<Response, Problem>> {
    Box::pin(async move {
        let (store, caller, view) = (&cx.store, &cx.caller, &cx.view);
        let stored_record = &found.stored;
        let now = store.now();
        let mut changes = Record::new();
        // An admin's `roles` replace the stored ones even where the schema leaves the field
        // out of replace; there, omitting it leaves it alone. Fields the request's version
        // lacks are not its to clear: they keep what they hold.
        let replaced = |f: &&FieldSpec| f.replace || (f.kind == FieldKind::Roles && input.contains_key(f.name));
        // Nor are the fields the caller may not set, or may set but not see unless they sent
        // them: a replace leaves alone what its sender was never shown.
        let mine = access::owns(spec, caller, stored_record);
        let theirs = |f: &&FieldSpec| {
            f.kind == FieldKind::Roles
                || (access::writes(f, caller, mine)
                    && (input.contains_key(f.name) || access::reads(spec, f, caller, stored_record)))
        };
        for f in spec.fields.iter().filter(replaced).filter(|f| view.has(&f.gate)).filter(theirs) {
            changes.insert(f.name, input.get(f.name).cloned().unwrap_or_else(|| default_of(f, &now)));
        }
        let mut values = changed_values(spec, stored_record, changes, compute).await?;
        if spec.timestamps {
            values.push(("updated_at", SqlValue::Text(Some(now))));
        }
        rewritten(spec, cx, &found, values, &input).await
    })
}
