//! A resource: its paths, operations, ownership, access, collection behaviour and lifecycle.

use super::{Field, Pagination, RateLimit};
use crate::origin::{Located, Origin};
use crate::words::words;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Resource {
    /// Snake case, singular (`order`).
    pub name: Located<String>,
    /// The resource's name in the schema generated before (`renamed_from`): its table is
    /// renamed, its records kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<Located<String>>,
    pub description: Option<String>,
    /// Collection path (`/orders`); the item path is `{path}/{<name>_id}`.
    pub path: Located<String>,
    /// Canonical order (create, get, list, replace, patch, delete), no duplicates.
    pub operations: Vec<Operation>,
    /// In declaration order.
    pub fields: Vec<Field>,
    pub id: IdKind,
    pub timestamps: bool,
    /// The principal resource that owns each record.
    pub owner: Option<Located<String>>,
    pub nested_under: Vec<Located<String>>,
    pub access: Access,
    pub not_owned: NotOwned,
    pub pagination: Pagination,
    pub envelope: Located<Envelope>,
    /// Always holds `Json` first.
    pub formats: Located<Vec<Format>>,
    /// `None`: `Cache-Control: no-cache` with an ETag.
    pub cache: Option<Cache>,
    pub unknown_fields: UnknownFields,
    pub former_paths: Vec<Located<String>>,
    /// Writes must be conditional (`If-Match`).
    pub require_if_match: Located<bool>,
    pub states: Option<States>,
    pub status_endpoint: Located<bool>,
    /// `created`, `updated`, `deleted` and transition names.
    pub events: Vec<Located<String>>,
    pub links: Located<bool>,
    /// `GET {collection}/changes`: every change to its records as Server-Sent Events.
    #[serde(default, skip_serializing_if = "Located::is_false")]
    pub feed: Located<bool>,
    pub rate_limit: Option<RateLimit>,
    pub gate: Gate,
    #[serde(skip)]
    pub origin: Origin,
}

impl Resource {
    /// A resource named `name` with `id` ids and every other key at the format's default,
    /// its access lists empty: what another resource's derive knows of it (its name and
    /// id type), and the start of a hand-built model.
    pub fn with_defaults(name: &str, id: IdKind) -> Resource {
        Resource {
            name: Located::bare(name.to_owned()),
            renamed_from: None,
            description: None,
            path: Located::bare(format!("/{name}s")),
            operations: Operation::ALL.to_vec(),
            fields: Vec::new(),
            id,
            timestamps: true,
            owner: None,
            nested_under: Vec::new(),
            access: Access {
                create: Vec::new(),
                read: Vec::new(),
                write: Vec::new(),
                delete: Vec::new(),
                origin: Origin::Unknown,
            },
            not_owned: NotOwned::DEFAULT,
            pagination: Pagination::default(),
            envelope: Located::bare(Envelope::Key(Envelope::DEFAULT_KEY.to_owned())),
            formats: Located::bare(vec![Format::Json]),
            cache: None,
            unknown_fields: UnknownFields::DEFAULT,
            former_paths: Vec::new(),
            require_if_match: Located::bare(false),
            states: None,
            status_endpoint: Located::bare(false),
            events: Vec::new(),
            links: Located::bare(false),
            feed: Located::bare(false),
            rate_limit: None,
            gate: Gate::default(),
            origin: Origin::Unknown,
        }
    }

    /// `Cache-Control` of the resource's reads. Without `cache`, `no-cache`: a cache may
    /// keep the answer but must revalidate it (the ETag makes that cheap); `private` too
    /// where reading needs credentials, since an API key header, unlike `Authorization`,
    /// does not keep shared caches from storing an answer.
    pub fn cache_control(&self) -> String {
        let public_data = !self.access.read.is_empty()
            && self.access.read.iter().all(|rule| rule.value == AccessRule::Anyone)
            && self.shown_alike();
        match &self.cache {
            Some(c) => {
                let visibility = if c.visibility.value == Visibility::Public { "public" } else { "private" };
                format!("{visibility}, max-age={}", c.max_age.as_secs())
            }
            None if public_data => "no-cache".to_owned(),
            None => "private, no-cache".to_owned(),
        }
    }

    /// The name of the resource's own limit in the `RateLimit` headers: its name, unless
    /// that is the service default's.
    pub fn rate_limit_name(&self) -> String {
        if self.name.value == "default" { "default_resource".to_owned() } else { self.name.value.clone() }
    }

    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name.value == name)
    }

    pub fn has(&self, op: Operation) -> bool {
        self.operations.contains(&op)
    }

    /// Whether every caller who may read a record sees all of it: no field's `read`
    /// admits fewer than anyone.
    pub fn shown_alike(&self) -> bool {
        self.fields.iter().all(|f| f.read.as_ref().is_none_or(|r| r.iter().any(|r| r.value == AccessRule::Anyone)))
    }

    /// Every access list of the resource and of its fields, each with the key that holds
    /// it (`access.read`, `fields.salary.read`): what the checks of rules walk.
    pub fn rule_lists(&self) -> Vec<(String, &[Located<AccessRule>])> {
        let mut lists: Vec<(String, &[Located<AccessRule>])> =
            self.access.lists().into_iter().map(|(key, rules)| (format!("access.{key}"), rules)).collect();
        for f in &self.fields {
            for (key, rules) in [("read", &f.read), ("write", &f.write)] {
                if let Some(rules) = rules {
                    lists.push((format!("fields.{}.{key}", f.name.value), rules));
                }
            }
        }
        lists
    }

    /// The field that holds the lifecycle state, if any.
    pub fn state_field(&self) -> Option<&str> {
        self.states.as_ref().map(|s| s.field.value.as_str())
    }

    /// Whether `field` may be set by a client in `op` (the allow-list).
    pub fn settable_in(&self, field: &Field, op: WriteOp) -> bool {
        !field.read_only && self.state_field() != Some(field.name.value.as_str()) && field.settable.value.allows(op)
    }

    /// The resource's name as a noun in prose: `reading list`.
    pub fn noun(&self) -> String {
        self.name.value.replace('_', " ")
    }

    /// Its records in prose, from the last segment of its path: `reading lists`.
    pub fn plural_noun(&self) -> String {
        self.path.value.rsplit('/').next().unwrap_or_default().replace(['-', '_'], " ")
    }

    /// The item path parameter name: `order_id`.
    pub fn id_param(&self) -> String {
        format!("{}_id", self.name.value)
    }
}

words! {
    /// The six operations a resource may offer.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
    pub enum Operation {
        Create = "create",
        Get = "get",
        List = "list",
        Replace = "replace",
        Patch = "patch",
        Delete = "delete",
    }
}

impl Operation {
    pub const ALL: [Operation; 6] =
        [Operation::Create, Operation::Get, Operation::List, Operation::Replace, Operation::Patch, Operation::Delete];
}

words! {
    /// The operations that take a body of client-set fields (and the words of `settable`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
    pub enum WriteOp {
        Create = "create",
        Replace = "replace",
        Patch = "patch",
    }
}

impl WriteOp {
    pub const ALL: [WriteOp; 3] = [WriteOp::Create, WriteOp::Replace, WriteOp::Patch];

    pub fn operation(self) -> Operation {
        match self {
            WriteOp::Create => Operation::Create,
            WriteOp::Replace => Operation::Replace,
            WriteOp::Patch => Operation::Patch,
        }
    }
}

words! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub enum IdKind {
        /// UUID v7, for index locality.
        Uuid = "uuid",
        /// Auto-increment 64-bit integer.
        Integer = "integer",
    }
}

impl IdKind {
    pub const DEFAULT: IdKind = IdKind::Uuid;
}

/// Who may do what. Every list is resolved: defaults already applied.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Access {
    pub create: Vec<Located<AccessRule>>,
    pub read: Vec<Located<AccessRule>>,
    /// Replace and patch.
    pub write: Vec<Located<AccessRule>>,
    pub delete: Vec<Located<AccessRule>>,
    #[serde(skip)]
    pub origin: Origin,
}

impl Access {
    /// The four lists with their key names.
    pub fn lists(&self) -> [(&'static str, &[Located<AccessRule>]); 4] {
        [("create", &self.create), ("read", &self.read), ("write", &self.write), ("delete", &self.delete)]
    }
}

/// Who an access list admits. `R` is how a role is held: a `String` in the model, a
/// `&'static str` in the runtime's static specs (`restgen::spec::Rule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum AccessRule<R = String> {
    Anyone,
    Authenticated,
    Owner,
    Role(R),
}

impl<R: AsRef<str>> AccessRule<R> {
    /// The word a schema writes for this rule.
    pub fn word(&self) -> &str {
        match self {
            AccessRule::Anyone => AccessRule::WORDS[0],
            AccessRule::Authenticated => AccessRule::WORDS[1],
            AccessRule::Owner => AccessRule::WORDS[2],
            AccessRule::Role(role) => role.as_ref(),
        }
    }
}

impl AccessRule {
    /// The words of the rules that are not roles.
    pub const WORDS: &'static [&'static str] = &["anyone", "authenticated", "owner"];

    /// The rule a schema means by `word`: one of [`AccessRule::WORDS`], else a role.
    pub fn from_word(word: &str) -> AccessRule {
        match word {
            "anyone" => AccessRule::Anyone,
            "authenticated" => AccessRule::Authenticated,
            "owner" => AccessRule::Owner,
            role => AccessRule::Role(role.to_owned()),
        }
    }
}

words! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub enum NotOwned {
        /// 403.
        Forbidden = "forbidden",
        /// 404, hiding that the record exists.
        NotFound = "not_found",
    }
}

impl NotOwned {
    pub const DEFAULT: NotOwned = NotOwned::Forbidden;
}

/// How a list answer holds its records. `K` is how the key is held: a `String` in the
/// model, a `&'static str` in the runtime's static specs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Envelope<K = String> {
    /// A bare JSON array.
    Bare,
    /// `{"<key>": [...], ...}`.
    Key(K),
}

impl Envelope {
    /// The word for a bare array; any other word is the key lists go under.
    pub const BARE: &'static str = "bare";
    /// The key of a resource that names none.
    pub const DEFAULT_KEY: &'static str = "data";
    /// The words the format names (any other plain key is allowed too).
    pub const WORDS: &'static [&'static str] = &[Envelope::BARE, Envelope::DEFAULT_KEY, "results"];
}

words! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
    pub enum Format {
        Json = "json",
        Csv = "csv",
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Cache {
    pub max_age: Duration,
    pub visibility: Located<Visibility>,
    #[serde(skip)]
    pub origin: Origin,
}

words! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub enum Visibility {
        Private = "private",
        Public = "public",
    }
}

impl Visibility {
    pub const DEFAULT: Visibility = Visibility::Private;
}

words! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub enum UnknownFields {
        Reject = "reject",
        Ignore = "ignore",
    }
}

impl UnknownFields {
    pub const DEFAULT: UnknownFields = UnknownFields::Reject;
}

/// The lifecycle of a resource: an enum field moved only by named transitions.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct States {
    pub field: Located<String>,
    pub initial: Located<String>,
    pub transitions: Vec<Transition>,
    #[serde(skip)]
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Transition {
    pub name: Located<String>,
    pub from: Vec<Located<String>>,
    pub to: Located<String>,
    /// Empty: anyone who may write the record.
    pub roles: Vec<Located<String>>,
    #[serde(skip)]
    pub origin: Origin,
}

/// The versions that have a resource or field: `since` is the first, `until` the first
/// that no longer has it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Gate {
    pub since: Option<Located<u32>>,
    pub until: Option<Located<u32>>,
}

impl Gate {
    pub fn includes(&self, version: u32) -> bool {
        gate_includes(self.since.as_ref().map(|s| s.value), self.until.as_ref().map(|u| u.value), version)
    }
}

/// What `since` and `until` mean: version `n` has what is gated from `since` (the first
/// version that has it) up to, not including, `until` (the first that no longer does).
/// The runtime's static gates ask the same question here.
pub fn gate_includes(since: Option<u32>, until: Option<u32>, n: u32) -> bool {
    since.is_none_or(|s| n >= s) && until.is_none_or(|u| n < u)
}

/// `Cache-Control` of a status endpoint: caches must ask again before each use (the ETag
/// makes that a 304), and keep it to the caller where the resource's reads are private.
pub fn status_cache_control(resource_cache_control: &str) -> &'static str {
    if resource_cache_control.starts_with("private") { "private, no-cache" } else { "no-cache" }
}
