//! Lists: one page of records under a query's filters, sorts and page, with whether more
//! follow, and the database's plan for it.

use super::lease::leased;
use super::sql;
use super::{Dialect, ListQuery, Record, Rows, Store, StoreError, bind};
use crate::spec::ResourceSpec;
use sqlx::Row;

impl Store {
    /// One page of a list: the records and whether more follow.
    pub async fn list(&self, spec: &ResourceSpec, query: &ListQuery) -> Result<(Vec<Record>, bool), StoreError> {
        let (rows, more) = self.list_rows(spec, query).await?;
        Ok((rows.records(spec)?, more))
    }

    /// One page of records as the driver read them, and whether more follow.
    pub(crate) async fn list_rows(&self, spec: &ResourceSpec, query: &ListQuery) -> Result<(Rows, bool), StoreError> {
        let (sql, args) = sql::select_page(self.dialect, spec, query);
        let limit = query.limit as usize;
        Ok(on_pool!(self, pool => {
            let mut rows = leased!(pool, c => bind(sql, args).fetch_all(c))?;
            let more = cut_to_limit(&mut rows, limit);
            (Rows::from(rows), more)
        }))
    }

    /// The database's plan for a list query, one line per step (SQLite's `EXPLAIN QUERY
    /// PLAN`, PostgreSQL's `EXPLAIN`): to see which index serves a list.
    pub async fn explain_list(&self, spec: &ResourceSpec, query: &ListQuery) -> Result<Vec<String>, StoreError> {
        let (sql, args) = sql::select_page(self.dialect, spec, query);
        let (explain, column) = match self.dialect {
            Dialect::Sqlite => (format!("EXPLAIN QUERY PLAN {sql}"), "detail"),
            Dialect::Postgres => (format!("EXPLAIN {sql}"), "QUERY PLAN"),
        };
        on_pool!(self, pool => {
            let rows = leased!(pool, c => bind(explain, args).fetch_all(c))?;
            Ok(rows.iter().filter_map(|r| r.try_get::<String, _>(column).ok()).collect())
        })
    }
}

/// Whether `rows` (a page read with one row more) go beyond `limit`; they are cut to it.
fn cut_to_limit<T>(rows: &mut Vec<T>, limit: usize) -> bool {
    let more = rows.len() > limit;
    rows.truncate(limit);
    more
}
