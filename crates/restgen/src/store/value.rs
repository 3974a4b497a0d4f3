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

/// What reading a record asks of a driver's row: each column by position as one of the
/// kinds records hold.
pub(crate) trait RecordRow {
    fn int(&self, at: usize) -> Result<Option<i64>, sqlx::Error>;
    fn float(&self, at: usize) -> Result<Option<f64>, sqlx::Error>;
    fn boolean(&self, at: usize) -> Result<Option<bool>, sqlx::Error>;
    fn text(&self, at: usize) -> Result<Option<String>, sqlx::Error>;
}

impl<R: Row> RecordRow for R
where
    usize: ColumnIndex<R>,
    Option<String>: for<'r> Decode<'r, R::Database> + Type<R::Database>,
    Option<i64>: for<'r> Decode<'r, R::Database> + Type<R::Database>,
    Option<f64>: for<'r> Decode<'r, R::Database> + Type<R::Database>,
    Option<bool>: for<'r> Decode<'r, R::Database> + Type<R::Database>,
{
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

/// A row of a statement that selects [`Columns`](super::sql::Columns) as the JSON record
/// it stores.
pub(crate) fn record(dialect: Dialect, spec: &ResourceSpec, row: &impl RecordRow) -> Result<Record, sqlx::Error> {
    let nullable = |v: Option<Value>| v.unwrap_or(Value::Null);
    // Sized up front: one allocation per row.
    let mut out = Record::with_capacity(spec.fields.len() + 4);
    let id = match spec.id {
        IdKind::Integer => Value::from(required(row.int(0)?, 0)?),
        IdKind::Uuid => Value::from(required(row.text(0)?, 0)?),
    };
    out.push("id", id);
    let mut at = 1;
    if let Some((_, kind)) = spec.owner {
        let owner = match kind {
            IdKind::Integer => row.int(at)?.map(Value::from),
            IdKind::Uuid => row.text(at)?.map(Value::from),
        };
        out.push("owner_id", nullable(owner));
        at += 1;
    }
    for f in spec.fields {
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
        at += 1;
    }
    if spec.timestamps {
        for col in ["created_at", "updated_at"] {
            out.push(col, Value::String(required(row.text(at)?, at)?));
            at += 1;
        }
    }
    Ok(out)
}

/// Every row of a result as the records they store.
pub(crate) fn records<R: RecordRow>(
    dialect: Dialect,
    spec: &ResourceSpec,
    rows: &[R],
) -> Result<Vec<Record>, sqlx::Error> {
    rows.iter().map(|row| record(dialect, spec, row)).collect()
}
