//! The macros' compile-fail and pass suites (trybuild), beside the macros. The expected
//! compiler output is in `tests/ui/fail/*.stderr`: regenerate with `TRYBUILD=overwrite cargo
//! test -p ferry-mcp-macros --test ui` and review the diff (each message must point at the
//! mistake). The cases build against `ferry` with `http-auth`, so the extractors rustc lists
//! are the same however the workspace is built.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
