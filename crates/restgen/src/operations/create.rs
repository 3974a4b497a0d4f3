//! `POST` to a collection: a new record from its body, held to the create's allow-list,
//! hook and checks, with its defaults, owner and computed fields filled in.

use super::*;

pub async fn create<C: DeserializeOwned + Serialize>(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    uri: &Uri,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    rules: Rules<'_, CreateRule<C>>,
) -> Result<Response, Problem> {
    let Rules { before: hook, compute } = rules;
    let owner = creator(spec, cx)?;
    let hook = hook.map(|h| move |t: &mut C| h(t));
    let input = settable::read::<C>(spec, &cx.view, &cx.caller, headers, body, Write::Create, hook)?;
    created(spec, cx, uri, owner, input, compute).await
}

/// Whether the caller may create, and the owner a new record of theirs gets: `owner_id`
/// comes from the caller, never from the body.
fn creator(spec: &ResourceSpec, cx: &RequestContext) -> Result<Option<SqlValue>, Problem> {
    let caller = &cx.caller;
    cx.view.admits(spec)?;
    access::collection(spec.access.create, caller)?;
    match spec.owner {
        Some((_, kind)) => Ok(Some(caller.id_value(kind).ok_or_else(|| caller.unauthorized())?)),
        None => Ok(None),
    }
}

/// The rest of a create, once its input is typed and read: compiled in the runtime, not in
/// the service's crate for each input type ([`Boxed`]).
fn created<'a>(
    spec: &'static ResourceSpec,
    cx: &'a RequestContext,
    uri: &'a Uri,
    owner: Option<SqlValue>,
    input: Record,
    compute: Option<&'a ComputeRule>,
) -> Boxed<'a, Result<Response, Problem>> {
    Box::pin(async move {
        let (store, caller) = (&cx.store, &cx.caller);
        refs_readable(spec, store, caller, &input).await?;
        let row = insert(spec, store, input, owner.as_ref().map(|o| (o, caller)), compute).await?;
        let location = format!("{}/{}", uri.path().trim_end_matches('/'), row.id_text(spec)?);
        let mut response = written(spec, cx, StatusCode::CREATED, row)?;
        if let Ok(v) = HeaderValue::from_str(&location) {
            response.headers_mut().insert(header::LOCATION, v);
        }
        Ok(response)
    })
}

/// Stores a new record from validated input: defaults, the initial state, timestamps and
/// the owner (with the caller it comes from) filled in, the resource's computed fields
/// computed; a ref that names nothing is refused naming its field.
pub(crate) async fn insert(
    spec: &'static ResourceSpec,
    store: &Store,
    input: Record,
    owner: Option<(&SqlValue, &Caller)>,
    compute: Option<&ComputeRule>,
) -> Result<Rows, Problem> {
    let now = store.now();
    let id = (spec.id == IdKind::Uuid).then(|| uuid::Uuid::now_v7().to_string());
    // What the refs name, kept apart from the input the columns take, to say which names
    // nothing should the database refuse the write.
    let refs = refs_of(spec, &input);
    let mut fields = input;
    for f in spec.fields {
        if fields.contains_key(f.name) {
            continue;
        }
        let value = match &spec.lifecycle {
            Some(l) if l.field == f.name => Value::from(l.initial),
            _ => default_of(f, &now),
        };
        fields.insert(f.name, value);
    }
    if let Some(rule) = compute {
        // The record as it will be stored; an integer id is the database's, 0 until then.
        let mut record = Record::with_capacity(spec.fields.len() + 4);
        record.insert("id", id.clone().map_or(Value::from(0), Value::from));
        if let Some((owner_id, _)) = owner {
            record.insert("owner_id", owner_id.to_json());
        }
        for f in spec.fields {
            record.insert(f.name, fields.get(f.name).cloned().unwrap_or_default());
        }
        if spec.timestamps {
            record.insert("created_at", Value::from(now.clone()));
            record.insert("updated_at", Value::from(now.clone()));
        }
        fields = computed(spec, rule, record, &fields)?;
    }
    let mut values: Vec<(&str, SqlValue)> = Vec::with_capacity(spec.fields.len() + 4);
    if let Some(id) = id {
        values.push(("id", SqlValue::Text(Some(id))));
    }
    if let Some((owner_id, _)) = owner {
        values.push(("owner_id", owner_id.clone()));
    }
    for f in spec.fields {
        values.push((f.name, stored(f, fields.take(f.name).unwrap_or_default()).await?));
    }
    if spec.timestamps {
        values.push(("created_at", SqlValue::Text(Some(now.clone()))));
        values.push(("updated_at", SqlValue::Text(Some(now))));
    }
    match store.insert_row(spec, values, Some("created")).await {
        Err(refused @ StoreError::MissingRef { .. }) => Err(missing_ref(spec, store, &refs, owner, refused).await),
        other => Ok(other?),
    }
}
