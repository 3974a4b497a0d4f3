//! Every diagnostic code is documented in docs/diagnostics.md, under its own name.

#[test]
fn every_code_is_in_the_reference() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/diagnostics.md")).unwrap();
    for code in restgen_core::diagnostics::codes::ALL {
        let row = format!("| {} | {} |", code.id, code.name);
        assert!(doc.contains(&row), "docs/diagnostics.md lacks the row `{row}`");
    }
}

#[test]
fn codes_are_unique() {
    let all = restgen_core::diagnostics::codes::ALL;
    for (i, a) in all.iter().enumerate() {
        for b in &all[..i] {
            assert!(a.id != b.id && a.name != b.name, "{a:?} and {b:?}");
        }
    }
}
