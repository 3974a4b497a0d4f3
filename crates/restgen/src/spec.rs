//! What generated code tells the runtime about each resource: static, plain data. The
//! runtime's shared behaviour (validation, storage, paging) is driven by it.
//!
//! The words and kinds in it are the model's own types (`restgen_model::model`), re-exported
//! here: the model and the runtime share one definition. What holds text holds it as
//! `&'static str` here ([`Rule`], [`Envelope`], [`DefaultValue`]), so specs can be statics.

use once_cell::race::OnceRef;
use std::any::Any;

pub use restgen_model::model::{
    FieldKind, Format, IdKind, JwtAlgorithm, Operation, PageStyle, ProxyHeader, RateAlgorithm, RateKey, Scheme,
};

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
    /// This resource holds the accounts (`auth.principal`): a caller owns their own record.
    pub principal: bool,
    pub timestamps: bool,
    pub fields: &'static [FieldSpec],
    pub pagination: PaginationSpec,
    pub envelope: Envelope,
    pub reject_unknown: bool,
    pub operations: &'static [Operation],
    /// Its lifecycle (`states`, `status_endpoint`), when it has one.
    pub lifecycle: Option<LifecycleSpec>,
    /// Representations carry `_links`: self, parent collections, and the transitions open
    /// to the caller (`links`).
    pub links: bool,
    /// What it publishes to webhook subscribers (`events`): `created`, `updated`,
    /// `deleted` and transition names.
    pub events: &'static [&'static str],
    /// `GET {collection}/changes` streams its changes (`feed`): every write of it is
    /// kept in the change log.
    pub feed: bool,
    pub access: AccessSpec,
    /// 403 (`false`) or 404 (`true`) for a record of somebody else.
    pub hide_not_owned: bool,
    /// Parents whose children can be listed at `/{parent path}/{parent_id}{path}`, with
    /// the column that links a child to its parent.
    pub parents: &'static [ParentSpec],
    /// The resource's own `rate_limit`; without one its routes count against the
    /// service's.
    pub rate_limit: Option<RateSpec>,
    /// `Cache-Control` of its reads (`cache`): `private, max-age=30`, or `no-cache`
    /// (`private, no-cache` where reading needs credentials) without `cache`.
    pub cache_control: &'static str,
    /// Collection paths it had before (`former_paths`): requests under them are redirected
    /// to `path` (301 for GET and HEAD, 308 for the rest, so the method survives).
    pub former_paths: &'static [&'static str],
    /// Writes (PUT, PATCH, DELETE) must carry `If-Match` (`require_if_match`): 428 without.
    pub require_if_match: bool,
    /// The representations its reads offer (`formats`), JSON first: `Accept` picks one.
    pub formats: &'static [Format],
    /// The API versions that have it (`since`, `until`); outside them its paths are 404.
    pub gate: Gate,
    /// What the store derives from this spec, made when first used: not part of what a
    /// spec says, always `..ResourceSpec::DEFAULT`'s (empty).
    #[doc(hidden)]
    pub statements: StoreCache,
}

impl ResourceSpec {
    /// What a resource is unless its spec says otherwise (the format's defaults): generated
    /// specs name what differs and take the rest from here (`..ResourceSpec::DEFAULT`).
    /// Name, path, fields, paging, access and `Cache-Control` are always given.
    // A template: each spec made from it has statements of its own, empty until used.
    #[allow(clippy::declare_interior_mutable_const)]
    pub const DEFAULT: ResourceSpec = ResourceSpec {
        name: "",
        path: "",
        id: IdKind::DEFAULT,
        owner: None,
        principal: false,
        timestamps: true,
        fields: &[],
        pagination: PaginationSpec {
            style: restgen_model::model::Pagination::STYLE,
            default_size: restgen_model::model::Pagination::DEFAULT_SIZE,
            max_size: restgen_model::model::Pagination::MAX_SIZE,
            max_cursor: 0,
        },
        envelope: Envelope::Key(restgen_model::model::Envelope::DEFAULT_KEY),
        reject_unknown: true,
        operations: &Operation::ALL,
        lifecycle: None,
        links: false,
        events: &[],
        feed: false,
        access: AccessSpec { create: &[], read: &[], write: &[], delete: &[] },
        hide_not_owned: false,
        parents: &[],
        rate_limit: None,
        cache_control: "no-cache",
        former_paths: &[],
        require_if_match: false,
        formats: &[Format::Json],
        gate: Gate::ALWAYS,
        statements: StoreCache::new(),
    };

    /// The collection's route pattern under `base`, as axum matches it.
    pub(crate) fn collection_path(&self, base: &str) -> String {
        format!("{base}{}", self.path)
    }

    /// The item's route pattern under `base`.
    pub(crate) fn item_path(&self, base: &str) -> String {
        format!("{base}{}/{{id}}", self.path)
    }

    /// The pattern of the list under `parent`.
    pub(crate) fn nested_path(&self, parent: &ParentSpec, base: &str) -> String {
        format!("{base}{}/{{parent_id}}{}", parent.path, self.path)
    }

    /// Every route pattern of the resource under `base`: the collection, the item, its
    /// transitions and status, the list under each parent, and the former paths.
    pub(crate) fn route_paths(&self, base: &str) -> Vec<String> {
        let mut out = vec![self.collection_path(base), self.item_path(base)];
        if let Some(lifecycle) = &self.lifecycle {
            out.extend(lifecycle.transitions.iter().map(|t| format!("{}/{}", self.item_path(base), t.name)));
            if lifecycle.status_endpoint {
                out.push(format!("{}/status", self.item_path(base)));
            }
        }
        out.extend(self.parents.iter().map(|parent| self.nested_path(parent, base)));
        for former in self.former_paths {
            out.push(format!("{base}{former}"));
            out.push(format!("{base}{former}/{{id}}"));
            out.push(format!("{base}{former}/{{id}}/{{*rest}}"));
        }
        out
    }

    pub fn field(&self, name: &str) -> Option<&'static FieldSpec> {
        self.fields.iter().find(|f| f.name == name)
    }

    pub fn has(&self, op: Operation) -> bool {
        self.operations.contains(&op)
    }
}

/// A resource's lifecycle: an enum field that only its transitions move.
#[derive(Debug)]
pub struct LifecycleSpec {
    /// The state field.
    pub field: &'static str,
    /// The state of a new record.
    pub initial: &'static str,
    /// Each `POST {item}/{name}`.
    pub transitions: &'static [TransitionSpec],
    /// `GET {item}/status` answers `{status, updated_at}`.
    pub status_endpoint: bool,
}

impl LifecycleSpec {
    pub fn transition(&self, name: &str) -> Option<&'static TransitionSpec> {
        self.transitions.iter().find(|t| t.name == name)
    }
}

/// One transition: from any of `from` to `to`, for callers who may write the record and
/// hold one of `roles` (anyone who may write it, when empty).
#[derive(Debug)]
pub struct TransitionSpec {
    pub name: &'static str,
    pub from: &'static [&'static str],
    pub to: &'static str,
    pub roles: &'static [&'static str],
}

impl TransitionSpec {
    /// Whether it may start from `state`.
    pub fn starts_from(&self, state: &str) -> bool {
        self.from.contains(&state)
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

/// An access rule of a static spec: the model's, with roles as `&'static str`.
pub type Rule = restgen_model::model::AccessRule<&'static str>;

/// The resource a ref names. Shown by name only: refs may form cycles (a resource may
/// name itself).
#[derive(Clone, Copy)]
pub struct Target(pub &'static ResourceSpec);

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target({})", self.0.name)
    }
}

#[derive(Debug)]
pub struct ParentSpec {
    /// The parent resource, whose ownership a nested list checks.
    pub spec: &'static ResourceSpec,
    pub resource: &'static str,
    pub path: &'static str,
    pub column: &'static str,
}

#[derive(Clone, Copy, Debug)]
pub struct PaginationSpec {
    pub style: PageStyle,
    pub default_size: u32,
    pub max_size: u32,
    /// The longest cursor this list can issue (from its sortable fields' bounds), and so
    /// the longest it accepts; the OpenAPI document states the same.
    pub max_cursor: u32,
}

/// How a list answer holds its records: the model's, with the key as `&'static str`.
pub type Envelope = restgen_model::model::Envelope<&'static str>;

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
    /// On an owned resource, unique per owner (the database's constraint includes
    /// `owner_id`) unless `unique_global` (`unique: global`): across every record.
    pub unique: bool,
    pub unique_global: bool,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<&'static str>,
    pub values: &'static [&'static str],
    /// For refs: the target resource and its id kind.
    pub to: Option<(&'static str, IdKind)>,
    /// For a resource's refs: the target's spec, whose `read` rules say which of its
    /// records a caller may name (a form's fields have none).
    pub target: Option<Target>,
    pub filter: bool,
    pub sort: bool,
    /// The API versions that have it (`since`, `until`): outside them it is absent from
    /// representations, filters, sorts and CSV, and not settable.
    pub gate: Gate,
    /// Who may see the field (`read`), of those who may read the record; `None`: all of
    /// them. Elsewhere it is absent from every representation and cannot be filtered or
    /// sorted on.
    pub read: Option<&'static [Rule]>,
    /// Who may set the field (`write`) where it is settable, of those who may write the
    /// record; `None`: all of them. To anyone else it is not settable.
    pub write: Option<&'static [Rule]>,
}

impl FieldSpec {
    /// A field with every flag off and no bounds: generated specs name what differs and
    /// take the rest from here (`..FieldSpec::DEFAULT`). Name and kind are always given.
    pub const DEFAULT: FieldSpec = FieldSpec {
        name: "",
        kind: FieldKind::String,
        required: false,
        nullable: false,
        optional: false,
        default: None,
        create: false,
        replace: false,
        patch: false,
        write_only: false,
        unique: false,
        unique_global: false,
        min: None,
        max: None,
        min_length: None,
        max_length: None,
        pattern: None,
        values: &[],
        to: None,
        target: None,
        filter: false,
        sort: false,
        gate: Gate::ALWAYS,
        read: None,
        write: None,
    };
}

/// A field's default: the model's, with the literal as its JSON text.
pub type DefaultValue = restgen_model::model::DefaultValue<&'static str>;

/// The `auth` section: how callers prove who they are, and the roles they may hold.
#[derive(Clone, Copy, Debug)]
pub struct AuthSpec {
    pub schemes: &'static [Scheme],
    pub principal: Option<PrincipalSpec>,
    pub jwt: JwtSpec,
    pub api_key: ApiKeySpec,
    pub roles: &'static [&'static str],
    /// The role of an account whose `roles` field is empty.
    pub default_role: Option<&'static str>,
    /// Roles that see and change every record.
    pub admin_roles: &'static [&'static str],
    /// Prefix of the service's own environment variables (`SHOP` for `SHOP_ADMIN`).
    pub env_prefix: &'static str,
    /// The realm named in `WWW-Authenticate` challenges: the service name.
    pub realm: &'static str,
}

impl AuthSpec {
    pub fn has(&self, scheme: Scheme) -> bool {
        self.schemes.contains(&scheme)
    }
}

/// The resource that holds accounts, and its fields that sign in.
#[derive(Clone, Copy, Debug)]
pub struct PrincipalSpec {
    pub resource: &'static ResourceSpec,
    /// `{base_path}{login.path}`, where bearer tokens are issued.
    pub login_path: &'static str,
    /// The field that names an account at login and in Basic credentials (`email`).
    pub identifier: &'static str,
    /// The password field (Argon2id PHC string in storage).
    pub password: &'static str,
    /// The `roles` field, when accounts have one.
    pub roles: Option<&'static str>,
}

#[derive(Clone, Copy, Debug)]
pub struct JwtSpec {
    pub algorithm: JwtAlgorithm,
    /// HS256: the variable holding the shared secret.
    pub secret_env: &'static str,
    /// RS256/ES256: the variable holding the path of the PEM private key (signing).
    pub private_key_env: Option<&'static str>,
    /// RS256/ES256: the variable holding the path of the PEM public key (verifying).
    pub public_key_env: Option<&'static str>,
    pub ttl_seconds: u64,
    pub issuer: Option<&'static str>,
    pub audience: Option<&'static str>,
}

#[derive(Clone, Copy, Debug)]
pub struct ApiKeySpec {
    /// Header that carries a key (`X-API-Key`).
    pub header: &'static str,
    /// Query parameter that may carry a key instead, when declared.
    pub query: Option<&'static str>,
}

/// A rate limit (`rate_limit` in the schema): the service's default, or a resource's own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSpec {
    /// The policy's name in the `RateLimit` headers, and the budget it counts against:
    /// `default` for the service's limit, the resource's name for its own.
    pub name: &'static str,
    pub algorithm: RateAlgorithm,
    /// Whose requests share a budget.
    pub key: RateKey,
}

/// The API versions that have a resource or a field: from `since` (the first that has it)
/// up to `until` (the first that no longer does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gate {
    pub since: Option<u32>,
    pub until: Option<u32>,
}

impl Gate {
    /// In every version.
    pub const ALWAYS: Gate = Gate { since: None, until: None };

    /// Whether version `n` has it; a service without versions has everything.
    pub fn includes(&self, n: Option<u32>) -> bool {
        n.is_none_or(|n| restgen_model::model::gate_includes(self.since, self.until, n))
    }
}

/// `webhooks`: how events reach subscribers. A service has it when a resource publishes
/// `events`.
#[derive(Clone, Copy, Debug)]
pub struct WebhooksSpec {
    /// The variable holding the signing secret (`whsec_...`); `<secret_env>_PREVIOUS`
    /// holds the one being rotated out.
    pub secret_env: &'static str,
    /// Attempts of one delivery before it fails.
    pub max_attempts: u32,
    /// How long one attempt may take, connection to last byte read.
    pub timeout: std::time::Duration,
}

/// `api.versions` and `api.versioning`: the versions served side by side and how a
/// request names one.
#[derive(Debug)]
pub struct VersioningSpec {
    /// Oldest first; the last is the newest, which a request naming none gets.
    pub versions: &'static [VersionSpec],
    /// `{base_path}/v{n}/...`
    pub path: bool,
    /// `X-API-Version: n`
    pub header: bool,
    /// `Accept: application/vnd.{vendor}.v{n}+json`
    pub media_type: bool,
    /// `{vendor}` of the versions' media types.
    pub vendor: &'static str,
}

impl VersioningSpec {
    pub fn version(&self, n: u32) -> Option<&'static VersionSpec> {
        self.versions.iter().find(|v| v.number == n)
    }

    pub fn newest(&self) -> Option<&'static VersionSpec> {
        self.versions.last()
    }

    /// The version after `n`, which succeeds it.
    pub fn successor(&self, n: u32) -> Option<&'static VersionSpec> {
        self.versions.iter().find(|v| v.number > n)
    }

    /// `1, 2`: the versions served, for problems that name them.
    pub fn served(&self) -> String {
        self.versions.iter().map(|v| v.number.to_string()).collect::<Vec<_>>().join(", ")
    }
}

/// One served version.
#[derive(Debug)]
pub struct VersionSpec {
    pub number: u32,
    /// Unix seconds from which it is deprecated (`Deprecation: @<seconds>`).
    pub deprecated: Option<i64>,
    /// Unix seconds of its sunset (`Sunset`); from then on it answers 410.
    pub sunset: Option<i64>,
    /// `application/vnd.{vendor}.v{n}+json`: its media type.
    pub media_type: &'static str,
}

/// A cell the store fills, the first time it uses a resource, with what it derives from the
/// spec alone (the text of its statements), kept for the life of the process. Opaque here,
/// so the spec stays plain data that knows nothing of the store. `OnceRef` has no
/// destructor, so a spec holding one can still be a static made from
/// `ResourceSpec::DEFAULT`.
#[derive(Default)]
pub struct StoreCache(OnceRef<'static, Box<dyn Any + Send + Sync>>);

impl StoreCache {
    /// Empty.
    pub const fn new() -> StoreCache {
        StoreCache(OnceRef::new())
    }

    /// What the cell holds, made by `make` the first time. Threads that race to fill it
    /// each make one, and all but one are kept unused (a few, once).
    pub(crate) fn get_or_init<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> &'static T {
        let held = self.0.get_or_init(|| {
            let made: Box<dyn Any + Send + Sync> = Box::new(make());
            Box::leak(Box::new(made))
        });
        held.downcast_ref().expect("a store cache holds one type")
    }
}

impl std::fmt::Debug for StoreCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreCache")
    }
}
