//! `GET` of a collection: the caller's reach, filters, sorts and a page, JSON or CSV.

use super::*;

pub async fn list(
    spec: &'static ResourceSpec,
    cx: &RequestContext,
    uri: &Uri,
    headers: &HeaderMap,
    parent: Option<(&'static crate::spec::ParentSpec, &str)>,
) -> Result<Response, Problem> {
    let (store, caller, view) = (&cx.store, &cx.caller, &cx.view);
    view.admits(spec)?;
    let format = negotiate::choose(spec, view, headers)?;
    let scope = access::collection(spec.access.read, caller)?;
    // Listing the children of a record is refused exactly as reading that record would
    // be, by the parent's own rules (its `read`, its owner, its `not_owned`); the
    // children are then held to theirs below.
    let parent = match parent {
        Some((p, parent_id)) => {
            let (id, _) = authorized(p.spec, p.spec.access.read, store, caller, parent_id).await?;
            Some((p, id))
        }
        None => None,
    };
    // Cursors are bound to the list that issued them: a parent's children are another
    // list than its sibling's or the whole collection.
    let within = parent.as_ref().map(|(p, id)| list::within(p.resource, id));
    // Filters and sorts on what the version has and the caller sees on every record of
    // the list: a query on a hidden value would disclose it.
    let queries = |f: &FieldSpec| view.has(&f.gate) && access::queries(f, caller, scope);
    let mut request = list::parse(spec, &queries, &list::query_pairs(uri), within)?;
    if let Some((p, id)) = &parent {
        request.query.filters.push(crate::store::Filter { column: p.column, value: id.clone() });
    }
    if scope == Scope::Own {
        let (column, value) = access::owner_condition(spec, caller).ok_or_else(|| caller.unauthorized())?;
        request.query.filters.push(crate::store::Filter { column, value });
    }
    if let Some(after) = &request.starting_after {
        let bad = |message: &str| {
            Problem::validation(vec![FieldError {
                field: restgen_wire::query::STARTING_AFTER.into(),
                message: message.into(),
            }])
        };
        let id = parse_id(spec, after).map_err(|_| bad("is not an id of this collection"))?;
        // Only a record this very list could show: the caller's (where they see only
        // theirs), under this parent (where there is one).
        let record = store
            .get(spec, &id)
            .await
            .ok()
            .filter(|r| scope == Scope::All || access::owns(spec, caller, r))
            .filter(|r| parent.as_ref().is_none_or(|(p, id)| r.get(p.column) == Some(&id.to_json())))
            .ok_or_else(|| bad("names no record of this list"))?;
        request.query.page = crate::store::Page::After(list::cursor_values(spec, &request.query.sort, &record));
    }
    let (rows, more) = store.list_rows(spec, &request.query).await?;
    let items = match from_row(spec, cx) {
        Some(shown) => list::Items::Rows(rows, shown),
        None => {
            let records = rows.records(spec).map_err(StoreError::from)?;
            list::Items::Records(records.into_iter().map(|r| representation(spec, cx, r)).collect())
        }
    };
    list::respond(spec, cx, uri, headers, format, &request, items, more)
}
