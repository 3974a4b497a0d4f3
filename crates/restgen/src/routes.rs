//! The routes of one resource, built from its spec and its input types: what a generated
//! `routes.rs` calls once per resource.

use crate::auth::Caller;
use crate::body::Sent;
use crate::idempotency::{self, Keeper};
use crate::operations;
use crate::problem::Problem;
use crate::spec::{Operation, ResourceSpec};
use crate::store::{Record, Store};
use axum::Router;
use axum::extract::{OriginalUri, Path, Request};
use axum::http::Method;
use axum::routing::MethodRouter;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;

/// Bounds of an operation's input type; `()` stands for an operation the resource lacks.
pub trait Input: DeserializeOwned + Serialize + Send + Sync + 'static {}
impl<T: DeserializeOwned + Serialize + Send + Sync + 'static> Input for T {}

/// A rule run on a create's typed input before it is stored: it may change the input or
/// refuse the write with a problem (`Problem::unprocessable` for business rules).
pub type CreateRule<T> = dyn Fn(&mut T) -> Result<(), Problem> + Send + Sync;
/// A rule run on a replace's or patch's typed input, with the record's id.
pub type UpdateRule<T> = dyn Fn(&str, &mut T) -> Result<(), Problem> + Send + Sync;
/// A rule run before a record is deleted, with its id.
pub type DeleteRule = dyn Fn(&str) -> Result<(), Problem> + Send + Sync;
/// A rule that computes what the server owns from the whole record about to be stored
/// (an order's total from its line items), at create and at every replace or patch. It
/// may change any field; the id, the owner and the timestamps stay as the server set
/// them, and what it changes is held to the fields' rules (422 otherwise).
pub type ComputeRule = dyn Fn(&mut Record) -> Result<(), Problem> + Send + Sync;
pub use crate::lifecycle::TransitionRule;

/// The hooks of one resource (from a generated service's `src/hooks.rs`, or given to
/// `App::resource_with`).
pub struct Hooks<C, R, P> {
    pub before_create: Option<Arc<CreateRule<C>>>,
    pub before_replace: Option<Arc<UpdateRule<R>>>,
    pub before_patch: Option<Arc<UpdateRule<P>>>,
    pub before_delete: Option<Arc<DeleteRule>>,
    pub before_transition: Option<Arc<TransitionRule>>,
    pub compute: Option<Arc<ComputeRule>>,
}

impl<C, R, P> Default for Hooks<C, R, P> {
    fn default() -> Self {
        Hooks {
            before_create: None,
            before_replace: None,
            before_patch: None,
            before_delete: None,
            before_transition: None,
            compute: None,
        }
    }
}

impl<C, R, P> Hooks<C, R, P> {
    /// Runs `rule` on a create's typed input before it is stored.
    pub fn before_create(mut self, rule: impl Fn(&mut C) -> Result<(), Problem> + Send + Sync + 'static) -> Self {
        self.before_create = Some(Arc::new(rule));
        self
    }

    /// Runs `rule` on a replace's typed input, with the record's id.
    pub fn before_replace(
        mut self,
        rule: impl Fn(&str, &mut R) -> Result<(), Problem> + Send + Sync + 'static,
    ) -> Self {
        self.before_replace = Some(Arc::new(rule));
        self
    }

    /// Runs `rule` on a patch's typed input, with the record's id.
    pub fn before_patch(mut self, rule: impl Fn(&str, &mut P) -> Result<(), Problem> + Send + Sync + 'static) -> Self {
        self.before_patch = Some(Arc::new(rule));
        self
    }

    /// Runs `rule` before a record is deleted, with its id.
    pub fn before_delete(mut self, rule: impl Fn(&str) -> Result<(), Problem> + Send + Sync + 'static) -> Self {
        self.before_delete = Some(Arc::new(rule));
        self
    }

    /// Runs `rule` before a transition, with the record's id, the transition's name and
    /// the record as the type `T` (the resource's representation): refuse with a problem
    /// to keep the record where it is.
    pub fn before_transition<T: DeserializeOwned>(
        mut self,
        rule: impl Fn(&str, &str, &T) -> Result<(), Problem> + Send + Sync + 'static,
    ) -> Self {
        // A stored record that does not read as `T` is a fault (500).
        self.before_transition = Some(Arc::new(move |id: &str, name: &str, record: &Record| {
            let typed: T = serde_json::from_value(serde_json::Value::from(record.clone())).map_err(|e| {
                tracing::error!(error = %e, "a stored record does not read as the hook's type");
                Problem::internal()
            })?;
            rule(id, name, &typed)
        }));
        self
    }

    /// Computes fields the server owns on the record as the type `T` (a derived struct,
    /// which is the record's representation): `rule` sees the record about to be stored
    /// and changes what it computes. A record that does not read as `T` is a 400 naming
    /// the field (a line item of the wrong shape, say).
    pub fn compute<T: Serialize + DeserializeOwned>(
        mut self,
        rule: impl Fn(&mut T) -> Result<(), Problem> + Send + Sync + 'static,
    ) -> Self {
        self.compute = Some(Arc::new(move |record: &mut Record| {
            let mut typed: T = crate::body::typed(record.clone().into_map())?;
            rule(&mut typed)?;
            match serde_json::to_value(typed) {
                Ok(serde_json::Value::Object(fields)) => record.extend(fields),
                _ => return Err(Problem::internal()),
            }
            Ok(())
        }));
        self
    }
}

/// The methods of a service's hooks object that run on one resource's writes: what
/// generated routes hand [`Hooks::of`], one method of the service's `Hooks` trait for each
/// write the resource has (`None` for one it lacks), so the routes name methods instead of
/// spelling a closure around each.
pub struct HookMethods<H, C, R, P, T = ()> {
    pub before_create: Option<CreateMethod<H, C>>,
    pub before_replace: Option<UpdateMethod<H, R>>,
    pub before_patch: Option<UpdateMethod<H, P>>,
    pub before_delete: Option<DeleteMethod<H>>,
    /// With the record as the type `T` (the resource's representation).
    pub before_transition: Option<TransitionMethod<H, T>>,
}

/// A method of hooks object `H` run on a create's typed input.
pub type CreateMethod<H, C> = fn(&H, &mut C) -> Result<(), Problem>;
/// A method of `H` run on a replace's or patch's typed input, with the record's id.
pub type UpdateMethod<H, T> = fn(&H, &str, &mut T) -> Result<(), Problem>;
/// A method of `H` run before a record is deleted, with its id.
pub type DeleteMethod<H> = fn(&H, &str) -> Result<(), Problem>;
/// A method of `H` run before a transition: the record's id, the transition's name, the
/// record as `T`.
pub type TransitionMethod<H, T> = fn(&H, &str, &str, &T) -> Result<(), Problem>;

impl<C: 'static, R: 'static, P: 'static> Hooks<C, R, P> {
    /// `methods` of `hooks` as this resource's hooks.
    pub fn of<H: Send + Sync + 'static, T: DeserializeOwned + 'static>(
        hooks: &Arc<H>,
        methods: HookMethods<H, C, R, P, T>,
    ) -> Self {
        let HookMethods { before_create, before_replace, before_patch, before_delete, before_transition } = methods;
        // Each method bound to the service's hooks object, through the builder a service
        // written by hand uses.
        let mut out = Hooks::default();
        if let Some(m) = before_create {
            let h = hooks.clone();
            out = out.before_create(move |input| m(&h, input));
        }
        if let Some(m) = before_replace {
            let h = hooks.clone();
            out = out.before_replace(move |id, input| m(&h, id, input));
        }
        if let Some(m) = before_patch {
            let h = hooks.clone();
            out = out.before_patch(move |id, input| m(&h, id, input));
        }
        if let Some(m) = before_delete {
            let h = hooks.clone();
            out = out.before_delete(move |id| m(&h, id));
        }
        if let Some(m) = before_transition {
            let h = hooks.clone();
            out = out.before_transition(move |id, name, record: &T| m(&h, id, name, record));
        }
        out
    }
}

/// Collection, item and nested-collection routes of `spec`, for the operations it has.
/// A method a path lacks answers 405 with `Allow`.
/// Paths start with `base` (the API's `base_path`, `""` for none): routes are registered
/// whole rather than nested, which spares every request a URI rewrite.
pub fn resource<C: Input, R: Input, P: Input>(
    spec: &'static ResourceSpec,
    base: &str,
    hooks: Hooks<C, R, P>,
) -> Router<Store> {
    let Hooks { before_create, before_replace, before_patch, before_delete, before_transition, compute } = hooks;
    // Each handler gives its context the base path, for the links it writes: known here
    // once, where a request extension would be inserted and looked up for every request.
    // Kept for the life of the process, as the routes are (a few bytes per resource).
    let base: &'static str = Box::leak(base.into());
    let (compute_create, compute_replace, compute_patch) = (compute.clone(), compute.clone(), compute);
    let mut collection: MethodRouter<Store> = MethodRouter::new();
    // Operations without a body take the request itself, last, and read its headers in
    // place: a `HeaderMap` extractor copies them for every request.
    if spec.has(Operation::List) {
        collection =
            collection.get(move |cx: operations::Asked, OriginalUri(uri): OriginalUri, request: Request| async move {
                let cx = cx.under(base);
                operations::list(spec, &cx, &uri, request.headers(), None).await
            });
    }
    if spec.has(Operation::Create) {
        collection = collection.post(
            move |cx: operations::Asked,
                  keeper: Keeper,
                  OriginalUri(uri): OriginalUri,
                  Sent { headers, body }: Sent| async move {
                let cx = cx.under(base);
                let bytes = body.as_ref().ok().cloned();
                // On the heap: the operation's future is kilobytes, which every move of the
                // handler's own future (axum boxes it, and `once` holds it) would copy.
                let create = Box::pin(operations::create::<C>(
                    spec,
                    &cx,
                    &uri,
                    &headers,
                    body,
                    operations::Rules { before: before_create.as_deref(), compute: compute_create.as_deref() },
                ));
                idempotency::once(&cx.store, &keeper, &cx.caller, uri.path(), &headers, bytes.as_ref(), create).await
            },
        );
    }
    let mut item: MethodRouter<Store> = MethodRouter::new();
    if spec.has(Operation::Get) {
        item = item.get(move |cx: operations::Asked, Path(id): Path<String>, request: Request| async move {
            let cx = cx.under(base);
            operations::get(spec, &cx, &id, request.headers()).await
        });
    }
    if spec.has(Operation::Replace) {
        item =
            item.put(move |cx: operations::Asked, Path(id): Path<String>, Sent { headers, body }: Sent| async move {
                let cx = cx.under(base);
                operations::replace::<R>(
                    spec,
                    &cx,
                    &id,
                    &headers,
                    body,
                    operations::Rules { before: before_replace.as_deref(), compute: compute_replace.as_deref() },
                )
                .await
            });
    }
    if spec.has(Operation::Patch) {
        item =
            item.patch(move |cx: operations::Asked, Path(id): Path<String>, Sent { headers, body }: Sent| async move {
                let cx = cx.under(base);
                operations::patch::<P>(
                    spec,
                    &cx,
                    &id,
                    &headers,
                    body,
                    operations::Rules { before: before_patch.as_deref(), compute: compute_patch.as_deref() },
                )
                .await
            });
    }
    if spec.has(Operation::Delete) {
        item = item.delete(move |cx: operations::Asked, Path(id): Path<String>, request: Request| async move {
            let cx = cx.under(base);
            operations::delete(spec, &cx, &id, request.headers(), before_delete.as_deref()).await
        });
    }
    let mut router = lifecycle_routes(spec, base, before_transition);
    let lists = spec.has(Operation::List);
    if lists || spec.has(Operation::Create) {
        router = router.route(&spec.collection_path(base), collection);
    }
    if [Operation::Get, Operation::Replace, Operation::Patch, Operation::Delete].iter().any(|op| spec.has(*op)) {
        router = router.route(&spec.item_path(base), item);
    }
    for former in spec.former_paths {
        let redirect = move |caller: Caller, OriginalUri(uri): OriginalUri, method: Method| async move {
            moved(spec, &caller, base_of(&uri, former), former, &uri, &method)
        };
        // The methods the current paths take, so anything else is the same 405 there and here.
        let mut collection: MethodRouter<Store> = MethodRouter::new();
        if lists {
            collection = collection.get(redirect);
        }
        if spec.has(Operation::Create) {
            collection = collection.post(redirect);
        }
        let mut item: MethodRouter<Store> = MethodRouter::new();
        for (op, method) in [
            (Operation::Get, Method::GET),
            (Operation::Replace, Method::PUT),
            (Operation::Patch, Method::PATCH),
            (Operation::Delete, Method::DELETE),
        ] {
            if spec.has(op) {
                item = item.on(axum::routing::MethodFilter::try_from(method).expect("a plain method"), redirect);
            }
        }
        // Below an item (a nested list, say) the current path decides which methods it takes.
        router = router
            .route(&format!("{base}{former}"), collection)
            .route(&format!("{base}{former}/{{id}}"), item)
            .route(&format!("{base}{former}/{{id}}/{{*rest}}"), axum::routing::any(redirect));
    }
    if lists {
        for parent in spec.parents {
            router = router.route(
                &spec.nested_path(parent, base),
                axum::routing::get(
                    move |cx: operations::Asked,
                          Path(parent_id): Path<String>,
                          OriginalUri(uri): OriginalUri,
                          request: Request| async move {
                        let cx = cx.under(base);
                        operations::list(spec, &cx, &uri, request.headers(), Some((parent, &parent_id))).await
                    },
                ),
            );
        }
    }
    router
}

/// `POST {item}/{transition}` for each transition (with `Idempotency-Key` replay, as a
/// create has) and `GET {item}/status` where the resource has them.
fn lifecycle_routes(
    spec: &'static ResourceSpec,
    base: &'static str,
    hook: Option<Arc<TransitionRule>>,
) -> Router<Store> {
    let mut router = Router::new();
    let Some(lifecycle) = &spec.lifecycle else { return router };
    for t in lifecycle.transitions {
        let hook = hook.clone();
        router = router.route(
            &format!("{}/{}", spec.item_path(base), t.name),
            axum::routing::post(
                move |cx: operations::Asked,
                      keeper: Keeper,
                      Path(id): Path<String>,
                      OriginalUri(uri): OriginalUri,
                      Sent { headers, body }: Sent| async move {
                    let cx = cx.under(base);
                    let bytes = body.as_ref().ok().cloned();
                    let moved =
                        Box::pin(crate::lifecycle::transition(spec, &cx, &id, t, &headers, body, hook.as_deref()));
                    idempotency::once(&cx.store, &keeper, &cx.caller, uri.path(), &headers, bytes.as_ref(), moved).await
                },
            ),
        );
    }
    if lifecycle.status_endpoint {
        router = router.route(
            &format!("{}/status", spec.item_path(base)),
            axum::routing::get(move |cx: operations::Asked, Path(id): Path<String>, request: Request| async move {
                let cx = cx.under(base);
                crate::lifecycle::status(spec, &cx, &id, request.headers()).await
            }),
        );
    }
    router
}

/// What the request path holds before `former`: the base path the route was mounted
/// under.
fn base_of<'a>(uri: &'a axum::http::Uri, former: &str) -> &'a str {
    let path = uri.path();
    let at = path.find(&format!("{former}/")).or_else(|| path.strip_suffix(former).map(str::len)).unwrap_or(0);
    &path[..at]
}

/// A request under a former collection path, sent to the same place under the current
/// one: 301 for GET and HEAD (clients and caches may remember it), 308 for the other
/// methods (which must be repeated with the same method and body). The query is kept.
/// The caller is first held to the operation's rules as the current path would hold them
/// before looking anything up (401, 403), and an id that cannot exist is the same 404, so
/// a redirect tells nobody more than the target and never sends a request it would refuse.
fn moved(
    spec: &ResourceSpec,
    caller: &Caller,
    base: &str,
    former: &str,
    uri: &axum::http::Uri,
    method: &Method,
) -> axum::response::Response {
    use axum::http::{HeaderValue, StatusCode, header};
    use axum::response::IntoResponse;
    let rest = &uri.path()[base.len() + former.len()..];
    let rules = match *method {
        Method::POST => spec.access.create,
        Method::PUT | Method::PATCH => spec.access.write,
        Method::DELETE => spec.access.delete,
        _ => spec.access.read,
    };
    if let Err(refused) = crate::auth::access::collection(rules, caller) {
        return refused.into_response();
    }
    if let Some(id) = rest.strip_prefix('/').map(|r| r.split('/').next().unwrap_or(r))
        && let Err(missing) = operations::parse_id(spec, id)
    {
        return missing.into_response();
    }
    let mut location = format!("{base}{}{rest}", spec.path);
    if let Some(query) = uri.query() {
        location.push('?');
        location.push_str(query);
    }
    if location.len() > restgen_model::bounds::MAX_LOCATION {
        return crate::problem::Problem::new(
            StatusCode::URI_TOO_LONG,
            format!("the URL is longer than the {} characters a redirect keeps", restgen_model::bounds::MAX_LOCATION),
        )
        .into_response();
    }
    let status = if method == Method::GET || method == Method::HEAD {
        StatusCode::MOVED_PERMANENTLY
    } else {
        StatusCode::PERMANENT_REDIRECT
    };
    let mut response = status.into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response
}
