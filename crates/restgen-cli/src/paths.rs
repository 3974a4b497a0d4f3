//! Where the generated crate finds the runtime crate.

use restgen_core::emit::RuntimeDep;
use std::path::{Component, Path, PathBuf};

/// The runtime crate of the checkout this binary was built from, when it is still there;
/// otherwise the registry version matching this binary.
pub(crate) fn default_runtime(out: &Path) -> RuntimeDep {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../restgen");
    if checkout.join("Cargo.toml").is_file() {
        RuntimeDep::Path(relative(out, &checkout))
    } else {
        RuntimeDep::Version(env!("CARGO_PKG_VERSION").to_owned())
    }
}

/// `target` as a path relative to the directory `from` (which may not exist yet), with
/// `/` separators so the generated Cargo.toml is the same on every machine.
pub(crate) fn relative(from: &Path, target: &Path) -> String {
    let from = absolute(from);
    let target = absolute(target);
    let common = from.components().zip(target.components()).take_while(|(a, b)| a == b).count();
    let ups = from.components().count() - common;
    let parts: Vec<String> = std::iter::repeat_n("..".to_owned(), ups)
        .chain(target.components().skip(common).map(|c| c.as_os_str().to_string_lossy().into_owned()))
        .collect();
    if parts.is_empty() { ".".into() } else { parts.join("/") }
}

/// An absolute, normalised path without touching the filesystem more than needed:
/// `..` and `.` are resolved lexically after resolving the longest existing prefix.
fn absolute(p: &Path) -> PathBuf {
    let joined = if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(p) };
    let mut existing = joined.as_path();
    let mut rest: Vec<Component> = Vec::new();
    let base = loop {
        if let Ok(c) = existing.canonicalize() {
            break c;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                existing = parent;
            }
            _ => break PathBuf::from("/"),
        }
    };
    let mut out = base;
    for c in rest.into_iter().rev() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::relative;

    #[test]
    fn relative_paths_climb_to_the_common_ancestor() {
        let root = tempfile_root();
        let a = root.join("examples/shop/service");
        let b = root.join("crates/restgen");
        std::fs::create_dir_all(&b).unwrap();
        assert_eq!(relative(&a, &b), "../../../crates/restgen");
        assert_eq!(relative(&b, &b), ".");
    }

    fn tempfile_root() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("restgen-paths-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }
}
