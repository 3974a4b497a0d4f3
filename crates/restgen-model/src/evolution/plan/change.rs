//! The changes to a table that exists: each column added, dropped, renamed, widened,
//! filled or refused, its indexes and references, judged before any SQL is written.

use super::*;

impl Planner<'_> {
    /// The changes to a table that exists, `old` as it stands and `new` as it must become.
    pub(super) fn change(&mut self, r: &Resource, old: &Table, new: &Table, renamed: &BTreeMap<String, String>) {
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
}

/// Whether a column's stored e-mail addresses are put in canonical form now: it holds
/// addresses, and the last generation wrote them as they were sent.
pub(super) fn canonicalized(c: &Continued) -> bool {
    c.new.canonical && !c.old.canonical && c.old.kind() == FieldKind::Email
}

/// A statement that fails, naming them, where stored addresses of `column` (the unique
/// `new`, as the table names it now) are one address once lower-cased: among one owner's
/// records when the constraint is per owner. Nothing where the column is not unique.
/// PostgreSQL raises the error; SQLite, which has no way to raise one outside a trigger,
/// is handed the list as a JSON path, and its error quotes the path.
pub(super) fn canonical_clashes(table: &str, new: &Column, column: &str, d: Dialect) -> String {
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
pub(super) fn same_reference(old: &Column, new: &Column, renamed: &BTreeMap<String, String>) -> bool {
    match (&old.references, &new.references) {
        (None, None) => true,
        (Some(o), Some(n)) => renamed.get(&o.table).unwrap_or(&o.table) == &n.table && o.on_delete == n.on_delete,
        _ => false,
    }
}

pub(super) fn describe_type(c: &Column) -> String {
    match c.kind() {
        FieldKind::Enum => format!("enum [{}]", c.values.join(", ")),
        FieldKind::Ref => format!("ref to `{}`", c.references.as_ref().map_or("?", |r| r.table.as_str())),
        _ => c.kind.clone(),
    }
}
