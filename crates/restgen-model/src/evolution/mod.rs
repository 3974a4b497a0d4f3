//! Schema evolution: what changed between the schema generated last and the new one.
//!
//! `storage` is what a service keeps in its database; a generation records it beside its
//! migrations (`migrations/storage.json`), and `plan` diffs that record against the new
//! model into the next numbered migration, refusing changes that lose data. `pairing`
//! decides which old resource or field each new one continues (`renamed_from`), for the
//! planner and for restgen-core's `diff`, which classifies API changes per served version.
//! Here, beside the model, so the runtime plans a derived service's migrations with the
//! very code `restgen generate` plans a generated one's.

pub mod ddl;
pub mod pairing;
pub mod plan;
pub mod storage;

use crate::diagnostics::Diagnostics;
use crate::model::Service;
use ddl::Dialect;
use serde::{Deserialize, Serialize};
use storage::Storage;

/// Where the record lives in the service crate.
pub const RECORD_PATH: &str = "migrations/storage.json";

const ABOUT: &str = "by restgen: the database as the migrations listed here leave it. \
                     The next `restgen generate` diffs the schema against it to write the next migration. \
                     Commit it with them; do not edit.";

/// The record a generation keeps: the migrations written so far and the storage they make.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    #[serde(rename = "@generated")]
    pub about: String,
    /// Oldest first, by file stem: `0001_initial`, `0002_add_order_note`.
    pub migrations: Vec<String>,
    #[serde(flatten)]
    pub storage: Storage,
}

impl Record {
    pub fn parse(text: &str) -> Result<Record, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a record serializes");
        text.push('\n');
        text
    }
}

/// The migrations one generation writes: every one so far, and the SQL of the new one.
#[derive(Clone, Debug, PartialEq)]
pub struct Migrations {
    /// The record after this generation.
    pub record: Record,
    /// The migration this generation adds (its file stem and change list), if any.
    pub new: Option<(String, plan::Migration)>,
}

impl Migrations {
    /// A first generation: one migration that creates everything.
    pub fn initial(service: &Service) -> Migrations {
        let storage = Storage::of(service);
        let migration = plan::Migration {
            slug: "initial".into(),
            steps: Vec::new(),
            risks: Vec::new(),
            sqlite: ddl::create_all(&storage, Dialect::Sqlite),
            postgres: ddl::create_all(&storage, Dialect::Postgres),
        };
        let name = "0001_initial".to_owned();
        let record = Record { about: ABOUT.into(), migrations: vec![name.clone()], storage };
        Migrations { record, new: Some((name, migration)) }
    }

    /// The generation after `record`: the next migration when storage changed. Changes
    /// that lose data are errors in `diags` unless `accept_loss`.
    pub fn next(record: &Record, service: &Service, accept_loss: bool, diags: &mut Diagnostics) -> Migrations {
        let storage = Storage::of(service);
        let migration = plan::plan(&record.storage, service, accept_loss, diags);
        let mut migrations = record.migrations.clone();
        let new = migration.map(|m| {
            let name = stem(migrations.len() as i64 + 1, &truncate(&m.slug));
            migrations.push(name.clone());
            (name, m)
        });
        Migrations { record: Record { about: ABOUT.into(), migrations, storage }, new }
    }

    /// A generation whose migrations predate the record: the first migration on disk was
    /// generated from this very schema, so the record starts at it.
    pub fn adopt(service: &Service) -> Migrations {
        Migrations { new: None, ..Migrations::initial(service) }
    }
}

/// A file stem stays readable: slugs of many changes are cut at a word.
fn truncate(slug: &str) -> String {
    if slug.len() <= 60 {
        return slug.to_owned();
    }
    let cut = slug[..60].rfind('_').unwrap_or(60);
    slug[..cut].to_owned()
}

/// The version number of a migration's file stem (`0002_add_order_note` is 2).
pub fn version_of(name: &str) -> i64 {
    name.split('_').next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// The description of a migration's file stem: `add order note`.
pub fn description_of(name: &str) -> String {
    name.split_once('_').map_or(name, |(_, d)| d).replace('_', " ")
}

/// The file stem of migration `version` described so: `0002_add_order_note` (the
/// inverse of [`version_of`] and [`description_of`]).
pub fn stem(version: i64, description: &str) -> String {
    format!("{version:04}_{}", description.replace(' ', "_"))
}
