//! The macros' compile-fail and pass suites (trybuild). The expected compiler output is
//! in `tests/ui/fail/*.stderr`: regenerate with `TRYBUILD=overwrite cargo test -p ferry-mcp
//! --test macros_ui` and review the diff (each message must point at the mistake).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
    // rustc lists the extractors in this case's message, and with `http-auth` (on in a
    // workspace build, where ferry-mcp-cli enables it) there are more of them.
    #[cfg(feature = "http-auth")]
    cases.compile_fail("tests/ui/fail-auth/*.rs");
}
