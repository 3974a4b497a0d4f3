//! The migrations already in the output directory, and the next one.

use crate::{FAILURE, PROBLEMS};
use restgen_core::diagnostics::Diagnostics;
use restgen_core::evolution::ddl::{self, Dialect};
use restgen_core::evolution::storage::Storage;
use restgen_core::evolution::{Migrations, RECORD_PATH, Record};
use restgen_core::model::Service;
use std::path::Path;

/// The migrations of generating `service` into `out`: the first one when `out` has none,
/// else the next one after its record. Problems with what is on disk are printed and end
/// the run; refusals of the schema's changes go to `diags`.
pub fn plan(out: &Path, service: &Service, accept_loss: bool, diags: &mut Diagnostics) -> Result<Migrations, u8> {
    let record_path = out.join(RECORD_PATH);
    let text = match std::fs::read_to_string(&record_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return first(out, service),
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", record_path.display());
            return Err(FAILURE);
        }
    };
    let record = Record::parse(&text).map_err(|e| {
        eprintln!(
            "error: {} is not a restgen storage record ({e}); restore it from version control",
            record_path.display()
        );
        FAILURE
    })?;
    let missing: Vec<String> = record
        .migrations
        .iter()
        .flat_map(|name| Dialect::ALL.map(|d| format!("migrations/{}/{name}.sql", d.dir())))
        .filter(|path| !out.join(path).exists())
        .collect();
    if !missing.is_empty() {
        for path in &missing {
            eprintln!("error: {} lists {path}, which is missing", record_path.display());
        }
        eprintln!("restore the migrations from version control: databases that applied them need them");
        return Err(PROBLEMS);
    }
    Ok(Migrations::next(&record, service, accept_loss, diags))
}

/// The first generation into `out`, or one whose migrations predate the record: those are
/// taken over when the first one holds what this schema creates.
fn first(out: &Path, service: &Service) -> Result<Migrations, u8> {
    let initial = out.join("migrations/sqlite/0001_initial.sql");
    if !initial.exists() {
        return Ok(Migrations::initial(service));
    }
    let storage = Storage::of(service);
    let same = Dialect::ALL.iter().all(|d| {
        let path = out.join(format!("migrations/{}/0001_initial.sql", d.dir()));
        std::fs::read_to_string(path)
            .is_ok_and(|text| restgen_core::migration::body(&text) == ddl::create_all(&storage, *d))
    });
    if same {
        return Ok(Migrations::adopt(service));
    }
    eprintln!(
        "error: {} was generated before restgen kept a record of storage ({RECORD_PATH}), from another schema than this one",
        out.join("migrations").display()
    );
    eprintln!(
        "generate once more from the schema that wrote it (your version control has it), which writes the record, then from this one"
    );
    Err(PROBLEMS)
}

/// Tells what the new migration does, and how it may fail.
pub fn describe(history: &Migrations) {
    let Some((name, migration)) = &history.new else { return };
    if migration.steps.is_empty() {
        return;
    }
    println!("migration {name}:");
    for step in &migration.steps {
        println!("  {step}");
    }
    for risk in &migration.risks {
        println!("  note: {risk}");
    }
}
