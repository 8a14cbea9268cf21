//! The official MCP conformance suite against Ferry: `@modelcontextprotocol/conformance`
//! (pinned in `conformance/package.json` with the Node.js 22 it needs; installed here with
//! `npm ci`).
//!
//! **Server scenarios**: every one the suite has, active and pending (`--suite all`),
//! against `ferry serve --conformance --http 127.0.0.1:0` (the fixture of
//! `src/reference/conformance/` on Streamable HTTP). The test fails on any failed check, any
//! warning, any scenario without a passing check, and any scenario `conformance list` names
//! that did not run. It prints the per-scenario table and the suite's version on standard
//! output (past the harness's capture, so CI logs show it), and checks that the guide's
//! chapter on conformance (`docs/src/conformance.md`) states these counts.
//!
//! **Client scenarios**: every one `conformance list --client` names, `auth/*` included
//! (the suite's core, backcompat, extensions and draft groups alike), one at a time
//! (`--scenario`), with `ferry conformance-client` (`src/conformance_client/`) as the
//! client, under the same rules. The suite's mock servers listen on 127.0.0.1 only (see
//! `conformance/loopback.mjs`).
//!
//! The two tests take turns (the client scenarios time the client's reconnection).

mod suite;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// `ferry serve --conformance --http 127.0.0.1:0`, killed when dropped.
struct FerryHttp {
    child: Child,
    url: String,
}

impl FerryHttp {
    fn start() -> FerryHttp {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(["serve", "--conformance", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start ferry serve");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut banner = String::new();
        stderr.read_line(&mut banner).expect("the banner");
        let url = banner
            .trim()
            .strip_prefix("ferry serve: MCP on ")
            .unwrap_or_else(|| panic!("banner {banner:?}"))
            .to_owned();
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        FerryHttp { child, url }
    }
}

impl Drop for FerryHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh directory for one run's results.
fn output_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("conformance-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the output directory");
    dir
}

/// The guide's row for a suite: kept true by the tests.
fn table_row(suite: &str, against: &str, passed: usize, total: usize, checks: usize) -> String {
    format!("| {suite} | {against} | {passed}/{total} | {checks} |")
}

/// Fail unless the guide's chapter on conformance states `row` and the suite's version.
fn assert_guide_states(row: &str) {
    let path = suite::dir().join("../docs/src/conformance.md");
    let chapter = std::fs::read_to_string(&path).expect("docs/src/conformance.md");
    let version = format!("`@modelcontextprotocol/conformance` {}", suite::VERSION);
    assert!(
        chapter.contains(&version),
        "docs/src/conformance.md must name the suite's version: {version}"
    );
    assert!(
        chapter.contains(row),
        "docs/src/conformance.md's table of the official suite must have this row (update \
         it):\n{row}"
    );
}

/// One test runs at a time.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn server_scenarios() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let suite = suite::install();
    let scenarios = suite.list("server");
    assert!(
        scenarios.len() >= 32,
        "conformance list --server: {scenarios:?}"
    );
    let server = FerryHttp::start();
    let out = output_dir("server");
    let log = out.join("suite.log");
    let mut command = suite.command();
    command
        .args(["server", "--suite", "all", "--url", &server.url, "-o"])
        .arg(&out);
    let exited_ok = suite::Suite::run(command, &log);
    drop(server);

    let tallies = suite::results(&out, "server", &scenarios);
    let passed = tallies
        .values()
        .filter(|t| t.problems.is_empty() && t.passed > 0)
        .count();
    let checks: usize = tallies.values().map(|t| t.passed).sum();
    let title = format!(
        "MCP conformance suite {}: server scenarios (all: active and pending) against \
         ferry serve --conformance --http: {passed}/{} passed, {checks} checks passed",
        suite::VERSION,
        scenarios.len()
    );
    suite::show(&suite::table(&title, &tallies));
    assert!(
        exited_ok && passed == scenarios.len(),
        "{title}; the suite's output: {log:?}"
    );
    let _ = std::fs::remove_dir_all(&out);
    assert_guide_states(&table_row(
        "server: all, active and pending",
        "`ferry serve --conformance --http`",
        passed,
        scenarios.len(),
        checks,
    ));
}

#[test]
fn client_scenarios() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let suite = suite::install();
    let scenarios = suite.list("client");
    let auth = scenarios.iter().filter(|s| s.starts_with("auth/")).count();
    assert!(
        scenarios.len() >= 26 && auth >= 22,
        "conformance list --client: {scenarios:?}"
    );
    let out = output_dir("client");
    let mut exited_ok = true;
    for scenario in &scenarios {
        let mut command = suite.command();
        command
            .args(["client", "--scenario", scenario, "--command"])
            // The suite runs the command through a shell, the URL appended.
            .arg(format!(
                "'{}' conformance-client",
                env!("CARGO_BIN_EXE_ferry")
            ))
            .arg("-o")
            .arg(&out);
        let log = out.join(format!("{}.log", scenario.replace('/', "-")));
        exited_ok &= suite::Suite::run(command, &log);
    }

    let tallies = suite::results(&out, "", &scenarios);
    let passed = tallies
        .values()
        .filter(|t| t.problems.is_empty() && t.passed > 0)
        .count();
    let checks: usize = tallies.values().map(|t| t.passed).sum();
    let title = format!(
        "MCP conformance suite {}: client scenarios (all, {auth} of them auth/*) against \
         ferry conformance-client: {passed}/{} passed, {checks} checks passed",
        suite::VERSION,
        scenarios.len()
    );
    suite::show(&suite::table(&title, &tallies));
    assert!(
        exited_ok && passed == scenarios.len(),
        "{title}; the suite's output: {out:?}"
    );
    let _ = std::fs::remove_dir_all(&out);
    assert_guide_states(&table_row(
        "client: all, `auth/*` included",
        "`ferry conformance-client`",
        passed,
        scenarios.len(),
        checks,
    ));
}
