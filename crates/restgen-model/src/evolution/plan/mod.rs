//! The next migration: what changed in storage between the last generation's record and
//! the new model, as SQL for each dialect, and the refusal of every change that would lose
//! or reject data already stored.
//!
//! PostgreSQL alters in place. SQLite alters what `ALTER TABLE` can (rename a table or
//! column, add a column that may be null or has a constant default, indexes) and rebuilds
//! a table for the rest: a new table of the new shape, the rows copied, the old one
//! dropped and the new one renamed into its place, then `foreign_key_check` inside the
//! same transaction (the runtime turns foreign keys off around SQLite migrations, as that
//! procedure needs, so dropping a table cascades nothing).

mod change;
mod dialects;

use super::ddl::{self, Dialect, Index, q};
use super::pairing::{Partner, partner};
use super::storage::{Column, Storage, Table};
use crate::diagnostics::{Diagnostics, codes};
use crate::model::*;
use crate::origin::Origin;
use std::collections::{BTreeMap, BTreeSet};

/// A migration to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migration {
    /// What it does, for its file name: `add_order_note`.
    pub slug: String,
    /// One line per change, for people.
    pub steps: Vec<String>,
    /// How it may still fail at start (a unique constraint on values rows share).
    pub risks: Vec<String>,
    pub sqlite: String,
    pub postgres: String,
}

/// What the migration does in one dialect, in the order it must happen.
#[derive(Default)]
struct Phases {
    renames: String,
    drops: String,
    column_drops: String,
    alters: String,
    rebuilds: String,
    creates: String,
    constraints: String,
    indexes: String,
    foreign_keys: String,
    table_drops: String,
    checks: String,
}

impl Phases {
    fn finish(self) -> String {
        [
            self.renames,
            self.drops,
            self.column_drops,
            self.alters,
            self.rebuilds,
            self.creates,
            self.constraints,
            self.indexes,
            self.foreign_keys,
            self.table_drops,
            self.checks,
        ]
        .concat()
    }
}

/// How a column's values change type on the way to the new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cast {
    /// The values stand as they are.
    Keep,
    /// Integers become floating point numbers.
    Real,
    /// Integers become decimal text.
    Text,
}

/// Whether a column of `old`'s type may become `new`'s with every stored value still one
/// of the new type, and how its values convert; `None` when some may not.
fn widening(old: &Column, new: &Column, renamed: &BTreeMap<String, String>) -> Option<Cast> {
    use FieldKind::*;
    let (from, to) = (old.kind(), new.kind());
    if from == to {
        return match from {
            Enum => old.values.iter().all(|v| new.values.contains(v)).then_some(Cast::Keep),
            Ref => {
                let target = |c: &Column| c.references.as_ref().map(|r| r.table.clone());
                let old_target = target(old).map(|t| renamed.get(&t).cloned().unwrap_or(t));
                (old_target == target(new)).then_some(Cast::Keep)
            }
            _ => Some(Cast::Keep),
        };
    }
    match (from, to) {
        (Integer, Number) => Some(Cast::Real),
        (Integer, Decimal) => Some(Cast::Text),
        (String | Email | Url | Enum | Uuid, Text) => Some(Cast::Keep),
        (Email | Url | Enum | Uuid, String) => Some(Cast::Keep),
        _ => None,
    }
}

/// The value that fills a column for rows stored before it had to hold one: its default,
/// `[]` for roles, the migration's time for timestamps. `constant` is false for a time.
struct Fill {
    sql: String,
    constant: bool,
}

fn fill(column: &Column, field: Option<&Field>, dialect: Dialect) -> Option<Fill> {
    let now = |kind: FieldKind| {
        let sql = match (kind, dialect) {
            (FieldKind::Date, Dialect::Sqlite) => "strftime('%Y-%m-%d', 'now')".to_owned(),
            (_, Dialect::Sqlite) => "(strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000Z')".to_owned(),
            (FieldKind::Date, Dialect::Postgres) => "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD')".to_owned(),
            (_, Dialect::Postgres) => {
                "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')".to_owned()
            }
        };
        Some(Fill { sql, constant: false })
    };
    let Some(field) = field else {
        return if matches!(column.name.as_str(), "created_at" | "updated_at") {
            now(FieldKind::DateTime)
        } else {
            None
        };
    };
    let literal = |sql: String| Some(Fill { sql, constant: true });
    match field.default.as_ref().map(|d| &d.value) {
        Some(DefaultValue::Now) => now(field.ty.value.kind()),
        Some(DefaultValue::Value(v)) => match field.ty.value.kind() {
            FieldKind::Boolean => literal(match (v.as_bool() == Some(true), dialect) {
                (true, Dialect::Sqlite) => "1".into(),
                (false, Dialect::Sqlite) => "0".into(),
                (true, Dialect::Postgres) => "TRUE".into(),
                (false, Dialect::Postgres) => "FALSE".into(),
            }),
            FieldKind::Integer | FieldKind::Number => literal(v.to_string()),
            FieldKind::Json | FieldKind::Roles => literal(text(&v.to_string())),
            _ => literal(text(v.as_str().map_or_else(|| v.to_string(), str::to_owned).as_str())),
        },
        None if field.ty.value == FieldType::Roles => literal(text("[]")),
        None => None,
    }
}

/// A SQL string literal.
fn text(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// One column of the new table and the column of the old one it continues.
struct Continued<'a> {
    old: &'a Column,
    new: &'a Column,
    cast: Cast,
}

/// What changes in one table that exists, as both dialects render it.
struct TableChange<'a> {
    resource: &'a Resource,
    old: &'a Table,
    new: &'a Table,
    continued: Vec<Continued<'a>>,
    dropped: Vec<&'a Column>,
    added: Vec<&'a Column>,
    /// Indexes to drop (by their old names) and to create.
    gone: Vec<Index>,
    fresh: Vec<Index>,
    /// Resources renamed, old name to new.
    renamed: &'a BTreeMap<String, String>,
}

/// Plans the migration from `before` to `service`'s storage. Changes that would lose or
/// reject data are errors in `diags` unless `accept_loss`; `None` when storage is the same.
pub fn plan(before: &Storage, service: &Service, accept_loss: bool, diags: &mut Diagnostics) -> Option<Migration> {
    let after = Storage::of(service);
    let mut planner = Planner {
        before,
        after: &after,
        accept_loss,
        diags,
        steps: Vec::new(),
        slugs: Vec::new(),
        risks: Vec::new(),
        sqlite: Phases::default(),
        postgres: Phases::default(),
        rebuilt: false,
    };
    planner.run(service);
    let Planner { steps, slugs, risks, sqlite, postgres, rebuilt, .. } = planner;
    if steps.is_empty() {
        return None;
    }
    let mut sqlite = sqlite;
    if rebuilt {
        // Inside the migration's transaction, so broken references roll it all back.
        sqlite.checks.push_str(
            "CREATE TEMP TABLE \"restgen_foreign_key_check\" (\"violations\" INTEGER NOT NULL \
             CONSTRAINT \"a foreign key no longer holds after the migration\" CHECK (\"violations\" = 0));\n\
             INSERT INTO \"restgen_foreign_key_check\" SELECT count(*) FROM pragma_foreign_key_check;\n\
             DROP TABLE \"restgen_foreign_key_check\";\n",
        );
    }
    // Named after its weightiest change, the first of those in schema order.
    let first = slugs.iter().min_by_key(|(rank, _)| *rank).map(|(_, slug)| slug.clone()).unwrap_or_default();
    let slug = match slugs.len() {
        1 => first,
        n => format!("{first}_and_{}_more", n - 1),
    };
    Some(Migration { slug, steps, risks, sqlite: sqlite.finish(), postgres: postgres.finish() })
}

struct Planner<'a> {
    before: &'a Storage,
    after: &'a Storage,
    accept_loss: bool,
    diags: &'a mut Diagnostics,
    steps: Vec<String>,
    slugs: Vec<(u8, String)>,
    risks: Vec<String>,
    sqlite: Phases,
    postgres: Phases,
    /// Whether a SQLite table was rebuilt or dropped, so references are checked.
    rebuilt: bool,
}

impl Planner<'_> {
    /// A change, for people; `rank` orders what names the migration (tables before
    /// columns before indexes).
    fn step(&mut self, rank: u8, text: String, slug: String) {
        self.steps.push(text);
        self.slugs.push((rank, slug));
    }

    /// A change that loses data: an error unless the user accepted the loss.
    fn loss(&mut self, origin: &Origin, message: String, hint: String) -> bool {
        if self.accept_loss {
            return true;
        }
        self.diags
            .error(codes::DATA_LOSS, origin, message)
            .hint(format!("{hint}, or run `restgen generate` with `--accept-data-loss`"));
        false
    }

    fn run(&mut self, service: &Service) {
        let (before, after) = (self.before, self.after);
        // Pair every table first: references follow a renamed table.
        let mut pairs: Vec<(&Resource, &Table, Option<&Table>)> = Vec::new();
        let mut renamed: BTreeMap<String, String> = BTreeMap::new();
        for (r, table) in service.resources.iter().zip(&after.tables) {
            let p = partner(
                "resource",
                &r.name.value,
                r.renamed_from.as_ref(),
                &|n| before.table(n).is_some(),
                &|n| service.resource(n).is_some(),
                self.diags,
            );
            let old = p.old_name(&r.name.value).and_then(|n| before.table(n));
            if let (Partner::Renamed(from), Some(_)) = (&p, old) {
                renamed.insert(from.clone(), r.name.value.clone());
            }
            pairs.push((r, table, old));
        }
        for (r, table, old) in &pairs {
            match old {
                None => self.create(table),
                Some(old) => self.change(r, old, table, &renamed),
            }
        }
        let continued: BTreeSet<&str> = pairs.iter().filter_map(|(_, _, o)| o.map(|o| o.name.as_str())).collect();
        for old in before.tables.iter().filter(|t| !continued.contains(t.name.as_str())) {
            let message = format!("resource `{}` is gone from the schema, and its table holds its records", old.name);
            let hint = format!(
                "keep the resource, or add `renamed_from: {}` to the resource that takes over its records",
                old.name
            );
            if self.loss(&service.origin, message, hint) {
                self.sqlite.table_drops.push_str(&format!("DROP TABLE {};\n", q(&old.name)));
                // With the foreign keys of other dropped tables and columns.
                self.postgres.table_drops.push_str(&format!("DROP TABLE {} CASCADE;\n", q(&old.name)));
                self.rebuilt = true;
                self.step(2, format!("drop table `{}`", old.name), format!("drop_{}", old.name));
            }
        }
        self.api_keys(service, &renamed);
    }

    fn create(&mut self, table: &Table) {
        for (dialect, p) in [(Dialect::Sqlite, &mut self.sqlite), (Dialect::Postgres, &mut self.postgres)] {
            let mut foreign_keys = Vec::new();
            ddl::create_table(self.after, table, &table.name, dialect, &mut p.creates, &mut foreign_keys);
            ddl::create_indexes(table, dialect, &mut p.indexes);
            p.foreign_keys.extend(foreign_keys);
        }
        self.step(0, format!("create table `{}`", table.name), format!("add_{}", table.name));
    }

    fn api_keys(&mut self, service: &Service, renamed: &BTreeMap<String, String>) {
        let old = self.before.api_keys.as_ref().map(|p| renamed.get(p).unwrap_or(p));
        let new = self.after.api_keys.as_ref();
        if old == new {
            return;
        }
        if old.is_some() {
            let origin = service.auth.as_ref().map_or(&service.origin, |a| &a.origin).clone();
            let message =
                "API keys are no longer issued to the same accounts, and their table holds the keys issued".to_owned();
            if !self.loss(&origin, message, "keep `api_key` among the auth schemes and the principal".into()) {
                return;
            }
            for p in [&mut self.sqlite, &mut self.postgres] {
                p.table_drops.push_str("DROP TABLE \"restgen_api_key\";\n");
            }
            self.step(2, "drop table `restgen_api_key`".into(), "drop_api_keys".into());
        }
        if let Some(principal) = new {
            for (dialect, p) in [(Dialect::Sqlite, &mut self.sqlite), (Dialect::Postgres, &mut self.postgres)] {
                ddl::api_key_table(self.after, principal, dialect, &mut p.creates);
            }
            self.step(0, "create table `restgen_api_key`".into(), "add_api_keys".into());
        }
    }
}
