//! `ferry replay` as the built binary runs it, on recordings the inspector exported (in
//! `replay/`: the wire panel's export from the browser test, `stateless.jsonl` of the
//! reference server in-process, negotiated to 2026-07-28, and `session.jsonl` of a `ferry
//! serve` child pinned to 2025-11-25; only the stdio command made short). They replay
//! with every answer matching against the reference server in-process, a `ferry serve`
//! child and `ferry serve --http`; an edited answer, or an edited answer to the server's
//! request, is a difference named with its request (exit 1); a recording without its
//! handshake gets one; `--realtime` keeps the pace a cancellation needs; usage errors exit 2.
//! (`inspect_browser.rs` replays the export it has just downloaded, too.)

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

/// Values of the reference server that change from run to run (its `server://info`) or with
/// its release (`serverInfo.version`).
const VOLATILE: &[&str] = &[
    "--ignore",
    "uptime_seconds",
    "--ignore",
    "tasks_alive",
    "--ignore",
    "countdowns_cancelled",
    "--ignore",
    "version",
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/replay")
        .join(name)
}

fn read_fixture(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).expect("fixture")
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.stdout, self.stderr))
    }
}

/// `ferry replay ARGS`, the recording on stdin when `input` is given.
fn replay(args: &[&str], input: Option<&str>) -> Run {
    let started = Instant::now();
    let mut child = Command::new(FERRY)
        .arg("replay")
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ferry replay");
    if let Some(input) = input {
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(input.as_bytes())
            .expect("write the recording");
    }
    let output = child.wait_with_output().expect("ferry replay");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        took: started.elapsed(),
    }
}

/// The statuses of the report's requests, as `id method: status`.
fn statuses(report: &Value) -> Vec<String> {
    report["connections"]
        .as_array()
        .expect("connections")
        .iter()
        .flat_map(|c| c["requests"].as_array().expect("requests").iter())
        .map(|r| {
            format!(
                "{} {}: {}",
                r["id"],
                r["method"].as_str().unwrap_or("?"),
                r["status"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// Exit 0, and every request with a recorded answer matched.
fn assert_all_match(run: &Run, expected_not_compared: usize) -> Value {
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let report = run.json();
    let summary = &report["summary"];
    let all = statuses(&report);
    assert_eq!(summary["differed"], 0, "{all:#?}");
    assert_eq!(summary["unanswered"], 0, "{all:#?}");
    assert_eq!(summary["notCompared"], expected_not_compared, "{all:#?}");
    assert!(summary["matched"].as_u64().unwrap_or(0) >= 25, "{all:#?}");
    report
}

#[test]
fn a_stateless_recording_replays_against_the_reference_server_and_a_child() {
    let file = fixture("stateless.jsonl");
    let file = file.to_str().expect("path");
    let mut args = vec![file, "--json"];
    args.extend(VOLATILE);
    // The countdown (cancelled) and subscriptions/listen (still open) have no answer.
    let report = assert_all_match(&replay(&args, None), 2);
    let requests = statuses(&report);
    // The retries of the input_required round trips: their requestState is the one this
    // server sealed, not the recorded one (which another process's key sealed).
    for retry in [
        "18 tools/call: match",
        "20 tools/call: match",
        "22 tools/call: match",
    ] {
        assert!(requests.iter().any(|r| r == retry), "{requests:#?}");
    }
    assert_eq!(report["connections"][0]["handshake"], "recorded");
    args.extend(["--", FERRY, "serve"]);
    let run = replay(&args, None);
    assert_all_match(&run, 2);
    println!(
        "stateless recording against a child: {} ms",
        run.json()["summary"]["ms"]
    );
}

#[test]
fn a_session_recording_replays_with_the_server_requests_answered_from_it() {
    let file = fixture("session.jsonl");
    let file = file.to_str().expect("path");
    let mut args = vec![file, "--json"];
    args.extend(VOLATILE);
    args.extend(["--", FERRY, "serve"]);
    let run = replay(&args, None);
    let report = assert_all_match(&run, 1);
    // elicitation/create, sampling/createMessage, roots/list.
    let connection = &report["connections"][0];
    assert_eq!(connection["serverRequests"]["answered"], 3, "{connection}");
    assert_eq!(
        connection["serverRequests"]["unexpected"],
        serde_json::json!([])
    );
    println!(
        "session recording against a child: {} ms",
        report["summary"]["ms"]
    );
    // The same recording against the reference server in-process (raw `initialize`).
    args.truncate(args.len() - 3);
    assert_all_match(&replay(&args, None), 1);
}

#[test]
fn an_edited_answer_is_a_difference_named_with_its_request() {
    let recording = read_fixture("session.jsonl");
    let edited = recording.replacen(
        r#""result":{"content":[{"type":"text","text":"14"}]"#,
        r#""result":{"content":[{"type":"text","text":"15"}]"#,
        1,
    );
    assert_ne!(edited, recording, "the fixture holds calculate's answer");
    let mut args = vec!["-"];
    args.extend(VOLATILE);
    let run = replay(&args, Some(&edited));
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("DIFF  #4 tools/call calculate\n")
            && run
                .stdout
                .contains(r#"/result/content/0/text: recorded "15", got "14""#),
        "{}",
        run.stdout
    );
    // Only that one.
    assert_eq!(run.stdout.matches("DIFF").count(), 1, "{}", run.stdout);
    assert!(
        run.stdout.contains("1 differed"),
        "the summary counts it: {}",
        run.stdout
    );
}

#[test]
fn the_server_gets_the_recorded_answer_to_its_request() {
    let recording = read_fixture("session.jsonl");
    // The person's answer to the elicitation, as recorded: what the tool's result echoes.
    let edited = recording.replacen(
        r#""content":{"name":"Ada""#,
        r#""content":{"name":"Bob""#,
        1,
    );
    assert_ne!(
        edited, recording,
        "the fixture holds the elicitation's answer"
    );
    let mut args = vec!["-", "--json"];
    args.extend(VOLATILE);
    let run = replay(&args, Some(&edited));
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    let report = run.json();
    let differing: Vec<&Value> = report["connections"][0]["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .filter(|r| r["status"] == "differ")
        .collect();
    assert_eq!(differing.len(), 1, "{differing:#?}");
    assert_eq!(differing[0]["subject"], "elicit");
    let got = differing[0]["differences"][0]["got"]
        .as_str()
        .unwrap_or_default();
    assert!(got.contains("name=Bob"), "{differing:#?}");
}

#[test]
fn a_recording_without_its_handshake_gets_one() {
    // The wire cleared after connecting: the connection line stays, initialize is gone.
    let recording = read_fixture("session.jsonl");
    let cleared: Vec<&str> = recording
        .lines()
        .filter(|l| {
            !(l.contains(r#""method":"initialize""#)
                || l.contains(r#""method":"notifications/initialized""#)
                || l.contains(r#""id":1,"result":{"protocolVersion""#))
        })
        .collect();
    assert_eq!(cleared.len() + 3, recording.lines().count());
    let cleared = cleared.join("\n");
    let mut args = vec!["-", "--json"];
    args.extend(VOLATILE);
    args.extend(["--", FERRY, "serve"]);
    let report = assert_all_match(&replay(&args, Some(&cleared)), 1);
    assert_eq!(report["connections"][0]["handshake"], "made");
}

#[test]
fn realtime_keeps_the_pace_a_cancellation_needs() {
    // Up to the read of server://info after the countdown was cancelled: the count of
    // cancelled countdowns rises a moment after the cancellation, and the recording read it
    // a moment later.
    let recording = read_fixture("session.jsonl");
    let cut: Vec<&str> = recording
        .lines()
        .take_while(|l| !l.contains(r#""method":"tools/call","params":{"name":"image""#))
        .collect();
    let last = cut.last().expect("lines");
    assert!(last.contains("countdowns_cancelled"), "{last}");
    let time = |line: &str| -> f64 {
        let v: Value = serde_json::from_str(line).expect("line");
        let t = v["time"].as_str().expect("time");
        // Seconds and milliseconds suffice: the span is under a minute.
        let s: f64 = t[17..t.len() - 1].parse().expect("seconds");
        s + 60.0 * t[14..16].parse::<f64>().expect("minutes")
    };
    let span = time(last) - time(cut[1]);
    let cut = cut.join("\n");
    let run = replay(
        &[
            "-",
            "--realtime",
            "--ignore",
            "uptime_seconds",
            "--ignore",
            "tasks_alive",
            "--ignore",
            "version",
            "--json",
        ],
        Some(&cut),
    );
    let report = run.json();
    assert_eq!(run.code, Some(0), "{:#?}", statuses(&report));
    assert_eq!(report["summary"]["matched"], 9, "{:#?}", statuses(&report));
    assert!(
        run.took.as_secs_f64() >= span - 0.2,
        "replayed in {:?}, recorded over {span:.3} s",
        run.took
    );
}

#[test]
fn the_session_recording_replays_over_http() {
    let mut child = Command::new(FERRY)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ferry serve --http");
    let mut banner = String::new();
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    stderr.read_line(&mut banner).expect("banner");
    let url = banner
        .trim()
        .strip_prefix("ferry serve: MCP on ")
        .unwrap_or_else(|| panic!("banner {banner:?}"))
        .to_owned();
    let file = fixture("session.jsonl");
    let mut args = vec![file.to_str().expect("path"), "--json", "--url", &url];
    args.extend(VOLATILE);
    let run = replay(&args, None);
    let _ = child.kill();
    let _ = child.wait();
    assert_all_match(&run, 1);
}

#[test]
fn usage_errors_exit_2_and_an_unreachable_server_1() {
    let file = fixture("session.jsonl");
    let file = file.to_str().expect("path");
    let missing = replay(&["no-such-recording.jsonl"], None);
    assert_eq!(missing.code, Some(2), "{}", missing.stderr);
    assert!(missing.stderr.contains("cannot read"), "{}", missing.stderr);
    let not_one = replay(&["-"], Some("hello\n"));
    assert_eq!(not_one.code, Some(2), "{}", not_one.stderr);
    let empty = replay(&["-"], Some(r#"{"format":"ferry-wire","version":1}"#));
    assert_eq!(empty.code, Some(2), "{}", empty.stderr);
    let conn = replay(&[file, "--conn", "7"], None);
    assert_eq!(conn.code, Some(2), "{}", conn.stderr);
    assert!(conn.stderr.contains("connections 1"), "{}", conn.stderr);
    for refused in [
        &["--sampling-reply", "x"][..],
        &["--protocol-version", "2025-06-18"],
        &["--out", "dir"],
    ] {
        let mut args = vec![file];
        args.extend(refused);
        let run = replay(&args, None);
        assert_eq!(run.code, Some(2), "{refused:?}: {}", run.stderr);
    }
    let nothing = replay(&[], None);
    assert_eq!(nothing.code, Some(2), "{}", nothing.stderr);
    let unreachable = replay(&[file, "--", "/nonexistent/mcp-server"], None);
    assert_eq!(unreachable.code, Some(1), "{}", unreachable.stderr);
    // A server that exits at once, before answering: said with its status, nothing replayed.
    let gone = replay(&[file, "--", "false"], None);
    assert_eq!(gone.code, Some(1), "{}", gone.stderr);
    assert!(
        gone.stderr
            .contains("`false` exited before answering (exit status: 1)"),
        "{}",
        gone.stderr
    );
    assert!(gone.stdout.is_empty(), "{}", gone.stdout);
}
