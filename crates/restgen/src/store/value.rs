//! Values crossing into and out of SQL, typed by the field they belong to.

use super::{Dialect, Record};
use crate::spec::{FieldKind, FieldSpec, IdKind, ResourceSpec};
use serde::ser::{Serialize, SerializeMap, Serializer};
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
        SqlValue::from_owned_json(field, value.clone())
    }

    /// [`SqlValue::from_json`], taking the value's text rather than copying it.
    pub fn from_owned_json(field: &FieldSpec, value: Value) -> SqlValue {
        match field.kind {
            FieldKind::Integer => SqlValue::Int(value.as_i64()),
            FieldKind::Number => SqlValue::Float(value.as_f64()),
            FieldKind::Boolean => SqlValue::Bool(value.as_bool()),
            FieldKind::Ref if matches!(field.to, Some((_, IdKind::Integer))) => SqlValue::Int(value.as_i64()),
            FieldKind::Json | FieldKind::Roles => {
                SqlValue::Text(if value.is_null() { None } else { Some(value.to_string()) })
            }
            _ => SqlValue::Text(match value {
                Value::String(s) => Some(s),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            }),
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
/// kinds records hold, text borrowed from the row.
pub(crate) trait RecordRow {
    fn int(&self, at: usize) -> Result<Option<i64>, sqlx::Error>;
    fn float(&self, at: usize) -> Result<Option<f64>, sqlx::Error>;
    fn boolean(&self, at: usize) -> Result<Option<bool>, sqlx::Error>;
    fn text(&self, at: usize) -> Result<Option<&str>, sqlx::Error>;
}

impl<R: Row> RecordRow for R
where
    usize: ColumnIndex<R>,
    for<'r> Option<&'r str>: Decode<'r, R::Database> + Type<R::Database>,
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
    fn text(&self, at: usize) -> Result<Option<&str>, sqlx::Error> {
        self.try_get(at)
    }
}

/// One column of a record as its row holds it: what a record's JSON value is made from,
/// or written from without one (a page's rows are serialized so, [`Shown`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Column<'r> {
    Int(Option<i64>),
    Float(Option<f64>),
    Bool(Option<bool>),
    Text(Option<&'r str>),
    /// JSON text (`json` and `roles` fields): its value, `null` where it does not parse.
    Json(Option<&'r str>),
}

impl Column<'_> {
    pub(crate) fn to_json(self) -> Value {
        match self {
            Column::Int(v) => v.map_or(Value::Null, Value::from),
            Column::Float(v) => v.map_or(Value::Null, Value::from),
            Column::Bool(v) => v.map_or(Value::Null, Value::Bool),
            Column::Text(v) => v.map_or(Value::Null, |t| Value::String(t.to_owned())),
            Column::Json(v) => v.map_or(Value::Null, |t| serde_json::from_str(t).unwrap_or(Value::Null)),
        }
    }
}

impl Serialize for Column<'_> {
    /// As [`Column::to_json`]'s value serializes.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Column::Int(Some(n)) => serializer.serialize_i64(n),
            Column::Float(Some(x)) if x.is_finite() => serializer.serialize_f64(x),
            Column::Bool(Some(b)) => serializer.serialize_bool(b),
            Column::Text(Some(t)) => serializer.serialize_str(t),
            Column::Json(Some(_)) => self.to_json().serialize(serializer),
            _ => serializer.serialize_none(),
        }
    }
}

/// A column that may not be NULL, as the row gave it.
fn required<T>(value: Option<T>, at: usize) -> Result<T, sqlx::Error> {
    value.ok_or_else(|| sqlx::Error::ColumnDecode { index: at.to_string(), source: "unexpected NULL".into() })
}

/// The record's id, the first column of its row.
pub(crate) fn id<'r>(spec: &ResourceSpec, row: &'r impl RecordRow) -> Result<Column<'r>, sqlx::Error> {
    Ok(match spec.id {
        IdKind::Integer => Column::Int(Some(required(row.int(0)?, 0)?)),
        IdKind::Uuid => Column::Text(Some(required(row.text(0)?, 0)?)),
    })
}

/// Each column of a row of a statement that selects [`Columns`](super::sql::Columns),
/// named, in order, to `visit`: the one reading of a record's row, whichever form it
/// takes (a [`Record`], or JSON written straight from the row).
pub(crate) fn columns<'r, E: From<sqlx::Error>>(
    dialect: Dialect,
    spec: &ResourceSpec,
    row: &'r impl RecordRow,
    mut visit: impl FnMut(&'static str, Option<&'static FieldSpec>, Column<'r>) -> Result<(), E>,
) -> Result<(), E> {
    visit("id", None, id(spec, row)?)?;
    let mut at = 1;
    if let Some((_, kind)) = spec.owner {
        let owner = match kind {
            IdKind::Integer => Column::Int(row.int(at)?),
            IdKind::Uuid => Column::Text(row.text(at)?),
        };
        visit("owner_id", None, owner)?;
        at += 1;
    }
    for f in spec.fields {
        let v = match f.kind {
            FieldKind::Integer => Column::Int(row.int(at)?),
            FieldKind::Number => Column::Float(row.float(at)?),
            FieldKind::Boolean => match dialect {
                // SQLite has no boolean type: it stores 0 and 1.
                Dialect::Sqlite => Column::Bool(row.int(at)?.map(|b| b != 0)),
                Dialect::Postgres => Column::Bool(row.boolean(at)?),
            },
            FieldKind::Ref if matches!(f.to, Some((_, IdKind::Integer))) => Column::Int(row.int(at)?),
            FieldKind::Json | FieldKind::Roles => Column::Json(row.text(at)?),
            _ => Column::Text(row.text(at)?),
        };
        visit(f.name, Some(f), v)?;
        at += 1;
    }
    if spec.timestamps {
        for col in ["created_at", "updated_at"] {
            visit(col, None, Column::Text(Some(required(row.text(at)?, at)?)))?;
            at += 1;
        }
    }
    Ok(())
}

/// A row of a statement that selects [`Columns`](super::sql::Columns) as the JSON record
/// it stores.
pub(crate) fn record(dialect: Dialect, spec: &ResourceSpec, row: &impl RecordRow) -> Result<Record, sqlx::Error> {
    // Sized up front: one allocation per row.
    let mut out = Record::with_capacity(spec.fields.len() + 4);
    columns(dialect, spec, row, |name, _, column| {
        out.push(name, column.to_json());
        Ok::<_, sqlx::Error>(())
    })?;
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

/// A row as the JSON object of its record's representation, written straight from the
/// row: no record, no JSON value, no copy of its text. The fields `shown` leaves out (by
/// position in the spec's fields: write-only ones, those the request's version lacks)
/// are skipped, as [`Record`]s of a representation lack them.
pub(crate) struct Shown<'a, R> {
    pub dialect: Dialect,
    pub spec: &'a ResourceSpec,
    pub shown: &'a [bool],
    pub row: &'a R,
}

impl<R: RecordRow> Serialize for Shown<'_, R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut field = 0;
        columns(self.dialect, self.spec, self.row, |name, spec, column| {
            if spec.is_some() {
                field += 1;
                if !self.shown.get(field - 1).copied().unwrap_or(true) {
                    return Ok(());
                }
            }
            map.serialize_entry(name, &column).map_err(Written)
        })
        .map_err(|e: Written<S::Error>| e.0)?;
        map.end()
    }
}

/// A serializer's error, or a column that did not read (as one).
struct Written<E>(E);

impl<E: serde::ser::Error> From<sqlx::Error> for Written<E> {
    fn from(e: sqlx::Error) -> Self {
        Written(E::custom(e))
    }
}
