//! The routes of one resource, built from its spec and its input types: what a generated
//! `routes.rs` calls once per resource.

use crate::body::HeadersAndBody;
use crate::caller::Caller;
use crate::context::PartialContext;
use crate::current;
use crate::idempotency::{self, IdempotencySettings};
use crate::operations;
use crate::spec::{Operation, ResourceSpec};
use crate::store::Store;
use axum::Router;
use axum::extract::{OriginalUri, Path, Request};
use axum::http::Method;
use axum::routing::MethodRouter;
use std::sync::Arc;

use crate::context::RequestContext;
use crate::problem::Problem;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use std::future::Future;
use std::pin::Pin;

pub use crate::hooks::{
    ComputeRule, CreateMethod, CreateRule, DeleteMethod, DeleteRule, HookMethods, Hooks, Input, TransitionMethod,
    TransitionRule, UpdateMethod, UpdateRule,
};

/// Collection, item and nested-collection routes of `spec`, for the operations it has.
/// A method a path lacks answers 405 with `Allow`.
/// Paths start with `base` (the API's `base_path`, `""` for none): routes are registered
/// whole rather than nested, which spares every request a URI rewrite.
pub fn resource<C: Input, R: Input, P: Input>(
    spec: &'static ResourceSpec,
    base: &str,
    hooks: Hooks<C, R, P>,
) -> Router<Store> {
    let Hooks { before_create, before_replace, before_patch, before_delete, before_transition, compute } =
        hooks.traced(spec.name);
    let writes = Typed { before_create, before_replace, before_patch, compute };
    routes(spec, base, Arc::new(writes), before_delete, before_transition)
}

/// A boxed operation: the answer, or the problem that stopped it.
type Answer<'a> = Pin<Box<dyn Future<Output = Result<Response, Problem>> + Send + 'a>>;

/// A write that reads a typed input, and what it names.
enum Write<'a> {
    Create(&'a Uri),
    Replace(&'a str),
    Patch(&'a str),
}

/// A request's body as the writes take it: the bytes, or why they could not be read.
type Body = Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>;

/// The writes that read a typed input, with their rules: all a resource's routes need of
/// its input types. The routes themselves are built without those types, so a service
/// compiles, and runs at start, one copy of each route's code however many resources it
/// has, and each write's future is on the heap (kilobytes, which every move of the
/// handler's own future would copy).
trait Writes: Send + Sync {
    fn write<'a>(
        &'a self,
        spec: &'static ResourceSpec,
        cx: &'a RequestContext,
        write: Write<'a>,
        headers: &'a HeaderMap,
        body: Body,
    ) -> Answer<'a>;
}

/// [`Writes`] for the input types `C`, `R`, `P`.
struct Typed<C, R, P> {
    before_create: Option<Arc<CreateRule<C>>>,
    before_replace: Option<Arc<UpdateRule<R>>>,
    before_patch: Option<Arc<UpdateRule<P>>>,
    compute: Option<Arc<ComputeRule>>,
}

impl<C: Input, R: Input, P: Input> Writes for Typed<C, R, P> {
    fn write<'a>(
        &'a self,
        spec: &'static ResourceSpec,
        cx: &'a RequestContext,
        write: Write<'a>,
        headers: &'a HeaderMap,
        body: Body,
    ) -> Answer<'a> {
        use operations::Rules;
        let compute = self.compute.as_deref();
        match write {
            Write::Create(uri) => {
                let rules = Rules { before: self.before_create.as_deref(), compute };
                Box::pin(operations::create::<C>(spec, cx, uri, headers, body, rules))
            }
            Write::Replace(id) => {
                let rules = Rules { before: self.before_replace.as_deref(), compute };
                Box::pin(operations::replace::<R>(spec, cx, id, headers, body, rules))
            }
            Write::Patch(id) => {
                let rules = Rules { before: self.before_patch.as_deref(), compute };
                Box::pin(operations::patch::<P>(spec, cx, id, headers, body, rules))
            }
        }
    }
}

/// [`resource`]'s routes, its typed writes behind `writes`.
fn routes(
    spec: &'static ResourceSpec,
    base: &str,
    writes: Arc<dyn Writes>,
    before_delete: Option<Arc<DeleteRule>>,
    before_transition: Option<Arc<TransitionRule>>,
) -> Router<Store> {
    // Each handler gives its context the base path, for the links it writes: known here
    // once, where a request extension would be inserted and looked up for every request.
    // Kept for the life of the process, as the routes are (a few bytes per resource).
    let base: &'static str = Box::leak(base.into());
    let (create_writes, replace_writes, patch_writes) = (writes.clone(), writes.clone(), writes);
    let mut collection: MethodRouter<Store> = MethodRouter::new();
    // Operations without a body take the request itself, last, and read its headers in
    // place: a `HeaderMap` extractor copies them for every request.
    if spec.has(Operation::List) {
        collection =
            collection.get(move |cx: PartialContext, OriginalUri(uri): OriginalUri, request: Request| async move {
                current::operation(spec.name, Operation::List.word());
                let cx = cx.under(base);
                operations::list(spec, &cx, &uri, request.headers(), None).await
            });
    }
    if spec.has(Operation::Create) {
        collection = collection.post(
            move |cx: PartialContext,
                  idempotency_settings: IdempotencySettings,
                  OriginalUri(uri): OriginalUri,
                  HeadersAndBody { headers, body }: HeadersAndBody| async move {
                current::operation(spec.name, Operation::Create.word());
                let cx = cx.under(base);
                let bytes = body.as_ref().ok().cloned();
                let create = create_writes.write(spec, &cx, Write::Create(&uri), &headers, body);
                idempotency::once(
                    &cx.store,
                    &idempotency_settings,
                    &cx.caller,
                    uri.path(),
                    &headers,
                    bytes.as_ref(),
                    create,
                )
                .await
            },
        );
    }
    let mut item: MethodRouter<Store> = MethodRouter::new();
    if spec.has(Operation::Get) {
        item = item.get(move |cx: PartialContext, Path(id): Path<String>, request: Request| async move {
            current::operation(spec.name, Operation::Get.word());
            let cx = cx.under(base);
            operations::get(spec, &cx, &id, request.headers()).await
        });
    }
    if spec.has(Operation::Replace) {
        item = item.put(move |cx: PartialContext, Path(id): Path<String>, HeadersAndBody { headers, body }: HeadersAndBody| async move {
            current::operation(spec.name, Operation::Replace.word());
            let cx = cx.under(base);
            replace_writes.write(spec, &cx, Write::Replace(&id), &headers, body).await
        });
    }
    if spec.has(Operation::Patch) {
        item = item.patch(move |cx: PartialContext, Path(id): Path<String>, HeadersAndBody { headers, body }: HeadersAndBody| async move {
            current::operation(spec.name, Operation::Patch.word());
            let cx = cx.under(base);
            patch_writes.write(spec, &cx, Write::Patch(&id), &headers, body).await
        });
    }
    if spec.has(Operation::Delete) {
        item = item.delete(move |cx: PartialContext, Path(id): Path<String>, request: Request| async move {
            current::operation(spec.name, Operation::Delete.word());
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
            current::operation(spec.name, "redirect");
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
    if lists && spec.feed {
        router = router.route(
            &format!("{}{}", spec.collection_path(base), restgen_wire::feed::PATH),
            axum::routing::get(move |cx: PartialContext, OriginalUri(uri): OriginalUri, request: Request| async move {
                current::operation(spec.name, "changes");
                let peer = request
                    .extensions()
                    .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                    .map(|info| info.0.ip());
                crate::feed::changes(spec, cx.under(base), &uri, request.headers(), peer).await
            }),
        );
    }
    if lists {
        for parent in spec.parents {
            router = router.route(
                &spec.nested_path(parent, base),
                axum::routing::get(
                    move |cx: PartialContext,
                          Path(parent_id): Path<String>,
                          OriginalUri(uri): OriginalUri,
                          request: Request| async move {
                        current::operation(spec.name, Operation::List.word());
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
                move |cx: PartialContext,
                      idempotency_settings: IdempotencySettings,
                      Path(id): Path<String>,
                      OriginalUri(uri): OriginalUri,
                      HeadersAndBody { headers, body }: HeadersAndBody| async move {
                    current::operation(spec.name, t.name);
                    let cx = cx.under(base);
                    let bytes = body.as_ref().ok().cloned();
                    let moved = Box::pin(operations::transition(spec, &cx, &id, t, &headers, body, hook.as_deref()));
                    idempotency::once(
                        &cx.store,
                        &idempotency_settings,
                        &cx.caller,
                        uri.path(),
                        &headers,
                        bytes.as_ref(),
                        moved,
                    )
                    .await
                },
            ),
        );
    }
    if lifecycle.status_endpoint {
        router = router.route(
            &format!("{}/status", spec.item_path(base)),
            axum::routing::get(move |cx: PartialContext, Path(id): Path<String>, request: Request| async move {
                current::operation(spec.name, "status");
                let cx = cx.under(base);
                operations::status(spec, &cx, &id, request.headers()).await
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
    if let Err(refused) = crate::access::collection(rules, caller) {
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
