//! SQL text for the store. Identifiers come from the checked schema and are quoted;
//! every value is a `$n` parameter (both SQLite and PostgreSQL read `$n`).

use super::{Dialect, SqlValue};
use crate::spec::ResourceSpec;
use once_cell::race::OnceRef;
use std::borrow::Cow;
use std::fmt::Write;
use std::sync::PoisonError;

/// `"name"`: quoted so that resource names like `order` never read as SQL keywords.
pub(crate) fn ident(name: &str) -> String {
    Ident(name).to_string()
}

/// [`ident`] written where it is displayed, for statements built in one buffer.
pub(crate) struct Ident<'a>(pub &'a str);

impl std::fmt::Display for Ident<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.0;
        debug_assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
        write!(f, "\"{name}\"")
    }
}

/// The columns of a resource's record, in the order `value::record` reads them: named
/// rather than `*`, so that each is where the reader expects it whatever order migrations
/// left the table's columns in, and no position is looked up by name per result.
pub(crate) struct Columns<'a>(pub &'a ResourceSpec);

impl std::fmt::Display for Columns<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let spec = self.0;
        f.write_str(cached_text(&statements(spec).columns, || {
            let mut list = String::from("\"id\"");
            if spec.owner.is_some() {
                list.push_str(", \"owner_id\"");
            }
            for field in spec.fields {
                let _ = write!(list, ", {}", Ident(field.name));
            }
            if spec.timestamps {
                list.push_str(", \"created_at\", \"updated_at\"");
            }
            list
        }))
    }
}

/// The text of a resource's statements that its spec alone decides, written the first
/// time each is used and kept in the spec's cache (`ResourceSpec::statements`) for the life
/// of the process: made per request, a read's text cost more than the rest of its work in
/// the store. Threads that race to write one first each make it, and all but one copy are
/// kept unused (a few, once).
#[derive(Debug, Default)]
struct Statements {
    columns: OnceRef<'static, String>,
    by_id: OnceRef<'static, String>,
    locked: OnceRef<'static, String>,
    delete: OnceRef<'static, String>,
    inserts: OnceRef<'static, Texts<ColumnsSet>>,
    updates: OnceRef<'static, Texts<ColumnsSet>>,
    pages: OnceRef<'static, Texts<PageShape>>,
}

impl Statements {
    /// None written yet.
    const fn new() -> Statements {
        Statements {
            columns: OnceRef::new(),
            by_id: OnceRef::new(),
            locked: OnceRef::new(),
            delete: OnceRef::new(),
            inserts: OnceRef::new(),
            updates: OnceRef::new(),
            pages: OnceRef::new(),
        }
    }
}

/// The statements kept for `spec`.
fn statements(spec: &ResourceSpec) -> &'static Statements {
    spec.statements.get_or_init(Statements::new)
}

/// `cell`'s text, made by `make` the first time.
fn cached_text(cell: &OnceRef<'static, String>, make: impl FnOnce() -> String) -> &'static str {
    cell.get_or_init(|| Box::leak(Box::new(make())))
}

/// One record by id.
pub(crate) fn by_id(spec: &ResourceSpec) -> &'static str {
    cached_text(&statements(spec).by_id, || {
        format!("SELECT {} FROM {} WHERE \"id\" = $1", Columns(spec), Ident(spec.name))
    })
}

/// One record by id, read to be written in the same transaction: PostgreSQL locks the
/// row until the transaction ends (SQLite's write lock already covers it).
pub(crate) fn by_id_locked(dialect: Dialect, spec: &ResourceSpec) -> &'static str {
    match dialect {
        Dialect::Sqlite => by_id(spec),
        Dialect::Postgres => cached_text(&statements(spec).locked, || format!("{} FOR UPDATE", by_id(spec))),
    }
}

/// Deletes one record by id, returning it as it was.
pub(crate) fn delete(spec: &ResourceSpec) -> &'static str {
    cached_text(&statements(spec).delete, || {
        format!("DELETE FROM {} WHERE \"id\" = $1 RETURNING {}", Ident(spec.name), Columns(spec))
    })
}

/// An equality filter on one column.
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    pub column: &'static str,
    pub value: SqlValue,
}

/// One sort key. Nulls always sort last, whatever the direction, on both dialects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortKey {
    pub column: &'static str,
    pub descending: bool,
    /// The column may hold NULL (ordering then puts `column IS NULL` first, as the
    /// migrations' expression indexes do).
    pub nullable: bool,
    /// Decimal text compared as a number (`CAST`), as the migrations' indexes do.
    pub numeric: bool,
}

/// A sort key's expression, which it orders and compares by.
struct Expr<'a>(&'a SortKey, Dialect);

impl std::fmt::Display for Expr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Cast(self.0, self.1, Ident(self.0.column)).fmt(f)
    }
}

/// `inner` as the key compares it: decimal text cast to a number, as the migrations'
/// indexes do; anything else as it is.
struct Cast<'a, T>(&'a SortKey, Dialect, T);

impl<T: std::fmt::Display> std::fmt::Display for Cast<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Cast(key, dialect, inner) = self;
        match (key.numeric, dialect) {
            (false, _) => inner.fmt(f),
            (true, Dialect::Sqlite) => write!(f, "CAST({inner} AS REAL)"),
            (true, Dialect::Postgres) => write!(f, "CAST({inner} AS NUMERIC)"),
        }
    }
}

/// The parameter `$n`.
struct Param(usize);

impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "${}", self.0)
    }
}

/// Where a page starts.
#[derive(Clone, Debug, PartialEq)]
pub enum Page {
    Offset(u64),
    /// Strictly after the row whose sort-key values (then id) these are.
    After(Vec<SqlValue>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ListQuery {
    pub filters: Vec<Filter>,
    /// Ends with `id`, the tie-breaker that makes the order total.
    pub sort: Vec<SortKey>,
    pub page: Page,
    pub limit: u32,
}

// Writes use one buffer for their statement, written as they go: built per request, the
// text cost more than its execution's encoding when each piece was a `String` of its own.
// (`write!` to a `String` cannot fail.)

/// Inserts `values` (columns and their values), returning the record. Its statement is
/// kept by the columns it names, as an update's is (a create names the same ones each time).
pub(crate) fn insert(spec: &ResourceSpec, values: Vec<(&str, SqlValue)>) -> (Cow<'static, str>, Vec<SqlValue>) {
    let columns: Vec<&str> = values.iter().map(|(c, _)| *c).collect();
    let sql = Texts::of(&statements(spec).inserts).text(
        |kept| kept.is(&columns, None),
        || ColumnsSet::of(&columns, None),
        || insert_text(spec, &columns),
        MAX_KEPT,
    );
    (sql, values.into_iter().map(|(_, v)| v).collect())
}

fn insert_text(spec: &ResourceSpec, columns: &[&str]) -> String {
    let mut sql = String::with_capacity(STATEMENT_CAPACITY);
    let _ = write!(sql, "INSERT INTO {}", Ident(spec.name));
    if columns.is_empty() {
        sql.push_str(" DEFAULT VALUES");
    } else {
        for (i, column) in columns.iter().enumerate() {
            let _ = write!(sql, "{}{}", if i == 0 { " (" } else { ", " }, Ident(column));
        }
        for i in 1..=columns.len() {
            let _ = write!(sql, "{}${i}", if i == 1 { ") VALUES (" } else { ", " });
        }
        sql.push(')');
    }
    let _ = write!(sql, " RETURNING {}", Columns(spec));
    sql
}

/// Room for a write's statement without growing, for records of a dozen columns.
const STATEMENT_CAPACITY: usize = 512;

/// Sets `values` on the record `id`, where `owner` (a column and its value) holds too;
/// with nothing to set, reads it under the same conditions.
pub(crate) fn update(
    spec: &ResourceSpec,
    id: SqlValue,
    values: Vec<(&str, SqlValue)>,
    owner: Option<(&str, SqlValue)>,
) -> (Cow<'static, str>, Vec<SqlValue>) {
    let columns: Vec<&str> = values.iter().map(|(c, _)| *c).collect();
    let owner_column = owner.as_ref().map(|(c, _)| *c);
    let sql = Texts::of(&statements(spec).updates).text(
        |kept| kept.is(&columns, owner_column),
        || ColumnsSet::of(&columns, owner_column),
        || update_text(spec, &columns, owner_column),
        MAX_KEPT,
    );
    let mut args: Vec<SqlValue> = values.into_iter().map(|(_, v)| v).collect();
    args.push(id);
    args.extend(owner.map(|(_, v)| v));
    (sql, args)
}

fn update_text(spec: &ResourceSpec, columns: &[&str], owner: Option<&str>) -> String {
    let mut sql = String::with_capacity(STATEMENT_CAPACITY);
    if columns.is_empty() {
        let _ = write!(sql, "SELECT {} FROM {}", Columns(spec), Ident(spec.name));
    } else {
        let _ = write!(sql, "UPDATE {} SET ", Ident(spec.name));
        for (i, column) in columns.iter().enumerate() {
            let _ = write!(sql, "{}{} = ${}", if i == 0 { "" } else { ", " }, Ident(column), i + 1);
        }
    }
    let n = columns.len() + 1;
    let _ = write!(sql, " WHERE \"id\" = ${n}");
    if let Some(column) = owner {
        let _ = write!(sql, " AND {} = ${}", Ident(column), n + 1);
    }
    if !columns.is_empty() {
        let _ = write!(sql, " RETURNING {}", Columns(spec));
    }
    sql
}

/// A resource's statements of one kind by what decides their text: an insert's or an
/// update's by the columns it names, a page's by its shape. A create names the same columns
/// each time, a PATCH those its body names, a list the filters, sort and page its
/// query asks for: a resource's statements are a handful written again and again. At most
/// [`MAX_KEPT`] of a kind are kept, so that requests asking for ever other ones cannot
/// grow them without bound; past it each is written for its request.
#[derive(Debug)]
pub(crate) struct Texts<K>(std::sync::RwLock<Vec<(K, &'static str)>>);

/// The most statements of one kind a resource keeps.
const MAX_KEPT: usize = 64;

impl<K: 'static> Texts<K> {
    /// The statements kept in `cell`, made empty the first time.
    fn of(cell: &OnceRef<'static, Texts<K>>) -> &'static Texts<K> {
        cell.get_or_init(|| Box::leak(Box::new(Texts(std::sync::RwLock::new(Vec::new())))))
    }

    /// The statement whose key `is` accepts, made by `write` (and kept under `key`, while
    /// fewer than `room` are kept) where none is kept.
    fn text(
        &self,
        is: impl Fn(&K) -> bool,
        key: impl FnOnce() -> K,
        write: impl FnOnce() -> String,
        room: usize,
    ) -> Cow<'static, str> {
        let found = self.0.read().unwrap_or_else(PoisonError::into_inner).iter().find(|(k, _)| is(k)).map(|(_, t)| *t);
        if let Some(text) = found {
            return Cow::Borrowed(text);
        }
        let text = write();
        let mut kept = self.0.write().unwrap_or_else(PoisonError::into_inner);
        // Another request may have kept it meanwhile.
        if let Some((_, text)) = kept.iter().find(|(k, _)| is(k)) {
            return Cow::Borrowed(text);
        }
        if kept.len() >= room.min(MAX_KEPT) {
            return Cow::Owned(text);
        }
        let text: &'static str = Box::leak(text.into_boxed_str());
        kept.push((key(), text));
        Cow::Borrowed(text)
    }
}

/// What decides a write's text: the columns it names, in order, and the owner column an
/// update holds to.
#[derive(Debug)]
pub(crate) struct ColumnsSet {
    columns: Box<[Box<str>]>,
    owner: Option<Box<str>>,
}

impl ColumnsSet {
    fn of(columns: &[&str], owner: Option<&str>) -> ColumnsSet {
        ColumnsSet { columns: columns.iter().map(|c| Box::from(*c)).collect(), owner: owner.map(Box::from) }
    }

    fn is(&self, columns: &[&str], owner: Option<&str>) -> bool {
        self.owner.as_deref() == owner && self.columns.iter().map(|c| &**c).eq(columns.iter().copied())
    }
}

/// What decides a page's text: the columns filtered on, the sort keys, where the page
/// starts, and its size.
#[derive(Debug)]
pub(crate) struct PageShape {
    dialect: Dialect,
    filters: Box<[&'static str]>,
    sort: Box<[SortKey]>,
    start: Start,
    limit: u32,
}

#[derive(Debug, PartialEq, Eq)]
enum Start {
    First,
    /// After the first page: the offset a SQLite statement states; PostgreSQL binds it.
    Offset(Option<u64>),
    /// After a cursor row: which of its sort-key values are null (a null compares as
    /// `IS NULL`, with no parameter).
    After(Box<[bool]>),
}

impl Start {
    fn of(dialect: Dialect, page: &Page) -> Start {
        match (page, dialect) {
            (Page::Offset(0), _) => Start::First,
            (Page::Offset(n), Dialect::Sqlite) => Start::Offset(Some(*n)),
            (Page::Offset(_), Dialect::Postgres) => Start::Offset(None),
            (Page::After(values), _) => Start::After(values.iter().map(SqlValue::is_null).collect()),
        }
    }

    fn is(&self, dialect: Dialect, page: &Page) -> bool {
        match (self, page) {
            (Start::First, Page::Offset(n)) => *n == 0,
            (Start::Offset(stated), Page::Offset(n)) => *n > 0 && (dialect == Dialect::Postgres || *stated == Some(*n)),
            (Start::After(nulls), Page::After(values)) => {
                nulls.iter().copied().eq(values.iter().map(SqlValue::is_null))
            }
            _ => false,
        }
    }
}

impl PageShape {
    fn of(dialect: Dialect, q: &ListQuery) -> PageShape {
        PageShape {
            dialect,
            filters: q.filters.iter().map(|f| f.column).collect(),
            sort: q.sort.clone().into_boxed_slice(),
            start: Start::of(dialect, &q.page),
            limit: q.limit,
        }
    }

    fn is(&self, dialect: Dialect, q: &ListQuery) -> bool {
        self.dialect == dialect
            && self.limit == q.limit
            && *self.sort == *q.sort
            && self.filters.iter().copied().eq(q.filters.iter().map(|f| f.column))
            && self.start.is(dialect, &q.page)
    }
}

/// One page plus one row, so the caller learns whether more follow. Its text is kept by
/// the page's shape (a list's first page is one statement, asked for again and again);
/// its arguments are the request's.
pub(crate) fn select_page(dialect: Dialect, spec: &ResourceSpec, q: &ListQuery) -> (Cow<'static, str>, Vec<SqlValue>) {
    // SQLite states an offset in the text, so each offset is a shape of its own: a client
    // walking a long list page by page would otherwise fill the room and leave none for
    // the first pages and cursors asked for after it.
    let room = match (dialect, &q.page) {
        (Dialect::Sqlite, Page::Offset(1..)) => MAX_KEPT / 2,
        _ => MAX_KEPT,
    };
    let sql = Texts::of(&statements(spec).pages).text(
        |kept| kept.is(dialect, q),
        || PageShape::of(dialect, q),
        || page_text(dialect, spec, q),
        room,
    );
    (sql, page_args(dialect, q))
}

/// A page's arguments, in the order [`page_text`] numbers its parameters.
fn page_args(dialect: Dialect, q: &ListQuery) -> Vec<SqlValue> {
    let mut args: Vec<SqlValue> = q.filters.iter().map(|f| f.value.clone()).collect();
    if let Page::After(values) = &q.page {
        for i in 0..q.sort.len() {
            if !values[i].is_null() {
                args.extend(values[..i].iter().filter(|v| !v.is_null()).cloned());
                args.push(values[i].clone());
            }
        }
    }
    if let (Dialect::Postgres, Page::Offset(n @ 1..)) = (dialect, &q.page) {
        args.push(SqlValue::Int(Some((*n).min(i64::MAX as u64) as i64)));
    }
    args
}

fn page_text(dialect: Dialect, spec: &ResourceSpec, q: &ListQuery) -> String {
    let mut sql = String::with_capacity(STATEMENT_CAPACITY);
    let _ = write!(sql, "SELECT {} FROM {}", Columns(spec), Ident(spec.name));
    let mut n = 0;
    let mut clause = " WHERE ";
    for f in &q.filters {
        n += 1;
        let _ = write!(sql, "{clause}{} = {}", Ident(f.column), Param(n));
        clause = " AND ";
    }
    if let Page::After(values) = &q.page {
        // Strictly after the cursor row in (key1, key2, ..., id) order with nulls last:
        // OR over i of (keys before i equal AND key i after). Nothing sorts after a null
        // within its equal group, so a key whose value is null has no term.
        sql.push_str(clause);
        let mut terms = 0;
        for (i, key) in q.sort.iter().enumerate() {
            if values[i].is_null() {
                continue;
            }
            sql.push_str(if terms == 0 { "((" } else { " OR (" });
            terms += 1;
            for (prev, value) in q.sort[..i].iter().zip(values) {
                if value.is_null() {
                    let _ = write!(sql, "{} IS NULL AND ", Ident(prev.column));
                } else {
                    n += 1;
                    let _ = write!(sql, "{} = {} AND ", Expr(prev, dialect), Cast(prev, dialect, Param(n)));
                }
            }
            let op = if key.descending { "<" } else { ">" };
            n += 1;
            let (e, v, c) = (Expr(key, dialect), Cast(key, dialect, Param(n)), Ident(key.column));
            let _ = write!(sql, "({e} {op} {v} OR {c} IS NULL))");
        }
        sql.push_str(if terms == 0 { "1 = 0" } else { ")" });
    }
    for (i, k) in q.sort.iter().enumerate() {
        let dir = if k.descending { "DESC" } else { "ASC" };
        sql.push_str(if i == 0 { " ORDER BY " } else { ", " });
        if k.nullable {
            let _ = write!(sql, "({} IS NULL), ", Ident(k.column));
        }
        let _ = write!(sql, "{} {dir}", Expr(k, dialect));
    }
    // Integers the runtime computed (clamped sizes), written as literals: SQLite re-plans a
    // statement whose LIMIT is a parameter on every run.
    let _ = write!(sql, " LIMIT {}", u64::from(q.limit) + 1);
    // The first page (a cursor list's too) has no offset to state.
    if let Page::Offset(offset @ 1..) = q.page {
        match dialect {
            // Bound on PostgreSQL, which plans it once: a literal would make every page a
            // statement of its own, prepared again on each connection for each new offset.
            Dialect::Postgres => {
                let _ = write!(sql, " OFFSET {}", Param(n + 1));
            }
            Dialect::Sqlite => {
                let _ = write!(sql, " OFFSET {}", offset.min(i64::MAX as u64));
            }
        }
    }
    sql
}

impl SqlValue {
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, SqlValue::Text(None) | SqlValue::Int(None) | SqlValue::Float(None) | SqlValue::Bool(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{FieldSpec, IdKind};

    static SPEC: ResourceSpec = ResourceSpec {
        name: "order",
        owner: Some(("user", IdKind::Uuid)),
        fields: &[
            FieldSpec { name: "status", ..FieldSpec::DEFAULT },
            FieldSpec { name: "total", ..FieldSpec::DEFAULT },
        ],
        ..ResourceSpec::DEFAULT
    };

    const COLUMNS: &str = "\"id\", \"owner_id\", \"status\", \"total\", \"created_at\", \"updated_at\"";

    fn text(v: &str) -> SqlValue {
        SqlValue::Text(Some(v.to_owned()))
    }

    /// A page's size is a literal on both databases; its offset is bound on PostgreSQL,
    /// so every page of a list after the first is one statement there, and a literal on
    /// SQLite; the first page states none.
    #[test]
    fn an_offset_page_binds_its_offset_where_the_database_plans_it_once() {
        let id = SortKey { column: "id", descending: false, nullable: false, numeric: false };
        let q = ListQuery { filters: Vec::new(), sort: vec![id], page: Page::Offset(40), limit: 20 };
        let (sql, args) = select_page(Dialect::Postgres, &SPEC, &q);
        assert!(sql.ends_with("ORDER BY \"id\" ASC LIMIT 21 OFFSET $1"), "{sql}");
        assert_eq!(args, vec![SqlValue::Int(Some(40))]);
        let (sql, args) = select_page(Dialect::Sqlite, &SPEC, &q);
        assert!(sql.ends_with("ORDER BY \"id\" ASC LIMIT 21 OFFSET 40"), "{sql}");
        assert!(args.is_empty());
        let first = ListQuery { page: Page::Offset(0), ..q };
        for dialect in [Dialect::Postgres, Dialect::Sqlite] {
            let (sql, args) = select_page(dialect, &SPEC, &first);
            assert!(sql.ends_with("ORDER BY \"id\" ASC LIMIT 21") && args.is_empty(), "{sql}");
        }
    }

    /// Shapes of pages: each dialect, none to two filters, sorts with nullable and numeric
    /// keys, first and later offset pages, and cursors with every pattern of null values.
    fn page_shapes() -> Vec<(Dialect, ListQuery)> {
        let key = |column, descending, nullable, numeric| SortKey { column, descending, nullable, numeric };
        let sorts = [
            vec![key("id", false, false, false)],
            vec![key("status", true, false, false), key("id", true, false, false)],
            vec![key("total", false, true, true), key("status", true, true, false), key("id", false, false, false)],
        ];
        let filters = [vec![], vec![Filter { column: "status", value: text("new") }]];
        let mut shapes = Vec::new();
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            for filters in &filters {
                for sort in &sorts {
                    let n = sort.len();
                    let cursors = (0..1u32 << n).map(|nulls| {
                        let value = |i: usize| {
                            if nulls & (1 << i) == 0 { text(&format!("v{i}")) } else { SqlValue::Text(None) }
                        };
                        Page::After((0..n).map(value).collect())
                    });
                    for page in [Page::Offset(0), Page::Offset(40)].into_iter().chain(cursors) {
                        let q = ListQuery { filters: filters.clone(), sort: sort.clone(), page, limit: 20 };
                        shapes.push((dialect, q));
                    }
                }
            }
        }
        shapes
    }

    /// Each argument a page binds is named by its text, in order, and the text names no
    /// other: `$1` to `$n` for n arguments.
    #[test]
    fn a_page_names_each_of_its_arguments_once_in_order() {
        for (dialect, q) in page_shapes() {
            let (sql, args) = select_page(dialect, &SPEC, &q);
            let named: Vec<usize> = sql
                .match_indices('$')
                .map(|(at, _)| sql[at + 1..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap())
                .collect();
            assert_eq!(named, (1..=args.len()).collect::<Vec<_>>(), "{dialect:?} {:?}: {sql} {args:?}", q.page);
        }
    }

    /// A cursor after a row whose sort key is null compares that key with `IS NULL`; no
    /// key is compared after a null one within its group.
    #[test]
    fn a_cursor_with_a_null_key_compares_it_by_is_null() {
        let key = |column, nullable| SortKey { column, descending: false, nullable, numeric: false };
        let page = Page::After(vec![text("x"), SqlValue::Text(None), SqlValue::Int(Some(7))]);
        let q = ListQuery {
            filters: vec![],
            sort: vec![key("total", true), key("status", true), key("id", false)],
            page,
            limit: 20,
        };
        let (sql, args) = select_page(Dialect::Postgres, &SPEC, &q);
        assert!(
            sql.contains(
                "WHERE (((\"total\" > $1 OR \"total\" IS NULL)) \
                 OR (\"total\" = $2 AND \"status\" IS NULL AND (\"id\" > $3 OR \"id\" IS NULL))) ORDER BY"
            ),
            "{sql}"
        );
        assert_eq!(args, vec![text("x"), text("x"), SqlValue::Int(Some(7))]);
    }

    /// A page's text is written once for its shape and kept; its arguments are each
    /// request's own. Whatever changes the text (the dialect, the filters, the sort, where
    /// the page starts, its size, an offset SQLite states) is another shape.
    #[test]
    fn a_page_is_kept_by_its_shape_and_written_as_it_would_be_anew() {
        static PAGED: ResourceSpec = ResourceSpec { name: "paged", ..ResourceSpec::DEFAULT };
        // As many as are kept: past them each is written per request (as writes are).
        let shapes: Vec<_> = page_shapes().into_iter().take(MAX_KEPT).collect();
        let first: Vec<Cow<'static, str>> = shapes.iter().map(|(d, q)| select_page(*d, &PAGED, q).0).collect();
        for ((dialect, q), kept) in shapes.iter().zip(&first) {
            let mut other = q.clone();
            for f in &mut other.filters {
                f.value = text("other");
            }
            if let Page::After(values) = &mut other.page {
                for v in values.iter_mut().filter(|v| !v.is_null()) {
                    *v = text("other");
                }
            }
            let (again, args) = select_page(*dialect, &PAGED, &other);
            assert!(matches!((kept, &again), (Cow::Borrowed(a), Cow::Borrowed(b)) if std::ptr::eq(*a, *b)));
            assert_eq!(again, page_text(*dialect, &PAGED, &other), "kept as written");
            assert!(args.iter().all(|a| *a == text("other") || matches!(a, SqlValue::Int(_))), "{args:?}");
        }
        // Distinct shapes of a dialect, distinct texts: none was taken for another's.
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let of: Vec<&str> =
                shapes.iter().zip(&first).filter(|((d, _), _)| *d == dialect).map(|(_, t)| &**t).collect();
            let distinct: std::collections::HashSet<&str> = of.iter().copied().collect();
            assert_eq!(distinct.len(), of.len(), "{dialect:?}");
        }
        let id = SortKey { column: "id", descending: false, nullable: false, numeric: false };
        let at = |page, limit| ListQuery { filters: vec![], sort: vec![id.clone()], page, limit };
        let sqlite = select_page(Dialect::Sqlite, &PAGED, &at(Page::Offset(60), 20)).0;
        assert!(sqlite.ends_with("LIMIT 21 OFFSET 60"), "SQLite states each offset: {sqlite}");
        let postgres = select_page(Dialect::Postgres, &PAGED, &at(Page::Offset(60), 20)).0;
        assert!(std::ptr::eq(&*postgres, &*select_page(Dialect::Postgres, &PAGED, &at(Page::Offset(40), 20)).0));
        assert!(select_page(Dialect::Sqlite, &PAGED, &at(Page::Offset(0), 5)).0.ends_with("LIMIT 6"));
    }

    /// Offset pages on SQLite, each offset a statement of its own, fill at most half the
    /// room: the shapes asked for after a long walk through a list are still kept.
    #[test]
    fn a_walk_through_sqlite_offsets_leaves_room_for_other_pages() {
        static WALKED: ResourceSpec = ResourceSpec { name: "walked", ..ResourceSpec::DEFAULT };
        let id = SortKey { column: "id", descending: false, nullable: false, numeric: false };
        let at = |page| ListQuery { filters: vec![], sort: vec![id.clone()], page, limit: 20 };
        let walk: Vec<Cow<'static, str>> = (1..=2 * MAX_KEPT as u64)
            .map(|n| select_page(Dialect::Sqlite, &WALKED, &at(Page::Offset(20 * n))).0)
            .collect();
        assert_eq!(walk.iter().filter(|t| matches!(t, Cow::Borrowed(_))).count(), MAX_KEPT / 2);
        assert!(walk.iter().zip(1..).all(|(t, n)| t.ends_with(&format!("OFFSET {}", 20 * n))), "each written as asked");
        for page in [Page::Offset(0), Page::After(vec![SqlValue::Int(Some(7))])] {
            for dialect in [Dialect::Sqlite, Dialect::Postgres] {
                let (kept, again) = (
                    select_page(dialect, &WALKED, &at(page.clone())).0,
                    select_page(dialect, &WALKED, &at(page.clone())).0,
                );
                assert!(
                    matches!((&kept, &again), (Cow::Borrowed(a), Cow::Borrowed(b)) if std::ptr::eq(*a, *b)),
                    "{dialect:?} {page:?}"
                );
            }
        }
    }

    #[test]
    fn an_insert_names_each_column_set_and_returns_the_record() {
        let (sql, args) = insert(&SPEC, vec![("status", text("new")), ("total", SqlValue::Int(Some(3)))]);
        assert_eq!(sql, format!("INSERT INTO \"order\" (\"status\", \"total\") VALUES ($1, $2) RETURNING {COLUMNS}"));
        assert_eq!(args, vec![text("new"), SqlValue::Int(Some(3))]);
        let (sql, args) = insert(&SPEC, Vec::new());
        assert_eq!(sql, format!("INSERT INTO \"order\" DEFAULT VALUES RETURNING {COLUMNS}"));
        assert!(args.is_empty());
    }

    #[test]
    fn an_insert_is_kept_by_the_columns_it_names() {
        let whole = |status: &str| {
            let columns = ["id", "owner_id", "status", "total", "created_at", "updated_at"];
            columns.iter().map(|c| (*c, text(&format!("{c} {status}")))).collect::<Vec<_>>()
        };
        let (first, args) = insert(&SPEC, whole("new"));
        let placeholders = "$1, $2, $3, $4, $5, $6";
        assert_eq!(
            first,
            format!(
                "INSERT INTO \"order\" (\"id\", \"owner_id\", \"status\", \"total\", \"created_at\", \"updated_at\") \
                 VALUES ({placeholders}) RETURNING {COLUMNS}"
            )
        );
        assert_eq!(args[2], text("status new"));
        let (second, args) = insert(&SPEC, whole("paid"));
        assert!(matches!((&first, &second), (Cow::Borrowed(a), Cow::Borrowed(b)) if std::ptr::eq(*a, *b)));
        assert_eq!(args[2], text("status paid"), "the values are the request's");
        // The same columns in another order are another statement.
        let mut reordered = whole("new");
        reordered.swap(2, 3);
        let (sql, _) = insert(&SPEC, reordered);
        assert!(!std::ptr::eq(&*sql, &*first));
        assert!(sql.contains("(\"id\", \"owner_id\", \"total\", \"status\""), "{sql}");
    }

    #[test]
    fn an_update_sets_its_columns_where_the_id_and_owner_hold() {
        let (sql, args) =
            update(&SPEC, SqlValue::Int(Some(9)), vec![("status", text("paid"))], Some(("owner_id", text("u1"))));
        assert_eq!(
            sql,
            format!("UPDATE \"order\" SET \"status\" = $1 WHERE \"id\" = $2 AND \"owner_id\" = $3 RETURNING {COLUMNS}")
        );
        assert_eq!(args, vec![text("paid"), SqlValue::Int(Some(9)), text("u1")]);
        let (sql, args) = update(&SPEC, SqlValue::Int(Some(9)), Vec::new(), None);
        assert_eq!(sql, format!("SELECT {COLUMNS} FROM \"order\" WHERE \"id\" = $1"));
        assert_eq!(args, vec![SqlValue::Int(Some(9))]);
    }

    #[test]
    fn a_resource_keeps_a_bounded_number_of_statements_by_columns() {
        static SPEC: ResourceSpec = ResourceSpec { name: "wide", ..ResourceSpec::DEFAULT };
        let set = |columns: &[&'static str], owner: Option<&'static str>| {
            let values = columns.iter().map(|c| (*c, text("v"))).collect();
            update(&SPEC, SqlValue::Int(Some(1)), values, owner.map(|o| (o, text("u")))).0
        };
        let first = set(&["a", "b"], None);
        assert!(matches!(first, Cow::Borrowed(_)));
        assert!(std::ptr::eq(&*first, &*set(&["a", "b"], None)), "written once, kept");
        // Another order, another owner condition: another statement.
        assert_eq!(
            set(&["b", "a"], None),
            "UPDATE \"wide\" SET \"b\" = $1, \"a\" = $2 WHERE \"id\" = $3 RETURNING \"id\", \"created_at\", \"updated_at\""
        );
        assert!(
            set(&["a", "b"], Some("owner_id"))
                .ends_with("WHERE \"id\" = $3 AND \"owner_id\" = $4 RETURNING \"id\", \"created_at\", \"updated_at\"")
        );
        // Bodies naming ever other columns fill the room, then are written per request.
        let names: Vec<&'static str> =
            (0..2 * MAX_KEPT).map(|i| &*Box::leak(format!("c{i}").into_boxed_str())).collect();
        let written: Vec<Cow<'static, str>> = names.iter().map(|n| set(&[n], None)).collect();
        assert!(matches!(written.last(), Some(Cow::Owned(_))), "no more kept past the bound");
        assert_eq!(written.iter().filter(|w| matches!(w, Cow::Borrowed(_))).count(), MAX_KEPT - 3);
        for (n, w) in names.iter().zip(&written) {
            assert!(w.starts_with(&format!("UPDATE \"wide\" SET \"{n}\" = $1 WHERE")), "{w}");
        }
        assert!(matches!(set(&["a", "b"], None), Cow::Borrowed(_)), "those kept stay kept");
    }

    #[test]
    fn a_spec_keeps_the_statements_it_alone_decides_each_written_once() {
        static OTHER: ResourceSpec = ResourceSpec { name: "line", timestamps: false, ..ResourceSpec::DEFAULT };
        let read = format!("SELECT {COLUMNS} FROM \"order\" WHERE \"id\" = $1");
        assert_eq!(by_id(&SPEC), read);
        assert_eq!(by_id_locked(Dialect::Sqlite, &SPEC), read, "SQLite's write lock covers the read");
        assert_eq!(by_id_locked(Dialect::Postgres, &SPEC), format!("{read} FOR UPDATE"));
        assert_eq!(delete(&SPEC), format!("DELETE FROM \"order\" WHERE \"id\" = $1 RETURNING {COLUMNS}"));
        // Kept, not written again: the same text each time.
        assert!(std::ptr::eq(by_id(&SPEC), by_id(&SPEC)));
        assert!(std::ptr::eq(delete(&SPEC), delete(&SPEC)));
        // Each spec its own.
        assert_eq!(by_id(&OTHER), "SELECT \"id\" FROM \"line\" WHERE \"id\" = $1");
        assert_eq!(Columns(&OTHER).to_string(), "\"id\"");
        assert_eq!(Columns(&SPEC).to_string(), COLUMNS);
    }
}
