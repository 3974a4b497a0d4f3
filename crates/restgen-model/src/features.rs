//! The parts of the runtime a service uses: the cargo features of the `restgen` crate its
//! build turns on, each with the reason its schema gives. The generator writes them into a
//! service's `Cargo.toml`; the generated code requires each, so a build that leaves one
//! out fails with a message naming it, never at run time.

use crate::evolution::ddl::Dialect;
use crate::model::{FieldType, Format, JwtAlgorithm, Resource, Service};

/// One feature of the runtime a service uses, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feature {
    /// The feature's name in the runtime's `Cargo.toml`.
    pub name: &'static str,
    /// Why the service needs it, in the schema's words.
    pub why: String,
}

/// The features the generated code can require, as the runtime's `Cargo.toml` names
/// them; `derive` is the hand-written path's, never a generated service's.
pub const ALL: &[&str] = &[SQLITE, POSTGRES, WEBHOOKS, JWT_HS256, JWT_RS256, JWT_ES256, PASSWORD, PATTERNS, CSV, DOCS];

pub const SQLITE: &str = "sqlite";
pub const POSTGRES: &str = "postgres";
pub const WEBHOOKS: &str = "webhooks";
pub const JWT_HS256: &str = "jwt-hs256";
pub const JWT_RS256: &str = "jwt-rs256";
pub const JWT_ES256: &str = "jwt-es256";
pub const PASSWORD: &str = "password";
pub const PATTERNS: &str = "patterns";
pub const CSV: &str = "csv";
pub const DOCS: &str = "docs";

/// The feature that signs and verifies tokens with `algorithm`.
pub fn jwt(algorithm: JwtAlgorithm) -> &'static str {
    match algorithm {
        JwtAlgorithm::Hs256 => JWT_HS256,
        JwtAlgorithm::Rs256 => JWT_RS256,
        JwtAlgorithm::Es256 => JWT_ES256,
    }
}

/// The feature of the runtime that stores records in `database`.
pub fn database(database: Dialect) -> &'static str {
    match database {
        Dialect::Sqlite => SQLITE,
        Dialect::Postgres => POSTGRES,
    }
}

/// The features of the databases a service's build keeps, `kept`, in the order of
/// [`ALL`]: which one it runs on is its `DATABASE_URL`'s choice, made at deployment, not
/// the schema's.
pub fn databases(kept: &[Dialect]) -> Vec<Feature> {
    Dialect::ALL
        .into_iter()
        .filter(|d| kept.contains(d))
        .map(|d| Feature {
            name: database(d),
            why: match d {
                Dialect::Sqlite => "SQLite, the database when `DATABASE_URL` is unset or `sqlite:`".into(),
                Dialect::Postgres => "PostgreSQL, for a `DATABASE_URL` of `postgres:`".into(),
            },
        })
        .collect()
}

/// What `service`'s schema uses of the runtime beside its databases ([`databases`]), in
/// the order of [`ALL`].
pub fn used(service: &Service) -> Vec<Feature> {
    let mut used = Vec::new();
    let publishing: Vec<&str> =
        service.resources.iter().filter(|r| !r.events.is_empty()).map(|r| r.name.value.as_str()).collect();
    if !publishing.is_empty() {
        used.push(Feature {
            name: WEBHOOKS,
            why: format!("`events` of {}: webhook deliveries", publishing.join(", ")),
        });
    }
    if let Some(auth) = &service.auth {
        let algorithm = auth.jwt.algorithm.value;
        used.push(Feature {
            name: jwt(algorithm),
            why: format!("`auth.jwt.algorithm: {}`: bearer tokens", algorithm.word()),
        });
    }
    let passwords: Vec<String> = service
        .resources
        .iter()
        .flat_map(|r| r.fields.iter().filter(|f| f.ty.value == FieldType::Password).map(move |f| (r, f)))
        .map(|(r, f)| format!("{}.{}", r.name.value, f.name.value))
        .collect();
    if !passwords.is_empty() || service.auth.is_some() {
        let why = match passwords.as_slice() {
            [] => "`auth`: sign-in checks an Argon2id hash, even for an unknown account".to_owned(),
            fields => format!("`type: password` of {}: Argon2id hashes", fields.join(", ")),
        };
        used.push(Feature { name: PASSWORD, why });
    }
    used.extend(patterns(&service.resources));
    let csv: Vec<&str> = service
        .resources
        .iter()
        .filter(|r| r.formats.value.contains(&Format::Csv))
        .map(|r| r.name.value.as_str())
        .collect();
    if !csv.is_empty() {
        used.push(Feature { name: CSV, why: format!("`formats: [csv]` of {}", csv.join(", ")) });
    }
    if service.api.docs {
        used.push(Feature { name: DOCS, why: "`api.docs`: the reference page at /docs".into() });
    }
    used
}

/// The `patterns` feature, where a field of `resources` has a `pattern` (a `#[derive(Input)]`
/// body's fields too, which are a resource of their own to the model).
pub fn patterns(resources: &[Resource]) -> Option<Feature> {
    let fields: Vec<String> = resources
        .iter()
        .flat_map(|r| r.fields.iter().filter(|f| f.pattern.is_some()).map(move |f| (r, f)))
        .map(|(r, f)| format!("{}.{}", r.name.value, f.name.value))
        .collect();
    (!fields.is_empty())
        .then(|| Feature { name: PATTERNS, why: format!("`pattern` of {}: regular expressions", fields.join(", ")) })
}
