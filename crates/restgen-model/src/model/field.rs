//! A field of a resource: its type, bounds, and who may set it.

use super::Gate;
use super::{AccessRule, WriteOp};
use crate::origin::{Located, Origin};
use crate::words::words;

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Field {
    pub name: Located<String>,
    /// The field's name in the schema generated before (`renamed_from`): its column is
    /// renamed, its data kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<Located<String>>,
    pub description: Option<String>,
    pub ty: Located<FieldType>,
    pub required: Located<bool>,
    pub nullable: Located<bool>,
    pub default: Option<Located<DefaultValue>>,
    pub settable: Located<Settable>,
    /// Never in a response (always true for `password`).
    pub write_only: bool,
    /// Rejected from every input.
    pub read_only: bool,
    /// `unique`: on an owned resource unique per owner, unless `unique_global`.
    pub unique: Located<bool>,
    /// `unique: global`: unique across the whole table, owners or not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unique_global: bool,
    pub min: Option<Located<f64>>,
    pub max: Option<Located<f64>>,
    pub min_length: Option<Located<u64>>,
    pub max_length: Option<Located<u64>>,
    pub pattern: Option<Located<String>>,
    pub filter: Located<bool>,
    pub sort: Located<bool>,
    pub gate: Gate,
    /// Field-level access (`read`): who may see the field, of those who may read the
    /// record; `None` is all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<Vec<Located<AccessRule>>>,
    /// Field-level access (`write`): who may set the field where it is settable, of those
    /// who may write the record; `None` is all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<Vec<Located<AccessRule>>>,
    #[serde(skip)]
    pub origin: Origin,
}

impl Field {
    /// The longest text accepted, in characters: the declared `max_length`, else the
    /// type's default (`string` 255, `text` 65,535, `email` 254, `url` 2,048, `password`
    /// 1,024), raised to `min_length` if that is higher. `None` for other types.
    pub fn effective_max_length(&self) -> Option<u64> {
        if let Some(max) = &self.max_length {
            return Some(max.value);
        }
        let default = match self.ty.value {
            FieldType::String => 255,
            FieldType::Text => 65_535,
            FieldType::Email => 254,
            FieldType::Url => 2_048,
            FieldType::Password => 1_024,
            _ => return None,
        };
        Some(self.min_length.as_ref().map_or(default, |min| min.value.max(default)))
    }

    /// Whether a stored record may hold no value: the field is nullable, or optional with
    /// no default to fill it (a `roles` list defaults to empty).
    pub fn optional(&self) -> bool {
        self.nullable.value || (!self.required.value && self.default.is_none() && self.ty.value != FieldType::Roles)
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum FieldType {
    String,
    Text,
    Integer,
    Number,
    /// Exact decimal, a JSON string on the wire.
    Decimal,
    Boolean,
    Uuid,
    Email,
    Url,
    Date,
    DateTime,
    Enum {
        values: Vec<Located<String>>,
    },
    Json,
    /// Hashed with Argon2id, write-only.
    Password,
    Ref {
        to: Located<String>,
    },
    /// A list of declared roles.
    Roles,
}

words! {
    /// The type of a field by name, without what `enum` and `ref` carry.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
    pub enum FieldKind {
        String = "string",
        Text = "text",
        Integer = "integer",
        Number = "number",
        Decimal = "decimal",
        Boolean = "boolean",
        Uuid = "uuid",
        Email = "email",
        Url = "url",
        Date = "date",
        DateTime = "datetime",
        Enum = "enum",
        Json = "json",
        Password = "password",
        Ref = "ref",
        Roles = "roles",
    }
}

impl FieldType {
    /// The type by name.
    pub fn kind(&self) -> FieldKind {
        match self {
            FieldType::String => FieldKind::String,
            FieldType::Text => FieldKind::Text,
            FieldType::Integer => FieldKind::Integer,
            FieldType::Number => FieldKind::Number,
            FieldType::Decimal => FieldKind::Decimal,
            FieldType::Boolean => FieldKind::Boolean,
            FieldType::Uuid => FieldKind::Uuid,
            FieldType::Email => FieldKind::Email,
            FieldType::Url => FieldKind::Url,
            FieldType::Date => FieldKind::Date,
            FieldType::DateTime => FieldKind::DateTime,
            FieldType::Enum { .. } => FieldKind::Enum,
            FieldType::Json => FieldKind::Json,
            FieldType::Password => FieldKind::Password,
            FieldType::Ref { .. } => FieldKind::Ref,
            FieldType::Roles => FieldKind::Roles,
        }
    }

    /// The type of `kind`, for kinds that carry nothing (all but `enum` and `ref`).
    pub fn of_kind(kind: FieldKind) -> Option<FieldType> {
        Some(match kind {
            FieldKind::String => FieldType::String,
            FieldKind::Text => FieldType::Text,
            FieldKind::Integer => FieldType::Integer,
            FieldKind::Number => FieldType::Number,
            FieldKind::Decimal => FieldType::Decimal,
            FieldKind::Boolean => FieldType::Boolean,
            FieldKind::Uuid => FieldType::Uuid,
            FieldKind::Email => FieldType::Email,
            FieldKind::Url => FieldType::Url,
            FieldKind::Date => FieldType::Date,
            FieldKind::DateTime => FieldType::DateTime,
            FieldKind::Json => FieldType::Json,
            FieldKind::Password => FieldType::Password,
            FieldKind::Roles => FieldType::Roles,
            FieldKind::Enum | FieldKind::Ref => return None,
        })
    }

    /// The name as written in a schema.
    pub fn keyword(&self) -> &'static str {
        self.kind().word()
    }

    /// Types whose values are text and so take `min_length`, `max_length` and `pattern`.
    pub fn is_textual(&self) -> bool {
        matches!(self, FieldType::String | FieldType::Text | FieldType::Email | FieldType::Url | FieldType::Password)
    }

    /// Types that take `min` and `max`.
    pub fn is_numeric(&self) -> bool {
        matches!(self, FieldType::Integer | FieldType::Number | FieldType::Decimal)
    }

    /// Types usable as `?name=value` list filters.
    pub fn filterable(&self) -> bool {
        matches!(
            self,
            FieldType::Enum { .. }
                | FieldType::String
                | FieldType::Email
                | FieldType::Url
                | FieldType::Uuid
                | FieldType::Integer
                | FieldType::Boolean
                | FieldType::Ref { .. }
                | FieldType::Date
                | FieldType::DateTime
        )
    }

    /// Types with a total order a list can be sorted by.
    pub fn sortable(&self) -> bool {
        matches!(
            self,
            FieldType::String
                | FieldType::Email
                | FieldType::Url
                | FieldType::Uuid
                | FieldType::Integer
                | FieldType::Number
                | FieldType::Decimal
                | FieldType::Date
                | FieldType::DateTime
                | FieldType::Enum { .. }
                | FieldType::Boolean
        )
    }

    /// The enum values, for `enum` fields.
    pub fn values(&self) -> &[Located<String>] {
        match self {
            FieldType::Enum { values } => values,
            _ => &[],
        }
    }
}

/// The value a field takes at create when the client sends none. `V` is how the literal is
/// held: a JSON value in the model, its JSON text in the runtime's static specs.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum DefaultValue<V = serde_json::Value> {
    /// The current date or time (date and datetime fields).
    Now,
    /// A literal.
    Value(V),
}

/// In which write operations a client may set a field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Settable {
    pub create: bool,
    pub replace: bool,
    pub patch: bool,
}

impl Settable {
    pub const ALWAYS: Settable = Settable { create: true, replace: true, patch: true };
    pub const NEVER: Settable = Settable { create: false, replace: false, patch: false };

    pub fn allows(self, op: WriteOp) -> bool {
        match op {
            WriteOp::Create => self.create,
            WriteOp::Replace => self.replace,
            WriteOp::Patch => self.patch,
        }
    }

    pub fn any(self) -> bool {
        self.create || self.replace || self.patch
    }
}
