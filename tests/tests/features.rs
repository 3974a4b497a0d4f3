//! A generated service turns on the runtime's parts its schema uses, by the names the
//! runtime gives them: checked for every valid fixture against the runtime's own manifest.

use restgen_core::evolution::ddl::Dialect;
use restgen_core::features::{self, POSTGRES, SQLITE};
use restgen_tests::{display_name, generate, load_valid, root, valid_schemas};

/// The features the runtime's `Cargo.toml` declares, and the `default` list.
fn declared() -> (Vec<String>, Vec<String>) {
    let manifest = std::fs::read_to_string(root().join("crates/restgen/Cargo.toml")).unwrap();
    let section = manifest.split("[features]").nth(1).unwrap().split("\n[").next().unwrap();
    let mut names = Vec::new();
    let mut default = Vec::new();
    for line in section.lines().filter(|l| !l.starts_with('#') && l.contains(" = ")) {
        let (name, value) = line.split_once(" = ").unwrap();
        if name == "default" {
            default = value.split('"').skip(1).step_by(2).map(str::to_owned).collect();
        } else {
            names.push(name.to_owned());
        }
    }
    (names, default)
}

#[test]
fn the_runtime_declares_every_feature_a_service_can_need_and_turns_all_on_by_default() {
    let (names, default) = declared();
    let mut expected: Vec<String> = features::ALL.iter().map(|f| f.to_string()).collect();
    expected.push("derive".into());
    let (mut names, mut default) = (names, default);
    expected.sort();
    default.sort();
    assert_eq!(default, expected, "`restgen = \"0.1\"` serves any schema");
    // And `traces`, which no schema asks for: a deployment's choice, off by default.
    expected.push("traces".into());
    expected.sort();
    names.sort();
    assert_eq!(names, expected, "crates/restgen/Cargo.toml's [features] and restgen_model::features::ALL");
    // `require!` knows each of them but the databases, which generated code never requires.
    let macros = std::fs::read_to_string(root().join("crates/restgen/src/features.rs")).unwrap();
    let macros = macros.split_whitespace().collect::<Vec<_>>().join(" ");
    for name in features::ALL.iter().filter(|f| ![SQLITE, POSTGRES].contains(f)) {
        let ident = name.replace('-', "_");
        assert!(
            macros.contains(&format!("({ident}, $why:literal) => {{ $crate::__require_{ident}!($why); }};")),
            "{name}"
        );
        assert!(macros.contains(&format!("\"{name}\" => __require_{ident},")), "{name}");
    }
}

#[test]
fn every_fixture_turns_on_what_its_schema_uses_and_its_code_requires_it() {
    for path in valid_schemas() {
        let name = display_name(&path);
        let mut used = features::databases(&Dialect::ALL);
        used.extend(features::used(&load_valid(&path)));
        let files = generate(&path).files;
        let manifest = &files[std::path::Path::new("Cargo.toml")].contents;
        let listed: Vec<&str> = manifest
            .split("features = [")
            .nth(1)
            .unwrap()
            .lines()
            .filter_map(|l| l.trim().strip_prefix('"')?.split('"').next())
            .collect();
        assert_eq!(listed, used.iter().map(|f| f.name).collect::<Vec<_>>(), "{name}");
        // Traces are the deployment's to turn on: the service forwards the runtime's feature.
        assert!(manifest.contains("[features]\ntraces = [\"restgen/traces\"]\n"), "{name}");
        let code = &files[std::path::Path::new("src/generated/mod.rs")].contents;
        for f in &used {
            let required = code.contains(&format!("::restgen::require!({},", f.name.replace('-', "_")));
            assert_eq!(required, ![SQLITE, POSTGRES].contains(&f.name), "{name}: {}", f.name);
        }
    }
}
