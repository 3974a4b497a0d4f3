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

    /// The changes to a table that exists, `old` as it stands and `new` as it must become.
    fn change(&mut self, r: &Resource, old: &Table, new: &Table, renamed: &BTreeMap<String, String>) {
        let (on, nn) = (old.name.as_str(), new.name.as_str());
        if old.id != new.id {
            let message = format!(
                "`{nn}` ids change from {} to {}: its rows and every reference to them would not convert",
                old.id, new.id
            );
            let origin = r.origin.clone();
            if self.loss(&origin, message, "keep the id type; a new resource may take the other".into()) {
                // Accepted: the table starts again, empty (dropped before it is created).
                self.sqlite.drops.push_str(&format!("DROP TABLE {};\n", q(on)));
                self.postgres.drops.push_str(&format!("DROP TABLE {} CASCADE;\n", q(on)));
                self.step(2, format!("drop table `{on}`"), format!("drop_{on}"));
                self.rebuilt = true;
                self.create(new);
            }
            return;
        }
        if on != nn {
            for p in [&mut self.sqlite, &mut self.postgres] {
                p.renames.push_str(&format!("ALTER TABLE {} RENAME TO {};\n", q(on), q(nn)));
            }
            self.postgres.renames.push_str(&format!(
                "ALTER TABLE {} RENAME CONSTRAINT {} TO {};\n",
                q(nn),
                q(&format!("{on}_pkey")),
                q(&format!("{nn}_pkey"))
            ));
            if new.id_kind() == IdKind::Integer {
                self.postgres.renames.push_str(&format!(
                    "ALTER SEQUENCE {} RENAME TO {};\n",
                    q(&format!("{on}_id_seq")),
                    q(&format!("{nn}_id_seq"))
                ));
            }
            self.step(1, format!("rename table `{on}` to `{nn}`"), format!("rename_{on}_to_{nn}"));
        }

        // Pair the columns.
        let mut continued: Vec<Continued> = Vec::new();
        let mut added: Vec<&Column> = Vec::new();
        for c in &new.columns {
            let field = r.field(&c.name);
            let p = match field {
                Some(f) => partner(
                    &format!("field of `{nn}`:"),
                    &c.name,
                    f.renamed_from.as_ref(),
                    &|n| old.column(n).is_some(),
                    &|n| new.column(n).is_some(),
                    self.diags,
                ),
                None if old.column(&c.name).is_some() => Partner::Same,
                None => Partner::New,
            };
            match p.old_name(&c.name).and_then(|n| old.column(n)) {
                None => added.push(c),
                Some(o) => match widening(o, c, renamed) {
                    Some(cast) => continued.push(Continued { old: o, new: c, cast }),
                    None => {
                        let origin = field.map_or(&r.origin, |f| &f.ty.origin).clone();
                        let what = describe_type(o);
                        let message = format!(
                            "`{nn}.{}` changes from {what} to {}: values already stored may not be one",
                            c.name,
                            describe_type(c)
                        );
                        let hint = "keep the type (or widen it: integer to number or decimal, string to text, a new enum value), or add a field of the new type beside it".to_owned();
                        if self.accept_loss {
                            // Accepted: the column starts again, its values gone.
                            added.push(c);
                        } else {
                            self.diags.error(codes::NARROWING_CHANGE, &origin, message).hint(format!(
                                "{hint}, or run `restgen generate` with `--accept-data-loss` to drop its values"
                            ));
                        }
                    }
                },
            }
        }
        let kept: BTreeSet<&str> = continued.iter().map(|c| c.old.name.as_str()).collect();
        let dropped: Vec<&Column> = old.columns.iter().filter(|c| !kept.contains(c.name.as_str())).collect();

        // Refuse what loses data.
        let mut refused = false;
        for c in &dropped {
            let (message, hint) = match c.name.as_str() {
                "owner_id" => (
                    format!("`{nn}` no longer has an owner, and `owner_id` holds whose each record is"),
                    "keep `owner`".to_owned(),
                ),
                "created_at" | "updated_at" => (
                    format!("`{nn}` no longer keeps timestamps, and `{}` holds them", c.name),
                    "keep `timestamps: true`".to_owned(),
                ),
                name if new.column(name).is_some() => continue, // narrowed and accepted: reported above
                name => (
                    format!("field `{name}` of `{nn}` is gone from the schema, and its column holds data"),
                    format!("keep the field, or add `renamed_from: {name}` to the field that takes over its values"),
                ),
            };
            refused |= !self.loss(&r.name.origin, message, hint);
        }
        for c in &added {
            if c.nullable || fill(c, r.field(&c.name), Dialect::Sqlite).is_some() {
                continue;
            }
            let (origin, message) = match r.field(&c.name) {
                Some(f) => (
                    f.required.origin.clone(),
                    format!("new field `{nn}.{}` must hold a value, and the rows stored have none", c.name),
                ),
                None => (
                    r.owner.as_ref().map_or(&r.origin, |o| &o.origin).clone(),
                    format!("`{nn}` now has an owner, and the records stored have none"),
                ),
            };
            if !self.accept_loss {
                self.diags.error(codes::NOTHING_TO_FILL, &origin, message).hint(
                    "give it a `default` to fill the rows stored, or let it be absent (not `required`); with `--accept-data-loss` the migration fails at start unless the table is empty",
                );
                refused = true;
            }
        }
        for c in continued.iter().filter(|c| c.old.nullable && !c.new.nullable) {
            let field = r.field(&c.new.name);
            if fill(c.new, field, Dialect::Sqlite).is_none() && !self.accept_loss {
                let origin = field.map_or(&r.origin, |f| &f.required.origin).clone();
                self.diags
                    .error(codes::NOTHING_TO_FILL, &origin, format!("`{nn}.{}` must now hold a value, and stored rows may hold none", c.new.name))
                    .hint("give it a `default` to fill the rows without one, or keep it optional; with `--accept-data-loss` the migration fails at start if a row has none");
                refused = true;
            }
        }
        if refused {
            return;
        }

        // What changes, for people.
        for c in &continued {
            if c.old.name != c.new.name {
                self.step(
                    4,
                    format!("rename column `{nn}.{}` to `{}`", c.old.name, c.new.name),
                    format!("rename_{nn}_{}_to_{}", c.old.name, c.new.name),
                );
            }
            let mut what = Vec::new();
            if c.cast != Cast::Keep {
                what.push(format!("type {} to {}", c.old.kind, c.new.kind));
            }
            if c.old.nullable != c.new.nullable {
                what.push(if c.new.nullable { "may be null".into() } else { "not null".into() });
            }
            if c.old.uniqueness() != c.new.uniqueness() {
                what.push(match c.new.uniqueness() {
                    None => "no longer unique".into(),
                    Some(true) => "unique per owner".into(),
                    Some(false) if c.old.unique => "unique across owners".into(),
                    Some(false) => "unique".into(),
                });
                // Per owner after table-wide only lets in more: nothing stored can break it.
                if c.new.unique && !(c.old.unique && c.new.per_owner) {
                    self.risks.push(format!(
                        "`{nn}.{}` becomes unique: the migration fails at start, changing nothing, if stored rows share a value",
                        c.new.name
                    ));
                }
            }
            if canonicalized(c) {
                what.push("e-mail addresses in canonical form".into());
                if c.new.unique {
                    self.risks.push(format!(
                        "`{nn}.{}` holds addresses in canonical form: the migration fails at start, changing nothing and \
                         naming them, if stored addresses differ only in case{}",
                        c.new.name,
                        if c.new.per_owner { " within one owner's records" } else { "" }
                    ));
                }
            }
            if !same_reference(c.old, c.new, renamed) && c.cast == Cast::Keep && c.old.kind == c.new.kind {
                what.push("foreign key".into());
            }
            if !what.is_empty() {
                self.step(
                    6,
                    format!("alter column `{nn}.{}`: {}", c.new.name, what.join(", ")),
                    format!("alter_{nn}_{}", c.new.name),
                );
            }
        }
        for c in &dropped {
            self.step(5, format!("drop column `{nn}.{}`", c.name), format!("drop_{nn}_{}", c.name));
        }
        for c in &added {
            self.step(3, format!("add column `{nn}.{}`", c.name), format!("add_{nn}_{}", c.name));
            if c.unique {
                self.risks.push(format!(
                    "`{nn}.{}` is unique: the migration fails at start, changing nothing, if stored rows would share a value",
                    c.name
                ));
            }
        }

        // Indexes: an old one stays when nothing about it changed.
        let dropped_names: BTreeSet<&str> = dropped.iter().map(|c| c.name.as_str()).collect();
        let old_indexes: Vec<Index> = old
            .indexes
            .iter()
            .filter(|c| !dropped_names.contains(c.as_str()))
            .filter_map(|c| Index::of(old, c))
            .collect();
        let new_indexes: Vec<Index> = new.indexes.iter().filter_map(|c| Index::of(new, c)).collect();
        let gone: Vec<Index> = old_indexes.iter().filter(|i| !new_indexes.contains(i)).cloned().collect();
        let fresh: Vec<Index> = new_indexes.iter().filter(|i| !old_indexes.contains(i)).cloned().collect();
        // For people, an index is new or gone by the column it is on, whatever renames did.
        let new_name_of = |c: &str| continued.iter().find(|k| k.old.name == c).map(|k| k.new.name.as_str());
        let had: BTreeSet<&str> = old.indexes.iter().filter_map(|c| new_name_of(c)).collect();
        for c in new.indexes.iter().filter(|c| !had.contains(c.as_str())) {
            self.step(7, format!("index `{nn}.{c}`"), format!("index_{nn}_{c}"));
        }
        for c in had.iter().filter(|c| !new.indexes.iter().any(|n| n == *c)) {
            self.step(8, format!("drop the index of `{nn}.{c}`"), format!("unindex_{nn}_{c}"));
        }

        let change = TableChange { resource: r, old, new, continued, dropped, added, gone, fresh, renamed };
        self.postgres_change(&change);
        self.sqlite_change(&change);
    }

    fn postgres_change(&mut self, change: &TableChange) {
        let TableChange { resource: r, old, new, continued, dropped, added, gone, fresh, renamed } = change;
        let d = Dialect::Postgres;
        let (on, nn) = (old.name.as_str(), new.name.as_str());
        let p = &mut self.postgres;
        let t = q(nn);
        for c in continued.iter().filter(|c| c.old.name != c.new.name) {
            p.renames.push_str(&format!("ALTER TABLE {t} RENAME COLUMN {} TO {};\n", q(&c.old.name), q(&c.new.name)));
        }
        for i in gone {
            p.drops.push_str(&format!("DROP INDEX IF EXISTS {};\n", q(&i.name)));
        }
        for c in continued {
            let (oc, nc) = (c.old.name.as_str(), c.new.name.as_str());
            let rename_constraint = |p: &mut Phases, old_name: String, new_name: String| {
                if old_name != new_name {
                    p.renames.push_str(&format!(
                        "ALTER TABLE {t} RENAME CONSTRAINT {} TO {};\n",
                        q(&old_name),
                        q(&new_name)
                    ));
                }
            };
            match (c.old.uniqueness(), c.new.uniqueness()) {
                (Some(was), Some(is)) if was == is => {
                    rename_constraint(p, ddl::unique_name(on, oc), ddl::unique_name(nn, nc))
                }
                (was, is) => {
                    if was.is_some() {
                        p.drops
                            .push_str(&format!("ALTER TABLE {t} DROP CONSTRAINT {};\n", q(&ddl::unique_name(on, oc))));
                    }
                    if is.is_some() {
                        p.constraints.push_str(&format!(
                            "ALTER TABLE {t} ADD CONSTRAINT {} UNIQUE ({});\n",
                            q(&ddl::unique_name(nn, nc)),
                            c.new.unique_columns()
                        ));
                    }
                }
            }
            if same_reference(c.old, c.new, renamed) {
                if c.old.references.is_some() {
                    rename_constraint(p, ddl::foreign_key_name(on, oc), ddl::foreign_key_name(nn, nc));
                }
            } else {
                if c.old.references.is_some() {
                    p.drops
                        .push_str(&format!("ALTER TABLE {t} DROP CONSTRAINT {};\n", q(&ddl::foreign_key_name(on, oc))));
                }
                p.foreign_keys.extend(ddl::add_foreign_key(nn, c.new));
            }
            let column = q(nc);
            match c.cast {
                Cast::Keep => {}
                Cast::Real => p.alters.push_str(&format!(
                    "ALTER TABLE {t} ALTER COLUMN {column} TYPE DOUBLE PRECISION USING {column}::DOUBLE PRECISION;\n"
                )),
                Cast::Text => p
                    .alters
                    .push_str(&format!("ALTER TABLE {t} ALTER COLUMN {column} TYPE TEXT USING {column}::TEXT;\n")),
            }
            match (c.old.nullable, c.new.nullable) {
                (false, true) => p.alters.push_str(&format!("ALTER TABLE {t} ALTER COLUMN {column} DROP NOT NULL;\n")),
                (true, false) => {
                    if let Some(f) = fill(c.new, r.field(nc), d) {
                        p.alters.push_str(&format!("UPDATE {t} SET {column} = {} WHERE {column} IS NULL;\n", f.sql));
                    }
                    p.alters.push_str(&format!("ALTER TABLE {t} ALTER COLUMN {column} SET NOT NULL;\n"));
                }
                _ => {}
            }
            if canonicalized(c) {
                // After the old constraint is dropped (`drops`), before a new one is added.
                p.alters.push_str(&canonical_clashes(nn, c.new, nc, d));
                p.alters.push_str(&format!(
                    "UPDATE {t} SET {column} = lower({column}) WHERE {column} <> lower({column});\n"
                ));
            }
        }
        for c in dropped {
            p.column_drops.push_str(&format!("ALTER TABLE {t} DROP COLUMN {};\n", q(&c.name)));
        }
        for c in added {
            let def = ddl::column_def(self.after, c, d);
            match fill(c, r.field(&c.name), d).filter(|_| !c.nullable) {
                Some(f) => {
                    // The default fills the rows stored; new rows always carry the value.
                    p.alters.push_str(&format!("ALTER TABLE {t} ADD COLUMN {def} DEFAULT {};\n", f.sql));
                    p.alters.push_str(&format!("ALTER TABLE {t} ALTER COLUMN {} DROP DEFAULT;\n", q(&c.name)));
                }
                None => p.alters.push_str(&format!("ALTER TABLE {t} ADD COLUMN {def};\n")),
            }
            if c.unique {
                p.constraints.push_str(&format!(
                    "ALTER TABLE {t} ADD CONSTRAINT {} UNIQUE ({});\n",
                    q(&ddl::unique_name(nn, &c.name)),
                    c.unique_columns()
                ));
            }
            p.foreign_keys.extend(ddl::add_foreign_key(nn, c));
        }
        for i in fresh {
            p.indexes.push_str(&i.create(d));
        }
    }

    fn sqlite_change(&mut self, change: &TableChange) {
        let TableChange { resource: r, new, continued, dropped, added, gone, fresh, renamed, .. } = change;
        let d = Dialect::Sqlite;
        let nn = new.name.as_str();
        let t = q(nn);
        let simple_add = |c: &Column| {
            !c.unique
                && c.references.is_none()
                && (c.nullable || fill(c, r.field(&c.name), d).is_some_and(|f| f.constant))
        };
        let rebuild = !dropped.is_empty()
            || added.iter().any(|c| !simple_add(c))
            || continued.iter().any(|c| {
                c.cast != Cast::Keep
                    || c.old.nullable != c.new.nullable
                    || c.old.uniqueness() != c.new.uniqueness()
                    || !same_reference(c.old, c.new, renamed)
            });
        let p = &mut self.sqlite;
        // Stored addresses that become one in canonical form are named before anything
        // changes; the rename, if any, has happened unless the table is rebuilt.
        for c in continued.iter().filter(|c| canonicalized(c)) {
            let column = if rebuild { &c.old.name } else { &c.new.name };
            p.alters.push_str(&canonical_clashes(nn, c.new, column, d));
        }
        if !rebuild {
            for c in continued.iter().filter(|c| c.old.name != c.new.name) {
                p.renames.push_str(&format!(
                    "ALTER TABLE {t} RENAME COLUMN {} TO {};\n",
                    q(&c.old.name),
                    q(&c.new.name)
                ));
            }
            for c in continued.iter().filter(|c| canonicalized(c)) {
                let column = q(&c.new.name);
                p.alters.push_str(&format!(
                    "UPDATE {t} SET {column} = lower({column}) WHERE {column} <> lower({column});\n"
                ));
            }
            for c in added {
                let def = ddl::column_def(self.after, c, d);
                match fill(c, r.field(&c.name), d).filter(|_| !c.nullable) {
                    // SQLite keeps the default on the column; the service always writes one.
                    Some(f) => p.alters.push_str(&format!("ALTER TABLE {t} ADD COLUMN {def} DEFAULT {};\n", f.sql)),
                    None => p.alters.push_str(&format!("ALTER TABLE {t} ADD COLUMN {def};\n")),
                }
            }
            for i in gone {
                p.drops.push_str(&format!("DROP INDEX IF EXISTS {};\n", q(&i.name)));
            }
            for i in fresh {
                p.indexes.push_str(&i.create(d));
            }
            return;
        }
        // Rebuild: the table of the new shape under another name, the rows copied over,
        // the old table dropped (its indexes with it) and the new one put in its place.
        self.rebuilt = true;
        let staging = format!("restgen_rebuild_{nn}");
        let mut foreign_keys = Vec::new();
        ddl::create_table(self.after, new, &staging, d, &mut p.rebuilds, &mut foreign_keys);
        let mut targets = vec![q("id")];
        let mut sources = vec![q("id")];
        for c in &new.columns {
            let source = match continued.iter().find(|k| k.new.name == c.name) {
                Some(k) => {
                    let column = q(&k.old.name);
                    let value = match k.cast {
                        Cast::Keep if canonicalized(k) => format!("lower({column})"),
                        Cast::Keep => column,
                        Cast::Real => format!("CAST({column} AS REAL)"),
                        Cast::Text => format!("CAST({column} AS TEXT)"),
                    };
                    match fill(c, r.field(&c.name), d).filter(|_| k.old.nullable && !c.nullable) {
                        Some(f) => format!("COALESCE({value}, {})", f.sql),
                        None => value,
                    }
                }
                None => fill(c, r.field(&c.name), d).map_or_else(|| "NULL".to_owned(), |f| f.sql),
            };
            targets.push(q(&c.name));
            sources.push(source);
        }
        p.rebuilds.push_str(&format!(
            "INSERT INTO {} ({}) SELECT {} FROM {t};\nDROP TABLE {t};\nALTER TABLE {} RENAME TO {t};\n",
            q(&staging),
            targets.join(", "),
            sources.join(", "),
            q(&staging),
        ));
        ddl::create_indexes(new, d, &mut p.rebuilds);
    }
}

/// Whether a column's stored e-mail addresses are put in canonical form now: it holds
/// addresses, and the last generation wrote them as they were sent.
fn canonicalized(c: &Continued) -> bool {
    c.new.canonical && !c.old.canonical && c.old.kind() == FieldKind::Email
}

/// A statement that fails, naming them, where stored addresses of `column` (the unique
/// `new`, as the table names it now) are one address once lower-cased: among one owner's
/// records when the constraint is per owner. Nothing where the column is not unique.
/// PostgreSQL raises the error; SQLite, which has no way to raise one outside a trigger,
/// is handed the list as a JSON path, and its error quotes the path.
fn canonical_clashes(table: &str, new: &Column, column: &str, d: Dialect) -> String {
    if !new.unique {
        return String::new();
    }
    let (t, c) = (q(table), q(column));
    let group = if new.per_owner { format!("{}, lower({c})", q("owner_id")) } else { format!("lower({c})") };
    let what = format!("addresses of {table}.{} that are one address in canonical form: ", new.name);
    match d {
        Dialect::Postgres => format!(
            "DO $$ DECLARE clashes TEXT; BEGIN\n\
             SELECT string_agg(one, '; ') INTO clashes FROM (SELECT lower({c}) || ' (ids ' || string_agg({id}::TEXT, ', ' ORDER BY {id}::TEXT) || ')' AS one \
             FROM {t} WHERE {c} IS NOT NULL GROUP BY {group} HAVING count(*) > 1) AS clash;\n\
             IF clashes IS NOT NULL THEN RAISE EXCEPTION '%', {what} || clashes; END IF;\n\
             END $$;\n",
            id = q("id"),
            what = text(&what),
        ),
        Dialect::Sqlite => format!(
            "SELECT json_extract('{{}}', {what} || group_concat(one, '; ')) FROM (SELECT lower({c}) || ' (ids ' || group_concat({id}, ', ') || ')' AS one \
             FROM {t} WHERE {c} IS NOT NULL GROUP BY {group} HAVING count(*) > 1) HAVING count(*) > 0;\n",
            id = q("id"),
            what = text(&what),
        ),
    }
}

/// Whether two columns reference the same table with the same action (through a rename).
fn same_reference(old: &Column, new: &Column, renamed: &BTreeMap<String, String>) -> bool {
    match (&old.references, &new.references) {
        (None, None) => true,
        (Some(o), Some(n)) => renamed.get(&o.table).unwrap_or(&o.table) == &n.table && o.on_delete == n.on_delete,
        _ => false,
    }
}

fn describe_type(c: &Column) -> String {
    match c.kind() {
        FieldKind::Enum => format!("enum [{}]", c.values.join(", ")),
        FieldKind::Ref => format!("ref to `{}`", c.references.as_ref().map_or("?", |r| r.table.as_str())),
        _ => c.kind.clone(),
    }
}
