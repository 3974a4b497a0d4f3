//! SQL text for the store. Identifiers come from the checked schema and are quoted;
//! every value is a `$n` parameter (both SQLite and PostgreSQL read `$n`).

use super::{Dialect, SqlValue};
use crate::spec::ResourceSpec;

/// `"name"`: quoted so that resource names like `order` never read as SQL keywords.
pub(crate) fn ident(name: &str) -> String {
    debug_assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
    format!("\"{name}\"")
}

/// The columns of a resource's record, in the order `value::record` reads them: named
/// rather than `*`, so that each is where the reader expects it whatever order migrations
/// left the table's columns in, and no position is looked up by name per result.
pub(crate) struct Columns<'a>(pub &'a ResourceSpec);

impl std::fmt::Display for Columns<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let spec = self.0;
        f.write_str("\"id\"")?;
        if spec.owner.is_some() {
            f.write_str(", \"owner_id\"")?;
        }
        for field in spec.fields {
            write!(f, ", \"{}\"", field.name)?;
        }
        if spec.timestamps {
            f.write_str(", \"created_at\", \"updated_at\"")?;
        }
        Ok(())
    }
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

pub(crate) fn insert(spec: &ResourceSpec, values: Vec<(&str, SqlValue)>) -> (String, Vec<SqlValue>) {
    let cols: Vec<String> = values.iter().map(|(c, _)| ident(c)).collect();
    let params: Vec<String> = (1..=values.len()).map(|i| format!("${i}")).collect();
    let sql = if values.is_empty() {
        format!("INSERT INTO {} DEFAULT VALUES RETURNING {}", ident(spec.name), Columns(spec))
    } else {
        format!(
            "INSERT INTO {} ({}) VALUES ({}) RETURNING {}",
            ident(spec.name),
            cols.join(", "),
            params.join(", "),
            Columns(spec)
        )
    };
    (sql, values.into_iter().map(|(_, v)| v).collect())
}

/// Sets `values` on the record `id`, where `owner` (a column and its value) holds too;
/// with nothing to set, reads it under the same conditions.
pub(crate) fn update(
    spec: &ResourceSpec,
    id: SqlValue,
    values: Vec<(&str, SqlValue)>,
    owner: Option<(&str, SqlValue)>,
) -> (String, Vec<SqlValue>) {
    let sets: Vec<String> = values.iter().enumerate().map(|(i, (c, _))| format!("{} = ${}", ident(c), i + 1)).collect();
    let n = values.len() + 1;
    let mut which = format!("\"id\" = ${n}");
    if let Some((column, _)) = &owner {
        which.push_str(&format!(" AND {} = ${}", ident(column), n + 1));
    }
    let sql = if sets.is_empty() {
        format!("SELECT {} FROM {} WHERE {which}", Columns(spec), ident(spec.name))
    } else {
        format!("UPDATE {} SET {} WHERE {which} RETURNING {}", ident(spec.name), sets.join(", "), Columns(spec))
    };
    let mut args: Vec<SqlValue> = values.into_iter().map(|(_, v)| v).collect();
    args.push(id);
    args.extend(owner.map(|(_, v)| v));
    (sql, args)
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
    if let Page::Offset(n) = q.page {
        sql.push_str(&format!(" OFFSET {}", n.min(i64::MAX as u64)));
    }
    (sql, args)
}

impl SqlValue {
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, SqlValue::Text(None) | SqlValue::Int(None) | SqlValue::Float(None) | SqlValue::Bool(None))
    }
}
