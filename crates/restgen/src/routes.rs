//! The routes of one resource, built from its spec and its input types: what a generated
//! `routes.rs` calls once per resource.

use crate::list;
use crate::ops;
use crate::spec::{Operation, ResourceSpec};
use crate::store::Store;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{OriginalUri, Path, State};
use axum::http::HeaderMap;
use axum::routing::MethodRouter;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Bounds of an operation's input type; `()` stands for an operation the resource lacks.
pub trait Input: DeserializeOwned + Serialize + Send + 'static {}
impl<T: DeserializeOwned + Serialize + Send + 'static> Input for T {}

/// Collection, item and nested-collection routes of `spec`, for the operations it has.
/// A method a path lacks answers 405 with `Allow`.
pub fn resource<C: Input, R: Input, P: Input>(spec: &'static ResourceSpec) -> Router<Store> {
    let mut collection: MethodRouter<Store> = MethodRouter::new();
    if spec.has(Operation::List) {
        collection = collection.get(move |State(store): State<Store>, OriginalUri(uri): OriginalUri| async move {
            ops::list(spec, &store, &uri, list::query_pairs(&uri), None).await
        });
    }
    if spec.has(Operation::Create) {
        collection = collection.post(
            move |State(store): State<Store>,
                  OriginalUri(uri): OriginalUri,
                  headers: HeaderMap,
                  body: Result<Bytes, BytesRejection>| async move {
                ops::create::<C>(spec, &store, &uri, &headers, body).await
            },
        );
    }
    let mut item: MethodRouter<Store> = MethodRouter::new();
    if spec.has(Operation::Get) {
        item = item.get(move |State(store): State<Store>, Path(id): Path<String>| async move {
            ops::get(spec, &store, &id).await
        });
    }
    if spec.has(Operation::Replace) {
        item = item.put(
            move |State(store): State<Store>,
                  Path(id): Path<String>,
                  headers: HeaderMap,
                  body: Result<Bytes, BytesRejection>| async move {
                ops::replace::<R>(spec, &store, &id, &headers, body).await
            },
        );
    }
    if spec.has(Operation::Patch) {
        item = item.patch(
            move |State(store): State<Store>,
                  Path(id): Path<String>,
                  headers: HeaderMap,
                  body: Result<Bytes, BytesRejection>| async move {
                ops::patch::<P>(spec, &store, &id, &headers, body).await
            },
        );
    }
    if spec.has(Operation::Delete) {
        item = item.delete(move |State(store): State<Store>, Path(id): Path<String>| async move {
            ops::delete(spec, &store, &id).await
        });
    }
    let mut router = Router::new();
    let lists = spec.has(Operation::List);
    if lists || spec.has(Operation::Create) {
        router = router.route(spec.path, collection);
    }
    if [Operation::Get, Operation::Replace, Operation::Patch, Operation::Delete].iter().any(|op| spec.has(*op)) {
        router = router.route(&format!("{}/{{id}}", spec.path), item);
    }
    if lists {
        for parent in spec.parents {
            let path = format!("{}/{{parent_id}}{}", parent.path, spec.path);
            router =
                router.route(
                    &path,
                    axum::routing::get(
                        move |State(store): State<Store>,
                              Path(parent_id): Path<String>,
                              OriginalUri(uri): OriginalUri| async move {
                            ops::list(spec, &store, &uri, list::query_pairs(&uri), Some((parent, &parent_id))).await
                        },
                    ),
                );
        }
    }
    router
}
