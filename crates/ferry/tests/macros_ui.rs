//! The macros' compile-fail and pass suites (trybuild). The expected compiler output is
//! in `tests/ui/fail/*.stderr`: regenerate with `TRYBUILD=overwrite cargo test -p ferry
//! --test macros_ui` and review the diff (each message must point at the mistake).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
