//! Values crossing into and out of SQL, typed by the field they belong to.

use super::{Dialect, Record};
use crate::spec::{FieldKind, FieldSpec, IdKind, ResourceSpec};
use serde_json::Value;
use sqlx::{ColumnIndex, Decode, Row, Type};

/// A bound parameter. Nulls carry their column's type, which PostgreSQL needs.
#[derive(Clone, Debug, PartialEq)]
pub enum SqlValue {
    Text(Option<String>),
    Int(Option<i64>),
    Float(Option<f64>),
    Bool(Option<bool>),
}

impl SqlValue {
    /// The column value of a field from its JSON form (already validated).
    pub fn from_json(field: &FieldSpec, value: &Value) -> SqlValue {
        match field.kind {
            FieldKind::Integer => SqlValue::Int(value.as_i64()),
            FieldKind::Number => SqlValue::Float(value.as_f64()),
            FieldKind::Boolean => SqlValue::Bool(value.as_bool()),
            FieldKind::Ref if matches!(field.to, Some((_, IdKind::Integer))) => SqlValue::Int(value.as_i64()),
            FieldKind::Json | FieldKind::Roles => {
                SqlValue::Text(if value.is_null() { None } else { Some(value.to_string()) })
            }
            _ => SqlValue::Text(value.as_str().map(str::to_owned).or_else(|| match value {
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })),
        }
    }

    /// The value as JSON (an id as a record shows it).
    pub fn to_json(&self) -> Value {
        match self {
            SqlValue::Text(v) => v.clone().map_or(Value::Null, Value::from),
            SqlValue::Int(v) => v.map_or(Value::Null, Value::from),
            SqlValue::Float(v) => v.map_or(Value::Null, Value::from),
            SqlValue::Bool(v) => v.map_or(Value::Null, Value::from),
        }
    }

    /// An id from its path segment: `None` when it cannot be an id of this kind (so
    /// the record cannot exist).
    pub fn id(kind: IdKind, text: &str) -> Option<SqlValue> {
        match kind {
            IdKind::Integer => text.parse::<i64>().ok().map(|n| SqlValue::Int(Some(n))),
            IdKind::Uuid => uuid::Uuid::parse_str(text).ok().map(|u| SqlValue::Text(Some(u.to_string()))),
        }
    }
}

/// A row of the API key table.
pub(crate) fn api_key<R: Row>(row: &R, owner: IdKind) -> Result<super::ApiKeyRow, sqlx::Error>
where
    for<'a> &'a str: ColumnIndex<R>,
    String: for<'r> Decode<'r, R::Database> + Type<R::Database>,
    i64: for<'r> Decode<'r, R::Database> + Type<R::Database>,
{
    Ok(super::ApiKeyRow {
        id: row.try_get("id")?,
        owner_id: match owner {
            IdKind::Integer => SqlValue::Int(Some(row.try_get("owner_id")?)),
            IdKind::Uuid => SqlValue::Text(Some(row.try_get("owner_id")?)),
        },
        name: row.try_get("name")?,
        prefix: row.try_get("prefix")?,
        secret_hash: row.try_get("secret_hash")?,
        created_at: row.try_get("created_at")?,
    })
}

/// What reading a record asks of a driver's row: where a column is, and each column by
/// position as one of the kinds records hold.
pub(crate) trait RecordRow {
    fn position(&self, name: &str) -> Result<usize, sqlx::Error>;
    fn int(&self, at: usize) -> Result<Option<i64>, sqlx::Error>;
    fn float(&self, at: usize) -> Result<Option<f64>, sqlx::Error>;
    fn boolean(&self, at: usize) -> Result<Option<bool>, sqlx::Error>;
    fn text(&self, at: usize) -> Result<Option<String>, sqlx::Error>;
}

impl<R: Row> RecordRow for R
where
    for<'a> &'a str: ColumnIndex<R>,
    usize: ColumnIndex<R>,
    Option<String>: for<'r> Decode<'r, R::Database> + Type<R::Database>,
    Option<i64>: for<'r> Decode<'r, R::Database> + Type<R::Database>,
    Option<f64>: for<'r> Decode<'r, R::Database> + Type<R::Database>,
    Option<bool>: for<'r> Decode<'r, R::Database> + Type<R::Database>,
{
    fn position(&self, name: &str) -> Result<usize, sqlx::Error> {
        self.try_column(name).map(sqlx::Column::ordinal)
    }
    fn int(&self, at: usize) -> Result<Option<i64>, sqlx::Error> {
        self.try_get(at)
    }
    fn float(&self, at: usize) -> Result<Option<f64>, sqlx::Error> {
        self.try_get(at)
    }
    fn boolean(&self, at: usize) -> Result<Option<bool>, sqlx::Error> {
        self.try_get(at)
    }
    fn text(&self, at: usize) -> Result<Option<String>, sqlx::Error> {
        self.try_get(at)
    }
}

/// A column that may not be NULL, as the row gave it.
fn required<T>(value: Option<T>, at: usize) -> Result<T, sqlx::Error> {
    value.ok_or_else(|| sqlx::Error::ColumnDecode { index: at.to_string(), source: "unexpected NULL".into() })
}

/// Where each column of a resource's record sits in a result's rows: found by name once
/// per result, so that each row of a page is read by position instead of looking every
/// column up by name again.
struct Layout {
    id: usize,
    owner: Option<usize>,
    fields: Vec<usize>,
    times: Option<[usize; 2]>,
}

impl Layout {
    fn of(spec: &ResourceSpec, row: &impl RecordRow) -> Result<Layout, sqlx::Error> {
        Ok(Layout {
            id: row.position("id")?,
            owner: spec.owner.map(|_| row.position("owner_id")).transpose()?,
            fields: spec.fields.iter().map(|f| row.position(f.name)).collect::<Result<_, _>>()?,
            times: if spec.timestamps {
                Some([row.position("created_at")?, row.position("updated_at")?])
            } else {
                None
            },
        })
    }
}

/// A row as the JSON record it stores.
pub(crate) fn record(dialect: Dialect, spec: &ResourceSpec, row: &impl RecordRow) -> Result<Record, sqlx::Error> {
    record_at(dialect, spec, &Layout::of(spec, row)?, row)
}

/// Every row of a result as the records they store.
pub(crate) fn records<R: RecordRow>(
    dialect: Dialect,
    spec: &ResourceSpec,
    rows: &[R],
) -> Result<Vec<Record>, sqlx::Error> {
    let Some(first) = rows.first() else { return Ok(Vec::new()) };
    let layout = Layout::of(spec, first)?;
    rows.iter().map(|row| record_at(dialect, spec, &layout, row)).collect()
}

/// A row as the JSON record it stores, its columns where `layout` says.
fn record_at(
    dialect: Dialect,
    spec: &ResourceSpec,
    layout: &Layout,
    row: &impl RecordRow,
) -> Result<Record, sqlx::Error> {
    let nullable = |v: Option<Value>| v.unwrap_or(Value::Null);
    // Sized up front: one allocation per row.
    let mut out = Record::with_capacity(spec.fields.len() + 4);
    let id = match spec.id {
        IdKind::Integer => Value::from(required(row.int(layout.id)?, layout.id)?),
        IdKind::Uuid => Value::from(required(row.text(layout.id)?, layout.id)?),
    };
    out.push("id", id);
    if let (Some((_, kind)), Some(at)) = (spec.owner, layout.owner) {
        let owner = match kind {
            IdKind::Integer => row.int(at)?.map(Value::from),
            IdKind::Uuid => row.text(at)?.map(Value::from),
        };
        out.push("owner_id", nullable(owner));
    }
    for (f, &at) in spec.fields.iter().zip(&layout.fields) {
        let v = match f.kind {
            FieldKind::Integer => row.int(at)?.map(Value::from),
            FieldKind::Number => row.float(at)?.map(Value::from),
            FieldKind::Boolean => match dialect {
                // SQLite has no boolean type: it stores 0 and 1.
                Dialect::Sqlite => row.int(at)?.map(|b| Value::Bool(b != 0)),
                Dialect::Postgres => row.boolean(at)?.map(Value::Bool),
            },
            FieldKind::Ref if matches!(f.to, Some((_, IdKind::Integer))) => row.int(at)?.map(Value::from),
            FieldKind::Json | FieldKind::Roles => {
                row.text(at)?.map(|t| serde_json::from_str(&t).unwrap_or(Value::Null))
            }
            _ => row.text(at)?.map(Value::String),
        };
        out.push(f.name, nullable(v));
    }
    if let Some(times) = layout.times {
        for (col, at) in ["created_at", "updated_at"].into_iter().zip(times) {
            out.push(col, Value::String(required(row.text(at)?, at)?));
        }
    }
    Ok(out)
}
