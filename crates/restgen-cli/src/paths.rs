//! Where the generated crate finds the runtime crate.

use restgen_core::emit::RuntimeDep;
use std::path::{Component, Path, PathBuf};

/// The runtime crate `name` (`restgen`, `restgen-client`) of the checkout this binary was
/// built from, when it is still there; otherwise the registry version matching this binary.
pub(crate) fn default_runtime(out: &Path, name: &str) -> RuntimeDep {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name);
    if checkout.join("Cargo.toml").is_file() {
        RuntimeDep::Path(relative(out, &checkout))
    } else {
        RuntimeDep::Version(env!("CARGO_PKG_VERSION").to_owned())
    }
}

/// `<service>-client` beside the service crate's directory `out`.
pub(crate) fn client_dir(out: &Path, service: &str) -> PathBuf {
    let parent = absolute(out).parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = format!("{service}-client");
    // Relative stays relative, so printed paths read like the `--out` the user typed.
    match (out.parent(), out.file_name()) {
        (Some(p), Some(_)) if out.is_relative() => p.join(dir),
        _ => parent.join(dir),
    }
}

/// The `Cargo.toml` of the workspace the crate at `out` would belong to, found as cargo
/// finds it: the nearest directory above with a `[workspace]` table whose `exclude` does not
/// name the crate's directory (an excluded crate looks further up). A manifest that does not
/// parse is passed over; cargo reports it at the first build.
pub(crate) fn workspace_root(out: &Path) -> Option<PathBuf> {
    let crate_dir = absolute(out);
    crate_dir.ancestors().skip(1).map(|dir| dir.join("Cargo.toml")).find(|manifest| {
        let Some(table) = std::fs::read_to_string(manifest).ok().and_then(|t| t.parse::<toml::Table>().ok()) else {
            return false;
        };
        let Some(workspace) = table.get("workspace").and_then(toml::Value::as_table) else { return false };
        let root = manifest.parent().expect("a manifest's directory");
        let excluded = workspace.get("exclude").and_then(toml::Value::as_array).into_iter().flatten();
        // Cargo's test: the crate's path starts with the excluded one, component by component.
        !excluded.filter_map(toml::Value::as_str).any(|ex| crate_dir.starts_with(absolute(&root.join(ex))))
    })
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
    use super::{client_dir, relative, workspace_root};
    use std::path::Path;

    #[test]
    fn the_client_crate_goes_beside_the_service_crate() {
        assert_eq!(client_dir(Path::new("shop-service"), "shop"), Path::new("shop-client"));
        assert_eq!(client_dir(Path::new("examples/shop/service"), "shop"), Path::new("examples/shop/shop-client"));
        let here = std::env::current_dir().unwrap();
        assert_eq!(client_dir(Path::new("."), "shop"), here.parent().unwrap().join("shop-client"));
    }

    #[test]
    fn relative_paths_climb_to_the_common_ancestor() {
        let root = tempfile_root();
        let a = root.join("examples/shop/service");
        let b = root.join("crates/restgen");
        std::fs::create_dir_all(&b).unwrap();
        assert_eq!(relative(&a, &b), "../../../crates/restgen");
        assert_eq!(relative(&b, &b), ".");
    }

    #[test]
    fn a_crate_below_a_workspace_manifest_is_its_member() {
        let root = tempfile_root().join("workspace");
        std::fs::create_dir_all(root.join("services/shop")).unwrap();
        // A package's manifest above is not a workspace; the one with the table is.
        std::fs::write(root.join("services/Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        assert_eq!(workspace_root(&root.join("services/shop")), None);
        std::fs::write(root.join("Cargo.toml"), "[workspace.package]\nversion = \"1.0.0\"\n").unwrap();
        assert_eq!(workspace_root(&root.join("services/shop/new")), Some(root.join("Cargo.toml")));
        std::fs::write(root.join("Cargo.toml"), "# [workspace] in a comment\n[package]\n").unwrap();
        assert_eq!(workspace_root(&root.join("services/shop")), None);
        std::fs::write(root.join("Cargo.toml"), "workspace = { members = [\"services/*\"] }\n").unwrap();
        assert_eq!(workspace_root(&root.join("services/shop")), Some(root.join("Cargo.toml")));
    }

    #[test]
    fn a_crate_a_workspace_excludes_is_not_its_member() {
        let outer = tempfile_root().join("excluding");
        let root = outer.join("workspace");
        std::fs::create_dir_all(root.join("services/shop")).unwrap();
        let excluding =
            |list: &str| std::fs::write(root.join("Cargo.toml"), format!("[workspace]\nexclude = [{list}]\n"));
        excluding("\"services\"").unwrap();
        assert_eq!(workspace_root(&root.join("services/shop")), None);
        // Excluded is a matter of whole components, and `./` or `..` in it change nothing.
        excluding("\"./services/../services/shop\"").unwrap();
        assert_eq!(workspace_root(&root.join("services/shop/new")), None);
        excluding("\"serv\", \"services/shopping\"").unwrap();
        assert_eq!(workspace_root(&root.join("services/shop")), Some(root.join("Cargo.toml")));
        // An excluded crate belongs to the next workspace up, as cargo looks for it.
        excluding("\"services\"").unwrap();
        std::fs::write(outer.join("Cargo.toml"), "[workspace]\nmembers = [\"workspace/services/*\"]\n").unwrap();
        assert_eq!(workspace_root(&root.join("services/shop")), Some(outer.join("Cargo.toml")));
        // A manifest that does not parse is cargo's to report; it is no workspace here.
        std::fs::write(outer.join("Cargo.toml"), "[workspace\n").unwrap();
        assert_eq!(workspace_root(&root.join("services/shop")), None);
    }

    fn tempfile_root() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("restgen-paths-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }
}
