//! What a client needs to know of a resource to call it: where its collection lives, how
//! its lists page, and its input types. `#[derive(Resource)]` implements it beside the
//! server's view, so a client built on `restgen-client` calls a derived resource with the
//! very types the service reads (`Transport::collection`).

/// How a resource's lists are paged (the schema's `pagination.style`): the one definition
/// the model, the runtime and the client name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Paging {
    /// `page` (from 1) + `per_page`.
    Page,
    /// `limit` + `offset`.
    Offset,
    /// `limit` + `cursor` (the previous page's `next_cursor`) or `starting_after`.
    Cursor,
}

impl Paging {
    /// The word a schema writes for it.
    pub const fn word(self) -> &'static str {
        match self {
            Paging::Page => "page",
            Paging::Offset => "offset",
            Paging::Cursor => "cursor",
        }
    }

    /// The variant's name in Rust, for emitters that write `Paging::Variant`.
    pub const fn variant(self) -> &'static str {
        match self {
            Paging::Page => "Page",
            Paging::Offset => "Offset",
            Paging::Cursor => "Cursor",
        }
    }

    /// The query parameters a list paged this way reads for its paging.
    pub fn parameters(self) -> &'static [&'static str] {
        match self {
            Paging::Cursor => crate::query::CURSOR_PAGING,
            Paging::Page => crate::query::PAGE_PAGING,
            Paging::Offset => crate::query::OFFSET_PAGING,
        }
    }
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
