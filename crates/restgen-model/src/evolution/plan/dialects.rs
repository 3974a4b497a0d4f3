//! A table change as each dialect writes it: PostgreSQL alters in place, SQLite alters
//! what `ALTER TABLE` can and rebuilds the table for the rest.

use super::change::{canonical_clashes, canonicalized, same_reference};
use super::*;

impl Planner<'_> {
    pub(super) fn postgres_change(&mut self, change: &TableChange) {
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

    pub(super) fn sqlite_change(&mut self, change: &TableChange) {
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
