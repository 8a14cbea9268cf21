//! `ferry bridge --stdio URL`: Ferry's client spawns the bridge as its stdio server and
//! talks through it to `ferry serve --http` in both eras (tools, progress, the server's
//! sampling request and its answer crossing both ways); closing stdin ends the bridge
//! and DELETEs its session, after the answers to calls in flight are written (or, past
//! `--drain-timeout`, an error for each); `--header` reaches the server; and the chain stdio host ->
//! `bridge --stdio` -> `bridge --http` -> `ferry serve` on stdio.

mod bridge_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use bridge_support::{FERRY, bridge_http, builder, connect, exercise, info, serve_http};
use ferry::engine::{ChildCommand, ShutdownStage, ShutdownTimeouts};
use ferry::protocol::ProtocolVersion;
use serde_json::json;

/// Ferry's client on `ferry bridge --stdio URL`, exercised in the session era and in the
/// stateless era; each bridge must exit on its own when its stdin closes.
async fn through_stdio_bridge(url: &str) {
    for version in [
        Some(ProtocolVersion::V2025_11_25),
        Some(ProtocolVersion::V2025_03_26),
        None,
    ] {
        let label = format!("{version:?} via {url}");
        let command = ChildCommand::new(FERRY).args(["bridge", "--stdio", url]);
        let mut client = builder();
        if let Some(version) = version {
            client = client.version(version);
        }
        let (client, child) = client.spawn(&command).await.expect("spawn the bridge");
        assert_eq!(
            client.version(),
            version.unwrap_or(ProtocolVersion::V2026_07_28),
            "{label}"
        );
        exercise(&client, &label).await;
        drop(client);
        let outcome = child.shutdown(ShutdownTimeouts::default()).await.unwrap();
        assert_eq!(outcome.stage, ShutdownStage::StdinClosed, "{label}");
        assert!(outcome.status.success(), "{label}");
    }
}

#[tokio::test]
async fn a_stdio_host_reaches_an_http_server_in_both_eras() {
    let served = serve_http();
    through_stdio_bridge(&served.url).await;
    // Every bridge DELETEd its session on the way out: a fresh stateless client is the
    // only connection the server has open (its own request).
    let (probe, connection) = connect(&served.url, None).await;
    assert_eq!(info(&probe).await["sessions"], 1);
    drop(probe);
    connection.close().await;
}

#[tokio::test]
async fn the_chain_stdio_to_http_to_stdio() {
    let bridge = bridge_http(&[], &[FERRY, "serve"]);
    through_stdio_bridge(&bridge.url).await;
}

#[test]
fn headers_are_sent_with_every_request() {
    // A one-shot HTTP server that records the request head and refuses it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let recorder = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && socket.read(&mut byte).unwrap() == 1 {
            head.push(byte[0]);
        }
        let _ = socket.write_all(
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        );
        String::from_utf8_lossy(&head).to_lowercase()
    });
    let mut bridge = Command::new(FERRY)
        .args([
            "bridge",
            "--stdio",
            &url,
            "--header",
            "X-Bridge-Test: yes please",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = bridge.stdin.take().unwrap();
    let request = json!({"jsonrpc": "2.0", "id": "h", "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    writeln!(stdin, "{request}").unwrap();
    let mut line = String::new();
    BufReader::new(bridge.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    drop(stdin);
    let head = recorder.join().unwrap();
    assert!(head.contains("x-bridge-test: yes please"), "{head}");
    // The refusal is answered on stdout as a JSON-RPC error for the request, not silence.
    let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], "h");
    assert!(answer["error"]["code"].is_i64(), "{answer}");
    assert!(bridge.wait().unwrap().success());
}

/// `ferry bridge --stdio URL EXTRA...` with piped stdin and stdout.
fn stdio_bridge(url: &str, extra: &[&str]) -> std::process::Child {
    Command::new(FERRY)
        .args(["bridge", "--stdio", url])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Write `lines` to the bridge, close its stdin at once, and read everything it writes
/// until it exits: the messages, and whether it exited 0.
fn send_then_close(
    bridge: &mut std::process::Child,
    lines: &[serde_json::Value],
) -> Vec<serde_json::Value> {
    let mut stdin = bridge.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let mut out = String::new();
    bridge
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    out.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The response with `id` among `messages`, exactly one.
fn response<'a>(messages: &'a [serde_json::Value], id: &str) -> &'a serde_json::Value {
    let found: Vec<_> = messages
        .iter()
        .filter(|m| m["id"] == id && m.get("method").is_none())
        .collect();
    assert_eq!(found.len(), 1, "one response to {id} in {messages:?}");
    found[0]
}

#[test]
fn closing_stdin_drains_the_answers_in_flight() {
    let served = serve_http();
    let mut bridge = stdio_bridge(&served.url, &[]);
    // A session-era host that closes stdin right after a slow call: the call (held behind
    // `initialize` until its answer) is still sent, and its answer written, before the
    // bridge ends the session.
    let messages = send_then_close(
        &mut bridge,
        &[
            json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "drain-test", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {
                "name": "countdown", "arguments": {"steps": 3, "interval_ms": 300}}}),
        ],
    );
    assert!(bridge.wait().unwrap().success());
    assert!(response(&messages, "init")["result"]["serverInfo"].is_object());
    let slow = response(&messages, "slow");
    assert_eq!(
        slow["result"]["content"][0]["text"], "counted 3 steps",
        "{slow}"
    );
    // And the session was DELETEd after the drain: the probe's own is the only one.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (probe, connection) = connect(&served.url, None).await;
        assert_eq!(info(&probe).await["sessions"], 1);
        drop(probe);
        connection.close().await;
    });
}

#[test]
fn answers_that_do_not_come_in_time_are_errors() {
    let served = serve_http();
    let mut bridge = stdio_bridge(&served.url, &["--drain-timeout", "0.5"]);
    // A 2026-07-28 call that would take 100 s: answered with the bridge's error once the
    // drain timeout passes, and the bridge still exits 0.
    let messages = send_then_close(
        &mut bridge,
        &[
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                "name": "countdown", "arguments": {"steps": 1000, "interval_ms": 100},
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}}}}),
        ],
    );
    assert!(bridge.wait().unwrap().success());
    let answers: Vec<_> = messages.iter().filter(|m| m["id"] == 7).collect();
    assert_eq!(answers.len(), 1, "{messages:?}");
    assert_eq!(answers[0]["error"]["code"], -32603, "{}", answers[0]);
    let text = answers[0]["error"]["message"].as_str().unwrap();
    assert!(text.contains("did not answer within 0.5s"), "{text}");
}
