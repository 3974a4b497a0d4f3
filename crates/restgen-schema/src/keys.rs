//! The keys each kind of map accepts. The lowering rejects every other key, and a test
//! holds the JSON Schema in `schema/restgen.schema.json` to exactly these sets (its
//! `$defs` carry the same names as the tables).

pub const SERVICE: &[&str] = &[
    "service",
    "title",
    "description",
    "api",
    "auth",
    "rate_limit",
    "pagination",
    "webhooks",
    "cors",
    "trusted_proxies",
    "limits",
    "resources",
];
pub const API: &[&str] = &["base_path", "versions", "versioning", "vendor"];
pub const VERSION: &[&str] = &["version", "deprecated", "sunset"];
pub const AUTH: &[&str] = &["schemes", "principal", "login", "jwt", "api_key", "roles", "default_role", "admin_roles"];
pub const LOGIN: &[&str] = &["path", "identifier"];
pub const JWT: &[&str] = &["algorithm", "secret_env", "private_key_env", "public_key_env", "ttl", "issuer", "audience"];
pub const API_KEY: &[&str] = &["header", "query"];
pub const RATE_LIMIT: &[&str] = &["algorithm", "capacity", "refill_per_second", "limit", "window", "key"];
pub const PAGINATION: &[&str] = &["style", "default_size", "max_size"];
pub const WEBHOOKS: &[&str] = &["secret_env", "max_attempts", "timeout"];
pub const CORS: &[&str] = &["allowed_origins", "max_age"];
pub const LIMITS: &[&str] = &["max_body_bytes", "request_timeout", "max_in_flight"];
pub const RESOURCE: &[&str] = &[
    "description",
    "path",
    "operations",
    "fields",
    "id",
    "timestamps",
    "owner",
    "nested_under",
    "access",
    "not_owned",
    "pagination",
    "envelope",
    "formats",
    "cache",
    "unknown_fields",
    "former_paths",
    "states",
    "status_endpoint",
    "events",
    "links",
    "rate_limit",
    "since",
    "until",
];
pub const ACCESS: &[&str] = &["create", "read", "write", "delete"];
pub const CACHE: &[&str] = &["max_age", "visibility"];
pub const STATES: &[&str] = &["field", "initial", "transitions"];
pub const TRANSITION: &[&str] = &["from", "to", "roles"];
pub const FIELD: &[&str] = &[
    "type",
    "description",
    "values",
    "to",
    "required",
    "nullable",
    "default",
    "settable",
    "write_only",
    "read_only",
    "unique",
    "min",
    "max",
    "min_length",
    "max_length",
    "pattern",
    "filter",
    "sort",
    "since",
    "until",
];

/// Every table by the name its JSON Schema definition carries.
pub const TABLES: &[(&str, &[&str])] = &[
    ("service", SERVICE),
    ("api", API),
    ("version", VERSION),
    ("auth", AUTH),
    ("login", LOGIN),
    ("jwt", JWT),
    ("api_key", API_KEY),
    ("rate_limit", RATE_LIMIT),
    ("pagination", PAGINATION),
    ("webhooks", WEBHOOKS),
    ("cors", CORS),
    ("limits", LIMITS),
    ("resource", RESOURCE),
    ("access", ACCESS),
    ("cache", CACHE),
    ("states", STATES),
    ("transition", TRANSITION),
    ("field", FIELD),
];
