//! Rows as the driver read them: read into records, or written as JSON straight from the
//! rows, which a page of a list and a write's answer are.

use super::{Dialect, Record, StoreError, value};
use crate::spec::ResourceSpec;

/// Rows of records as the driver read them: read into [`Record`]s, or written as JSON
/// straight from the rows ([`Rows::json`]), which a page of a list is.
pub(crate) enum Rows {
    #[cfg(feature = "sqlite")]
    Sqlite(Vec<sqlx::sqlite::SqliteRow>),
    #[cfg(feature = "postgres")]
    Postgres(Vec<sqlx::postgres::PgRow>),
}

/// Runs `$body` with `$rows` bound to the rows of whichever driver read them and `$dialect`
/// to its dialect; compiled once per driver, as `on_pool!` is.
macro_rules! on_rows {
    ($rows:expr, $bound:ident, $dialect:ident => $body:expr) => {
        match $rows {
            #[cfg(feature = "sqlite")]
            Rows::Sqlite($bound) => {
                let $dialect = Dialect::Sqlite;
                $body
            }
            #[cfg(feature = "postgres")]
            Rows::Postgres($bound) => {
                let $dialect = Dialect::Postgres;
                $body
            }
        }
    };
}

impl Rows {
    /// The records of the rows.
    pub(crate) fn records(&self, spec: &ResourceSpec) -> Result<Vec<Record>, sqlx::Error> {
        on_rows!(self, rows, dialect => value::records(dialect, spec, rows))
    }

    /// The record of the (first and only) row of a write or a read by id.
    pub(crate) fn record(&self, spec: &ResourceSpec) -> Result<Record, StoreError> {
        self.last(spec)?.ok_or(StoreError::NotFound)
    }

    /// The id of the first row, as text: read alone, not with the record.
    pub(crate) fn id_text(&self, spec: &ResourceSpec) -> Result<String, StoreError> {
        let id = on_rows!(self, rows, _dialect => rows.first().map(|r| value::id(spec, r)).transpose()?);
        match id {
            Some(value::Column::Int(Some(n))) => Ok(n.to_string()),
            Some(value::Column::Text(Some(t))) => Ok(t.to_owned()),
            _ => Err(StoreError::NotFound),
        }
    }

    /// The record of the last row.
    pub(crate) fn last(&self, spec: &ResourceSpec) -> Result<Option<Record>, sqlx::Error> {
        on_rows!(self, rows, dialect => rows.last().map(|r| value::record(dialect, spec, r)).transpose())
    }

    /// The first row as the JSON object of its record's representation, as [`Rows::json`]
    /// writes each.
    pub(crate) fn first_json<'a>(&'a self, spec: &'a ResourceSpec, shown: &'a [bool]) -> impl serde::Serialize + 'a {
        FirstJson(RowsJson { rows: self, spec, shown })
    }

    /// The rows as a JSON array of their records' representations, the fields `shown`
    /// leaves out skipped (see [`value::Shown`]).
    pub(crate) fn json<'a>(&'a self, spec: &'a ResourceSpec, shown: &'a [bool]) -> impl serde::Serialize + 'a {
        RowsJson { rows: self, spec, shown }
    }
}

#[cfg(feature = "sqlite")]
impl From<Vec<sqlx::sqlite::SqliteRow>> for Rows {
    fn from(rows: Vec<sqlx::sqlite::SqliteRow>) -> Rows {
        Rows::Sqlite(rows)
    }
}

#[cfg(feature = "postgres")]
impl From<Vec<sqlx::postgres::PgRow>> for Rows {
    fn from(rows: Vec<sqlx::postgres::PgRow>) -> Rows {
        Rows::Postgres(rows)
    }
}

/// The one row of a write or a read by id.
pub(super) fn single_row<R>(row: R) -> Rows
where
    Rows: From<Vec<R>>,
{
    Rows::from(vec![row])
}

#[derive(Clone, Copy)]
struct RowsJson<'a> {
    rows: &'a Rows,
    spec: &'a ResourceSpec,
    shown: &'a [bool],
}

struct FirstJson<'a>(RowsJson<'a>);

impl serde::Serialize for FirstJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let RowsJson { rows, spec, shown } = self.0;
        on_rows!(rows, rows, dialect => match rows.first() {
            Some(row) => value::Shown { dialect, spec, shown, row }.serialize(serializer),
            None => Err(serde::ser::Error::custom("no row")),
        })
    }
}

impl serde::Serialize for RowsJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (spec, shown) = (self.spec, self.shown);
        on_rows!(self.rows, rows, dialect => {
            serializer.collect_seq(rows.iter().map(|row| value::Shown { dialect, spec, shown, row }))
        })
    }
}
