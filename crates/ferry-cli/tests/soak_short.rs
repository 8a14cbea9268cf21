//! The soak's short version: `bench/soak --short` runs a minute of mixed traffic against
//! the `ferry serve` under test (Streamable HTTP in both eras and stdio: sessions closed
//! and abandoned, countdowns cancelled mid-stream, connections dropped mid-stream, streams
//! resumed with `Last-Event-ID`, GET and `subscriptions/listen` streams, `input_required`
//! rounds). Every operation must succeed, and once the traffic has stopped and the
//! abandoned sessions have expired, the servers hold no more sessions, runtime tasks or
//! descriptors than before it started: what a request or a session leaves behind shows
//! here. (Flatness of memory is judged by the hour-long `bench/soak`, not in a minute.)
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[test]
fn a_minute_of_mixed_traffic_leaves_nothing_behind() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("soak-short");
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(root.join("bench/soak"))
        .arg("--short")
        .env("FERRY_CLI", env!("CARGO_BIN_EXE_ferry"))
        .env("SOAK_RESULTS", &out)
        .output()
        .expect("bench/soak starts");
    let report = std::fs::read_to_string(out.join("soak.json")).unwrap_or_default();
    assert!(
        run.status.success(),
        "bench/soak --short failed: {}\n{}\n{report}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    let report: Value = serde_json::from_str(&report).expect("soak.json");
    assert!(out.join("soak.md").exists());

    let operations = report["operations"].as_object().expect("operations");
    for kind in [
        "http.session",
        "http.cancel_mid_stream",
        "http.drop_mid_stream",
        "http.resume",
        "http.get_stream",
        "http.stateless",
        "http.listen",
        "stdio.calls",
        "stdio.cancel",
        "stdio.stateless",
        "stdio.listen",
    ] {
        let count = &operations[kind];
        assert!(
            count["done"].as_u64() > Some(0),
            "{kind} never ran: {report}"
        );
        assert_eq!(count["failed"], 0, "{kind} failed: {count}");
    }

    let (before, after) = (&report["baseline"], &report["after"]);
    let figure = |reading: &Value, server: &str, name: &str| -> u64 {
        reading[server][name]
            .as_u64()
            .unwrap_or_else(|| panic!("no {server}.{name} in {reading}"))
    };
    for server in ["http", "stdio"] {
        // The reading's own `server://info` request is one connection of the HTTP server.
        assert!(
            figure(after, server, "sessions") <= 1,
            "{server}: sessions left: {after}"
        );
        assert!(
            figure(after, server, "tasks") <= figure(before, server, "tasks") + 1,
            "{server}: runtime tasks left behind: before {before}, after {after}"
        );
        assert!(
            figure(after, server, "fds") <= figure(before, server, "fds") + 2,
            "{server}: descriptors left open: before {before}, after {after}"
        );
    }
}
