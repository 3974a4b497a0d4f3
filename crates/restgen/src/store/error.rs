//! What can go wrong in the store, and what each means for the request: a record missing,
//! a value taken, a ref to nothing, a write refused for now (the database busy, or out of
//! reach), or a fault. A write the database ended for another transaction's sake is run
//! again a few times ([`retried`]) before it is a refusal. Each becomes the problem a
//! client reads (`From<StoreError> for Problem`).

use super::{Dialect, Record, SqlValue, Statement};
use crate::problem::{FieldError, Problem};
use crate::spec::ResourceSpec;
use sqlx::SqlStr;
use std::time::Duration;

/// A migration that could not be applied, naming it.
#[derive(Debug)]
pub struct MigrateError(pub String);

impl std::fmt::Display for MigrateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MigrateError {}

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
    /// The record cannot go: another refers to it by a required ref (`RESTRICT`), named
    /// `<resource>.<field>` where the database or a look at the referring tables tells.
    Referenced {
        by: Option<String>,
    },
    /// A conditional write found the record otherwise than its condition asks: here is
    /// the record as it stands.
    Changed(Box<Record>),
    /// A SQLite write was given no turn to write within the pool's timeout: the writes
    /// before it held the database's write lock, or waited for another process's.
    NoTurn,
    Database(sqlx::Error),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::NotFound => f.write_str("no such record"),
            StoreError::Unique { field } => write!(f, "`{field}` is taken"),
            StoreError::MissingRef { field } => write!(f, "`{field}` refers to a missing record"),
            StoreError::Referenced { by: Some(by) } => write!(f, "`{by}` still refers to the record"),
            StoreError::Referenced { by: None } => f.write_str("another record still refers to the record"),
            StoreError::Changed(_) => f.write_str("the record changed"),
            StoreError::NoTurn => {
                f.write_str("no turn to write within the pool timeout: the writes queued before it held SQLite's lock")
            }
            StoreError::Database(e) => write!(f, "database: {e}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// Whether `error` is PostgreSQL's, whose SQLSTATE classes say more than SQLite's codes.
#[cfg(feature = "postgres")]
fn from_postgres(error: &dyn sqlx::error::DatabaseError) -> bool {
    error.try_downcast_ref::<sqlx::postgres::PgDatabaseError>().is_some()
}

#[cfg(not(feature = "postgres"))]
fn from_postgres(_: &dyn sqlx::error::DatabaseError) -> bool {
    false
}

impl StoreError {
    /// Whether the database turned the request away for now and may take it shortly: a
    /// lock waited for in vain (SQLite's busy or locked, PostgreSQL's `lock_not_available`),
    /// a transaction PostgreSQL ended so that others could go on (`serialization_failure`,
    /// `deadlock_detected`), no pooled connection free within the pool's wait, or the
    /// database out of reach ([`StoreError::is_unreachable`]).
    pub fn is_transient(&self) -> bool {
        if self.is_unreachable() {
            return true;
        }
        match self {
            StoreError::NoTurn | StoreError::Database(sqlx::Error::PoolTimedOut) => true,
            StoreError::Database(sqlx::Error::Database(db)) => {
                let code = db.code();
                let code = code.as_deref().unwrap_or_default();
                #[cfg(feature = "sqlite")]
                if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
                    // Extended codes (`SQLITE_BUSY_SNAPSHOT`, ...) carry the primary one in
                    // their low byte.
                    let primary = code.parse::<std::ffi::c_int>().map_or(0, |c| c & 0xff);
                    return primary == libsqlite3_sys::SQLITE_BUSY || primary == libsqlite3_sys::SQLITE_LOCKED;
                }
                matches!(code, "40001" | "40P01" | "55P03")
            }
            _ => false,
        }
    }

    /// Whether the database cannot be reached now: the connection refused, reset or cut
    /// (a restart, a failover, the network), or PostgreSQL ending sessions or refusing new
    /// ones as it shuts down, starts, or runs out of connections (SQLSTATE class 08,
    /// `57P01`-`57P03`, `53300`), or a primary turned read-only replica in a failover
    /// (`25006`). Nothing the request did: it may be sent again.
    pub fn is_unreachable(&self) -> bool {
        match self {
            StoreError::Database(
                sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed,
            ) => true,
            StoreError::Database(sqlx::Error::Database(db)) if from_postgres(db.as_ref()) => {
                let code = db.code();
                let code = code.as_deref().unwrap_or_default();
                code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "53300" | "25006")
            }
            _ => false,
        }
    }

    /// Whether the database ended the transaction so that another could go on
    /// (`serialization_failure`, `deadlock_detected`): nothing of it was written, and the
    /// same transaction run again may well pass.
    fn is_retryable(&self) -> bool {
        match self {
            StoreError::Database(sqlx::Error::Database(db)) => matches!(db.code().as_deref(), Some("40001" | "40P01")),
            _ => false,
        }
    }
}

/// How many times a write the database ended for another's sake is run again before the
/// request is answered 503.
const WRITE_RETRIES: u32 = 3;

/// `once(sql, args)`, and on PostgreSQL again, up to [`WRITE_RETRIES`] times a few
/// milliseconds apart, while the database ends it for another transaction's sake
/// ([`StoreError::is_retryable`]). SQLite writes one at a time, so nothing is ended there,
/// and nothing is kept for a retry.
pub(super) async fn retried<T, Once, Run>(
    dialect: Dialect,
    sql: impl Statement,
    args: Vec<SqlValue>,
    mut once: Once,
) -> Result<T, StoreError>
where
    Once: FnMut(SqlStr, Vec<SqlValue>) -> Run,
    Run: Future<Output = Result<T, StoreError>>,
{
    let (mut sql, mut args) = (sql.text(), args);
    if dialect == Dialect::Sqlite {
        return once(sql, args).await;
    }
    let mut tries = 0;
    loop {
        let again = (tries < WRITE_RETRIES).then(|| (sql.clone(), args.clone()));
        match once(sql, args).await {
            Err(e) if e.is_retryable() && again.is_some() => {
                tries += 1;
                tracing::debug!(error = %e, tries, "a write ended for another transaction's sake: run again");
                tokio::time::sleep(retry_wait(tries)).await;
                (sql, args) = again.expect("kept for a retry");
            }
            done => return done,
        }
    }
}

/// The wait before the `n`th retry of a write (from 1): a few milliseconds, doubled each
/// time and varied, so that the transactions that collided do not collide again.
fn retry_wait(n: u32) -> Duration {
    let mut byte = [0u8; 1];
    let _ = getrandom::fill(&mut byte);
    Duration::from_micros((2_000u64 << n.min(8)) + u64::from(byte[0]) * 20)
}

/// The answer to a database that turned the request away for now ([`StoreError::is_transient`]).
///
/// [`StoreError::is_transient`]: StoreError::is_transient
fn busy(e: &StoreError) -> Problem {
    if e.is_unreachable() {
        tracing::warn!(error = %e, "database unreachable: answered 503");
        return Problem::unavailable("the database cannot be reached now; retry shortly");
    }
    tracing::warn!(error = %e, "database busy: answered 503");
    Problem::unavailable("the database is busy; retry shortly")
}

impl From<StoreError> for Problem {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => Problem::not_found("no such record"),
            StoreError::Changed(_) => Problem::precondition_failed(None),
            StoreError::Unique { field } => {
                let mut p = Problem::conflict(format!("a record with this `{field}` exists already"));
                p.errors.push(FieldError { field, message: "is taken".into() });
                p
            }
            StoreError::MissingRef { field } => Problem::validation(vec![FieldError {
                field,
                message: "refers to a record that does not exist".into(),
            }]),
            StoreError::Referenced { by } => Problem::conflict(match by {
                Some(by) => {
                    format!("a record still refers to this one by `{by}`: delete it, or point it elsewhere, first")
                }
                None => "another record still refers to this one: delete it, or point it elsewhere, first".into(),
            }),
            StoreError::NoTurn => busy(&e),
            StoreError::Database(_) if e.is_transient() => busy(&e),
            StoreError::Database(e) => {
                tracing::error!(error = %e, "database error");
                Problem::internal()
            }
        }
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::Database(e)
    }
}

/// Turns constraint violations into the answers they mean (409, 400); the rest stays a
/// database fault.
pub(super) fn classify(spec: &ResourceSpec, e: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(db) = &e {
        let message = db.message().to_owned();
        let constraint = db.constraint().unwrap_or_default().to_owned();
        let named = |suffix: &str| -> Option<String> {
            // PostgreSQL names constraints `<table>_<column>_key` / `_fkey`; SQLite puts
            // `<table>.<column>` in the message, the owner's first where the value is
            // unique per owner (`<table>.owner_id, <table>.<column>`): the last is the field.
            let from_constraint = constraint
                .strip_prefix(&format!("{}_", spec.name))
                .and_then(|rest| rest.strip_suffix(suffix))
                .map(str::to_owned);
            from_constraint.or_else(|| {
                let prefix = format!("{}.", spec.name);
                message.contains(&prefix).then(|| {
                    message.rsplit(&prefix).next().unwrap_or("").split([',', ' ']).next().unwrap_or("").to_owned()
                })
            })
        };
        match db.kind() {
            sqlx::error::ErrorKind::UniqueViolation => {
                return StoreError::Unique { field: named("_key").unwrap_or_else(|| "id".into()) };
            }
            // PostgreSQL names the referring table, which is another's when a delete
            // would leave it referring to nothing.
            sqlx::error::ErrorKind::ForeignKeyViolation => match db.table() {
                Some(table) if table != spec.name => {
                    let field = constraint.strip_prefix(&format!("{table}_")).and_then(|c| c.strip_suffix("_fkey"));
                    return StoreError::Referenced { by: field.map(|f| format!("{table}.{f}")) };
                }
                _ => return StoreError::MissingRef { field: named("_fkey").unwrap_or_default() },
            },
            // SQLite's `RESTRICT` refuses a delete as a trigger would
            // (SQLITE_CONSTRAINT_TRIGGER), naming nothing.
            _ if db.code().as_deref() == Some("1811") && message.contains("FOREIGN KEY") => {
                return StoreError::Referenced { by: None };
            }
            _ => {}
        }
    }
    StoreError::Database(e)
}
