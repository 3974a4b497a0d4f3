//! The query parameters a list reads beside its filters, named once for the service that
//! reads them, the OpenAPI document that states them, the client that sends them and the
//! check that keeps filters from taking their names.

/// Sort keys, comma-separated, most significant first: `<field>_asc` or `<field>_desc`.
pub const SORT: &str = "sort";
/// Records per page, with cursor and offset paging.
pub const LIMIT: &str = "limit";
/// Where a page of cursor paging starts: the previous page's `next_cursor`.
pub const CURSOR: &str = "cursor";
/// Where a page of cursor paging starts: after the record of this id.
pub const STARTING_AFTER: &str = "starting_after";
/// Which page of page paging, from 1.
pub const PAGE: &str = "page";
/// Records per page, with page paging.
pub const PER_PAGE: &str = "per_page";
/// Records skipped, with offset paging.
pub const OFFSET: &str = "offset";

/// The paging parameters of cursor paging.
pub const CURSOR_PAGING: &[&str] = &[LIMIT, CURSOR, STARTING_AFTER];
/// The paging parameters of page paging.
pub const PAGE_PAGING: &[&str] = &[PAGE, PER_PAGE];
/// The paging parameters of offset paging.
pub const OFFSET_PAGING: &[&str] = &[LIMIT, OFFSET];
