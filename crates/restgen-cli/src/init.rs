//! `restgen init`: a commented starter schema that passes `restgen check` as written.

use std::path::PathBuf;
use std::process::ExitCode;

const STARTER: &str = include_str!("../../../templates/starter.yaml");

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
    let text =
        STARTER.replace("__SERVICE__", name).replace("__SERVICE_ENV__", &name.to_ascii_uppercase().replace('-', "_"));
    // `create_new` so an existing schema is never overwritten.
    let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&path);
    match file.and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes())) {
        Ok(()) => {
            println!("wrote {}", path.display());
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
