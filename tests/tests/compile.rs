//! The generated model code and the generated client of every valid schema compile,
//! warnings denied: a snapshot that does not build fails here, not in a user's project.

use restgen_tests::{display_name, generate, generate_client, valid_schemas};

#[test]
fn generated_models_compile() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("generated-models");
    std::fs::create_dir_all(&dir).unwrap();
    let cases = trybuild::TestCases::new();
    for path in valid_schemas() {
        let output = generate(&path);
        let models = &output.files[std::path::Path::new("src/generated/models.rs")].contents;
        let name = display_name(&path).trim_end_matches(".yaml").replace('-', "_");
        let file = dir.join(format!("{name}.rs"));
        // A binary uses none of the items, so dead code is allowed; everything else is denied.
        std::fs::write(&file, format!("#![deny(warnings)]\n#![allow(dead_code)]\n{models}\nfn main() {{}}\n")).unwrap();
        cases.pass(&file);

        // The client crate as one file: its `models` module inlined.
        let client = generate_client(&path);
        let text = |p: &str| client.files[std::path::Path::new(p)].contents.clone();
        let lib =
            text("src/lib.rs").replace("pub mod models;", &format!("pub mod models {{\n{}\n}}", text("src/models.rs")));
        let file = dir.join(format!("{name}_client.rs"));
        std::fs::write(
            &file,
            format!("#![deny(warnings)]\n#![allow(dead_code)]\npub mod client {{\n{lib}\n}}\nfn main() {{}}\n"),
        )
        .unwrap();
        cases.pass(&file);
    }
}
