//! Mistakes in `#[derive(Resource)]` and `#[derive(Input)]` attributes are compile errors
//! that point at the mistake, several reported in one build. Each case is a `.rs` with the
//! `.stderr` the compiler gives, read and kept (`TRYBUILD=overwrite` rewrites them).

#[test]
fn a_bad_attribute_is_a_compile_error_at_the_attribute() {
    trybuild::TestCases::new().compile_fail("tests/derive/fail/*.rs");
}
