//! One snapshot per valid schema and generated file. Read every snapshot before
//! accepting it.

use restgen_tests::{display_name, generate, generate_client, root};
use std::path::Path;

/// Every generated file of `path`'s service and client crates, by a name for it.
fn generated_files(path: &Path) -> Vec<(String, String)> {
    let service = generate(path).files.into_iter().map(|(file, f)| (file.display().to_string(), f.contents));
    let client =
        generate_client(path).files.into_iter().map(|(file, f)| (format!("client/{}", file.display()), f.contents));
    service.chain(client).collect()
}

fn snapshot_generated(path: &Path) {
    for (file, contents) in generated_files(path) {
        let name = file.replace('/', "__");
        insta::with_settings!({
            snapshot_path => "snapshots/generated",
            prepend_module_to_snapshot => false,
            snapshot_suffix => display_name(path),
            description => format!("{file} generated from {}", display_name(path)),
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name, contents);
        });
    }
}

/// What a person reads of `path`'s newest document, operation by operation: the summary,
/// who may call it, and what each parameter does. Reviewed as prose.
fn snapshot_descriptions(path: &Path) {
    let files = generate(path).files;
    let document: serde_json::Value =
        serde_json::from_str(&files[Path::new("openapi.json")].contents).expect("the document is JSON");
    let text = |v: &serde_json::Value| v.as_str().unwrap_or("(none)").to_owned();
    let mut out = String::new();
    for (route, item) in document["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten().filter(|(m, _)| *m != "parameters") {
            out.push_str(&format!(
                "{} {route}: {}\n  {}\n",
                method.to_uppercase(),
                text(&op["summary"]),
                text(&op["description"])
            ));
            let parameters = item["parameters"].as_array().into_iter().chain(op["parameters"].as_array()).flatten();
            for p in parameters {
                let p = match p["$ref"].as_str() {
                    Some(r) => &document["components"]["parameters"][r.rsplit('/').next().unwrap()],
                    None => p,
                };
                out.push_str(&format!("  - {} ({}): {}\n", text(&p["name"]), text(&p["in"]), text(&p["description"])));
            }
        }
    }
    insta::with_settings!({
        snapshot_path => "snapshots/descriptions",
        prepend_module_to_snapshot => false,
        snapshot_suffix => display_name(path),
        description => format!("the operations' prose in the newest document of {}", display_name(path)),
        omit_expression => true,
    }, {
        insta::assert_snapshot!("descriptions", out);
    });
}

#[test]
fn descriptions_of_every_schema() {
    for path in restgen_tests::valid_schemas() {
        snapshot_descriptions(&path);
    }
}

#[test]
fn generated_from_fixtures() {
    insta::glob!("../fixtures/valid", "*.yaml", snapshot_generated);
}

#[test]
fn generated_from_examples() {
    // Not `glob!`: it drops the file-name suffix when one file matches, and the examples
    // should be named like the fixtures.
    let examples = restgen_tests::valid_schemas().into_iter().filter(|p| p.starts_with(root().join("examples")));
    for path in examples {
        snapshot_generated(&path);
    }
}

/// A snapshot no test writes any more (its fixture or generated file is gone) fails the
/// suite, as `cargo insta test --unreferenced=reject` would.
#[test]
fn no_orphan_snapshots() {
    let dir = root().join("tests/tests/snapshots");
    let valid: Vec<_> = restgen_tests::valid_schemas();
    let invalid: Vec<String> = restgen_tests::invalid_schemas().iter().map(|p| display_name(p)).collect();
    let mut orphans = Vec::new();
    for (sub, live) in [("generated", true), ("diagnostics", false), ("descriptions", true)] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else { continue };
        for entry in entries {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            let Some((stem, fixture)) = name.strip_suffix(".snap").and_then(|n| n.rsplit_once('@')) else {
                orphans.push(name);
                continue;
            };
            let referenced = if sub == "descriptions" {
                stem == "descriptions" && valid.iter().any(|p| display_name(p) == fixture)
            } else if live {
                valid
                    .iter()
                    .find(|p| display_name(p) == fixture)
                    .is_some_and(|p| generated_files(p).iter().any(|(f, _)| f.replace('/', "__") == stem))
            } else {
                invalid.iter().any(|f| f == fixture)
            };
            if !referenced {
                orphans.push(format!("{sub}/{name}"));
            }
        }
    }
    assert!(orphans.is_empty(), "snapshots no test writes; delete them: {orphans:?}");
}
