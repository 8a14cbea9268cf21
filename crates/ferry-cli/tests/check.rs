//! `ferry check` against real servers: `ferry serve` passes over stdio and over Streamable
//! HTTP (`ferry serve --http` on 127.0.0.1); a deliberately broken server is reported with
//! the MUSTs it breaks and exit code 1; the report on the
//! official `@modelcontextprotocol/server-everything` (npm, pinned in `interop/`) is kept
//! as a snapshot over stdio, `tests/snapshots/check-server-everything.txt`, and over
//! Streamable HTTP, `tests/snapshots/check-server-everything-http.txt` (its port and
//! UUIDs replaced; it listens on the port it is given, on every interface: it has no
//! option to bind 127.0.0.1 only).
//!
//! The tests that run Node.js (the broken servers, server-everything) need the feature
//! `peers` (`scripts/test`). The peer's failures do not fail this test; a changed report does. To update the
//! snapshot after a change to the checker or to the pinned package, run
//! `FERRY_UPDATE_SNAPSHOTS=1 cargo test -p ferry-mcp-cli --test check` and review the diff.

#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

fn check(args: &[&str], dir: &Path) -> Output {
    Command::new(FERRY)
        .arg("check")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("ferry check runs")
}

#[cfg(feature = "peers")]
fn text(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 report")
}

/// The lines of the report naming failed requirements: `(level, id)`.
#[cfg(feature = "peers")]
fn failures(report: &str) -> Vec<(String, String)> {
    report
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next()? == "FAIL").then_some(())?;
            let level = words.next()?.to_owned();
            let id = words.next()?.trim_end_matches(':').to_owned();
            Some((level, id))
        })
        .collect()
}

#[test]
fn ferry_serve_over_stdio_passes_every_revision() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = check(
        &["--json", "--call-tools", "all", "--", FERRY, "serve"],
        &here,
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    let revisions = report["revisions"].as_array().expect("revisions");
    assert_eq!(revisions.len(), 5);
    assert!(
        revisions.iter().all(|r| r["checked"] == true),
        "{revisions:#?}"
    );
    assert_eq!(report["summary"]["failed"], 0, "{report:#}");
    // The checker did reach deep: tools called, progress judged, the stateless era checked.
    for id in [
        "shapes.call-tool",
        "shapes.structured-content",
        "progress.increases",
        "logging.level-honoured",
        "stateless.unsupported-version",
        "jsonrpc.batch-supported",
        "lifecycle.unsupported-version-counter-offer",
        "lifecycle.counter-offer-served",
        "lifecycle.supported-versions-honest",
        "lifecycle.same-version-again",
        "lifecycle.same-capabilities-again",
        "logging.level-filters-a-logging-tool",
        "logging.no-level-no-messages",
        "capabilities.subscribe-honest",
        "stateless.listen-acknowledged",
        "jsonrpc.notification-no-id",
        "shapes.read-mime-type",
        "capabilities.completion-at-most-100",
    ] {
        assert_eq!(status(&report, id), "pass", "{id}");
    }
}

/// The status of requirement `id` in a JSON report.
fn status(report: &Value, id: &str) -> Value {
    report["requirements"]
        .as_array()
        .and_then(|all| all.iter().find(|r| r["id"] == id))
        .map(|r| r["status"].clone())
        .unwrap_or_else(|| panic!("{id} not in the report"))
}

/// `ferry serve --http` on 127.0.0.1 (killed when the peer is dropped), and its URL.
fn start_ferry_http() -> (Peer, String) {
    let mut server = Command::new(FERRY)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry serve --http");
    let mut banner = String::new();
    let mut stderr = BufReader::new(server.stderr.take().expect("stderr"));
    let peer = Peer(server);
    stderr.read_line(&mut banner).expect("the banner");
    // Keep reading: the server's later stderr lines must find the pipe open.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let url = banner
        .trim()
        .strip_prefix("ferry serve: MCP on ")
        .unwrap_or_else(|| panic!("banner {banner:?}"))
        .to_owned();
    (peer, url)
}

#[test]
fn ferry_serve_over_http_resumes_its_standalone_stream() {
    // No tool called: ping is answered with JSON, so the standalone GET stream is the one
    // cut at its priming event (2025-11-25) and resumed.
    let (_server, url) = start_ferry_http();
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let args = ["--json", "--call-tools", "none", "--revision", "2025-11-25"];
    let output = check(&[&args[..], &[url.as_str()]].concat(), &here);
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    for id in ["http.resumability", "http.resume-same-stream"] {
        assert_eq!(status(&report, id), "pass", "{id}: {report:#}");
    }
}

#[test]
fn ferry_serve_over_http_passes_every_revision() {
    let (server, url) = start_ferry_http();
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = check(&["--json", "--call-tools", "all", &url], &here);
    drop(server);
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    let revisions = report["revisions"].as_array().expect("revisions");
    assert_eq!(revisions.len(), 5);
    assert!(
        revisions.iter().all(|r| r["checked"] == true),
        "{revisions:#?}"
    );
    assert_eq!(report["summary"]["failed"], 0, "{report:#}");
    for id in [
        "http.notification-202",
        "http.request-content-type",
        "http.origin-403",
        "http.get-sse-or-405",
        "http.unknown-session-404",
        "http.delete-ends-session",
        "http.invalid-protocol-version-400",
        "http.header-mismatch-400",
        "http.unknown-method-404",
        "http.mcp-method-mismatch-400",
        "http.mcp-method-missing-400",
        "http.mcp-name-mismatch-400",
        "http.unsupported-version-400",
        "http.get-delete-405",
        "http.post-accept-406",
        "http.get-accept-406",
        "http.missing-session-400",
        "http.resumability",
        "http.resume-same-stream",
        "http.https-unless-loopback",
        "logging.level-filters-a-logging-tool",
        "capabilities.subscribe-honest",
        "stateless.listen-acknowledged",
        "lifecycle.same-version-again",
        "jsonrpc.invalid-request",
        "shapes.call-tool",
    ] {
        assert_eq!(status(&report, id), "pass", "{id}");
    }
}

#[cfg(feature = "peers")]
#[test]
fn a_broken_server_is_reported_with_the_musts_it_breaks() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = check(&["--", "node", "tests/check_peers/broken_server.js"], &here);
    let report = text(&output);
    assert_eq!(output.status.code(), Some(1), "{report}");
    let failed = failures(&report);
    for id in [
        "jsonrpc.method-not-found",
        "stdio.stdout-only-messages",
        "capabilities.undeclared-is-not-served",
        "capabilities.list-changed-declared",
        "jsonrpc.notification-no-id",
    ] {
        assert!(
            failed.contains(&("MUST".into(), id.into())),
            "{id} not failed:\n{report}"
        );
    }
    assert!(
        report.contains("broken server: initialized"),
        "the evidence: {report}"
    );
    assert!(report.contains("revision 2025-06-18: checked"), "{report}");
    assert!(
        report.contains("revision 2024-11-05: not offered (initialize offered 2025-06-18 instead)"),
        "{report}"
    );
    // What it gets right passes.
    for id in ["ping.answered-empty", "jsonrpc.parse-error"] {
        assert!(
            report
                .lines()
                .any(|l| l.starts_with("  pass") && l.contains(id)),
            "{id}:\n{report}"
        );
    }
}

/// A server started by a test, killed when dropped.
struct Peer(std::process::Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[cfg(feature = "peers")]
#[test]
fn a_broken_http_server_is_reported_with_the_rules_it_breaks() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new("node")
        .arg("tests/check_peers/broken_http_server.js")
        .current_dir(&here)
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs the broken HTTP server");
    let mut url = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("the URL");
    let _peer = Peer(child);
    let output = check(&[url.trim()], &here);
    let report = text(&output);
    assert_eq!(output.status.code(), Some(1), "{report}");
    let failed = failures(&report);
    for (level, id) in [
        ("MUST", "http.origin-403"),
        ("MUST", "http.unknown-session-404"),
        ("MUST", "http.delete-ends-session"),
        ("MUST", "http.resume-same-stream"),
        ("SHOULD", "http.resumability"),
        ("SHOULD", "http.post-accept-406"),
        ("MUST", "capabilities.subscribe-honest"),
        ("MUST", "lifecycle.counter-offer-served"),
        ("SHOULD", "logging.level-filters-a-logging-tool"),
        ("SHOULD", "shapes.read-mime-type"),
    ] {
        assert!(
            failed.contains(&(level.into(), id.into())),
            "{level} {id} not failed:\n{report}"
        );
    }
    // The evidence: what was cut, what came again.
    assert!(
        report.contains("cut after event \"e1\", then GET with Last-Event-ID \"e1\"")
            && report.contains("repeated a message from before the cut"),
        "{report}"
    );
    assert!(
        report.contains("at level warning it still logged [\"debug\", \"info\"]"),
        "{report}"
    );
    // What it gets right passes.
    for id in [
        "http.missing-session-400",
        "http.get-sse-or-405",
        "http.notification-202",
    ] {
        assert!(
            report
                .lines()
                .any(|l| l.starts_with("  pass") && l.contains(id)),
            "{id}:\n{report}"
        );
    }
}

/// `interop/` at the workspace root, with the pinned npm packages installed
/// (`interop/install.sh` reuses an install whose lock file has not changed, and serializes
/// concurrent test binaries).
#[cfg(feature = "peers")]
fn interop_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop");
    let status = Command::new(dir.join("install.sh"))
        .arg("npm")
        .status()
        .expect("interop/install.sh runs (Node.js is needed for the interop tests)");
    assert!(status.success(), "interop/install.sh npm failed");
    let bin = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(bin.exists(), "{bin:?} missing after the install");
    dir
}

/// Compare `report` with `tests/snapshots/NAME` (or write it, under
/// `FERRY_UPDATE_SNAPSHOTS`).
#[cfg(feature = "peers")]
fn matches_snapshot(report: &str, name: &str) {
    let snapshot = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("FERRY_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&snapshot, report).expect("write the snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&snapshot)
        .expect("the snapshot (FERRY_UPDATE_SNAPSHOTS=1 writes it)");
    assert!(
        report == expected,
        "the report in {name} changed; if that is right, update the snapshot with \
         FERRY_UPDATE_SNAPSHOTS=1 cargo test -p ferry-mcp-cli --test check\n--- now:\n{report}"
    );
}

/// `text` with what differs from run to run made stable: the port of `127.0.0.1:PORT`
/// and UUIDs (server-everything's session and event ids).
#[cfg(feature = "peers")]
fn normalized(text: &str, port: u16) -> String {
    let text = text.replace(&format!("127.0.0.1:{port}"), "127.0.0.1:PORT");
    let chars: Vec<char> = text.chars().collect();
    let shape = [8, 4, 4, 4, 12];
    let uuid_at = |at: usize| -> Option<usize> {
        let mut i = at;
        for (n, len) in shape.iter().enumerate() {
            if n > 0 {
                (chars.get(i) == Some(&'-')).then_some(())?;
                i += 1;
            }
            let part = chars.get(i..i + len)?;
            part.iter().all(char::is_ascii_hexdigit).then_some(())?;
            i += len;
        }
        Some(i)
    };
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        match uuid_at(i) {
            Some(end) => {
                out.push_str("<uuid>");
                i = end;
            }
            None => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// server-everything on Streamable HTTP (its `PORT`; it announces the port on stderr).
#[cfg(feature = "peers")]
fn start_everything_http(dir: &Path) -> (Peer, u16) {
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut child = Command::new("node")
            .args([
                "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
                "streamableHttp",
            ])
            .env("PORT", port.to_string())
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs server-everything");
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let peer = Peer(child);
        let mut lines = stderr.lines();
        let started = lines
            .by_ref()
            .map_while(Result::ok)
            .find(|l| l.contains(&format!("port {port}")) || l.contains("in use"))
            .is_some_and(|l| !l.contains("in use"));
        std::thread::spawn(move || lines.for_each(drop));
        if started {
            return (peer, port);
        }
    }
    panic!("server-everything streamableHttp: no free port in five tries")
}

#[cfg(feature = "peers")]
#[test]
fn server_everything_http_report_matches_the_snapshot() {
    let dir = interop_dir();
    let (_peer, port) = start_everything_http(&dir);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let output = check(&[url.as_str()], &dir);
    // Exit 1 is the peer's MUST failures; 2 would be the checker failing to run.
    assert!(matches!(output.status.code(), Some(0 | 1)), "{output:?}");
    matches_snapshot(
        &normalized(&text(&output), port),
        "check-server-everything-http.txt",
    );
}

#[cfg(feature = "peers")]
#[test]
fn server_everything_report_matches_the_snapshot() {
    let dir = interop_dir();
    let output = check(
        &[
            "--",
            "node",
            "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            "stdio",
        ],
        &dir,
    );
    let report = text(&output);
    // Exit 1 is the peer's MUST failures; 2 would be the checker failing to run.
    assert!(matches!(output.status.code(), Some(0 | 1)), "{output:?}");
    matches_snapshot(&report, "check-server-everything.txt");
}

/// A server that accepts connections and reads requests but never answers (not even the
/// headers): `--timeout` bounds every wait, so the checker reports and ends.
#[test]
fn a_server_that_never_answers_is_bounded_by_the_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            // Read what comes, answer nothing; keep the socket open.
            let mut reader = stream.try_clone().expect("clone");
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
            });
            held.push(stream);
        }
    });
    let started = std::time::Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["check", "--revision", "2026-07-28", "--timeout", "1", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ferry check");
    let deadline = started + std::time::Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("ferry check --timeout 1 of a silent server still runs after 90 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    eprintln!("ended in {:?} with {status}", started.elapsed());
    assert!(!status.success(), "a silent server does not pass");
}
