//! The fuzz targets' committed seed corpora (fuzz/corpus/<target>/) replayed through the
//! targets' own checks (fuzz/checks/<target>.rs), on stable, as ordinary tests: every input
//! must pass every property (see each check's documentation). Crashes found by fuzzing are
//! kept there as regression inputs. The `calculate` and `evaluate` targets are replayed by
//! crates/ferry-cli/tests/fuzz_corpora.rs.

#[path = "../../../fuzz/checks/classify.rs"]
#[allow(unreachable_pub)] // `pub` for the fuzz crate
mod classify;
#[path = "../../../fuzz/checks/engine_lines.rs"]
#[allow(unreachable_pub)] // `pub` for the fuzz crate
mod engine_lines;
#[path = "../../../fuzz/checks/http_router.rs"]
#[allow(unreachable_pub)] // `pub` for the fuzz crate
mod http_router;
#[path = "../../../fuzz/checks/oauth_parse.rs"]
#[allow(unreachable_pub)] // `pub` for the fuzz crate
mod oauth_parse;
#[path = "../../../fuzz/checks/sse_reader.rs"]
#[allow(unreachable_pub)] // `pub` for the fuzz crate
mod sse_reader;
#[path = "../../../fuzz/checks/uri_template.rs"]
#[allow(unreachable_pub)] // `pub` for the fuzz crate
mod uri_template;

#[path = "../../../fuzz/checks/replay.rs"]
#[allow(unreachable_pub)] // shared by both corpus tests
mod replay;
use replay::replay;

#[test]
fn classify_corpus() {
    replay("classify", classify::check);
}

#[test]
fn engine_lines_corpus() {
    replay("engine_lines", engine_lines::check);
}

#[test]
fn http_router_corpus() {
    replay("http_router", http_router::check);
}

#[test]
fn oauth_parse_corpus() {
    replay("oauth_parse", oauth_parse::check);
}

#[test]
fn sse_reader_corpus() {
    replay("sse_reader", sse_reader::check);
}

#[test]
fn uri_template_corpus() {
    replay("uri_template", uri_template::check);
}
