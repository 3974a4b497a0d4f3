//! What a service keeps in its database, as plain data: tables, columns, constraints and
//! indexes, without the API around them. A generation records it (`migrations/storage.json`)
//! so the next one can tell what changed in the database and migrate it.

use crate::model::*;
use crate::words::Word;
use serde::{Deserialize, Serialize};

/// Every table of a service, in the model's order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Storage {
    pub tables: Vec<Table>,
    /// The table whose accounts own API keys (`restgen_api_key`), when the service issues them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_keys: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub name: String,
    /// `uuid` or `integer`.
    pub id: String,
    /// Every column but `id`, in table order: `owner_id`, the fields, the timestamps.
    pub columns: Vec<Column>,
    /// The columns lists filter and sort by (each index ends in the id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    /// The field's type by name (`owner_id` is a `ref`, the timestamps `datetime`).
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub nullable: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub unique: bool,
    /// The unique constraint is on the owner and the value (`owner_id`, column): unique
    /// per owner. A record of an earlier generation without it was table-wide.
    #[serde(default, skip_serializing_if = "is_false")]
    pub per_owner: bool,
    /// The column holds e-mail addresses in canonical form (lower case; the service writes
    /// them so). A record of an earlier generation without it holds them as they were sent.
    #[serde(default, skip_serializing_if = "is_false")]
    pub canonical: bool,
    /// An enum's values: a value a row may hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<Reference>,
}

/// A foreign key to another table's id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    pub table: String,
    pub on_delete: OnDelete,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnDelete {
    /// Deleting an account deletes what it owns.
    Cascade,
    /// An optional ref is cleared when its target goes.
    SetNull,
    /// A required ref keeps its target from being deleted (409).
    Restrict,
}

impl OnDelete {
    pub fn sql(self) -> &'static str {
        match self {
            OnDelete::Cascade => "CASCADE",
            OnDelete::SetNull => "SET NULL",
            OnDelete::Restrict => "RESTRICT",
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Storage {
    /// What `service` keeps in its database.
    pub fn of(service: &Service) -> Storage {
        let api_keys = service
            .auth
            .as_ref()
            .filter(|a| a.has_scheme(Scheme::ApiKey))
            .and_then(|_| service.principal())
            .map(|p| p.name.value.clone());
        Storage { tables: service.resources.iter().map(Table::of).collect(), api_keys }
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}

impl Table {
    /// The table of `resource`.
    pub fn of(r: &Resource) -> Table {
        let mut columns = Vec::new();
        if let Some(owner) = &r.owner {
            columns.push(Column {
                name: "owner_id".into(),
                kind: FieldKind::Ref.word().into(),
                nullable: false,
                unique: false,
                per_owner: false,
                canonical: false,
                values: Vec::new(),
                references: Some(Reference { table: owner.value.clone(), on_delete: OnDelete::Cascade }),
            });
        }
        for f in &r.fields {
            let references = match &f.ty.value {
                FieldType::Ref { to } => Some(Reference {
                    table: to.value.clone(),
                    on_delete: if f.optional() { OnDelete::SetNull } else { OnDelete::Restrict },
                }),
                _ => None,
            };
            let values = match &f.ty.value {
                FieldType::Enum { values } => values.iter().map(|v| v.value.clone()).collect(),
                _ => Vec::new(),
            };
            columns.push(Column {
                name: f.name.value.clone(),
                kind: f.ty.value.keyword().into(),
                nullable: f.optional(),
                unique: f.unique.value,
                per_owner: f.unique.value && r.owner.is_some() && !f.unique_global,
                canonical: f.ty.value == FieldType::Email,
                values,
                references,
            });
        }
        if r.timestamps {
            for name in ["created_at", "updated_at"] {
                columns.push(Column {
                    name: name.into(),
                    kind: FieldKind::DateTime.word().into(),
                    nullable: false,
                    unique: false,
                    per_owner: false,
                    canonical: false,
                    values: Vec::new(),
                    references: None,
                });
            }
        }
        // What lists filter and sort by, and the parent link nested lists select by.
        let mut indexes = Vec::new();
        if r.owner.is_some() {
            indexes.push("owner_id".to_owned());
        }
        if r.timestamps {
            indexes.push("created_at".to_owned());
        }
        for f in &r.fields {
            let is_parent_link =
                matches!(&f.ty.value, FieldType::Ref { to } if r.nested_under.iter().any(|p| p.value == to.value));
            if f.filter.value || f.sort.value || is_parent_link {
                indexes.push(f.name.value.clone());
            }
        }
        Table { name: r.name.value.clone(), id: r.id.word().into(), columns, indexes }
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    pub fn id_kind(&self) -> IdKind {
        IdKind::from_word(&self.id).unwrap_or(IdKind::DEFAULT)
    }
}

impl Column {
    pub fn kind(&self) -> FieldKind {
        FieldKind::from_word(&self.kind).unwrap_or(FieldKind::String)
    }

    /// Its unique constraint, if it has one: whether it is per owner.
    pub fn uniqueness(&self) -> Option<bool> {
        self.unique.then_some(self.per_owner)
    }

    /// The columns its unique constraint is on, quoted: `"owner_id", "email"` per owner.
    pub fn unique_columns(&self) -> String {
        let column = format!("\"{}\"", self.name.replace('"', "\"\""));
        if self.per_owner { format!("\"owner_id\", {column}") } else { column }
    }
}
