//! The seed invariants of `ferry serve` over real stdio: every request gets exactly one
//! response and notifications none, under the whole malformed-input table; the server
//! never exits on bad input; stdout carries only protocol messages while 1000 concurrent
//! calls log at debug; cancellation (by notification and by EOF) stops work.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ferry_protocol::jsonrpc::{DEFAULT_MAX_MESSAGE_BYTES, RequestId};
use serde_json::{Value, json};
use support::{Server, initialize};

#[path = "../../ferry-protocol/tests/malformed_table/mod.rs"]
mod table;

use table::Outcome;

/// What `ferry serve` must write for one line of input, as (code, id) for an error, or
/// the id of a request's response.
#[derive(Debug, PartialEq)]
enum Expect {
    Nothing,
    Response(Value),
    Error(i64, Value),
}

fn id_json(id: &Option<RequestId>) -> Value {
    serde_json::to_value(id).expect("id")
}

fn expect(row: &table::Row) -> Expect {
    if row.input.len() > DEFAULT_MAX_MESSAGE_BYTES {
        // The transport discards an oversized line but its head: a request whose id stands
        // there is refused under it; an answer nobody waits for gets nothing; else `null`.
        let head = &row.input[..row.input.len().min(ferry::engine::OVERSIZED_HEAD)];
        let head = ferry::protocol::jsonrpc::read_head(head);
        return match head.id {
            Some(_) if head.response && !head.method => Expect::Nothing,
            Some(id) if head.method => Expect::Error(-32600, id_json(&Some(id))),
            _ => Expect::Error(-32600, Value::Null),
        };
    }
    if row.input.iter().all(u8::is_ascii_whitespace) {
        return Expect::Nothing; // blank lines are skipped
    }
    match &row.expect {
        Outcome::Request { id, .. } => Expect::Response(serde_json::to_value(id).expect("id")),
        Outcome::Notification { .. } | Outcome::Result { .. } | Outcome::ErrorResp { .. } => {
            Expect::Nothing
        }
        Outcome::Rejected { reply: false, .. } => Expect::Nothing,
        Outcome::Rejected { code, id, .. } => Expect::Error(*code, id_json(id)),
        // Batches exist only in a 2025-03-26 session: refused as a whole before one.
        Outcome::Batch(_) => Expect::Error(-32600, Value::Null),
    }
}

/// Rows that stand alone on one line of stdio with the server's default limits.
fn stdio_rows() -> Vec<table::Row> {
    let default = ferry_protocol::jsonrpc::ClassifyLimits::default().max_message_bytes;
    table::rows()
        .into_iter()
        .filter(|row| row.limits.max_message_bytes == default)
        .filter(|row| !row.input.contains(&b'\n'))
        .collect()
}

fn run_one(input: &[u8]) -> (Vec<Value>, bool) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
        let _ = stdin.write_all(b"\n");
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    let replies = String::from_utf8(out.stdout)
        .expect("UTF-8 stdout")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("non-JSON {l:?}: {e}")))
        .collect();
    (replies, out.status.success())
}

#[test]
fn every_malformed_row_gets_exactly_its_answer_over_stdio() {
    let rows = stdio_rows();
    assert!(
        rows.len() >= 100,
        "only {} rows fit on one line",
        rows.len()
    );
    let mut failures = Vec::new();
    for row in &rows {
        let (replies, ok) = run_one(&row.input);
        if !ok {
            failures.push(format!("[{}] the server did not exit 0", row.name));
        }
        let got = match replies.as_slice() {
            [] => Expect::Nothing,
            [reply] if reply.get("error").is_some() => Expect::Error(
                reply["error"]["code"].as_i64().unwrap_or_default(),
                reply["id"].clone(),
            ),
            [reply] => Expect::Response(reply["id"].clone()),
            many => {
                failures.push(format!("[{}] {} replies: {many:?}", row.name, many.len()));
                continue;
            }
        };
        let want = expect(row);
        // A valid request is answered once, by a result or an error (before initialize,
        // most requests are refused): only its id is fixed.
        let matches = match (&want, &got) {
            (Expect::Response(id), Expect::Error(_, got_id)) => id == got_id,
            _ => want == got,
        };
        if !matches {
            failures.push(format!("[{}] want {want:?}, got {got:?}", row.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_whole_table_in_one_session_leaves_the_server_serving() {
    let mut server = Server::spawn(&[]);
    initialize(&mut server, "2025-06-18", json!({}));
    let rows = stdio_rows();
    let expected_replies = rows
        .iter()
        .filter(|row| expect(row) != Expect::Nothing)
        .count();
    for row in &rows {
        server.send_raw(&row.input);
    }
    let alive = server.call(
        json!("alive"),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "still here"}}),
    );
    assert_eq!(alive["result"]["content"][0]["text"], "still here");
    let (rest, ok) = server.finish();
    assert!(ok, "exits 0 on EOF");
    // Each row is answered once or not at all, exactly as alone.
    assert_eq!(rest.len(), expected_replies, "{rest:#?}");
    assert!(
        rest.iter().all(|m| m.get("method").is_none()),
        "only responses: {rest:#?}"
    );
}

#[test]
fn stdout_stays_pure_under_1000_concurrent_logging_calls() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .arg("serve")
        .env("FERRY_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let mut lines = vec![
            json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
                "protocolVersion":"2025-06-18","capabilities":{},
                "clientInfo":{"name":"t","version":"1"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":"level","method":"logging/setLevel",
                   "params":{"level":"debug"}}),
        ];
        for i in 0..1000 {
            lines.push(json!({"jsonrpc":"2.0","id":i,"method":"tools/call",
                "params":{"name":"log","arguments":{"message": format!("call {i}")}}}));
        }
        let mut text = String::new();
        for line in lines {
            text.push_str(&line.to_string());
            text.push('\n');
        }
        stdin.write_all(text.as_bytes()).expect("write");
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).expect("UTF-8");
    let mut responses = std::collections::HashSet::new();
    let mut logs = 0;
    for line in stdout.lines() {
        let message: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON-RPC: {line:?}: {e}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        if message["method"] == "notifications/message" {
            logs += 1;
        } else {
            assert!(message.get("result").is_some(), "{line}");
            assert!(
                responses.insert(message["id"].to_string()),
                "two responses: {line}"
            );
        }
    }
    assert_eq!(responses.len(), 1002, "every request answered once");
    // Eight levels per call through `Context::log` (awaited: never lost), and the tool's
    // own `tracing` event through ClientLogLayer (queued without waiting: dropped when the
    // write queue is full, as this load makes it).
    assert!((8001..=9000).contains(&logs), "{logs} log messages");
    assert!(!out.stderr.is_empty(), "debug logs went to stderr");
}

/// Read until `n` progress notifications for `token` arrived.
fn wait_progress(server: &mut Server, token: &str, n: usize) {
    let mut seen = 0;
    while seen < n {
        let message = server.read().expect("progress");
        if message["method"] == "notifications/progress"
            && message["params"]["progressToken"] == token
        {
            seen += 1;
        } else {
            server.backlog.push(message);
        }
    }
}

#[test]
fn cancellation_stops_the_handler_and_nothing_else() {
    let mut server = Server::spawn(&[]);
    initialize(&mut server, "2025-06-18", json!({}));
    server.send(
        &json!({"jsonrpc":"2.0","id":"long","method":"tools/call","params":{
        "name":"countdown","arguments":{"steps":1000,"interval_ms":20},
        "_meta":{"progressToken":"long"}}}),
    );
    wait_progress(&mut server, "long", 2);
    server.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":"long","reason":"changed my mind"}}));
    let echo = server.call(
        json!("echo"),
        "tools/call",
        json!({"name":"echo","arguments":{"text":"unaffected"}}),
    );
    assert_eq!(echo["result"]["content"][0]["text"], "unaffected");
    std::thread::sleep(Duration::from_millis(300));
    let (rest, ok) = server.finish();
    assert!(ok);
    let progress_after = rest
        .iter()
        .filter(|m| m["params"]["progressToken"] == "long")
        .count();
    assert!(
        progress_after <= 1,
        "the handler stopped: {progress_after} late progress"
    );
    assert!(
        rest.iter().all(|m| m["id"] != "long"),
        "no response to a cancelled request"
    );
}

#[test]
fn eof_cancels_in_flight_work_within_the_grace_period() {
    let mut server = Server::spawn(&[]);
    initialize(&mut server, "2025-06-18", json!({}));
    server.send(
        &json!({"jsonrpc":"2.0","id":"long","method":"tools/call","params":{
        "name":"countdown","arguments":{"steps":1000,"interval_ms":20},
        "_meta":{"progressToken":"long"}}}),
    );
    wait_progress(&mut server, "long", 1);
    let started = Instant::now();
    let (rest, ok) = server.finish();
    let took = started.elapsed();
    assert!(ok, "exit 0");
    // 1000 steps would take 20 s; the grace period is 5 s.
    assert!(took < Duration::from_secs(9), "exited after {took:?}");
    assert!(
        rest.iter().all(|m| m["id"] != "long"),
        "cancelled, so no response"
    );
}
