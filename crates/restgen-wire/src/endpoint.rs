//! What a client needs to know of a resource to call it: where its collection lives, how
//! its lists page, and its input types. `#[derive(Resource)]` implements it beside the
//! server's view, so a client built on `restgen-client` calls a derived resource with the
//! very types the service reads (`Transport::collection`).

/// How a resource's lists are paged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paging {
    /// `limit` + `cursor` or `starting_after`.
    Cursor,
    /// `page` (from 1) + `per_page`.
    Page,
    /// `limit` + `offset`.
    Offset,
}

/// A resource as its clients see it.
pub trait Endpoint {
    /// The collection path, without the service's base path: `/orders`.
    const PATH: &'static str;
    const PAGING: Paging;
    /// The key a list's records are under; `None` for a bare JSON array.
    const ENVELOPE: Option<&'static str>;
    /// The allow-listed inputs of create, replace and patch (`()` where the operation is
    /// not offered).
    type Create;
    type Replace;
    type Patch;
}
