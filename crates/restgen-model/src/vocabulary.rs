//! The vocabulary of the schema format: every key of every map, written once, with what
//! it takes, the words it allows, its default, what it means, which front-end spells it
//! (YAML, the derive attributes, or both) and whether generated services serve it yet.
//!
//! Everything else follows from these tables: the YAML front-end's and the derive's key
//! sets and did-you-mean hints, the key reference in `docs/schema.md` (rendered by
//! [`Table::markdown`] and held to it by a test), the JSON Schema's keys and words (held by
//! a test), and the warnings `restgen check` gives at keys not served yet. Words come from
//! the model's enums ([`Word`]) and defaults from the model's constants, so a default or a
//! word is stated in one place too.

use crate::model::{AccessRule, Envelope};
use crate::model::{
    ApiKey, FieldKind, Format, IdKind, Jwt, JwtAlgorithm, Limits, Login, NotOwned, Operation, PageStyle, Pagination,
    RateAlgorithmKind, RateKey, Scheme, UnknownFields, Versioning, Visibility, Webhooks, WriteOp,
};
use crate::words::Word;
use std::time::Duration;

/// The keys of one kind of map.
#[derive(Clone, Copy, Debug)]
pub struct Table {
    /// The map's name: the heading of its part of the reference and its `$defs` entry in
    /// the JSON Schema.
    pub name: &'static str,
    pub keys: &'static [Key],
}

/// One key of a map.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub name: &'static str,
    /// What it takes, as the reference says it; `{words}` stands for [`Key::words`].
    pub ty: &'static str,
    /// The words it names (each item's, for a list).
    pub words: &'static [&'static str],
    /// Whether other words are allowed beside [`Key::words`] (a key name, a role).
    pub open: bool,
    pub default: Default,
    /// What it means, in one line.
    pub about: &'static str,
    pub fronts: Fronts,
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
    Key { name, ty, words: &[], open: false, default, about, fronts: Fronts::Both, pending: None }
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

    const fn yaml(mut self) -> Key {
        self.fronts = Fronts::Yaml;
        self
    }

    const fn derive(mut self) -> Key {
        self.fronts = Fronts::Derive;
        self
    }

    const fn pending(mut self, what: &'static str) -> Key {
        self.pending = Some(what);
        self
    }
}

const VERSION_GATES: &str = "the service serves one API, with every resource and field in it";
const LIFECYCLE: &str = "no `POST {item}/{transition}` route exists: records stay in their initial state";
const EVENTS: &str = "there are no webhook endpoints, and nothing is published";

pub const SERVICE: Table = Table {
    name: "service",
    keys: &[
        key(
            "service",
            "name",
            Default::Required,
            "crate and binary name, lower snake or kebab case (`shop`, `my-shop`)",
        )
        .yaml(),
        key("title", "string", Default::Literal("The <service> service"), "for the OpenAPI document and README").yaml(),
        key("description", "string", Default::None, "for the OpenAPI document, README and `Cargo.toml`").yaml(),
        key("api", "[api](#api)", Default::Text("no prefix, no versions"), "base path and versions").yaml(),
        key("auth", "[auth](#auth)", Default::Text("absent: the service is open"), "authentication and roles").yaml(),
        key("rate_limit", "[rate_limit](#rate_limit)", Default::None, "default limit for every route").yaml(),
        key("pagination", "[pagination](#pagination)", Default::Text("cursor, 20, 100"), "default for every resource")
            .yaml(),
        key(
            "webhooks",
            "[webhooks](#webhooks)",
            Default::Text("see below"),
            "delivery settings; endpoints exist when a resource has `events`",
        )
        .yaml()
        .pending("nothing is delivered: these settings have no effect yet"),
        key("cors", "[cors](#cors)", Default::Text("absent: no CORS headers"), "cross-origin settings").yaml(),
        key(
            "trusted_proxies",
            "list of IPs or CIDR ranges",
            Default::List(&[]),
            "proxies whose `Forwarded` / `X-Forwarded-For` is believed",
        )
        .yaml(),
        key("limits", "[limits](#limits)", Default::Text("see below"), "request limits").yaml(),
        key(
            "resources",
            "map of name to [resource](#resource)",
            Default::Literal("{}"),
            "names are snake case and singular",
        )
        .yaml(),
    ],
};

pub const API: Table = Table {
    name: "api",
    keys: &[
        key("base_path", "path", Default::Literal("\"\""), "prefix of every resource route (`/api`); auth endpoints and `/webhooks` live under it too, never under `/v{n}`").yaml(),
        key("versions", "list of [version](#version) or numbers", Default::List(&[]), "versions served side by side, oldest first; `- 2` is short for `- { version: 2 }`")
            .yaml()
            .pending("requests under `/v{n}` answer 404, and no `Deprecation` or `Sunset` is sent"),
        key("versioning", "list of {words}", Default::Text("`[path]` when versions exist"), "how a request picks a version: `/v2/...`, `X-API-Version: 2`, `Accept: application/vnd.{vendor}.v2+json`")
            .words(Versioning::WORDS)
            .yaml(),
        key("vendor", "string", Default::Text("the service name"), "the vendor in media types").yaml(),
    ],
};

pub const VERSION: Table = Table {
    name: "version",
    keys: &[
        key("version", "integer ≥ 1", Default::Required, "the version number").yaml(),
        key("deprecated", "date or RFC 3339 datetime", Default::None, "responses carry `Deprecation: @<unix seconds>`")
            .yaml(),
        key(
            "sunset",
            "date or RFC 3339 datetime",
            Default::None,
            "responses carry `Sunset: <HTTP date>`; must not precede `deprecated`",
        )
        .yaml(),
    ],
};

pub const AUTH: Table = Table {
    name: "auth",
    keys: &[
        key("schemes", "list of {words}", Default::List(&[Scheme::DEFAULT.word()]), "accepted credentials")
            .words(Scheme::WORDS)
            .yaml(),
        key(
            "principal",
            "resource name",
            Default::Text("none (required for `bearer`, `basic` and owned resources)"),
            "the resource that holds accounts",
        )
        .yaml(),
        key("login", "[login](#login)", Default::Text("path `/auth/login`"), "the login endpoint").yaml(),
        key("jwt", "[jwt](#jwt)", Default::Text("HS256, 15m"), "bearer token settings (only with `bearer`)").yaml(),
        key(
            "api_key",
            "[api_key](#api_key)",
            Default::Text("header `X-API-Key`"),
            "API key settings (only with `api_key`)",
        )
        .yaml(),
        key("roles", "list of names", Default::List(&[]), "declared roles; not `anyone`, `authenticated` or `owner`")
            .yaml(),
        key("default_role", "role", Default::None, "role of a new account").yaml(),
        key("admin_roles", "list of roles", Default::List(&[]), "roles that see and change every record").yaml(),
    ],
};

pub const LOGIN: Table = Table {
    name: "login",
    keys: &[
        key("path", "path", Default::Literal(Login::PATH), "the login endpoint").yaml(),
        key(
            "identifier",
            "field name",
            Default::Text("required with a principal"),
            "the principal's field that signs in; must be `unique` and `required`",
        )
        .yaml(),
    ],
};

pub const JWT: Table = Table {
    name: "jwt",
    keys: &[
        key("algorithm", "{words}", Default::Word(JwtAlgorithm::DEFAULT.word()), "signing algorithm")
            .words(JwtAlgorithm::WORDS)
            .yaml(),
        key("secret_env", "env var name", Default::Literal("<SERVICE>_JWT_SECRET"), "HS256 shared secret").yaml(),
        key(
            "private_key_env",
            "env var name",
            Default::Text("required for RS256/ES256"),
            "variable holding the path of the PEM private key",
        )
        .yaml(),
        key(
            "public_key_env",
            "env var name",
            Default::Text("required for RS256/ES256"),
            "variable holding the path of the PEM public key",
        )
        .yaml(),
        key("ttl", "duration", Default::Duration(Jwt::TTL), "token lifetime").yaml(),
        key("issuer", "string", Default::None, "the `iss` claim, checked when set").yaml(),
        key("audience", "string", Default::None, "the `aud` claim, checked when set").yaml(),
    ],
};

pub const API_KEY: Table = Table {
    name: "api_key",
    keys: &[
        key("header", "header name", Default::Literal(ApiKey::HEADER), "header carrying the key").yaml(),
        key("query", "string", Default::None, "query parameter carrying the key, if any").yaml(),
    ],
};

pub const RATE_LIMIT: Table = Table {
    name: "rate_limit",
    keys: &[
        key("algorithm", "{words}", Default::Word(RateAlgorithmKind::DEFAULT.word()), "").words(RateAlgorithmKind::WORDS),
        key("capacity", "integer ≥ 1", Default::Text("required for token_bucket"), "bucket size"),
        key("refill_per_second", "number > 0", Default::Text("required for token_bucket"), "tokens added per second"),
        key("limit", "integer ≥ 1", Default::Text("required for windows"), "requests per window"),
        key("window", "duration", Default::Text("required for windows"), "window length"),
        key("key", "{words}", Default::Text("`principal` with auth, else `ip`"), "what a limit counts by; anonymous callers fall back to `ip`, API key holders signed in otherwise to `principal`")
            .words(RateKey::WORDS),
    ],
};

pub const PAGINATION: Table = Table {
    name: "pagination",
    keys: &[
        key(
            "style",
            "{words}",
            Default::Word(Pagination::STYLE.word()),
            "`?page=&per_page=`, `?offset=&limit=`, or `?limit=&cursor=` / `starting_after=`",
        )
        .words(PageStyle::WORDS),
        key(
            "default_size",
            "integer ≥ 1",
            Default::Int(Pagination::DEFAULT_SIZE as u64),
            "page size when the client names none; at most `max_size`",
        ),
        key("max_size", "integer ≥ 1", Default::Int(Pagination::MAX_SIZE as u64), "larger requests are clamped"),
    ],
};

pub const WEBHOOKS: Table = Table {
    name: "webhooks",
    keys: &[
        key("secret_env", "env var name", Default::Literal("<SERVICE>_WEBHOOK_SECRET"), "signing secret").yaml(),
        key("max_attempts", "integer ≥ 1", Default::Int(Webhooks::MAX_ATTEMPTS as u64), "delivery attempts").yaml(),
        key("timeout", "duration", Default::Duration(Webhooks::TIMEOUT), "timeout of one delivery").yaml(),
    ],
};

pub const CORS: Table = Table {
    name: "cors",
    keys: &[
        key(
            "allowed_origins",
            "list of origins",
            Default::Required,
            "`scheme://host[:port]` each, or `\"*\"` alone (then no credentials)",
        )
        .yaml(),
        key("max_age", "duration", Default::None, "how long a preflight may be cached").yaml(),
    ],
};

pub const LIMITS: Table = Table {
    name: "limits",
    keys: &[
        key("max_body_bytes", "size", Default::Size(Limits::MAX_BODY_BYTES), "larger bodies get 413").yaml(),
        key(
            "request_timeout",
            "duration",
            Default::Duration(Limits::REQUEST_TIMEOUT),
            "longer requests are stopped (503)",
        )
        .yaml(),
        key("max_in_flight", "integer ≥ 1", Default::Text("unlimited"), "beyond it: 503 with `Retry-After`").yaml(),
    ],
};

pub const RESOURCE: Table = Table {
    name: "resource",
    keys: &[
        key("name", "snake case name", Default::Text("the struct's name in snake case"), "the resource's name")
            .derive(),
        key("description", "string", Default::None, "documentation"),
        key(
            "path",
            "path",
            Default::Required,
            "collection path, a plural noun (`/orders`); the item path is `{path}/{<name>_id}`",
        ),
        key(
            "operations",
            "list of {words}",
            Default::Text("all"),
            "a missing one answers 405 with `Allow`; HEAD wherever GET is",
        )
        .words(Operation::WORDS),
        key("fields", "map of name to [field](#field)", Default::Literal("{}"), "").yaml(),
        key("id", "{words}", Default::Word(IdKind::DEFAULT.word()), "UUID v7, or auto-increment")
            .words(IdKind::WORDS)
            .yaml(),
        key("timestamps", "boolean", Default::Bool(true), "server-set `created_at`, `updated_at`").yaml(),
        key(
            "owner",
            "resource name",
            Default::None,
            "the principal resource; adds server-set `owner_id` and object-level authorization",
        ),
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
        ),
        key("access", "[access](#access)", Default::Text("see there"), "who may do what"),
        key(
            "not_owned",
            "{words}",
            Default::Word(NotOwned::DEFAULT.word()),
            "403, or 404 to hide that a record exists",
        )
        .words(NotOwned::WORDS),
        key("pagination", "[pagination](#pagination)", Default::Text("the service's"), "key-by-key override"),
        key(
            "envelope",
            "{words}, or a key name",
            Default::Word(Envelope::DEFAULT_KEY),
            "lists as a bare array or under that key; cursor style needs a key (for `has_more`)",
        )
        .words(Envelope::WORDS)
        .open(),
        key("formats", "list of {words}", Default::List(&[Format::Json.word()]), "response media types (json always)")
            .words(Format::WORDS)
            .pending("`csv` is never offered: every answer is JSON"),
        key("cache", "[cache](#cache)", Default::Text("none: `Cache-Control: no-cache` with ETag"), ""),
        key(
            "unknown_fields",
            "{words}",
            Default::Word(UnknownFields::DEFAULT.word()),
            "a field not settable in the operation: 400 naming it, or dropped; never applied",
        )
        .words(UnknownFields::WORDS),
        key("former_paths", "list of paths", Default::List(&[]), "old collection paths answered with 301")
            .pending("requests under a former path answer 404"),
        key("states", "[states](#states)", Default::None, "lifecycle").pending(LIFECYCLE),
        key(
            "status_endpoint",
            "boolean",
            Default::Bool(false),
            "`GET {item}/status` → `{status, updated_at}`; needs `states`",
        )
        .pending("`GET {item}/status` answers 404"),
        key(
            "events",
            "list of `created`, `updated`, `deleted`, transition names",
            Default::List(&[]),
            "published as `<resource>.<event>`",
        )
        .pending(EVENTS),
        key("links", "boolean", Default::Bool(false), "hypermedia links in each representation")
            .pending("representations carry no `_links`"),
        key("rate_limit", "[rate_limit](#rate_limit)", Default::Text("the service's"), "override"),
        key("since", "declared version", Default::None, "first version that has the resource").pending(VERSION_GATES),
        key("until", "declared version", Default::None, "first version that no longer has it").pending(VERSION_GATES),
    ],
};

/// `principal(identifier = email)` (the derive's way of saying `auth.principal` and
/// `auth.login.identifier` at once).
pub const PRINCIPAL: Table = Table {
    name: "principal",
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
    keys: &[
        key("all", RULES, Default::None, "every key the others do not set").words(AccessRule::WORDS).open().derive(),
        key(
            "create",
            RULES,
            Default::Text("without auth `[anyone]`; with `owner` `[owner]`; otherwise `[authenticated]`"),
            "who may create",
        )
        .words(AccessRule::WORDS)
        .open(),
        key("read", RULES, Default::Text("the same"), "who may get and list").words(AccessRule::WORDS).open(),
        key("write", RULES, Default::Text("the same"), "who may replace and patch").words(AccessRule::WORDS).open(),
        key("delete", RULES, Default::Text("the same"), "who may delete").words(AccessRule::WORDS).open(),
    ],
};

pub const CACHE: Table = Table {
    name: "cache",
    keys: &[
        key("max_age", "duration", Default::Required, "`Cache-Control: max-age`"),
        key(
            "visibility",
            "{words}",
            Default::Word(Visibility::DEFAULT.word()),
            "`public` is an error on owned or signed-in-only resources",
        )
        .words(Visibility::WORDS),
    ],
};

pub const STATES: Table = Table {
    name: "states",
    keys: &[
        key("field", "field name", Default::Required, "an `enum` field; not settable (transitions move it)"),
        key("initial", "enum value", Default::Required, "the state of a new record (also the field's default)"),
        key(
            "transitions",
            "map of name to [transition](#transition)",
            Default::Required,
            "each is `POST {item}/{name}`; every state must be reachable from `initial`",
        ),
    ],
};

pub const TRANSITION: Table = Table {
    name: "transition",
    keys: &[
        key("from", "state or list of states", Default::Required, "states it may start from"),
        key("to", "state", Default::Required, "the state it leads to"),
        key("roles", "list of roles", Default::Text("`[]` (whoever may write)"), "who may trigger it"),
    ],
};

pub const FIELD: Table = Table {
    name: "field",
    keys: &[
        key("type", "see [field types](#field-types)", Default::Required, "").words(FieldKind::WORDS).yaml(),
        key("text", "flag", Default::None, "the type `text`, on a `String`").derive(),
        key("email", "flag", Default::None, "the type `email`, on a `String`").derive(),
        key("url", "flag", Default::None, "the type `url`, on a `String`").derive(),
        key("password", "flag", Default::None, "the type `password`, on a `String`").derive(),
        key("json", "flag", Default::None, "the type `json`, on any serde type").derive(),
        key("roles", "flag", Default::None, "the type `roles`, on a `Vec<String>`").derive(),
        key("description", "string", Default::None, "documentation"),
        key("values", "list of strings", Default::Text("required for `enum`"), "the enum's values"),
        key(
            "to",
            "resource name",
            Default::Text("required for `ref`"),
            "the resource a ref points at (must exist, else 400)",
        )
        .yaml(),
        key("ref", "type path", Default::None, "the type `ref`, to the resource of that type").derive(),
        key(
            "required",
            "boolean",
            Default::Bool(false),
            "must be present at create, and in a replace when settable there",
        ),
        key("nullable", "boolean", Default::Bool(false), "`null` is a legal value"),
        key(
            "default",
            "a value of the type, or `now`",
            Default::None,
            "value at create when absent; `now` for date and datetime",
        ),
        key(
            "settable",
            "`true`, `false`, or a list of {words}",
            Default::Bool(false),
            "where a client may set it (`[create]` = immutable after create)",
        )
        .words(WriteOp::WORDS),
        key("write_only", "boolean", Default::Text("`false` (`true` for `password`)"), "never in a response"),
        key("read_only", "boolean", Default::Bool(false), "rejected from every input"),
        key("unique", "boolean", Default::Bool(false), "a second record with the same value gives 409"),
        key("min", "number", Default::None, "lower bound of integer, number and decimal fields"),
        key("max", "number", Default::None, "upper bound of integer, number and decimal fields"),
        key(
            "min_length",
            "integer ≥ 0",
            Default::None,
            "shortest text, in characters; a shorter value is a 400 naming the field",
        ),
        key(
            "max_length",
            "integer ≥ 0",
            Default::Text(
                "by type: `string` 255, `text` 65,535, `email` 254, `url` 2,048, `password` 1,024 (raised to `min_length` if that is higher)",
            ),
            "longest text, in characters; a longer value is a 400 naming the field",
        ),
        key("pattern", "regular expression", Default::None, "text must match it whole (`regex` crate syntax)"),
        key("filter", "boolean", Default::Bool(false), "allowed as `?name=value` on lists"),
        key("sort", "boolean", Default::Bool(false), "allowed in `?sort=name_asc` / `name_desc`"),
        key("since", "declared version", Default::None, "first version that has the field").pending(VERSION_GATES),
        key("until", "declared version", Default::None, "first version that no longer has it").pending(VERSION_GATES),
    ],
};

/// Every table, in the reference's order.
pub const TABLES: &[Table] = &[
    SERVICE, API, VERSION, AUTH, LOGIN, JWT, API_KEY, RATE_LIMIT, PAGINATION, WEBHOOKS, CORS, LIMITS, RESOURCE,
    PRINCIPAL, ACCESS, CACHE, STATES, TRANSITION, FIELD,
];

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
