//! The vocabulary of the schema format: every key of every map, written once, with what
//! it takes, the words it allows, its default, what it means, which front-end spells it
//! (YAML, the derive attributes, or both) and whether generated services serve it yet.
//!
//! Everything else follows from these tables: the YAML front-end's and the derive's key
//! sets and did-you-mean hints, the key reference in `docs/schema.md` (rendered by
//! [`Table::markdown`]), the JSON Schema `schema/restgen.schema.json` (rendered by
//! [`json_schema`]; tests hold both files to these tables), and the warnings
//! `restgen check` gives at keys not served yet. Words come from
//! the model's enums ([`Word`]) and defaults from the model's constants, so a default or a
//! word is stated in one place too.

use crate::model::{AccessRule, Api, Envelope};
use crate::model::{
    ApiKey, FieldKind, Format, IdKind, Jwt, JwtAlgorithm, Limits, Login, NotOwned, Operation, PageStyle, Pagination,
    ProxyHeader, RateAlgorithmKind, RateKey, Scheme, UnknownFields, Versioning, Visibility, Webhooks, WriteOp,
};
use crate::words::Word;
use std::time::Duration;

/// The keys of one kind of map.
#[derive(Clone, Copy, Debug)]
pub struct Table {
    /// The map's name: the heading of its part of the reference and its `$defs` entry in
    /// the JSON Schema.
    pub name: &'static str,
    /// What the map is, in one line (the JSON Schema's description of it).
    pub about: &'static str,
    pub keys: &'static [Key],
}

/// One key of a map.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub name: &'static str,
    /// What it takes, as the reference says it; `{words}` stands for the `words` field.
    pub ty: &'static str,
    /// The words it names (each item's, for a list).
    pub words: &'static [&'static str],
    /// Whether other words are allowed beside `words` (a key name, a role).
    pub open: bool,
    pub default: Default,
    /// What it means, in one line.
    pub about: &'static str,
    pub fronts: Fronts,
    /// The JSON Schema of its value (without a description), for keys a schema file
    /// writes: `schema/restgen.schema.json` is rendered from these ([`json_schema`]).
    pub json: &'static str,
    /// Set while generated services do not serve the key: what they do instead.
    /// `restgen check` and the derive warn where a schema uses it.
    pub pending: Option<&'static str>,
}

/// Which front-ends spell a key this way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fronts {
    Both,
    /// Only a schema file (the derive reads it from the struct, or an `App` sets it).
    Yaml,
    /// Only the derive attributes.
    Derive,
}

/// A key's default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Default {
    /// Absent means nothing is set.
    None,
    Required,
    Word(&'static str),
    /// A list of words: `[json]`; `[]` when empty.
    List(&'static [&'static str]),
    Int(u64),
    Bool(bool),
    Duration(Duration),
    /// Bytes.
    Size(u64),
    /// A literal value: `/auth/login`.
    Literal(&'static str),
    /// Depends on the rest of the schema; said in words.
    Text(&'static str),
}

impl Table {
    pub fn key(&self, name: &str) -> Option<&'static Key> {
        self.keys.iter().find(|k| k.name == name)
    }

    /// The names a front-end accepts.
    pub fn names(&self, front: Fronts) -> Vec<&'static str> {
        self.keys.iter().filter(|k| k.spelled_in(front)).map(|k| k.name).collect()
    }

    /// The table as the reference in `docs/schema.md` prints it (YAML keys only).
    pub fn markdown(&self) -> String {
        let mut out = String::from("| key | type | default | meaning |\n|---|---|---|---|\n");
        for k in self.keys.iter().filter(|k| k.spelled_in(Fronts::Yaml)) {
            let row = format!("| `{}` | {} | {} | {} |\n", k.name, k.ty_text(), k.default.text(), k.about);
            // An empty cell is written `| |`, as the reference does.
            out.push_str(&row.replace("|  |", "| |"));
        }
        out
    }
}

impl Key {
    /// Whether `front` spells this key (`Both` asks whether both do).
    pub fn spelled_in(&self, front: Fronts) -> bool {
        self.fronts == Fronts::Both || self.fronts == front
    }

    /// What it takes, words spelled out.
    pub fn ty_text(&self) -> String {
        let words: Vec<String> = self.words.iter().map(|w| format!("`{w}`")).collect();
        self.ty.replace("{words}", &words.join(", "))
    }
}

impl Default {
    /// As the reference writes it.
    pub fn text(&self) -> String {
        match self {
            Default::None => "none".into(),
            Default::Required => "required".into(),
            Default::Word(w) => format!("`{w}`"),
            Default::List(words) => format!("`[{}]`", words.join(", ")),
            Default::Int(n) => format!("`{n}`"),
            Default::Bool(b) => format!("`{b}`"),
            Default::Duration(d) => format!("`{}`", duration_text(*d)),
            Default::Size(n) => format!("`{}`", size_text(*n)),
            Default::Literal(s) => format!("`{s}`"),
            Default::Text(t) => (*t).into(),
        }
    }
}

/// `15m`, `30s`, `500ms`: the largest unit that divides it.
fn duration_text(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, size) in [("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)] {
        if ms > 0 && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// `1MiB`, `16KiB`, `100`: the largest binary unit that divides it.
fn size_text(n: u64) -> String {
    for (unit, size) in [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if n > 0 && n.is_multiple_of(size) {
            return format!("{}{unit}", n / size);
        }
    }
    n.to_string()
}

/// A key both front-ends spell, served, words-free: the common case the tables start from.
const fn key(name: &'static str, ty: &'static str, default: Default, about: &'static str) -> Key {
    Key { name, ty, words: &[], open: false, default, about, fronts: Fronts::Both, json: "", pending: None }
}

impl Key {
    const fn words(mut self, words: &'static [&'static str]) -> Key {
        self.words = words;
        self
    }

    /// Other words are allowed beside the named ones.
    const fn open(mut self) -> Key {
        self.open = true;
        self
    }

    /// The JSON Schema of the value.
    const fn json(mut self, schema: &'static str) -> Key {
        self.json = schema;
        self
    }

    const fn yaml(mut self) -> Key {
        self.fronts = Fronts::Yaml;
        self
    }

    const fn derive(mut self) -> Key {
        self.fronts = Fronts::Derive;
        self
    }

    /// Marks a key the format accepts before generated services serve it: `restgen check`
    /// and the derive warn at it (E0801) with `what` the service does instead. None is
    /// pending today; the next key the format takes ahead of the runtime uses it.
    #[allow(dead_code)]
    const fn pending(mut self, what: &'static str) -> Key {
        self.pending = Some(what);
        self
    }
}

/// The word `unique` takes for a table-wide constraint on an owned resource.
pub const UNIQUE_GLOBAL: &str = "global";

pub const SERVICE: Table = Table {
    name: "service",
    about: "One HTTP JSON service: its resources, who may call it, and how it behaves.",
    keys: &[
        key(
            "service",
            "name",
            Default::Required,
            "crate and binary name, lower snake or kebab case (`shop`, `my-shop`)",
        )
        .yaml().json(r##"{"type":"string","pattern":"^[a-z][a-z0-9]*([_-][a-z0-9]+)*$"}"##),
        key("title", "string", Default::Literal("The <service> service"), "for the OpenAPI document and README").yaml().json(r##"{"type":"string"}"##),
        key("description", "string", Default::None, "for the OpenAPI document, README and `Cargo.toml`").yaml().json(r##"{"type":"string"}"##),
        key("api", "[api](#api)", Default::Text("no prefix, no versions"), "base path and versions").yaml().json(r##"{"$ref":"#/$defs/api"}"##),
        key("auth", "[auth](#auth)", Default::Text("absent: the service is open"), "authentication and roles").yaml().json(r##"{"$ref":"#/$defs/auth"}"##),
        key("rate_limit", "[rate_limit](#rate_limit)", Default::None, "default limit for every route").yaml().json(r##"{"$ref":"#/$defs/rate_limit"}"##),
        key("pagination", "[pagination](#pagination)", Default::Text("cursor, 20, 100"), "default for every resource")
            .yaml().json(r##"{"$ref":"#/$defs/pagination"}"##),
        key(
            "webhooks",
            "[webhooks](#webhooks)",
            Default::Text("see below"),
            "delivery settings; endpoints exist when a resource has `events`",
        )
        .yaml()
        .json(r##"{"$ref":"#/$defs/webhooks"}"##),
        key("cors", "[cors](#cors)", Default::Text("absent: no CORS headers"), "cross-origin settings").yaml().json(r##"{"$ref":"#/$defs/cors"}"##),
        key(
            "trusted_proxies",
            "list of IPs or CIDR ranges",
            Default::List(&[]),
            "proxies whose forwarding header (`proxy_header`) is believed",
        )
        .yaml().json(r##"{"type":"array","items":{"type":"string"}}"##),
        key(
            "proxy_header",
            "{words}",
            Default::Word(ProxyHeader::DEFAULT.word()),
            "the one header the trusted proxies write; the client address is its right-most entry that is not a trusted proxy, and the other header is ignored",
        )
        .words(ProxyHeader::WORDS)
        .yaml().json(r##"{"enum":"{words}"}"##),
        key("limits", "[limits](#limits)", Default::Text("see below"), "request limits").yaml().json(r##"{"$ref":"#/$defs/limits"}"##),
        key(
            "resources",
            "map of name to [resource](#resource)",
            Default::Literal("{}"),
            "names are snake case and singular",
        )
        .yaml().json(r##"{"type":"object","propertyNames":{"pattern":"^[a-z][a-z0-9_]*$"},"additionalProperties":{"$ref":"#/$defs/resource"}}"##),
    ],
};

pub const API: Table = Table {
    name: "api",
    about: "Base path, versions and versioning.",
    keys: &[
        key("base_path", "path", Default::Literal("\"\""), "prefix of every resource route (`/api`); auth endpoints and `/webhooks` live under it too, never under `/v{n}`").yaml().json(r##"{"type":"string","pattern":"^(/[a-z0-9][a-z0-9_-]*)*$"}"##),
        key("versions", "list of [version](#version) or numbers", Default::List(&[]), "versions served side by side, oldest first; `- 2` is short for `- { version: 2 }`")
            .yaml()
            .json(r##"{"type":"array","items":{"anyOf":[{"type":"integer","minimum":1},{"$ref":"#/$defs/version"}]}}"##),
        key("versioning", "list of {words}", Default::Text("`[path]` when versions exist"), "how a request picks a version: `/v2/...`, `X-API-Version: 2`, `Accept: application/vnd.{vendor}.v2+json`")
            .words(Versioning::WORDS)
            .yaml().json(r##"{"type":"array","items":{"enum":"{words}"},"uniqueItems":true}"##),
        key("vendor", "string", Default::Text("the service name"), "the vendor in media types").yaml().json(r##"{"type":"string"}"##),
        key("docs", "boolean", Default::Bool(Api::DOCS), "serve the reference page at `/docs` (each version's at `/docs/v{n}`): read the API and call it from a browser")
            .yaml()
            .json(r##"{"type":"boolean"}"##),
    ],
};

pub const VERSION: Table = Table {
    name: "version",
    about: "One API version.",
    keys: &[
        key("version", "integer ≥ 1", Default::Required, "the version number")
            .yaml()
            .json(r##"{"type":"integer","minimum":1}"##),
        key("deprecated", "date or RFC 3339 datetime", Default::None, "responses carry `Deprecation: @<unix seconds>`")
            .yaml()
            .json(r##"{"$ref":"#/$defs/timestamp"}"##),
        key(
            "sunset",
            "date or RFC 3339 datetime",
            Default::None,
            "responses carry `Sunset: <HTTP date>`; must not precede `deprecated`",
        )
        .yaml()
        .json(r##"{"$ref":"#/$defs/timestamp"}"##),
    ],
};

pub const AUTH: Table = Table {
    name: "auth",
    about: "Authentication and roles.",
    keys: &[
        key("schemes", "list of {words}", Default::List(&[Scheme::DEFAULT.word()]), "accepted credentials")
            .words(Scheme::WORDS)
            .yaml()
            .json(r##"{"type":"array","items":{"enum":"{words}"},"uniqueItems":true}"##),
        key(
            "principal",
            "resource name",
            Default::Text("none (required for `bearer`, `basic` and owned resources)"),
            "the resource that holds accounts",
        )
        .yaml()
        .json(r##"{"type":"string"}"##),
        key("login", "[login](#login)", Default::Text("path `/auth/login`"), "the login endpoint")
            .yaml()
            .json(r##"{"$ref":"#/$defs/login"}"##),
        key("jwt", "[jwt](#jwt)", Default::Text("HS256, 15m"), "bearer token settings (only with `bearer`)")
            .yaml()
            .json(r##"{"$ref":"#/$defs/jwt"}"##),
        key(
            "api_key",
            "[api_key](#api_key)",
            Default::Text("header `X-API-Key`"),
            "API key settings (only with `api_key`)",
        )
        .yaml()
        .json(r##"{"$ref":"#/$defs/api_key"}"##),
        key("roles", "list of names", Default::List(&[]), "declared roles; not `anyone`, `authenticated` or `owner`")
            .yaml()
            .json(r##"{"type":"array","items":{"type":"string"}}"##),
        key("default_role", "role", Default::None, "role of a new account").yaml().json(r##"{"type":"string"}"##),
        key("admin_roles", "list of roles", Default::List(&[]), "roles that see and change every record")
            .yaml()
            .json(r##"{"type":"array","items":{"type":"string"}}"##),
    ],
};

pub const LOGIN: Table = Table {
    name: "login",
    about: "The login endpoint.",
    keys: &[
        key("path", "path", Default::Literal(Login::PATH), "the login endpoint")
            .yaml()
            .json(r##"{"type":"string","pattern":"^/"}"##),
        key(
            "identifier",
            "field name",
            Default::Text("required with a principal"),
            "the principal's field that signs in; must be `unique` and `required`",
        )
        .yaml()
        .json(r##"{"type":"string"}"##),
    ],
};

pub const JWT: Table = Table {
    name: "jwt",
    about: "JSON Web Token settings.",
    keys: &[
        key("algorithm", "{words}", Default::Word(JwtAlgorithm::DEFAULT.word()), "signing algorithm")
            .words(JwtAlgorithm::WORDS)
            .yaml()
            .json(r##"{"enum":"{words}"}"##),
        key("secret_env", "env var name", Default::Literal("<SERVICE>_JWT_SECRET"), "HS256 shared secret")
            .yaml()
            .json(r##"{"type":"string"}"##),
        key(
            "private_key_env",
            "env var name",
            Default::Text("required for RS256/ES256"),
            "variable holding the path of the PEM private key",
        )
        .yaml()
        .json(r##"{"type":"string"}"##),
        key(
            "public_key_env",
            "env var name",
            Default::Text("required for RS256/ES256"),
            "variable holding the path of the PEM public key",
        )
        .yaml()
        .json(r##"{"type":"string"}"##),
        key("ttl", "duration", Default::Duration(Jwt::TTL), "token lifetime")
            .yaml()
            .json(r##"{"$ref":"#/$defs/duration"}"##),
        key("issuer", "string", Default::None, "the `iss` claim, checked when set")
            .yaml()
            .json(r##"{"type":"string"}"##),
        key("audience", "string", Default::None, "the `aud` claim, checked when set")
            .yaml()
            .json(r##"{"type":"string"}"##),
    ],
};

pub const API_KEY: Table = Table {
    name: "api_key",
    about: "API key settings.",
    keys: &[
        key("header", "header name", Default::Literal(ApiKey::HEADER), "header carrying the key")
            .yaml()
            .json(r##"{"type":"string"}"##),
        key("query", "string", Default::None, "query parameter carrying the key, if any")
            .yaml()
            .json(r##"{"type":"string"}"##),
    ],
};

pub const RATE_LIMIT: Table = Table {
    name: "rate_limit",
    about: "A rate limit.",
    keys: &[
        key("algorithm", "{words}", Default::Word(RateAlgorithmKind::DEFAULT.word()), "how the budget fills and drains").words(RateAlgorithmKind::WORDS).json(r##"{"enum":"{words}"}"##),
        key("capacity", "integer ≥ 1", Default::Text("required for the buckets"), "bucket size: the largest burst (token), the requests waiting their turn, the one leaving included (leaky)").json(r##"{"type":"integer","minimum":1}"##),
        key("refill_per_second", "number > 0", Default::Text("required for token_bucket"), "tokens added per second").json(r##"{"type":"number","exclusiveMinimum":0}"##),
        key("leak_per_second", "number > 0", Default::Text("required for leaky_bucket"), "requests let through per second, evenly spaced: a request that finds others waiting is held until its turn").json(r##"{"type":"number","exclusiveMinimum":0}"##),
        key("limit", "integer ≥ 1", Default::Text("required for windows"), "requests per window").json(r##"{"type":"integer","minimum":1}"##),
        key("window", "duration", Default::Text("required for windows"), "window length").json(r##"{"$ref":"#/$defs/duration"}"##),
        key("key", "{words}", Default::Text("`principal` with auth, else `ip`"), "what a limit counts by; anonymous callers fall back to `ip`, API key holders signed in otherwise to `principal`")
            .words(RateKey::WORDS).json(r##"{"enum":"{words}"}"##),
    ],
};

pub const PAGINATION: Table = Table {
    name: "pagination",
    about: "How collections page.",
    keys: &[
        key(
            "style",
            "{words}",
            Default::Word(Pagination::STYLE.word()),
            "`?page=&per_page=`, `?offset=&limit=`, or `?limit=&cursor=` / `starting_after=`",
        )
        .words(PageStyle::WORDS)
        .json(r##"{"enum":"{words}"}"##),
        key(
            "default_size",
            "integer ≥ 1",
            Default::Int(Pagination::DEFAULT_SIZE as u64),
            "page size when the client names none; at most `max_size`",
        )
        .json(r##"{"type":"integer","minimum":1}"##),
        key("max_size", "integer ≥ 1", Default::Int(Pagination::MAX_SIZE as u64), "larger requests are clamped")
            .json(r##"{"type":"integer","minimum":1}"##),
    ],
};

pub const WEBHOOKS: Table = Table {
    name: "webhooks",
    about: "Webhook delivery settings.",
    keys: &[
        key("secret_env", "env var name", Default::Literal("<SERVICE>_WEBHOOK_SECRET"), "signing secret")
            .yaml()
            .json(r##"{"type":"string"}"##),
        key("max_attempts", "integer ≥ 1", Default::Int(Webhooks::MAX_ATTEMPTS as u64), "delivery attempts")
            .yaml()
            .json(r##"{"type":"integer","minimum":1}"##),
        key("timeout", "duration", Default::Duration(Webhooks::TIMEOUT), "timeout of one delivery")
            .yaml()
            .json(r##"{"$ref":"#/$defs/duration"}"##),
    ],
};

pub const CORS: Table = Table {
    name: "cors",
    about: "Cross-origin resource sharing.",
    keys: &[
        key(
            "allowed_origins",
            "list of origins",
            Default::Required,
            "`scheme://host[:port]` each, or `\"*\"` alone (then no credentials)",
        )
        .yaml()
        .json(r##"{"type":"array","items":{"type":"string"}}"##),
        key("max_age", "duration", Default::None, "how long a preflight may be cached")
            .yaml()
            .json(r##"{"$ref":"#/$defs/duration"}"##),
    ],
};

pub const LIMITS: Table = Table {
    name: "limits",
    about: "Request limits.",
    keys: &[
        key("max_body_bytes", "size", Default::Size(Limits::MAX_BODY_BYTES), "larger bodies get 413")
            .yaml()
            .json(r##"{"$ref":"#/$defs/size"}"##),
        key(
            "request_timeout",
            "duration",
            Default::Duration(Limits::REQUEST_TIMEOUT),
            "longer requests are stopped (503)",
        )
        .yaml()
        .json(r##"{"$ref":"#/$defs/duration"}"##),
        key("max_in_flight", "integer ≥ 1", Default::Text("unlimited"), "beyond it: 503 with `Retry-After`")
            .yaml()
            .json(r##"{"type":"integer","minimum":1}"##),
    ],
};

pub const RESOURCE: Table = Table {
    name: "resource",
    about: "A resource.",
    keys: &[
        key("name", "snake case name", Default::Text("the struct's name in snake case"), "the resource's name")
            .derive(),
        key("description", "string", Default::None, "documentation").json(r##"{"type":"string"}"##),
        key(
            "path",
            "path",
            Default::Required,
            "collection path, a plural noun (`/orders`); the item path is `{path}/{<name>_id}`",
        ).json(r##"{"type":"string","pattern":"^/"}"##),
        key(
            "operations",
            "list of {words}",
            Default::Text("all"),
            "a missing one answers 405 with `Allow`; HEAD wherever GET is",
        )
        .words(Operation::WORDS).json(r##"{"type":"array","items":{"enum":"{words}"},"uniqueItems":true}"##),
        key("fields", "map of name to [field](#field)", Default::Literal("{}"), "the resource's fields by name (snake case)").yaml().json(r##"{"type":"object","propertyNames":{"pattern":"^[a-z][a-z0-9_]*$"},"additionalProperties":{"$ref":"#/$defs/field"}}"##),
        key("id", "{words}", Default::Word(IdKind::DEFAULT.word()), "UUID v7, or auto-increment")
            .words(IdKind::WORDS)
            .yaml().json(r##"{"enum":"{words}"}"##),
        key("timestamps", "boolean", Default::Bool(true), "server-set `created_at`, `updated_at`").yaml().json(r##"{"type":"boolean"}"##),
        key(
            "owner",
            "resource name",
            Default::None,
            "the principal resource; adds server-set `owner_id` and object-level authorization",
        ).json(r##"{"type":"string"}"##),
        key(
            "principal",
            "`identifier = <field>`",
            Default::None,
            "this resource holds the accounts (`auth.principal`)",
        )
        .derive(),
        key(
            "nested_under",
            "list of resource names",
            Default::List(&[]),
            "also `GET /{parent path}/{parent_id}{path}`; linked through `owner` or a `ref` field",
        ).json(r##"{"type":"array","items":{"type":"string"}}"##),
        key("access", "[access](#access)", Default::Text("see there"), "who may do what").json(r##"{"$ref":"#/$defs/access"}"##),
        key(
            "not_owned",
            "{words}",
            Default::Word(NotOwned::DEFAULT.word()),
            "403, or 404 to hide that a record exists",
        )
        .words(NotOwned::WORDS).json(r##"{"enum":"{words}"}"##),
        key("pagination", "[pagination](#pagination)", Default::Text("the service's"), "key-by-key override").json(r##"{"$ref":"#/$defs/pagination"}"##),
        key(
            "envelope",
            "{words}, or a key name",
            Default::Word(Envelope::DEFAULT_KEY),
            "lists as a bare array or under that key; cursor style needs a key (for `has_more`)",
        )
        .words(Envelope::WORDS)
        .open().json(r##"{"type":"string"}"##),
        key("formats", "list of {words}", Default::List(&[Format::Json.word()]), "representations its reads offer, picked by `Accept` (json always; `csv` adds `text/csv` for items and lists); nothing acceptable is a 406")
            .words(Format::WORDS)
            .json(r##"{"type":"array","items":{"enum":"{words}"},"uniqueItems":true}"##),
        key("cache", "[cache](#cache)", Default::Text("none: `Cache-Control: no-cache` with ETag"), "how long caches may keep reads").json(r##"{"$ref":"#/$defs/cache"}"##),
        key(
            "unknown_fields",
            "{words}",
            Default::Word(UnknownFields::DEFAULT.word()),
            "a field not settable in the operation: 400 naming it, or dropped; never applied",
        )
        .words(UnknownFields::WORDS).json(r##"{"enum":"{words}"}"##),
        key("renamed_from", "resource name", Default::None, "its name in the schema generated before: the next migration renames its table, records kept (see docs/evolution.md)").json(r##"{"type":"string"}"##),
        key("former_paths", "list of paths", Default::List(&[]), "old collection paths: any request under one is redirected to the same place under `path`, 301 for GET and HEAD, 308 for the rest, the query kept").json(r##"{"type":"array","items":{"type":"string"}}"##),
        key(
            "require_if_match",
            "boolean",
            Default::Bool(false),
            "PUT, PATCH and DELETE must send `If-Match` with the record's ETag: 428 without, 412 when it changed",
        )
        .json(r##"{"type":"boolean"}"##),
        key("states", "[states](#states)", Default::None, "lifecycle: `POST {item}/{transition}`").json(r##"{"$ref":"#/$defs/states"}"##),
        key(
            "status_endpoint",
            "boolean",
            Default::Bool(false),
            "`GET {item}/status` → `{status, updated_at}`; needs `states` and timestamps",
        )
        .json(r##"{"type":"boolean"}"##),
        key(
            "events",
            "list of `created`, `updated`, `deleted`, transition names",
            Default::List(&[]),
            "published as `<resource>.<event>`",
        )
        .json(r##"{"type":"array","items":{"type":"string"}}"##),
        key("links", "boolean", Default::Bool(false), "`_links` in each representation: self, its lists, status, open transitions")
            .json(r##"{"type":"boolean"}"##),
        key(
            "feed",
            "boolean",
            Default::Bool(false),
            "`GET {collection}/changes`: each change to a record the caller may read, as Server-Sent Events, resumable with `Last-Event-ID`; needs `list`",
        )
        .json(r##"{"type":"boolean"}"##),
        key("rate_limit", "[rate_limit](#rate_limit)", Default::Text("the service's"), "override").json(r##"{"$ref":"#/$defs/rate_limit"}"##),
        key("since", "declared version", Default::None, "first version that has the resource").json(r##"{"type":"integer","minimum":1}"##),
        key("until", "declared version", Default::None, "first version that no longer has it").json(r##"{"type":"integer","minimum":1}"##),
    ],
};

/// `principal(identifier = email)` (the derive's way of saying `auth.principal` and
/// `auth.login.identifier` at once).
pub const PRINCIPAL: Table = Table {
    name: "principal",
    about: "The account settings of a derived principal resource.",
    keys: &[key(
        "identifier",
        "field name",
        Default::Required,
        "the field accounts sign in with: unique, string or email",
    )
    .derive()],
};

const RULES: &str = "list of {words}, role names";

pub const ACCESS: Table = Table {
    name: "access",
    about: "Who may do what: roles plus anyone, authenticated, owner.",
    keys: &[
        key("all", RULES, Default::None, "every key the others do not set").words(AccessRule::WORDS).open().derive(),
        key(
            "create",
            RULES,
            Default::Text("without auth `[anyone]`; with `owner` `[owner]`; otherwise `[authenticated]`"),
            "who may create",
        )
        .words(AccessRule::WORDS)
        .open()
        .json(r##"{"$ref":"#/$defs/role_list"}"##),
        key("read", RULES, Default::Text("the same"), "who may get and list")
            .words(AccessRule::WORDS)
            .open()
            .json(r##"{"$ref":"#/$defs/role_list"}"##),
        key("write", RULES, Default::Text("the same"), "who may replace and patch")
            .words(AccessRule::WORDS)
            .open()
            .json(r##"{"$ref":"#/$defs/role_list"}"##),
        key("delete", RULES, Default::Text("the same"), "who may delete")
            .words(AccessRule::WORDS)
            .open()
            .json(r##"{"$ref":"#/$defs/role_list"}"##),
    ],
};

pub const CACHE: Table = Table {
    name: "cache",
    about: "Caching of responses.",
    keys: &[
        key("max_age", "duration", Default::Required, "`Cache-Control: max-age`")
            .json(r##"{"$ref":"#/$defs/duration"}"##),
        key(
            "visibility",
            "{words}",
            Default::Word(Visibility::DEFAULT.word()),
            "`public` is an error on owned or signed-in-only resources",
        )
        .words(Visibility::WORDS)
        .json(r##"{"enum":"{words}"}"##),
    ],
};

pub const STATES: Table = Table {
    name: "states",
    about: "A lifecycle: an enum field moved only by named transitions.",
    keys: &[
        key("field", "field name", Default::Required, "an `enum` field; not settable (transitions move it)").json(r##"{"type":"string"}"##),
        key("initial", "enum value", Default::Required, "the state of a new record (also the field's default)").json(r##"{"type":"string"}"##),
        key(
            "transitions",
            "map of name to [transition](#transition)",
            Default::Required,
            "each is `POST {item}/{name}`; every state must be reachable from `initial`",
        ).json(r##"{"type":"object","propertyNames":{"pattern":"^[a-z][a-z0-9_]*$"},"additionalProperties":{"$ref":"#/$defs/transition"}}"##),
    ],
};

pub const TRANSITION: Table = Table {
    name: "transition",
    about: "One transition, POST {item}/{name}.",
    keys: &[
        key("from", "state or list of states", Default::Required, "states it may start from")
            .json(r##"{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}"##),
        key("to", "state", Default::Required, "the state it leads to").json(r##"{"type":"string"}"##),
        key("roles", "list of roles", Default::Text("`[]` (whoever may write)"), "who may trigger it")
            .json(r##"{"type":"array","items":{"type":"string"}}"##),
    ],
};

pub const FIELD: Table = Table {
    name: "field",
    about: "A field.",
    keys: &[
        key("type", "see [field types](#field-types)", Default::Required, "what the field holds").words(FieldKind::WORDS).yaml().json(r##"{"enum":"{words}"}"##),
        key("text", "flag", Default::None, "the type `text`, on a `String`").derive(),
        key("email", "flag", Default::None, "the type `email`, on a `String`").derive(),
        key("url", "flag", Default::None, "the type `url`, on a `String`").derive(),
        key("password", "flag", Default::None, "the type `password`, on a `String`").derive(),
        key("json", "flag", Default::None, "the type `json`, on any serde type").derive(),
        key("roles", "flag", Default::None, "the type `roles`, on a `Vec<String>`").derive(),
        key("description", "string", Default::None, "documentation").json(r##"{"type":"string"}"##),
        key("values", "list of strings", Default::Text("required for `enum`"), "the enum's values").json(r##"{"type":"array","items":{"type":"string"}}"##),
        key(
            "to",
            "resource name",
            Default::Text("required for `ref`"),
            "the resource a ref points at (the record must exist and be one the caller may read, else 400)",
        )
        .yaml().json(r##"{"type":"string"}"##),
        key("ref", "type path", Default::None, "the type `ref`, to the resource of that type").derive(),
        key(
            "required",
            "boolean",
            Default::Bool(false),
            "must be present at create, and in a replace when settable there",
        ).json(r##"{"type":"boolean"}"##),
        key("nullable", "boolean", Default::Bool(false), "`null` is a legal value").json(r##"{"type":"boolean"}"##),
        key(
            "default",
            "a value of the type, or `now`",
            Default::None,
            "value at create when absent; `now` for date and datetime",
        ).json(r##"{}"##),
        key(
            "settable",
            "`true`, `false`, or a list of {words}",
            Default::Bool(false),
            "where a client may set it (`[create]` = immutable after create)",
        )
        .words(WriteOp::WORDS).json(r##"{"anyOf":[{"type":"boolean"},{"type":"array","items":{"enum":"{words}"},"uniqueItems":true}]}"##),
        key("write_only", "boolean", Default::Text("`false` (`true` for `password`)"), "never in a response").json(r##"{"type":"boolean"}"##),
        key("read_only", "boolean", Default::Bool(false), "rejected from every input").json(r##"{"type":"boolean"}"##),
        key(
            "read",
            RULES,
            Default::Text("whoever may read the record"),
            "who may see the field: elsewhere it is absent from every representation, list, CSV column, event and feed, and cannot be filtered or sorted on (see docs/field-access.md)",
        )
        .words(AccessRule::WORDS)
        .open()
        .json(r##"{"$ref":"#/$defs/role_list"}"##),
        key(
            "write",
            RULES,
            Default::Text("whoever may write the record"),
            "who may set the field where it is settable: to anyone else it is not settable",
        )
        .words(AccessRule::WORDS)
        .open()
        .json(r##"{"$ref":"#/$defs/role_list"}"##),
        key("renamed_from", "field name", Default::None, "its name in the schema generated before: the next migration renames its column, values kept (see docs/evolution.md)").json(r##"{"type":"string"}"##),
        key(
            "unique",
            "boolean or `global`",
            Default::Bool(false),
            "a second record with the same value gives 409; on an owned resource per owner, unless `global` (which discloses values across accounts)",
        )
        .json(r##"{"anyOf":[{"type":"boolean"},{"const":"global"}]}"##),
        key("min", "number", Default::None, "lower bound of integer, number and decimal fields").json(r##"{"type":"number"}"##),
        key("max", "number", Default::None, "upper bound of integer, number and decimal fields").json(r##"{"type":"number"}"##),
        key(
            "min_length",
            "integer ≥ 0",
            Default::None,
            "shortest text, in characters; a shorter value is a 400 naming the field",
        ).json(r##"{"type":"integer","minimum":0}"##),
        key(
            "max_length",
            "integer ≥ 0",
            Default::Text(
                "by type: `string` 255, `text` 65,535, `email` 254, `url` 2,048, `password` 1,024 (raised to `min_length` if that is higher)",
            ),
            "longest text, in characters; a longer value is a 400 naming the field",
        ).json(r##"{"type":"integer","minimum":0}"##),
        key("pattern", "regular expression", Default::None, "text must match it whole (`regex` crate syntax)").json(r##"{"type":"string"}"##),
        key("filter", "boolean", Default::Bool(false), "allowed as `?name=value` on lists; not for a field named as its list's `sort` or paging parameters").json(r##"{"type":"boolean"}"##),
        key("sort", "boolean", Default::Bool(false), "allowed in `?sort=name_asc` / `name_desc`").json(r##"{"type":"boolean"}"##),
        key("since", "declared version", Default::None, "first version that has the field").json(r##"{"type":"integer","minimum":1}"##),
        key("until", "declared version", Default::None, "first version that no longer has it").json(r##"{"type":"integer","minimum":1}"##),
    ],
};

/// Every table, in the reference's order.
pub const TABLES: &[Table] = &[
    SERVICE, API, VERSION, AUTH, LOGIN, JWT, API_KEY, RATE_LIMIT, PAGINATION, WEBHOOKS, CORS, LIMITS, RESOURCE,
    PRINCIPAL, ACCESS, CACHE, STATES, TRANSITION, FIELD,
];

/// Definitions the keys' JSON Schemas share (`{"$ref": "#/$defs/duration"}`).
const SHARED: &[(&str, &str)] = &[
    (
        "duration",
        r##"{"description":"Seconds as an integer, or a number with a unit: 500ms, 30s, 15m, 24h, 7d.","anyOf":[{"type":"integer","minimum":0},{"type":"string","pattern":"^[0-9]+(ms|s|m|h|d)$"}]}"##,
    ),
    (
        "size",
        r##"{"description":"Bytes as an integer, or a number with a unit: 512KiB, 1MiB, 2MB.","anyOf":[{"type":"integer","minimum":0},{"type":"string","pattern":"^[0-9]+ ?(B|KB|KiB|MB|MiB|GB|GiB)$"}]}"##,
    ),
    (
        "timestamp",
        r##"{"description":"An RFC 3339 datetime (2026-12-01T00:00:00Z) or a date (2027-06-30).","type":"string","anyOf":[{"pattern":"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},{"pattern":"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$"}]}"##,
    ),
    (
        "role_list",
        r##"{"type":"array","items":{"type":"string"},"description":"Role names, or the words anyone, authenticated, owner."}"##,
    ),
];

/// The JSON Schema of the format, `schema/restgen.schema.json` (for editors, through
/// yaml-language-server): every table's keys a schema file writes, each with the JSON
/// Schema of its value and a description of what it means, its default and, while it is
/// not served, what services do instead. A test holds the file to it.
pub fn json_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&json_schema()).expect("a JSON value prints");
    text.push('\n');
    text
}

/// The JSON Schema of the format as a value (see [`json_schema_text`]).
pub fn json_schema() -> serde_json::Value {
    use serde_json::{Map, Value, json};
    let mut defs = Map::new();
    for (name, def) in SHARED {
        defs.insert((*name).to_owned(), serde_json::from_str(def).expect("shared definitions are JSON"));
    }
    for table in TABLES.iter().filter(|t| !t.names(Fronts::Yaml).is_empty()) {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for k in table.keys.iter().filter(|k| k.spelled_in(Fronts::Yaml)) {
            let mut value: Value = serde_json::from_str(k.json)
                .unwrap_or_else(|e| panic!("{}.{}: its JSON Schema is not JSON: {e}", table.name, k.name));
            with_words(&mut value, k.words);
            value["description"] = json!(k.description());
            properties.insert(k.name.to_owned(), value);
            if k.default == Default::Required {
                required.push(k.name);
            }
        }
        let mut def = json!({ "type": "object", "description": table.about, "properties": properties });
        if !required.is_empty() {
            def["required"] = json!(required);
        }
        def["additionalProperties"] = json!(false);
        defs.insert(table.name.to_owned(), def);
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://restgen.dev/schema/restgen.schema.json",
        "title": "restgen schema",
        "description": "A restgen schema file: one HTTP JSON service. See docs/schema.md.",
        "$ref": "#/$defs/service",
        "$defs": defs,
    })
}

/// `"{words}"` in a key's JSON Schema stands for its words (so they are written once, in
/// the model's enum).
fn with_words(value: &mut serde_json::Value, words: &[&str]) {
    use serde_json::Value;
    match value {
        Value::String(s) if s == "{words}" => *value = Value::from(words.to_vec()),
        Value::Array(items) => items.iter_mut().for_each(|v| with_words(v, words)),
        Value::Object(map) => map.values_mut().for_each(|v| with_words(v, words)),
        _ => {}
    }
}

impl Key {
    /// What the key means, its default and, while it is not served, what services do
    /// instead: the JSON Schema's description of it.
    pub fn description(&self) -> String {
        let mut text = sentence(self.about);
        match self.default {
            Default::None | Default::Required => {}
            Default::Text(t) if t.starts_with("see ") => {}
            other => text.push_str(&format!(" Default: {}.", other.text())),
        }
        if let Some(pending) = self.pending {
            text.push_str(&format!(" Accepted, not served yet: {pending}."));
        }
        text
    }
}

/// `page size when ...` as a sentence: capitalised, ending in a full stop.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default();
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

/// The table named `name`.
pub fn table(name: &str) -> Option<&'static Table> {
    TABLES.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_words_the_key_allows() {
        for table in TABLES {
            for k in table.keys {
                if let Default::Word(w) = k.default {
                    assert!(k.words.contains(&w), "{}.{}: default `{w}` is not one of its words", table.name, k.name);
                }
                if let Default::List(ws) = k.default
                    && !k.words.is_empty()
                {
                    assert!(ws.iter().all(|w| k.words.contains(w)), "{}.{}: default {ws:?}", table.name, k.name);
                }
            }
        }
    }

    #[test]
    fn every_key_a_file_writes_has_a_json_schema_naming_its_words() {
        for table in TABLES {
            for k in table.keys {
                let what = format!("{}.{}", table.name, k.name);
                assert_eq!(
                    k.spelled_in(Fronts::Yaml),
                    !k.json.is_empty(),
                    "{what}: a JSON Schema iff a file writes it"
                );
                if k.spelled_in(Fronts::Yaml) && !k.words.is_empty() && !k.open {
                    assert!(k.json.contains("\"{words}\""), "{what}: its JSON Schema names its words as `{{words}}`");
                }
            }
        }
        // And it renders: every fragment parses.
        let schema = json_schema();
        assert_eq!(
            schema["$defs"]["resource"]["properties"]["not_owned"]["enum"],
            serde_json::json!(["forbidden", "not_found"])
        );
    }

    #[test]
    fn a_key_is_named_once_per_table() {
        for table in TABLES {
            let mut names: Vec<&str> = table.keys.iter().map(|k| k.name).collect();
            names.sort();
            let before = names.len();
            names.dedup();
            assert_eq!(names.len(), before, "{}: a key twice", table.name);
        }
    }

    #[test]
    fn durations_and_sizes_read_as_written() {
        assert_eq!(duration_text(Duration::from_secs(900)), "15m");
        assert_eq!(duration_text(Duration::from_millis(1500)), "1500ms");
        assert_eq!(size_text(1024 * 1024), "1MiB");
        assert_eq!(size_text(1000), "1000");
    }
}
