//! `ferry serve` as a real process on stdio: a scripted session of both eras, malformed
//! input, stdout carrying only protocol messages, and a clean exit on stdin EOF.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// `ferry serve` with `args`, its three standard streams piped.
fn serve(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ferry"))
        .arg("serve")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry serve")
}

fn run(lines: &[Value], raw_tail: &[&[u8]]) -> (Vec<Value>, String, bool) {
    let mut child = serve(&[]);
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for line in lines {
            writeln!(stdin, "{line}").expect("write");
        }
        for raw in raw_tail {
            stdin.write_all(raw).expect("write");
            stdin.write_all(b"\n").expect("write");
        }
    } // EOF
    let out = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    let replies = stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("non-JSON on stdout {l:?}: {e}"))
        })
        .collect();
    (
        replies,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// The reply whose id is `id` (requests run concurrently, so replies may come in any order).
fn reply(replies: &[Value], id: Value) -> &Value {
    replies
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no reply with id {id}: {replies:#?}"))
}

fn init(id: i64, version: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name":"t","version":"1"}}})
}

#[test]
fn session_era_handshake_tools_and_errors() {
    let (replies, _, ok) = run(
        &[
            json!({"jsonrpc":"2.0","id":0,"method":"tools/list"}),
            init(1, "2024-11-05"),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}),
            json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}),
            init(4, "2025-06-18"),
            json!({"jsonrpc":"2.0","id":5,"method":"elicitation/create","params":{}}),
            json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":7}}}),
        ],
        &[b"{not json", b"\xff\xfe"],
    );
    assert!(ok, "exits 0 on EOF");
    assert_eq!(replies.len(), 9, "{replies:#?}");
    let by = |id: i64| reply(&replies, json!(id));
    assert_eq!(
        by(0)["error"]["code"],
        -32602,
        "tools/list before initialize"
    );
    assert_eq!(by(1)["result"]["protocolVersion"], "2024-11-05");
    assert!(
        by(1)["result"]["serverInfo"].get("title").is_none(),
        "no title in 2024-11-05"
    );
    assert_eq!(by(2)["result"]["content"][0]["text"], "hi");
    assert_eq!(by(3)["error"]["code"], -32602, "unknown tool");
    assert_eq!(by(4)["error"]["code"], -32600, "second initialize");
    assert_eq!(
        by(5)["error"]["code"],
        -32601,
        "server has no elicitation/create"
    );
    assert_eq!(
        by(6)["error"]["code"],
        -32602,
        "invalid arguments are a protocol error before 2025-11-25"
    );
    let parse_errors: Vec<_> = replies.iter().filter(|r| r["id"].is_null()).collect();
    assert_eq!(parse_errors.len(), 2, "{replies:#?}");
    assert!(parse_errors.iter().all(|r| r["error"]["code"] == -32700));
}

#[test]
fn invalid_arguments_are_tool_errors_from_2025_11_25() {
    let (replies, _, _) = run(
        &[
            init(1, "2025-11-25"),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":7}}}),
            json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}),
        ],
        &[],
    );
    let failed = &reply(&replies, json!(2))["result"];
    assert_eq!(failed["isError"], true, "{failed}");
    assert!(
        failed["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("text")),
        "the message names the field: {failed}"
    );
    let sum = &reply(&replies, json!(3))["result"];
    assert_eq!(sum["structuredContent"], json!({"sum": 42.0}));
}

#[test]
fn negotiation_answers_newest_session_revision_for_unknown() {
    let (replies, _, _) = run(&[init(1, "1999-01-01")], &[]);
    assert_eq!(replies[0]["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn stateless_era_requests_carry_their_own_version() {
    let meta = |v: &str| json!({"io.modelcontextprotocol/protocolVersion": v, "io.modelcontextprotocol/clientCapabilities": {}});
    let (replies, _, _) = run(
        &[
            json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta": meta("2026-07-28")}}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta": meta("2026-07-28")}}),
            json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta": meta("2030-01-01")}}),
            json!({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}),
        ],
        &[],
    );
    let by = |id: i64| reply(&replies, json!(id));
    assert_eq!(by(1)["result"]["supportedVersions"][0], "2026-07-28");
    assert_eq!(by(1)["result"]["resultType"], "complete");
    assert_eq!(by(2)["result"]["ttlMs"], 0);
    assert_eq!(by(2)["result"]["cacheScope"], "private");
    assert_eq!(by(3)["error"]["code"], -32022);
    assert_eq!(by(3)["error"]["data"]["requested"], "2030-01-01");
    assert_eq!(
        by(4)["error"]["code"],
        -32602,
        "missing client capabilities"
    );
}

#[test]
fn batches_only_in_2025_03_26() {
    let batch = r#"[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}]"#;
    let (replies, _, _) = run(&[init(1, "2025-03-26")], &[batch.as_bytes(), b"[]"]);
    // The batch is answered once all of its requests are, so the empty batch's error may
    // come first.
    let answers = replies
        .iter()
        .find_map(Value::as_array)
        .expect("batch reply");
    assert_eq!(
        answers.len(),
        2,
        "no reply to the notification: {answers:?}"
    );
    assert_eq!(answers[0]["result"], json!({}));
    assert_eq!(answers[1]["error"]["code"], -32600, "initialize in a batch");
    let empty = reply(&replies, Value::Null);
    assert_eq!(empty["error"]["code"], -32600, "empty batch");

    let (replies, _, _) = run(&[init(1, "2025-06-18")], &[batch.as_bytes()]);
    assert_eq!(
        replies[1]["error"]["code"], -32600,
        "batches refused after 2025-03-26"
    );
}

/// `tools/call` arguments are parsed straight into the tool's type; where that parse could
/// answer differently from parsing a map first, the answer is still the map's.
#[test]
fn tool_arguments_parsed_once_answer_as_a_map_would() {
    let call = |id: i64, arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{arguments}}}}}"#
        )
    };
    let deep = format!(
        r#"{{"text":"x","deep":{}{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let lines = [
        call(10, r#"{"text":"a","text":"b"}"#),
        call(11, r#"{"text":7}"#),
        call(12, &deep),
        call(13, r#"{"text":"x","junk":"\ud800"}"#),
        call(14, r#""text""#),
        call(15, "null"),
        call(16, r#"{"text":"caf\u00e9 \"q\""}"#),
        call(17, r#"{"text":"plain","other":[1,{"k":null}]}"#),
        call(18, r#"{"text":"x","n":1e999}"#),
    ];
    let raw: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
    let (replies, _, ok) = run(
        &[
            init(1, "2025-06-18"),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        ],
        &raw,
    );
    assert!(ok, "exits 0 on EOF");
    let by = |id: i64| reply(&replies, json!(id));
    assert_eq!(
        by(10)["result"]["content"][0]["text"],
        "b",
        "a repeated key: the last one, as in a map"
    );
    let message = |id: i64| {
        assert_eq!(by(id)["error"]["code"], -32602, "{:#?}", by(id));
        by(id)["error"]["message"]
            .as_str()
            .expect("message")
            .to_owned()
    };
    assert_eq!(
        message(11),
        "Invalid params: invalid argument `text`: invalid type: integer `7`, expected a string",
        "the argument's path, no line or column"
    );
    assert!(message(12).contains("recursion limit"), "{}", message(12));
    assert!(message(13).contains("hex escape"), "{}", message(13));
    assert!(message(14).contains("expected a map"), "{}", message(14));
    assert_eq!(
        message(15),
        "Invalid params: invalid arguments: missing field `text`"
    );
    assert_eq!(by(16)["result"]["content"][0]["text"], "café \"q\"");
    assert_eq!(by(17)["result"]["content"][0]["text"], "plain");
    assert!(message(18).contains("out of range"), "{}", message(18));
}

#[test]
fn a_huge_name_or_uri_is_sent_back_once_not_twice() {
    let huge = "x".repeat(1 << 20);
    let uri = format!("ferry://{huge}");
    let (replies, _, ok) = run(
        &[
            init(1, "2025-06-18"),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri": uri}}),
            json!({"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri": uri}}),
            json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name": huge}}),
            json!({"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name": huge}}),
        ],
        &[],
    );
    assert!(ok, "exits 0 on EOF");
    for (id, what, key, value) in [
        (2, "resources/read", "uri", &uri),
        (3, "resources/subscribe", "uri", &uri),
        (4, "tools/call", "name", &huge),
        (5, "prompts/get", "name", &huge),
    ] {
        let error = &reply(&replies, json!(id))["error"];
        assert_eq!(
            &error["data"][key], value,
            "{what}: the whole value in data"
        );
        let message = error["message"].as_str().expect("a message");
        assert!(
            message.len() < 200,
            "{what}: the message quotes a part only ({} bytes)",
            message.len()
        );
        let sent = serde_json::to_string(&reply(&replies, json!(id))).unwrap();
        assert!(
            sent.len() < value.len() + 1024,
            "{what}: {} bytes back for {} in",
            sent.len(),
            value.len()
        );
    }
}

/// A client that keeps stdin open but never reads stdout is let go after `--write-timeout`:
/// `ferry serve` says so on stderr and exits 1 (it used to exit 0 without a word).
#[test]
fn a_client_that_stops_reading_is_let_go_with_a_failure() {
    use std::io::Read;
    use std::time::{Duration, Instant};

    let mut child = serve(&["--write-timeout", "1"]);
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{}", init(1, "2025-06-18")).unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc":"2.0","method":"notifications/initialized"})
    )
    .unwrap();
    // Answers of 64 KiB each, far more than a pipe holds, and nobody reads them.
    let text = "y".repeat(64 * 1024);
    for id in 2..66 {
        let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"echo","arguments":{"text": text}}});
        writeln!(stdin, "{call}").unwrap();
    }
    stdin.flush().unwrap();
    // stdin stays open: the server must end on its own. The bound only catches a hang.
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "ferry serve still runs for a client that reads nothing"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains("read nothing for 1 s"),
        "stderr says why: {stderr}"
    );
}
