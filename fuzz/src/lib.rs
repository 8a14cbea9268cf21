//! The checks of the fuzz targets (one module per target, each `check(&[u8])` panicking on
//! a violated property). The same files are included by the stable corpus replays,
//! crates/ferry/tests/fuzz_corpora.rs and crates/ferry-cli/tests/fuzz_corpora.rs.

#[path = "../checks/classify.rs"]
pub mod classify;
#[path = "../checks/engine_lines.rs"]
pub mod engine_lines;
#[path = "../checks/http_router.rs"]
pub mod http_router;
#[path = "../checks/oauth_parse.rs"]
pub mod oauth_parse;
#[path = "../checks/sse_reader.rs"]
pub mod sse_reader;
#[path = "../checks/uri_template.rs"]
pub mod uri_template;

#[path = "../checks/calculate.rs"]
pub mod calculate;
#[path = "../checks/evaluate.rs"]
pub mod evaluate;

/// The reference server's `calculate` and `evaluate` tools, their sources included from the
/// `ferry` binary (crates/ferry-cli has no library); only their `fuzz_evaluate` entry
/// points are used here.
#[path = "../../crates/ferry-cli/src/reference"]
#[allow(dead_code, unreachable_pub)]
mod reference {
    pub(crate) mod calculate;
    pub(crate) mod evaluate;
}
