//! What generated code tells the runtime about each resource: static, plain data. The
//! runtime's shared behaviour (validation, storage, paging) is driven by it.

/// One resource.
#[derive(Debug)]
pub struct ResourceSpec {
    /// Snake case, singular; also the table name.
    pub name: &'static str,
    /// Collection path without base path or version (`/orders`).
    pub path: &'static str,
    pub id: IdKind,
    /// The owning principal's resource and its id kind, when records are owned.
    pub owner: Option<(&'static str, IdKind)>,
    pub timestamps: bool,
    pub fields: &'static [FieldSpec],
    pub pagination: PaginationSpec,
    pub envelope: Envelope,
    pub reject_unknown: bool,
    pub operations: &'static [Operation],
    /// The state field and its initial value, when the resource has a lifecycle.
    pub state: Option<(&'static str, &'static str)>,
    pub access: AccessSpec,
    /// 403 (`false`) or 404 (`true`) for a record of somebody else.
    pub hide_not_owned: bool,
    /// Parents whose children can be listed at `/{parent path}/{parent_id}{path}`, with
    /// the column that links a child to its parent.
    pub parents: &'static [ParentSpec],
}

impl ResourceSpec {
    pub fn field(&self, name: &str) -> Option<&'static FieldSpec> {
        self.fields.iter().find(|f| f.name == name)
    }

    pub fn has(&self, op: Operation) -> bool {
        self.operations.contains(&op)
    }
}

/// Who may do what, per operation group.
#[derive(Debug)]
pub struct AccessSpec {
    pub create: &'static [Rule],
    pub read: &'static [Rule],
    pub write: &'static [Rule],
    pub delete: &'static [Rule],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    Anyone,
    Authenticated,
    Owner,
    Role(&'static str),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdKind {
    Uuid,
    Integer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Get,
    List,
    Replace,
    Patch,
    Delete,
}

#[derive(Debug)]
pub struct ParentSpec {
    pub resource: &'static str,
    pub path: &'static str,
    pub column: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageStyle {
    Page,
    Offset,
    Cursor,
}

#[derive(Clone, Copy, Debug)]
pub struct PaginationSpec {
    pub style: PageStyle,
    pub default_size: u32,
    pub max_size: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Envelope {
    Bare,
    Key(&'static str),
}

/// The value type of a field, as stored and validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    String,
    Text,
    Integer,
    Number,
    Decimal,
    Boolean,
    Uuid,
    Email,
    Url,
    Date,
    DateTime,
    Enum,
    Json,
    Password,
    Ref,
    Roles,
}

#[derive(Debug)]
pub struct FieldSpec {
    pub name: &'static str,
    pub kind: FieldKind,
    pub required: bool,
    pub nullable: bool,
    /// The column may hold NULL: nullable, or optional without a default.
    pub optional: bool,
    /// JSON text of the default, or `now`.
    pub default: Option<DefaultValue>,
    pub create: bool,
    pub replace: bool,
    pub patch: bool,
    /// Never in a response.
    pub write_only: bool,
    pub unique: bool,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<&'static str>,
    pub values: &'static [&'static str],
    /// For refs: the target resource and its id kind.
    pub to: Option<(&'static str, IdKind)>,
    pub filter: bool,
    pub sort: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultValue {
    Now,
    /// JSON text of the value.
    Json(&'static str),
}
