//! Migrations: a generated service's files applied in order, each in a transaction, by
//! one instance at a time; a derived service's next migration planned at start against
//! the record the database keeps; then the runtime's own tables.

use super::{Dialect, MigrateError, Pool, Store, leased};
use sqlx::migrate::{Migration, MigrationType, Migrator};

/// One migration, in both dialects.
#[derive(Debug)]
pub struct MigrationSpec {
    pub version: i64,
    pub description: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

/// The migration lock's key: two 32-bit halves, the first restgen's, the second the
/// schema's, so services on other schemas of one database do not wait for each other.
#[cfg(feature = "postgres")]
const LOCK: &str = "SELECT pg_advisory_lock(hashtext('restgen migrate'), hashtext(current_schema()))";
#[cfg(feature = "postgres")]
const UNLOCK: &str = "SELECT pg_advisory_unlock(hashtext('restgen migrate'), hashtext(current_schema()))";

/// How many migrations the database on `$conn` has applied (none before its first: sqlx
/// makes its table with the first run).
macro_rules! applied {
    ($conn:ident) => {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM \"_sqlx_migrations\"")
            .fetch_one(&mut *$conn)
            .await
            .unwrap_or(0)
    };
}

impl Store {
    /// Applies the migrations not yet applied, in order, each in a transaction, then
    /// creates the runtime's own tables that are missing. A migration that fails rolls
    /// back whole, and the error names it.
    ///
    /// On SQLite, foreign keys are off while migrations run (on the one connection that
    /// runs them), as rebuilding a table needs: dropping the old table must not cascade to
    /// the rows that refer to it. A rebuilding migration checks the references itself
    /// before it commits.
    ///
    /// Instances started together on one PostgreSQL take turns, holding a session-level
    /// advisory lock on a connection of its own (so it goes if the process dies): the first
    /// migrates, the others find it done.
    pub async fn migrate(&self, migrations: &[MigrationSpec]) -> Result<(), MigrateError> {
        self.exclusively(self.migrate_unlocked(migrations)).await
    }

    async fn migrate_unlocked(&self, migrations: &[MigrationSpec]) -> Result<(), MigrateError> {
        self.run_migrations(migrations, false).await?;
        self.create_runtime_tables().await.map_err(|e| MigrateError(e.to_string()))
    }

    /// Runs `work` holding, on PostgreSQL, a session lock that every instance of a service
    /// on the same schema takes before it changes tables. sqlx's migrator locks around
    /// the migrations alone; the runtime's own tables and a derived service's record are
    /// made after it, and PostgreSQL's `CREATE TABLE IF NOT EXISTS` run at once by two
    /// sessions fails in one of them. The lock is held by a connection of its own, so it
    /// goes with the connection if this process dies.
    async fn exclusively<T>(&self, work: impl Future<Output = Result<T, MigrateError>>) -> Result<T, MigrateError> {
        #[cfg(feature = "postgres")]
        if let Some(pool) = self.postgres() {
            return locked(pool, work).await;
        }
        work.await
    }

    /// Applies `migrations` not yet applied; with `only_these`, migrations applied before
    /// and not among them are not asked for (a derived service hands over its new one).
    async fn run_migrations(&self, migrations: &[MigrationSpec], only_these: bool) -> Result<(), MigrateError> {
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
                    sqlx::SqlStr::from_static(restgen_model::migration::body(sql)),
                    false,
                )
            })
            .collect();
        let mut migrator = Migrator::with_migrations(list);
        migrator.set_ignore_missing(only_these);
        let name = |version: i64| {
            migrations
                .iter()
                .find(|m| m.version == version)
                .map_or(format!("{version:04}"), |m| restgen_model::evolution::stem(m.version, m.description))
        };
        let named = |e: sqlx::migrate::MigrateError| match &e {
            sqlx::migrate::MigrateError::ExecuteMigration(inner, version) => MigrateError(format!(
                "migration {} failed and was rolled back, nothing of it applied: {inner}",
                name(*version)
            )),
            sqlx::migrate::MigrateError::VersionMismatch(version) => MigrateError(format!(
                "migration {} was applied to this database with other contents: a migration never changes once \
                 applied. Restore it as it was (a generated service's migrations/ from version control); a service \
                 written with the derive macros cannot change its tables yet (docs/evolution.md)",
                name(*version)
            )),
            sqlx::migrate::MigrateError::VersionMissing(version) => MigrateError(format!(
                "this database has migration {version:04}, which this service does not carry: a newer version of \
                 the service migrated it, and migrations only go forward"
            )),
            _ => MigrateError(e.to_string()),
        };
        match &self.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let mut conn = pool.acquire().await.map_err(|e| MigrateError(e.to_string()))?;
                let before = applied!(conn);
                sqlx::query("PRAGMA foreign_keys = OFF")
                    .execute(&mut *conn)
                    .await
                    .map_err(|e| MigrateError(e.to_string()))?;
                let ran = migrator.run(&mut *conn).await.map_err(named);
                let after = applied!(conn);
                // Whatever happened, the connection goes back to the pool enforcing them, or
                // is closed.
                let on = sqlx::query("PRAGMA foreign_keys = ON").execute(&mut *conn).await;
                match on {
                    Ok(_) => conn.settle(),
                    Err(_) => conn.discard(),
                }
                ran?;
                on.map_err(|e| MigrateError(e.to_string()))?;
                self.count_migrations(before, after);
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let mut conn = pool.acquire().await.map_err(|e| MigrateError(e.to_string()))?;
                let before = applied!(conn);
                if let Err(e) = migrator.run(&mut *conn).await {
                    // A failed run keeps its advisory lock on the connection: closing the
                    // connection lets another instance migrate.
                    conn.discard();
                    return Err(named(e));
                }
                self.count_migrations(before, applied!(conn));
                conn.settle();
            }
        }
        Ok(())
    }

    /// How many migrations this instance applied to its database, at start.
    pub(crate) fn migrations_applied(&self) -> u64 {
        self.signals.migrations_applied.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts, for the metrics, the migrations applied since `before` of them were.
    fn count_migrations(&self, before: i64, after: i64) {
        let applied = u64::try_from(after - before).unwrap_or(0);
        self.signals.migrations_applied.fetch_add(applied, std::sync::atomic::Ordering::Relaxed);
    }

    /// A derived service's migrations: the first (`first`, its tables as its derives
    /// make them) when the database has no record yet, then, whenever `model`'s storage
    /// differs from the record the database keeps, the migration `restgen generate` would
    /// plan for it, with the new record in the same transaction. A change that loses data
    /// is refused, naming what and what to do; nothing is applied then.
    pub async fn evolve(
        &self,
        first: &[MigrationSpec],
        model: &restgen_model::model::Service,
    ) -> Result<(), MigrateError> {
        self.exclusively(self.evolve_unlocked(first, model)).await
    }

    async fn evolve_unlocked(
        &self,
        first: &[MigrationSpec],
        model: &restgen_model::model::Service,
    ) -> Result<(), MigrateError> {
        use restgen_model::evolution::{plan, storage::Storage};
        let failed = |e: sqlx::Error| MigrateError(e.to_string());
        let create = "CREATE TABLE IF NOT EXISTS \"restgen_storage\" (\"version\" BIGINT PRIMARY KEY NOT NULL, \"record\" TEXT NOT NULL)";
        on_pool!(self, pool => async { leased!(pool, c => sqlx::query(create).execute(c)).map(drop) }.await)
            .map_err(failed)?;
        let latest = "SELECT \"version\", \"record\" FROM \"restgen_storage\" ORDER BY \"version\" DESC LIMIT 1";
        let last: Option<(i64, String)> =
            on_pool!(self, pool => async { leased!(pool, c => sqlx::query_as(latest).fetch_optional(c)) }.await)
                .map_err(failed)?;
        let storage = Storage::of(model);
        let record = |s: &Storage| serde_json::to_string(s).expect("storage serializes");
        let Some((version, text)) = last else {
            // The first start, or a database made before the record was kept: its first
            // migration must be the one these derives make.
            self.migrate_unlocked(first).await?;
            let insert = "INSERT INTO \"restgen_storage\" (\"version\", \"record\") VALUES ($1, $2)";
            let version = first.last().map_or(1, |m| m.version);
            let stored = record(&storage);
            on_pool!(self, pool => async {
                leased!(pool, c => sqlx::query(insert).bind(version).bind(&stored).execute(c)).map(drop)
            }.await)
            .map_err(failed)?;
            return Ok(());
        };
        let before: Storage = serde_json::from_str(&text)
            .map_err(|e| MigrateError(format!("the storage record of migration {version} does not read: {e}")))?;
        let mut diags = restgen_model::diagnostics::Diagnostics::new();
        let planned = plan::plan(&before, model, false, &mut diags);
        if diags.has_errors() {
            let reasons: Vec<String> = diags
                .into_sorted()
                .into_iter()
                .filter(|d| d.severity == restgen_model::diagnostics::Severity::Error)
                .map(|d| format!("{} [{}]{}", d.message, d.code.id, d.hint.map_or(String::new(), |h| format!("; {h}"))))
                .collect();
            return Err(MigrateError(format!(
                "the model changes what the database holds in ways no migration keeps: {}",
                reasons.join("; ")
            )));
        }
        let Some(migration) = planned else {
            self.create_runtime_tables().await.map_err(failed)?;
            return Ok(());
        };
        let next = version + 1;
        let keep = format!(
            "INSERT INTO \"restgen_storage\" (\"version\", \"record\") VALUES ({next}, '{}');\n",
            record(&storage).replace('\'', "''")
        );
        let sql = match self.dialect {
            Dialect::Sqlite => migration.sqlite,
            Dialect::Postgres => migration.postgres,
        };
        let stem = restgen_model::evolution::stem(next, &migration.slug);
        let description: &'static str = Box::leak(restgen_model::evolution::description_of(&stem).into_boxed_str());
        let sql: &'static str = Box::leak(format!("{sql}{keep}").into_boxed_str());
        // Only the new migration is handed over: those applied before are the record's.
        let spec = [MigrationSpec { version: next, description, sqlite: sql, postgres: sql }];
        self.run_migrations(&spec, true).await?;
        self.create_runtime_tables().await.map_err(failed)
    }
}

/// Runs `work` holding the migration lock on a connection of `pool` of its own
/// ([`Store::exclusively`]).
#[cfg(feature = "postgres")]
async fn locked<T>(
    pool: &super::PgConnections,
    work: impl Future<Output = Result<T, MigrateError>>,
) -> Result<T, MigrateError> {
    let failed = |e: sqlx::Error| MigrateError(format!("cannot take the migration lock: {e}"));
    let mut holder = pool.acquire().await.map_err(failed)?;
    sqlx::query(LOCK).execute(&mut *holder).await.map_err(failed)?;
    let done = work.await;
    match sqlx::query(UNLOCK).execute(&mut *holder).await {
        Ok(_) => holder.settle(),
        // Closed rather than returned to the pool still holding the lock.
        Err(_) => holder.discard(),
    }
    done
}
