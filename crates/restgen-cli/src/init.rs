//! `restgen init`: a commented starter schema that passes `restgen check` as written.

use std::path::PathBuf;
use std::process::ExitCode;

const STARTER: &str = include_str!("../templates/starter.yaml");

pub(crate) fn run(name: &str, out: Option<PathBuf>) -> Result<ExitCode, u8> {
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .split(['-', '_'])
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    if !valid {
        eprintln!("error: service name `{name}` must be lower snake or kebab case, e.g. `shop` or `my-shop`");
        return Err(2);
    }
    let path = out.unwrap_or_else(|| PathBuf::from(format!("{name}.yaml")));
    let text = STARTER
        .replace("__SERVICE__", name)
        .replace("__JWT_SECRET_ENV__", &restgen_core::model::service_env_name(name, "JWT_SECRET"))
        .replace("__SCHEMA_FILE__", SCHEMA_FILE);
    // `create_new` so an existing schema is never overwritten.
    let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&path);
    match file.and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes())) {
        Ok(()) => {
            println!("wrote {}", path.display());
            // The starter's first line points editors at the format's JSON Schema, beside it.
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
            write_schema(&dir.join(SCHEMA_FILE))?;
            println!("next: restgen check {0} && restgen generate {0} --out {1}", path.display(), name);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            eprintln!("error: {} exists already; pass --out to write elsewhere", path.display());
            Err(2)
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            Err(2)
        }
    }
}

/// The JSON Schema's file name, as the starter's `yaml-language-server` line names it.
pub(crate) const SCHEMA_FILE: &str = "restgen.schema.json";

/// `restgen schema`: the format's JSON Schema, for editors (yaml-language-server), at
/// `out` (default `restgen.schema.json` here). Rewritten whole: it is restgen's.
pub(crate) fn schema(out: Option<PathBuf>) -> Result<ExitCode, u8> {
    write_schema(&out.unwrap_or_else(|| PathBuf::from(SCHEMA_FILE)))?;
    Ok(ExitCode::SUCCESS)
}

fn write_schema(path: &std::path::Path) -> Result<(), u8> {
    std::fs::write(path, restgen_core::vocabulary::json_schema_text()).map_err(|e| {
        eprintln!("error: cannot write {}: {e}", path.display());
        2
    })?;
    println!("wrote {}", path.display());
    Ok(())
}
