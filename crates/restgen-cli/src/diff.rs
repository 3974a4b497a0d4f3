//! `restgen diff`: what a schema change does to clients of the versions already served.

use crate::{DiffFormat, FAILURE, Format, PROBLEMS, report};
use restgen_core::evolution::diff::{self, Class};
use restgen_core::model::Service;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

pub fn run(files: &[PathBuf], against: Option<&str>, format: DiffFormat, color: bool) -> Result<ExitCode, u8> {
    let ((old_name, old_text), new) = match (files, against) {
        ([new], Some(rev)) => (at_revision(new, rev)?, new),
        ([old, new], None) => ((old.display().to_string(), read(old)?), new),
        ([_, _], Some(_)) => {
            eprintln!("error: with --against, give only the new schema: the old one is the file at that ref");
            return Err(FAILURE);
        }
        _ => {
            eprintln!("error: give the old and the new schema, or the new one with --against <ref>");
            return Err(FAILURE);
        }
    };
    let old = parse(&old_name, &old_text, color)?;
    let new_name = new.display().to_string();
    let new = parse(&new_name, &read(new)?, color)?;
    let report = diff::diff(&old, &new);
    match format {
        DiffFormat::Human => print!("{}", diff::render(&report, &old_name, &new_name)),
        DiffFormat::Json => print!("{}", diff::render_json(&report)),
    }
    Ok(if report.count(Class::Breaking) > 0 { ExitCode::from(PROBLEMS) } else { ExitCode::SUCCESS })
}

fn read(path: &Path) -> Result<String, u8> {
    std::fs::read_to_string(path).map_err(|e| {
        eprintln!("error: cannot read {}: {e}", path.display());
        FAILURE
    })
}

/// A schema checked; one with errors cannot be compared (exit 2, its problems shown).
fn parse(name: &str, text: &str, color: bool) -> Result<Service, u8> {
    let (service, diags) = match restgen_schema::load(name, text) {
        Ok((service, diags)) => (Some(service), diags),
        Err(diags) => (None, diags),
    };
    report(diags, name, text, Format::Human, color);
    service.ok_or_else(|| {
        eprintln!("error: {name} has errors; fix them to compare it");
        FAILURE
    })
}

/// The file `path` as git revision `rev` has it, named `rev:path`.
fn at_revision(path: &Path, rev: &str) -> Result<(String, String), u8> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    // `./name` is relative to the directory git runs in.
    let spec = format!("{rev}:./{file}");
    let output = Command::new("git").arg("-C").arg(dir).args(["show", &spec]).output().map_err(|e| {
        eprintln!("error: cannot run git: {e}");
        FAILURE
    })?;
    if !output.status.success() {
        eprintln!("error: git show {spec} (in {}): {}", dir.display(), String::from_utf8_lossy(&output.stderr).trim());
        return Err(FAILURE);
    }
    let text = String::from_utf8(output.stdout).map_err(|_| {
        eprintln!("error: {spec} is not UTF-8");
        FAILURE
    })?;
    Ok((format!("{rev}:{}", path.display()), text))
}
