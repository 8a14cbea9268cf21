//! `ferry bridge --http`: the reference server (`ferry serve`, stdio) behind the bridge,
//! driven over real sockets on 127.0.0.1 — Ferry's client in both eras (tools, progress,
//! sampling round trips, log notifications), per-session isolation and the shared mode's
//! id remapping, a child killed mid-call (a JSON-RPC error, a restart, the next call
//! answered), Origin refusal and the loopback rule.

mod bridge_support;

use std::time::Duration;

use bridge_support::{FERRY, bridge_http, connect, countdown, exercise, info, text_of};
use ferry::client::{CallOptions, ClientError};
use ferry::protocol::ProtocolVersion;
use ferry::protocol::methods::ServerNotification;
use ferry::protocol::types::LoggingLevel;
use serde_json::{Value, json};

const ACCEPT: &str = "application/json, text/event-stream";

#[tokio::test]
async fn session_era_clients_through_the_bridge() {
    for mode in [&["--per-session"][..], &["--shared"][..]] {
        let bridge = bridge_http(mode, &[FERRY, "serve"]);
        for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_03_26] {
            let label = format!("{mode:?} {version}");
            let (client, connection) = connect(&bridge.url, Some(version)).await;
            // One shared child negotiates once: later sessions get its first answer.
            let expected = if mode == ["--shared"] {
                ProtocolVersion::V2025_11_25
            } else {
                version
            };
            assert_eq!(client.version(), expected, "{label}");
            assert!(connection.session_id().is_some(), "{label}");
            exercise(&client, &label).await;
            // Log messages the tool sends while it runs come back on its stream.
            let mut notes = client.notifications();
            client.set_log_level(LoggingLevel::Debug).await.unwrap();
            client
                .call_tool("log", json!({"message": "through the bridge"}))
                .await
                .unwrap();
            let note = tokio::time::timeout(Duration::from_secs(10), async {
                loop {
                    if let Ok(ServerNotification::LoggingMessage(m)) = notes.recv().await {
                        return m;
                    }
                }
            })
            .await
            .unwrap_or_else(|_| panic!("{label}: no log message"));
            assert!(
                note.data.to_string().contains("through the bridge"),
                "{label}: {note:?}"
            );
            drop(client);
            connection.close().await;
        }
    }
}

#[tokio::test]
async fn stateless_clients_through_the_bridge() {
    for mode in [&["--per-session"][..], &["--shared"][..]] {
        let bridge = bridge_http(mode, &[FERRY, "serve"]);
        let (client, connection) = connect(&bridge.url, None).await;
        let label = format!("{mode:?}");
        assert_eq!(client.version(), ProtocolVersion::V2026_07_28, "{label}");
        assert_eq!(connection.session_id(), None, "{label}");
        // The same checks: progress on the request's SSE stream, sampling as the
        // 2026-07-28 way (an input-required result, answered by a retried request).
        exercise(&client, &label).await;
        drop(client);
        connection.close().await;
    }
}

#[tokio::test]
async fn per_session_children_are_isolated_and_shared_is_one() {
    for (mode, isolated) in [("--per-session", true), ("--shared", false)] {
        let bridge = bridge_http(&[mode], &[FERRY, "serve"]);
        let (a, a_conn) = connect(&bridge.url, Some(ProtocolVersion::V2025_11_25)).await;
        let (b, b_conn) = connect(&bridge.url, Some(ProtocolVersion::V2025_11_25)).await;
        let before = info(&b).await["requests_served"].as_u64().unwrap();
        for _ in 0..5 {
            a.call_tool("echo", json!({"text": "a"})).await.unwrap();
        }
        let after = info(&b).await["requests_served"].as_u64().unwrap();
        // B's server saw A's five calls only when both share one child.
        if isolated {
            assert_eq!(after - before, 1, "{mode}: B's child saw only B's read");
        } else {
            assert!(after - before >= 6, "{mode}: {before} -> {after}");
        }
        drop((a, b));
        a_conn.close().await;
        b_conn.close().await;
    }
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> reqwest::Response {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .body(body.to_string());
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.send().await.expect("POST")
}

async fn open_session(http: &reqwest::Client, url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let response = post(http, url, None, init).await;
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["id"], 1);
    assert_eq!(body["result"]["serverInfo"]["name"], "ferry");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(http, url, Some(&session), initialized).await.status(),
        202
    );
    session
}

#[tokio::test]
async fn shared_mode_remaps_colliding_request_ids() {
    let bridge = bridge_http(&["--shared"], &[FERRY, "serve"]);
    let http = reqwest::Client::new();
    let a = open_session(&http, &bridge.url).await;
    let b = open_session(&http, &bridge.url).await;
    assert_ne!(a, b);
    // The same id, in flight at once in both sessions, on one child.
    let slow = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "countdown", "arguments": {"steps": 5, "interval_ms": 40}}});
    let fast = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "from b"}}});
    let (slow, fast) = tokio::join!(
        post(&http, &bridge.url, Some(&a), slow),
        post(&http, &bridge.url, Some(&b), fast)
    );
    let slow: Value = serde_json::from_str(&slow.text().await.unwrap()).unwrap();
    let fast: Value = serde_json::from_str(&fast.text().await.unwrap()).unwrap();
    assert_eq!(slow["id"], 7);
    assert_eq!(slow["result"]["content"][0]["text"], "counted 5 steps");
    assert_eq!(fast["id"], 7);
    assert_eq!(fast["result"]["content"][0]["text"], "from b");
}

/// The pids a `sh -c 'echo $$ >> FILE; exec ferry serve'` child wrote.
fn pids(file: &std::path::Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[tokio::test]
async fn a_dead_child_fails_its_calls_then_is_restarted() {
    for mode in ["--per-session", "--shared"] {
        let file = std::env::temp_dir().join(format!(
            "ferry-bridge-pids-{}-{}",
            std::process::id(),
            mode.trim_start_matches('-')
        ));
        let _ = std::fs::remove_file(&file);
        let script = format!("echo $$ >> '{}'; exec '{FERRY}' serve", file.display());
        let bridge = bridge_http(&[mode], &["sh", "-c", &script]);
        let (client, connection) = connect(&bridge.url, Some(ProtocolVersion::V2025_11_25)).await;
        let (tx, mut progress) = tokio::sync::mpsc::channel(64);
        let call = {
            let client = client.clone();
            tokio::spawn(async move {
                let options = CallOptions {
                    progress: Some(tx),
                    ..Default::default()
                };
                client
                    .call_tool_with(
                        "countdown",
                        json!({"steps": 1000, "interval_ms": 50}),
                        options,
                    )
                    .await
            })
        };
        // The call is running in the child: kill the child.
        progress.recv().await.expect("progress from the child");
        let first = pids(&file);
        assert_eq!(first.len(), 1, "{mode}: {first:?}");
        let killed = std::process::Command::new("kill")
            .args(["-9", &first[0].to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let outcome = call.await.unwrap();
        match outcome {
            Err(ClientError::Rpc(e)) => {
                assert_eq!(e.code, -32603, "{mode}: {e:?}");
                assert!(e.message.contains("exited"), "{mode}: {e:?}");
            }
            other => panic!("{mode}: expected a JSON-RPC error, got {other:?}"),
        }
        // The next call reaches a new child (the session survives: the bridge replayed
        // its initialize).
        let echoed = client
            .call_tool("echo", json!({"text": "again"}))
            .await
            .unwrap();
        assert_eq!(text_of(&echoed), "again", "{mode}");
        let (done, _) = countdown(&client, 2).await;
        assert_eq!(done, "counted 2 steps", "{mode}");
        let all = pids(&file);
        assert_eq!(all.len(), 2, "{mode}: one restart: {all:?}");
        assert_ne!(all[0], all[1]);
        drop(client);
        connection.close().await;
        let _ = std::fs::remove_file(&file);
    }
}

#[tokio::test]
async fn a_foreign_origin_is_refused() {
    let bridge = bridge_http(&[], &[FERRY, "serve"]);
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let refused = http
        .post(&bridge.url)
        .header("origin", "http://evil.example")
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    let allowed = http
        .post(&bridge.url)
        .header("origin", "http://localhost:3000")
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(allowed.status(), 200);
}

#[test]
fn a_non_loopback_address_needs_public() {
    let status = std::process::Command::new(FERRY)
        .args(["bridge", "--http", "0.0.0.0:1", "--", FERRY, "serve"])
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run");
    assert_eq!(status.code(), Some(2));
}

#[tokio::test]
async fn a_server_that_cannot_start_is_an_error_not_silence() {
    let bridge = bridge_http(&[], &["/nonexistent/mcp-server"]);
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let response = post(&http, &bridge.url, None, init).await;
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["id"], 1, "{body}");
    assert_eq!(body["error"]["code"], -32603, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("cannot be started"), "{message}");
}

#[tokio::test]
async fn sigterm_shuts_every_child_down_the_mcp_way() {
    let file = std::env::temp_dir().join(format!("ferry-bridge-exits-{}", std::process::id()));
    let _ = std::fs::remove_file(&file);
    // The shell records how `ferry serve` ended: 0 when its stdin was closed (it would not
    // get to write anything if the bridge killed it).
    let script = format!("'{FERRY}' serve; echo $? >> '{}'", file.display());
    let mut bridge = bridge_http(&["--per-session"], &["sh", "-c", &script]);
    let (a, a_conn) = connect(&bridge.url, Some(ProtocolVersion::V2025_11_25)).await;
    let (b, b_conn) = connect(&bridge.url, Some(ProtocolVersion::V2025_06_18)).await;
    a.call_tool("echo", json!({"text": "a"})).await.unwrap();
    b.call_tool("echo", json!({"text": "b"})).await.unwrap();
    let term = std::process::Command::new("kill")
        .args(["-TERM", &bridge.pid().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    assert!(bridge.wait().success());
    let exits = std::fs::read_to_string(&file).unwrap_or_default();
    assert_eq!(exits.lines().collect::<Vec<_>>(), ["0", "0"], "{exits:?}");
    drop((a, b, a_conn, b_conn));
    let _ = std::fs::remove_file(&file);
}

#[tokio::test]
async fn many_sessions_at_once_on_one_shared_child() {
    let bridge = bridge_http(&["--shared"], &[FERRY, "serve"]);
    let mut clients = Vec::new();
    for _ in 0..20 {
        clients.push(connect(&bridge.url, Some(ProtocolVersion::V2025_11_25)).await);
    }
    // Every session's calls use the same ids (each client counts from the same start);
    // 20 sessions x 10 calls in flight at once must each get their own answer.
    let calls = clients.iter().enumerate().flat_map(|(s, (client, _))| {
        (0..10).map(move |c| async move {
            let text = format!("session {s} call {c}");
            let result = client
                .call_tool("echo", json!({"text": text}))
                .await
                .unwrap();
            assert_eq!(text_of(&result), text);
        })
    });
    futures_util::future::join_all(calls).await;
    for (client, connection) in clients {
        drop(client);
        connection.close().await;
    }
}

#[tokio::test]
async fn the_session_limit_is_a_clear_503() {
    let bridge = bridge_http(&["--max-sessions", "1"], &[FERRY, "serve"]);
    let http = reqwest::Client::new();
    let _first = open_session(&http, &bridge.url).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let refused = post(&http, &bridge.url, None, init).await;
    assert_eq!(refused.status(), 503);
    let body: Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many sessions"),
        "{body}"
    );
}

/// A 2026-07-28 `subscriptions/listen` through the bridge: acknowledged at once on its
/// own SSE stream, naming the request's id (the child's notifications for it go to that
/// request, not to every session); and `ferry check` of the bridge ends within its bounds.
#[tokio::test]
async fn subscriptions_listen_through_the_bridge() {
    for mode in ["--per-session", "--shared"] {
        let bridge = bridge_http(&[mode], &[FERRY, "serve"]);
        let http = reqwest::Client::new();
        let listen = json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
            "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}},
                "notifications": {"toolsListChanged": true}}});
        let response = tokio::time::timeout(
            Duration::from_secs(10),
            http.post(&bridge.url)
                .header("content-type", "application/json")
                .header("accept", ACCEPT)
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "subscriptions/listen")
                .body(listen.to_string())
                .send(),
        )
        .await
        .unwrap_or_else(|_| panic!("{mode}: no response headers"))
        .expect("POST");
        assert_eq!(response.status(), 200, "{mode}");
        let mut response = response;
        let mut seen = String::new();
        while !seen.contains("notifications/subscriptions/acknowledged") {
            let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk())
                .await
                .unwrap_or_else(|_| panic!("{mode}: no acknowledgement: {seen}"))
                .expect("read")
                .expect("the stream stays open");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        assert!(seen.contains(r#""listen-1""#), "{mode}: {seen}");
        drop(response);

        let started = std::time::Instant::now();
        let mut check = tokio::process::Command::new(FERRY)
            .args([
                "check",
                "--revision",
                "2026-07-28",
                "--timeout",
                "5",
                &bridge.url,
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("ferry check");
        let mut stdout = check.stdout.take().expect("stdout");
        let mut report = String::new();
        let read = async {
            use tokio::io::AsyncReadExt as _;
            let _ = stdout.read_to_string(&mut report).await;
            check.wait().await
        };
        tokio::time::timeout(Duration::from_secs(120), read)
            .await
            .unwrap_or_else(|_| panic!("{mode}: ferry check of the bridge never ended"))
            .expect("wait");
        eprintln!("{mode}: ferry check took {:?}", started.elapsed());
        let line = report
            .lines()
            .find(|l| l.contains("subscriptions/listen is acknowledged first"))
            .unwrap_or_else(|| panic!("{mode}: no listen check in:\n{report}"));
        assert!(!line.contains("FAIL"), "{mode}: {line}");
    }
}

#[tokio::test]
async fn a_request_the_server_leaves_unanswered_is_answered_at_the_request_timeout() {
    let bridge = bridge_http(&["--request-timeout", "1"], &[FERRY, "serve"]);
    let http = reqwest::Client::new();
    let session = open_session(&http, &bridge.url).await;
    // The script sleeps 3 s, past the bridge's 1 s: the client hears from the bridge.
    let slow = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "evaluate", "arguments": {"code": "sleep(3); 1"}}});
    let started = std::time::Instant::now();
    let answer = post(&http, &bridge.url, Some(&session), slow).await;
    let answer: Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["code"], -32603);
    assert_eq!(
        answer["error"]["message"],
        "the server did not answer within 1s"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // Cancelled at the server, and id 7 free again in the session.
    let echo = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "again"}}});
    let answer = post(&http, &bridge.url, Some(&session), echo).await;
    let answer: Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "again", "{answer}");
}
