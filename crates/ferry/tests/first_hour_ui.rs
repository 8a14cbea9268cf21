//! First-hour mistakes that must not compile, with messages that say what to do. The
//! expected compiler output is in `tests/first_hour_ui/*.stderr`: regenerate with
//! `TRYBUILD=overwrite cargo test -p ferry-mcp --test first_hour_ui` and review the diff.

#[test]
fn first_hour_ui() {
    trybuild::TestCases::new().compile_fail("tests/first_hour_ui/*.rs");
}
