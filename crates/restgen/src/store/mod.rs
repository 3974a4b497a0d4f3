//! Storage through sqlx: SQLite by default, PostgreSQL when `DATABASE_URL` says so, with
//! the same generated code on both. Records travel as JSON objects; columns are typed
//! uniformly (text for uuids, dates, decimals and JSON; 64-bit integers; doubles;
//! booleans), so one query builder serves both dialects. Every value is a bound
//! parameter; identifiers come from the validated schema and are always quoted.

mod sql;
mod value;

pub use sql::{Filter, ListQuery, Page, SortKey};
pub use value::SqlValue;

use crate::spec::ResourceSpec;
use serde_json::{Map, Value};
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AnyPool, AssertSqlSafe, Executor};

/// A JSON object: one record as stored, server-controlled fields included.
pub type Record = Map<String, Value>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// One migration, in both dialects.
#[derive(Debug)]
pub struct MigrationSpec {
    pub version: i64,
    pub description: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

#[derive(Debug)]
pub enum StoreError {
    NotFound,
    /// A unique constraint on `field` refused the write.
    Unique {
        field: String,
    },
    /// A ref field names a record that does not exist.
    MissingRef {
        field: String,
    },
    Database(sqlx::Error),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::NotFound => f.write_str("no such record"),
            StoreError::Unique { field } => write!(f, "`{field}` is taken"),
            StoreError::MissingRef { field } => write!(f, "`{field}` refers to a missing record"),
            StoreError::Database(e) => write!(f, "database: {e}"),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::Database(e)
    }
}

/// The database of one service.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    dialect: Dialect,
}

impl Store {
    /// Connects to `url` (`sqlite://file.db` or `postgres://...`). SQLite files are
    /// created when missing and put in WAL mode with foreign keys enforced.
    pub async fn connect(url: &str) -> Result<Store, sqlx::Error> {
        sqlx::any::install_default_drivers();
        let dialect = if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Dialect::Postgres
        } else if url.starts_with("sqlite:") {
            Dialect::Sqlite
        } else {
            return Err(sqlx::Error::Configuration("DATABASE_URL must start with sqlite: or postgres:".into()));
        };
        let url = if dialect == Dialect::Sqlite && !url.contains("mode=") {
            format!("{url}{}mode=rwc", if url.contains('?') { "&" } else { "?" })
        } else {
            url.to_owned()
        };
        let options = AnyPoolOptions::new().max_connections(if dialect == Dialect::Sqlite { 8 } else { 16 });
        let options = if dialect == Dialect::Sqlite {
            options.after_connect(|conn, _| {
                Box::pin(async move {
                    // Per connection: SQLite forgets these when a connection closes.
                    conn.execute("PRAGMA foreign_keys = ON").await?;
                    conn.execute("PRAGMA busy_timeout = 5000").await?;
                    Ok(())
                })
            })
        } else {
            options
        };
        let pool = options.connect(&url).await?;
        if dialect == Dialect::Sqlite {
            pool.execute("PRAGMA journal_mode = WAL").await?;
        }
        Ok(Store { pool, dialect })
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Applies the migrations not yet applied, in order, each in a transaction.
    pub async fn migrate(&self, migrations: &[MigrationSpec]) -> Result<(), sqlx::migrate::MigrateError> {
        let list = migrations
            .iter()
            .map(|m| {
                let sql = match self.dialect {
                    Dialect::Sqlite => m.sqlite,
                    Dialect::Postgres => m.postgres,
                };
                Migration::new(
                    m.version,
                    m.description.into(),
                    MigrationType::Simple,
                    sqlx::SqlStr::from_static(sql),
                    false,
                )
            })
            .collect();
        Migrator::with_migrations(list).run(&self.pool).await
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(&self.pool).await.is_ok()
    }

    pub async fn insert(&self, spec: &ResourceSpec, values: Vec<(&str, SqlValue)>) -> Result<Record, StoreError> {
        let (sql, args) = sql::insert(spec, values);
        let row = self.bind(&sql, args).fetch_one(&self.pool).await.map_err(|e| classify(spec, e))?;
        Ok(value::record(self.dialect, spec, &row)?)
    }

    pub async fn get(&self, spec: &ResourceSpec, id: &SqlValue) -> Result<Record, StoreError> {
        let sql = format!("SELECT * FROM {} WHERE \"id\" = $1", sql::ident(spec.name));
        let row: Option<AnyRow> = self.bind(&sql, vec![id.clone()]).fetch_optional(&self.pool).await?;
        match row {
            Some(row) => Ok(value::record(self.dialect, spec, &row)?),
            None => Err(StoreError::NotFound),
        }
    }

    /// Sets the given columns of one record and returns it as stored.
    pub async fn update(
        &self,
        spec: &ResourceSpec,
        id: &SqlValue,
        values: Vec<(&str, SqlValue)>,
    ) -> Result<Record, StoreError> {
        let (sql, args) = sql::update(spec, id.clone(), values);
        let row = self.bind(&sql, args).fetch_optional(&self.pool).await.map_err(|e| classify(spec, e))?;
        match row {
            Some(row) => Ok(value::record(self.dialect, spec, &row)?),
            None => Err(StoreError::NotFound),
        }
    }

    pub async fn delete(&self, spec: &ResourceSpec, id: &SqlValue) -> Result<(), StoreError> {
        let sql = format!("DELETE FROM {} WHERE \"id\" = $1", sql::ident(spec.name));
        let done = self.bind(&sql, vec![id.clone()]).execute(&self.pool).await.map_err(|e| classify(spec, e))?;
        if done.rows_affected() == 0 { Err(StoreError::NotFound) } else { Ok(()) }
    }

    /// Whether a record with this id exists in `table` (for ref checks).
    pub async fn exists(&self, table: &str, id: &SqlValue) -> Result<bool, StoreError> {
        let sql = format!("SELECT 1 FROM {} WHERE \"id\" = $1", sql::ident(table));
        Ok(self.bind(&sql, vec![id.clone()]).fetch_optional(&self.pool).await?.is_some())
    }

    /// One page of a list: the records and whether more follow.
    pub async fn list(&self, spec: &ResourceSpec, query: &ListQuery) -> Result<(Vec<Record>, bool), StoreError> {
        let (sql, args) = sql::select_page(self.dialect, spec, query);
        let rows = self.bind(&sql, args).fetch_all(&self.pool).await?;
        let mut records = rows.iter().map(|r| value::record(self.dialect, spec, r)).collect::<Result<Vec<_>, _>>()?;
        let more = records.len() > query.limit as usize;
        records.truncate(query.limit as usize);
        Ok((records, more))
    }

    /// The database's plan for a list query, one line per step (SQLite's `EXPLAIN QUERY
    /// PLAN`, PostgreSQL's `EXPLAIN`): to see which index serves a list.
    pub async fn explain_list(&self, spec: &ResourceSpec, query: &ListQuery) -> Result<Vec<String>, StoreError> {
        let (sql, args) = sql::select_page(self.dialect, spec, query);
        let explain = match self.dialect {
            Dialect::Sqlite => format!("EXPLAIN QUERY PLAN {sql}"),
            Dialect::Postgres => format!("EXPLAIN {sql}"),
        };
        let rows = self.bind(&explain, args).fetch_all(&self.pool).await?;
        let column = match self.dialect {
            Dialect::Sqlite => "detail",
            Dialect::Postgres => "QUERY PLAN",
        };
        Ok(rows.iter().filter_map(|r| sqlx::Row::try_get::<String, _>(r, column).ok()).collect())
    }

    fn bind<'q>(&self, sql: &str, args: Vec<SqlValue>) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
        let mut q = sqlx::query(AssertSqlSafe(sql.to_owned()));
        for a in args {
            q = a.bind(q);
        }
        q
    }
}

/// Turns constraint violations into the answers they mean (409, 400); the rest stays a
/// database fault.
fn classify(spec: &ResourceSpec, e: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(db) = &e {
        let message = db.message().to_owned();
        let constraint = db.constraint().unwrap_or_default().to_owned();
        let named = |suffix: &str| -> Option<String> {
            // PostgreSQL names constraints `<table>_<column>_key` / `_fkey`; SQLite puts
            // `<table>.<column>` in the message.
            let from_constraint = constraint
                .strip_prefix(&format!("{}_", spec.name))
                .and_then(|rest| rest.strip_suffix(suffix))
                .map(str::to_owned);
            from_constraint.or_else(|| {
                message
                    .split(&format!("{}.", spec.name))
                    .nth(1)
                    .map(|rest| rest.split([',', ' ']).next().unwrap_or("").to_owned())
            })
        };
        match db.kind() {
            sqlx::error::ErrorKind::UniqueViolation => {
                return StoreError::Unique { field: named("_key").unwrap_or_else(|| "id".into()) };
            }
            sqlx::error::ErrorKind::ForeignKeyViolation => {
                return StoreError::MissingRef { field: named("_fkey").unwrap_or_default() };
            }
            _ => {}
        }
    }
    StoreError::Database(e)
}
