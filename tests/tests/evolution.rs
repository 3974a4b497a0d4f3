//! Schema evolution, one case per change: each directory of `tests/fixtures/evolution/cases`
//! holds a schema `before.yaml` (the last generation) and `after.yaml`. The snapshot of a
//! case shows what `restgen diff` reports and what `restgen generate` does to the database:
//! the next migration in both dialects, or the refusal of a change that loses data (and the
//! migration `--accept-data-loss` writes instead).

use restgen_core::diagnostics::{self, Diagnostics};
use restgen_core::evolution::diff::{self, Class};
use restgen_core::evolution::storage::Storage;
use restgen_core::evolution::{Migrations, Record};
use restgen_core::model::Service;
use std::path::Path;

fn load(dir: &Path, name: &str) -> Service {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    match restgen_schema::load(name, &text) {
        Ok((service, _)) => service,
        Err(d) => panic!("{}/{name} is invalid:\n{}", dir.display(), diagnostics::render_short(&d.into_sorted())),
    }
}

/// What the next generation writes after `before`'s, for `after`.
fn migration(before: &Service, after: &Service, accept_loss: bool) -> (String, bool) {
    let first = Migrations::initial(before);
    let record = Record { storage: Storage::of(before), ..first.record };
    let mut diags = Diagnostics::new();
    let next = Migrations::next(&record, after, accept_loss, &mut diags);
    let refused = diags.has_errors();
    let mut out = diagnostics::render_short(&diags.into_sorted());
    if refused {
        return (out, true);
    }
    match &next.new {
        None if next.record == record => out.push_str("storage unchanged: no migration\n"),
        None => out.push_str("storage.json updated, nothing to migrate in the database\n"),
        Some((name, m)) => {
            out.push_str(&format!("{name}\n"));
            for step in &m.steps {
                out.push_str(&format!("  {step}\n"));
            }
            for risk in &m.risks {
                out.push_str(&format!("  note: {risk}\n"));
            }
            out.push_str(&format!("-- sqlite\n{}-- postgres\n{}", m.sqlite, m.postgres));
        }
    }
    (out, false)
}

#[test]
fn every_change_is_classified_and_migrated_or_refused() {
    let root = restgen_tests::root().join("tests/fixtures/evolution/cases");
    let mut cases: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    assert!(cases.len() >= 30, "at least 30 change pairs, found {}", cases.len());
    for dir in cases {
        let case = dir.file_name().unwrap().to_string_lossy().into_owned();
        let (before, after) = (load(&dir, "before.yaml"), load(&dir, "after.yaml"));
        let report = diff::diff(&before, &after);
        let (plan, refused) = migration(&before, &after, false);
        let mut text = format!(
            "# restgen diff\n{}\n# restgen generate\n{plan}",
            diff::render(&report, "before.yaml", "after.yaml")
        );
        if refused {
            text.push_str(&format!("\n# restgen generate --accept-data-loss\n{}", migration(&before, &after, true).0));
        }
        // The JSON report says the same as the one for people.
        let json: serde_json::Value = serde_json::from_str(&diff::render_json(&report)).unwrap();
        assert_eq!(json["breaking"], report.count(Class::Breaking), "{case}");
        assert_eq!(json["changes"].as_array().unwrap().len(), report.changes.len(), "{case}");
        insta::with_settings!({ snapshot_path => "snapshots/evolution", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(case, text);
        });
    }
}

/// The rules every case must keep, stated once: a change that refuses data already
/// stored is breaking, and nothing unchanged is reported.
#[test]
fn a_refused_change_is_a_breaking_one_and_no_change_is_no_report() {
    let root = restgen_tests::root().join("tests/fixtures/evolution/cases");
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let (before, after) = (load(&dir, "before.yaml"), load(&dir, "after.yaml"));
        let report = diff::diff(&before, &after);
        if migration(&before, &after, false).1 {
            assert!(report.count(Class::Breaking) > 0, "{}: refused by generate, yet not breaking", dir.display());
        }
        assert!(diff::diff(&after, &after).changes.is_empty(), "{}: a schema differs from itself", dir.display());
    }
}

/// Where a case's migrations run: a SQLite file, or a schema of its own on the PostgreSQL
/// server `RESTGEN_TEST_DATABASE_URL` names (`None` without one).
struct Database {
    url: String,
    sqlite: bool,
    _dir: tempfile::TempDir,
}

impl Database {
    async fn new(sqlite: bool, case: &str) -> Option<Database> {
        let dir = tempfile::tempdir().unwrap();
        if sqlite {
            let url = format!("sqlite://{}", dir.path().join("evolution.db").display());
            return Some(Database { url, sqlite, _dir: dir });
        }
        let base = std::env::var("RESTGEN_TEST_DATABASE_URL").ok()?;
        let schema = format!("t_evolution_{}_{}", std::process::id(), case.replace('-', "_"));
        let pool = sqlx::PgPool::connect(&base).await.expect("RESTGEN_TEST_DATABASE_URL reachable");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA \"{schema}\""))).execute(&pool).await.unwrap();
        pool.close().await;
        let sep = if base.contains('?') { '&' } else { '?' };
        Some(Database { url: format!("{base}{sep}options=-c%20search_path%3D{schema}"), sqlite, _dir: dir })
    }

    async fn run(&self, sql: String) -> Result<(), sqlx::Error> {
        let sql = sqlx::AssertSqlSafe(sql);
        if self.sqlite {
            let pool = sqlx::SqlitePool::connect(&self.url).await?;
            let done = sqlx::raw_sql(sql).execute(&pool).await.map(drop);
            pool.close().await;
            done
        } else {
            let pool = sqlx::PgPool::connect(&self.url).await?;
            let done = sqlx::raw_sql(sql).execute(&pool).await.map(drop);
            pool.close().await;
            done
        }
    }
}

/// One row in every table of `storage`, referenced tables first, each value of its
/// column's type, as SQL.
fn one_row_each(storage: &Storage, sqlite: bool) -> String {
    use restgen_core::model::{FieldKind, IdKind};
    let id_of = |table: &str| match storage.table(table).map(|t| t.id_kind()) {
        Some(IdKind::Integer) => "1".to_owned(),
        _ => format!("'00000000-0000-7000-8000-{:012}'", table.len()),
    };
    let mut done: Vec<&str> = Vec::new();
    let mut sql = String::new();
    while done.len() < storage.tables.len() {
        let ready = storage.tables.iter().find(|t| {
            !done.contains(&t.name.as_str())
                && t.columns.iter().all(|c| {
                    c.references.as_ref().is_none_or(|r| r.table == t.name || done.contains(&r.table.as_str()))
                })
        });
        let table = ready.expect("references form no cycle in the fixtures");
        let mut columns = vec!["\"id\"".to_owned()];
        let mut values = vec![id_of(&table.name)];
        for c in &table.columns {
            let value = match (c.kind(), &c.references) {
                (_, Some(r)) => id_of(&r.table),
                (FieldKind::Integer, _) => "1".into(),
                (FieldKind::Number, _) => "1.5".into(),
                (FieldKind::Boolean, _) => {
                    if sqlite {
                        "1".into()
                    } else {
                        "TRUE".into()
                    }
                }
                (FieldKind::Enum, _) => format!("'{}'", c.values[0]),
                (FieldKind::Json | FieldKind::Roles, _) => "'[]'".into(),
                (FieldKind::Date, _) => "'2026-11-25'".into(),
                (FieldKind::DateTime, _) => "'2026-11-25T12:00:00.000000Z'".into(),
                (FieldKind::Decimal, _) => "'1.50'".into(),
                _ => "'some text'".into(),
            };
            columns.push(format!("\"{}\"", c.name));
            values.push(value);
        }
        sql.push_str(&format!(
            "INSERT INTO \"{}\" ({}) VALUES ({});\n",
            table.name,
            columns.join(", "),
            values.join(", ")
        ));
        done.push(&table.name);
    }
    sql
}

/// The versions of the migrations applied.
async fn applied(db: &Database) -> Vec<i64> {
    let sql = "SELECT version FROM _sqlx_migrations WHERE success ORDER BY version";
    let rows: Vec<(i64,)> = if db.sqlite {
        let pool = sqlx::SqlitePool::connect(&db.url).await.unwrap();
        sqlx::query_as(sql).fetch_all(&pool).await.unwrap()
    } else {
        let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
        sqlx::query_as(sql).fetch_all(&pool).await.unwrap()
    };
    rows.into_iter().map(|(v,)| v).collect()
}

/// Every migration the planner writes runs on both databases over stored rows: the
/// first generation's tables, one row in each, then the next migration through the
/// runtime's migrator. A migration of a change `generate` accepts must apply and keep
/// every row, each table then holding every column the record says; one written only
/// with `--accept-data-loss` must apply, or fail and leave the database as it was.
#[tokio::test]
async fn every_migration_runs_on_both_databases_and_keeps_the_rows() {
    use restgen::store::{MigrationSpec, Store};
    let root = restgen_tests::root().join("tests/fixtures/evolution/cases");
    let mut cases: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    for sqlite in [true, false] {
        if !sqlite && std::env::var("RESTGEN_TEST_DATABASE_URL").is_err() {
            eprintln!("skipped on PostgreSQL: RESTGEN_TEST_DATABASE_URL is unset");
            continue;
        }
        for dir in &cases {
            let case = dir.file_name().unwrap().to_string_lossy().into_owned();
            let (before, after) = (load(dir, "before.yaml"), load(dir, "after.yaml"));
            let first = Migrations::initial(&before);
            let (_, initial) = first.new.clone().unwrap();
            let mut diags = Diagnostics::new();
            let strict = Migrations::next(&first.record, &after, false, &mut diags);
            let refused = diags.has_errors();
            let next =
                if refused { Migrations::next(&first.record, &after, true, &mut Diagnostics::new()) } else { strict };
            let Some((name, migration)) = next.new else { continue };
            let db = Database::new(sqlite, &case).await.unwrap();
            let one = MigrationSpec {
                version: 1,
                description: "initial",
                sqlite: leak(initial.sqlite),
                postgres: leak(initial.postgres),
            };
            let two = MigrationSpec {
                version: 2,
                description: leak(restgen_core::evolution::description_of(&name)),
                sqlite: leak(migration.sqlite),
                postgres: leak(migration.postgres),
            };
            let store = Store::connect(&db.url).await.unwrap();
            store.migrate(std::slice::from_ref(&one)).await.unwrap_or_else(|e| panic!("{case}: 0001: {e}"));
            db.run(one_row_each(&first.record.storage, sqlite)).await.unwrap_or_else(|e| panic!("{case}: rows: {e}"));
            let outcome = store.migrate(&[one, two]).await;
            let where_ = if sqlite { "SQLite" } else { "PostgreSQL" };
            match outcome {
                Err(e) if refused => {
                    assert!(e.to_string().contains("rolled back"), "{case} on {where_}: {e}");
                    assert_eq!(applied(&db).await, [1], "{case} on {where_}: nothing of 0002 applied");
                }
                Err(e) => panic!("{case} on {where_}: {e}"),
                Ok(()) => {
                    assert_eq!(applied(&db).await, [1, 2], "{case} on {where_}");
                    for table in &next.record.storage.tables {
                        let columns: Vec<String> = table.columns.iter().map(|c| format!("\"{}\"", c.name)).collect();
                        let select = format!("SELECT \"id\", {} FROM \"{}\"", columns.join(", "), table.name);
                        db.run(select)
                            .await
                            .unwrap_or_else(|e| panic!("{case} on {where_}: `{}` as recorded: {e}", table.name));
                    }
                    if !refused {
                        for table in &next.record.storage.tables {
                            let renamed_from = after.resource(&table.name).and_then(|r| r.renamed_from.as_ref());
                            let existed = first.record.storage.table(&table.name).is_some()
                                || renamed_from.is_some_and(|from| first.record.storage.table(&from.value).is_some());
                            let expected = if existed { 1 } else { 0 };
                            assert_eq!(
                                count(&db, &table.name).await,
                                expected,
                                "{case} on {where_}: the rows of `{}`",
                                table.name
                            );
                        }
                    }
                }
            }
        }
    }
}

/// How many rows `table` holds.
async fn count(db: &Database, table: &str) -> i64 {
    let sql = sqlx::AssertSqlSafe(format!("SELECT count(*) FROM \"{table}\""));
    let row: (i64,) = if db.sqlite {
        let pool = sqlx::SqlitePool::connect(&db.url).await.unwrap();
        sqlx::query_as(sql).fetch_one(&pool).await.unwrap()
    } else {
        let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
        sqlx::query_as(sql).fetch_one(&pool).await.unwrap()
    };
    row.0
}
