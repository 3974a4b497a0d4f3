//! One snapshot per valid schema and generated file. Read every snapshot before
//! accepting it.

use restgen_tests::{display_name, generate, root};
use std::path::Path;

fn snapshot_generated(path: &Path) {
    let output = generate(path);
    for (file, contents) in &output.files {
        let name = file.display().to_string().replace('/', "__");
        insta::with_settings!({
            snapshot_path => "snapshots/generated",
            prepend_module_to_snapshot => false,
            snapshot_suffix => display_name(path),
            description => format!("{} generated from {}", file.display(), display_name(path)),
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name, contents.contents);
        });
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
