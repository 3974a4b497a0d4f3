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
        f.write_str(kept(&spec.statements.columns, || {
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
/// time each is used and kept with the spec (`ResourceSpec::statements`) for the life of
/// the process: made per request, a read's text cost more instructions than the rest of
/// its work in the store. `OnceRef` has no destructor, so a spec holding these can still
/// be a static made from `ResourceSpec::DEFAULT`; threads that race to write one first
/// each make it, and all but one copy are kept unused (a few, once).
#[derive(Debug, Default)]
pub struct Statements {
    columns: OnceRef<'static, String>,
    by_id: OnceRef<'static, String>,
    locked: OnceRef<'static, String>,
    delete: OnceRef<'static, String>,
    inserts: OnceRef<'static, ByColumns>,
    updates: OnceRef<'static, ByColumns>,
}

impl Statements {
    /// None written yet.
    pub const fn new() -> Statements {
        Statements {
            columns: OnceRef::new(),
            by_id: OnceRef::new(),
            locked: OnceRef::new(),
            delete: OnceRef::new(),
            inserts: OnceRef::new(),
            updates: OnceRef::new(),
        }
    }
}

/// `cell`'s text, made by `make` the first time.
fn kept(cell: &OnceRef<'static, String>, make: impl FnOnce() -> String) -> &'static str {
    cell.get_or_init(|| Box::leak(Box::new(make())))
}

/// One record by id.
pub(crate) fn by_id(spec: &ResourceSpec) -> &'static str {
    kept(&spec.statements.by_id, || format!("SELECT {} FROM {} WHERE \"id\" = $1", Columns(spec), Ident(spec.name)))
}

/// One record by id, read to be written in the same transaction: PostgreSQL locks the
/// row until the transaction ends (SQLite's write lock already covers it).
pub(crate) fn by_id_locked(dialect: Dialect, spec: &ResourceSpec) -> &'static str {
    match dialect {
        Dialect::Sqlite => by_id(spec),
        Dialect::Postgres => kept(&spec.statements.locked, || format!("{} FOR UPDATE", by_id(spec))),
    }
}

/// Deletes one record by id, returning it as it was.
pub(crate) fn delete(spec: &ResourceSpec) -> &'static str {
    kept(&spec.statements.delete, || {
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

impl SortKey {
    /// The expression the key orders and compares by.
    fn expr(&self, dialect: Dialect) -> String {
        match (self.numeric, dialect) {
            (false, _) => ident(self.column),
            (true, Dialect::Sqlite) => format!("CAST({} AS REAL)", ident(self.column)),
            (true, Dialect::Postgres) => format!("CAST({} AS NUMERIC)", ident(self.column)),
        }
    }

    fn param(&self, p: String, dialect: Dialect) -> String {
        match (self.numeric, dialect) {
            (false, _) => p,
            (true, Dialect::Sqlite) => format!("CAST({p} AS REAL)"),
            (true, Dialect::Postgres) => format!("CAST({p} AS NUMERIC)"),
        }
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
    let sql = ByColumns::of(&spec.statements.inserts).text(&columns, None, || insert_text(spec, &columns));
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
    let sql = ByColumns::of(&spec.statements.updates)
        .text(&columns, owner_column, || update_text(spec, &columns, owner_column));
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

/// A resource's insert or update statements by the columns they name (in order) and the
/// owner column an update holds to: a create names the same columns each time, a PATCH
/// those its body names, so a resource's writes are a handful of statements written again
/// and again. At most [`MAX_KEPT`] are kept, so that bodies naming ever other sets of
/// columns cannot grow it without bound; past it each is written for its request.
#[derive(Debug, Default)]
pub(crate) struct ByColumns(std::sync::RwLock<Vec<Kept>>);

#[derive(Debug)]
pub(crate) struct Kept {
    columns: Box<[Box<str>]>,
    owner: Option<Box<str>>,
    text: &'static str,
}

/// The most statements of one kind a resource keeps.
const MAX_KEPT: usize = 64;

impl Kept {
    fn is(&self, columns: &[&str], owner: Option<&str>) -> bool {
        self.owner.as_deref() == owner && self.columns.iter().map(|c| &**c).eq(columns.iter().copied())
    }
}

impl ByColumns {
    /// The statements kept in `cell`, made empty the first time.
    fn of(cell: &OnceRef<'static, ByColumns>) -> &'static ByColumns {
        cell.get_or_init(|| Box::leak(Box::default()))
    }

    /// The statement naming `columns` (and `owner`), made by `write` where none is kept.
    fn text(&self, columns: &[&str], owner: Option<&str>, write: impl FnOnce() -> String) -> Cow<'static, str> {
        let found =
            self.0.read().unwrap_or_else(PoisonError::into_inner).iter().find(|k| k.is(columns, owner)).map(|k| k.text);
        if let Some(text) = found {
            return Cow::Borrowed(text);
        }
        let text = write();
        let mut kept = self.0.write().unwrap_or_else(PoisonError::into_inner);
        // Another request may have kept it meanwhile.
        if let Some(k) = kept.iter().find(|k| k.is(columns, owner)) {
            return Cow::Borrowed(k.text);
        }
        if kept.len() >= MAX_KEPT {
            return Cow::Owned(text);
        }
        let text: &'static str = Box::leak(text.into_boxed_str());
        kept.push(Kept { columns: columns.iter().map(|c| Box::from(*c)).collect(), owner: owner.map(Box::from), text });
        Cow::Borrowed(text)
    }
}

/// One page plus one row, so the caller learns whether more follow.
pub(crate) fn select_page(dialect: Dialect, spec: &ResourceSpec, q: &ListQuery) -> (String, Vec<SqlValue>) {
    let mut args: Vec<SqlValue> = Vec::new();
    let param = |v: SqlValue, args: &mut Vec<SqlValue>| {
        args.push(v);
        format!("${}", args.len())
    };
    let mut conditions: Vec<String> = Vec::new();
    for f in &q.filters {
        let p = param(f.value.clone(), &mut args);
        conditions.push(format!("{} = {p}", ident(f.column)));
    }
    if let Page::After(values) = &q.page {
        // Strictly after the cursor row in (key1, key2, ..., id) order with nulls last:
        // OR over i of (keys before i equal AND key i after).
        let mut any = Vec::new();
        for (i, key) in q.sort.iter().enumerate() {
            let mut all = Vec::new();
            for (j, prev) in q.sort[..i].iter().enumerate() {
                all.push(match values[j].is_null() {
                    true => format!("{} IS NULL", ident(prev.column)),
                    false => {
                        let v = prev.param(param(values[j].clone(), &mut args), dialect);
                        format!("{} = {v}", prev.expr(dialect))
                    }
                });
            }
            if values[i].is_null() {
                continue; // nothing sorts after a null within its equal group
            }
            let op = if key.descending { "<" } else { ">" };
            let v = key.param(param(values[i].clone(), &mut args), dialect);
            all.push(format!("({e} {op} {v} OR {c} IS NULL)", e = key.expr(dialect), c = ident(key.column)));
            any.push(format!("({})", all.join(" AND ")));
        }
        conditions.push(if any.is_empty() { "1 = 0".into() } else { format!("({})", any.join(" OR ")) });
    }
    let order: Vec<String> = q
        .sort
        .iter()
        .map(|k| {
            let dir = if k.descending { "DESC" } else { "ASC" };
            if k.nullable {
                format!("({} IS NULL), {} {dir}", ident(k.column), k.expr(dialect))
            } else {
                format!("{} {dir}", k.expr(dialect))
            }
        })
        .collect();
    let mut sql = format!("SELECT {} FROM {}", Columns(spec), ident(spec.name));
    if !conditions.is_empty() {
        sql.push_str(&format!(" WHERE {}", conditions.join(" AND ")));
    }
    sql.push_str(&format!(" ORDER BY {}", order.join(", ")));
    // Integers the runtime computed (clamped sizes), written as literals: SQLite re-plans a
    // statement whose LIMIT is a parameter on every run, which costs lists about a tenth.
    sql.push_str(&format!(" LIMIT {}", u64::from(q.limit) + 1));
    // The first page (a cursor list's too) has no offset to state.
    if let Page::Offset(n @ 1..) = q.page {
        let n = n.min(i64::MAX as u64);
        match dialect {
            // Bound on PostgreSQL, which plans it once: a literal would make every page a
            // statement of its own, prepared again on each connection for each new offset.
            Dialect::Postgres => {
                let p = param(SqlValue::Int(Some(n as i64)), &mut args);
                sql.push_str(&format!(" OFFSET {p}"));
            }
            Dialect::Sqlite => sql.push_str(&format!(" OFFSET {n}")),
        }
    }
    (sql, args)
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
