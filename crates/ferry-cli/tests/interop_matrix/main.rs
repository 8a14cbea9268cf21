//! The interop matrix: Ferry's server against the official SDKs' clients, and Ferry's
//! client against the SDKs' servers and `@modelcontextprotocol/server-everything`, over
//! stdio, Streamable HTTP and the 2024-11-05 HTTP+SSE transport, in each era the peer
//! speaks.
//!
//! - Peers: `interop/ts/` (npm `@modelcontextprotocol/sdk`), `interop/py/` (PyPI `mcp`),
//!   `server-everything`; installed by the first cell that needs them
//!   (`interop/install.sh`: `npm ci`, a venv in `interop/.venv`; reused while the lock files
//!   are unchanged).
//! - Every cell is one test below, and runs the same checks: list and call a tool,
//!   structured output, list and read a resource, get a prompt, progress, cancellation, and
//!   a server-to-client round trip (sampling; with Ferry's server, also elicitation). Each
//!   check's verdict is written to `$CARGO_TARGET_TMPDIR/interop-matrix/<cell>.json`.
//! - The guide's matrix (`docs/src/conformance.md`, "The interop matrix") is rendered from
//!   the same list the tests are generated from ([`matrix!`]); `matrix_table_is_current`
//!   fails when it differs, and rewrites it when run with `FERRY_WRITE_MATRIX=1`.

#![cfg(unix)]

mod cells;
mod ferry_client;
mod peers;
mod table;

use ferry::protocol::{Feature, ProtocolVersion};

use peers::Verdict;
use table::{Cell, Era, Pairing, Wire};

/// The checks every cell of each side must report, in order.
const FERRY_SERVER_CHECKS: &[&str] = &[
    "connect",
    "tools",
    "structured_output",
    "resources",
    "prompts",
    "progress",
    "cancellation",
    "sampling",
    "elicitation",
    "roots",
];
const FERRY_CLIENT_CHECKS: &[&str] = &[
    "connect",
    "tools",
    "structured_output",
    "resources",
    "prompts",
    "progress",
    "cancellation",
    "sampling",
    "elicitation",
    "roots",
];

/// One `#[test]` per tested cell, and the list the guide's table is rendered from.
macro_rules! matrix {
    ($($name:ident: $pairing:ident, $wire:ident, $era:ident;)*) => {
        $(
            #[test]
            fn $name() {
                check_cell(stringify!($name), Cell {
                    pairing: Pairing::$pairing,
                    wire: Wire::$wire,
                    era: Era::$era,
                });
            }
        )*
        /// Every tested cell, by test name.
        const TESTED: &[(&str, Cell)] = &[$((stringify!($name), Cell {
            pairing: Pairing::$pairing,
            wire: Wire::$wire,
            era: Era::$era,
        }),)*];
    };
}

matrix! {
    ts_client_stdio_session: TsClient, Stdio, Session;
    ts_client_http_session: TsClient, Http, Session;
    py_client_stdio_session: PyClient, Stdio, Session;
    py_client_stdio_stateless: PyClient, Stdio, Stateless;
    py_client_http_session: PyClient, Http, Session;
    py_client_http_stateless: PyClient, Http, Stateless;
    ts_client_sse_session: TsClient, Sse, Session;
    py_client_sse_session: PyClient, Sse, Session;
    ts_server_stdio_session: TsServer, Stdio, Session;
    py_server_stdio_session: PyServer, Stdio, Session;
    py_server_stdio_stateless: PyServer, Stdio, Stateless;
    everything_stdio_session: Everything, Stdio, Session;
    ts_server_http_session: TsServer, Http, Session;
    ts_server_sse_session: TsServer, Sse, Session;
    py_server_http_session: PyServer, Http, Session;
    py_server_http_stateless: PyServer, Http, Stateless;
    py_server_sse_session: PyServer, Sse, Session;
    everything_http_session: Everything, Http, Session;
    everything_sse_session: Everything, Sse, Session;
}

#[test]
fn matrix_table_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/src")
        .join(MATRIX_CHAPTER);
    let chapter = std::fs::read_to_string(&path).expect(MATRIX_CHAPTER);
    let rendered = table::render(TESTED);
    let updated = table::replace_section(&chapter, &rendered)
        .unwrap_or_else(|| panic!("docs/src/{MATRIX_CHAPTER} has the matrix markers"));
    if std::env::var_os("FERRY_WRITE_MATRIX").is_some() {
        std::fs::write(&path, updated).expect("write the chapter");
    } else {
        assert!(
            updated == chapter,
            "the interop matrix of docs/src/{MATRIX_CHAPTER} is out of date; run \
             `FERRY_WRITE_MATRIX=1 cargo test -p ferry-mcp-cli --features peers --test \
             interop_matrix matrix_table` and commit it. Expected:\n{rendered}"
        );
    }
}

/// The guide's chapter that shows the matrix, in `docs/src/`.
const MATRIX_CHAPTER: &str = "conformance.md";

/// Run a cell, record its verdicts, and fail with every failed check.
fn check_cell(name: &str, cell: Cell) {
    let verdicts = match cell.pairing {
        Pairing::TsClient | Pairing::PyClient => cells::ferry_server(cell),
        _ => cells::ferry_client(cell.pairing, cell.wire, cell.era.newest()),
    };
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("interop-matrix");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(
        dir.join(format!("{name}.json")),
        serde_json::to_string_pretty(&verdicts).unwrap_or_default(),
    );
    let expected = if cell.pairing.ferry_is_server() {
        FERRY_SERVER_CHECKS
    } else {
        FERRY_CLIENT_CHECKS
    };
    assert_verdicts(name, &verdicts, expected);
}

/// Fail with every failed check, or when the checks reported are not `expected`.
fn assert_verdicts(name: &str, verdicts: &[Verdict], expected: &[&str]) {
    let reported: Vec<_> = verdicts.iter().map(|v| v.check.as_str()).collect();
    let failed: Vec<_> = verdicts.iter().filter(|v| !v.ok).collect();
    assert!(
        failed.is_empty() && reported == expected,
        "{name}: failed {failed:#?}\nreported {reported:?}, expected {expected:?}"
    );
}

/// Ferry's client pinned to each older session revision (2024-11-05, 2025-03-26,
/// 2025-06-18) against `pairing`'s server on `wire`: the same checks, structured output
/// only where the revision has it.
fn older_revisions(pairing: Pairing, wire: Wire) {
    for version in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
    ] {
        let verdicts = cells::ferry_client(pairing, wire, version);
        let expected: Vec<_> = FERRY_CLIENT_CHECKS
            .iter()
            .copied()
            .filter(|c| match *c {
                "structured_output" => version.has(Feature::StructuredOutput),
                "elicitation" => version.has(Feature::Elicitation),
                _ => true,
            })
            .collect();
        assert_verdicts(
            &format!("{pairing:?} {wire:?} {}", version.as_str()),
            &verdicts,
            &expected,
        );
    }
}

#[test]
fn older_revisions_ts_server_stdio() {
    older_revisions(Pairing::TsServer, Wire::Stdio);
}

#[test]
fn older_revisions_py_server_stdio() {
    older_revisions(Pairing::PyServer, Wire::Stdio);
}

#[test]
fn older_revisions_everything_stdio() {
    older_revisions(Pairing::Everything, Wire::Stdio);
}

#[test]
fn older_revisions_ts_server_http() {
    older_revisions(Pairing::TsServer, Wire::Http);
}

#[test]
fn older_revisions_py_server_http() {
    older_revisions(Pairing::PyServer, Wire::Http);
}

#[test]
fn older_revisions_everything_http() {
    older_revisions(Pairing::Everything, Wire::Http);
}
