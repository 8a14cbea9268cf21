//! The `calculate` and `evaluate` fuzz targets' committed seed corpora
//! (fuzz/corpus/<target>/) replayed through the targets' own checks
//! (fuzz/checks/<target>.rs), on stable, as ordinary tests. The tools' sources are
//! included as modules of this test (the command has no library); their `fuzz_evaluate`
//! entry points exist under `cfg(test)`. The other targets are replayed by
//! crates/ferry/tests/fuzz_corpora.rs.

/// The reference server's tools, as the fuzz crate includes them (fuzz/src/lib.rs).
#[path = "../src/reference"]
#[allow(dead_code, unreachable_pub)]
mod reference {
    pub(crate) mod calculate;
    pub(crate) mod evaluate;
}

#[path = "../../../fuzz/checks/calculate.rs"]
#[allow(unreachable_pub)] // `pub` for the fuzz crate
mod calculate;
#[path = "../../../fuzz/checks/evaluate.rs"]
#[allow(unreachable_pub)] // `pub` for the fuzz crate
mod evaluate;

#[path = "../../../fuzz/checks/replay.rs"]
#[allow(unreachable_pub)] // shared by both corpus tests
mod replay;
use replay::replay;

#[test]
fn calculate_corpus() {
    replay("calculate", calculate::check);
}

#[test]
fn evaluate_corpus() {
    replay("evaluate", evaluate::check);
}
