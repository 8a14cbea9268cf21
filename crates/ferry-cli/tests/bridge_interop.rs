//! The official SDKs' clients (npm `@modelcontextprotocol/sdk`, `interop/ts/client.mjs`;
//! PyPI `mcp`, `interop/py/client.py`: tools, structured output, resources, prompts,
//! progress, cancellation, sampling, elicitation, roots) against Ferry's reference server
//! through `ferry bridge`: Streamable HTTP (TypeScript; Python in both eras) and 2024-11-05
//! HTTP+SSE into `bridge --http` in front of `ferry serve` on stdio (each mode), and stdio
//! into `bridge --stdio` in front of `ferry serve --http`; and Ferry's client through the
//! bridge in front of the TypeScript SDK's server. The SDKs are installed by
//! `interop/install.sh` (`npm ci`, a venv).

#![cfg(unix)]

mod bridge_support;
mod interop_support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use bridge_support::{FERRY, bridge_http, serve_http};
use interop_support::{install, interop_dir, py_client, ts_client};

#[test]
fn ts_sdk_client_over_streamable_http_through_bridge_http() {
    for mode in ["--per-session", "--shared"] {
        let bridge = bridge_http(&[mode], &[FERRY, "serve"]);
        ts_client(&["http", &bridge.url]);
    }
}

#[test]
fn python_sdk_client_in_both_eras_through_bridge_http() {
    for mode in ["--per-session", "--shared"] {
        let bridge = bridge_http(&[mode], &[FERRY, "serve"]);
        py_client("session", &["http", &bridge.url]);
        py_client("stateless", &["http", &bridge.url]);
    }
}

#[test]
fn ts_sdk_client_over_legacy_sse_through_bridge_http() {
    let bridge = bridge_http(&[], &[FERRY, "serve"]);
    let sse = bridge.url.replace("/mcp", "/sse");
    ts_client(&["sse", &sse]);
}

#[test]
fn ts_sdk_client_over_stdio_through_bridge_stdio() {
    let served = serve_http();
    ts_client(&["stdio", FERRY, "bridge", "--stdio", &served.url]);
}

/// A child that speaks only the session era (the TypeScript SDK's server on stdio): a
/// 2026-07-28 client's `server/discover` reaches it as it is, the child's `-32601` comes
/// back as HTTP 404, and the client falls back to `initialize` — the session era, with the
/// child's own answer. Then Ferry's client works through the bridge as usual (progress and
/// sampling included).
#[tokio::test]
async fn a_session_era_child_makes_new_clients_fall_back() {
    install();
    let server = interop_dir().join("ts/server.mjs");
    let server = server.to_string_lossy();
    let bridge = bridge_http(&[], &["node", &server, "stdio"]);
    let (client, connection) = bridge_support::connect(&bridge.url, None).await;
    assert_eq!(
        client.version(),
        ferry::protocol::ProtocolVersion::V2025_11_25
    );
    assert!(connection.session_id().is_some());
    let echoed = client
        .call_tool("echo", serde_json::json!({"text": "via the bridge"}))
        .await
        .unwrap();
    assert_eq!(bridge_support::text_of(&echoed), "via the bridge");
    let (done, progress) = bridge_support::countdown(&client, 3).await;
    assert!(!done.is_empty());
    assert_eq!(progress, vec![1.0, 2.0, 3.0]);
    let sampled = client
        .call_tool("sample", serde_json::json!({"prompt": "x"}))
        .await
        .unwrap();
    assert!(
        bridge_support::text_of(&sampled).contains("sampled x"),
        "{sampled:?}"
    );
    drop(client);
    connection.close().await;
}

/// The TypeScript SDK's server on HTTP (`node server.mjs MODE 0`), killed when dropped.
struct TsServer(std::process::Child);

impl Drop for TsServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start it and read the URL it announces (`listening URL`).
fn ts_server(mode: &str) -> (TsServer, String) {
    install();
    let mut child = Command::new("node")
        .arg(interop_dir().join("ts/server.mjs"))
        .args([mode, "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn node");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next().expect("a banner").expect("a line");
    std::thread::spawn(move || for _ in lines {});
    let url = line
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("banner {line:?}"))
        .to_owned();
    (TsServer(child), url)
}

/// Ferry's client spawns `ferry bridge --stdio URL` in front of the TypeScript SDK's
/// server over Streamable HTTP, and over the 2024-11-05 HTTP+SSE transport (the bridge's
/// HTTP client finds it by the fallback: `initialize` refused, then `GET` for the
/// `endpoint` event).
#[tokio::test]
async fn ferry_client_through_bridge_stdio_to_ts_sdk_servers() {
    for mode in ["http", "sse"] {
        let (_server, url) = ts_server(mode);
        let command = ferry::engine::ChildCommand::new(FERRY).args(["bridge", "--stdio", &url]);
        let (client, child) = bridge_support::builder()
            .spawn(&command)
            .await
            .unwrap_or_else(|e| panic!("{mode}: {e:?}"));
        let echoed = client
            .call_tool("echo", serde_json::json!({"text": mode}))
            .await
            .unwrap();
        assert_eq!(bridge_support::text_of(&echoed), mode);
        let (_, progress) = bridge_support::countdown(&client, 3).await;
        assert_eq!(progress, vec![1.0, 2.0, 3.0], "{mode}");
        let sampled = client
            .call_tool("sample", serde_json::json!({"prompt": "x"}))
            .await
            .unwrap();
        assert!(
            bridge_support::text_of(&sampled).contains("sampled x"),
            "{mode}: {sampled:?}"
        );
        drop(client);
        let outcome = child
            .shutdown(ferry::engine::ShutdownTimeouts::default())
            .await
            .unwrap();
        assert!(outcome.status.success(), "{mode}: {outcome:?}");
    }
}

/// A child that speaks 2026-07-28 on stdio (the Python SDK's server): Ferry's stateless
/// client goes through the bridge unchanged — discovery, a tool call, progress on the
/// request's SSE stream, and sampling by the input-required round trip.
#[tokio::test]
async fn a_stateless_child_serves_stateless_clients_through_the_bridge() {
    install();
    let python = interop_dir().join(".venv/bin/python");
    let server = interop_dir().join("py/server.py");
    let (python, server) = (python.to_string_lossy(), server.to_string_lossy());
    for mode in ["--per-session", "--shared"] {
        let bridge = bridge_http(&[mode], &[&python, &server, "stdio"]);
        let (client, connection) = bridge_support::connect(&bridge.url, None).await;
        assert_eq!(
            client.version(),
            ferry::protocol::ProtocolVersion::V2026_07_28,
            "{mode}"
        );
        assert_eq!(connection.session_id(), None, "{mode}");
        let echoed = client
            .call_tool("echo", serde_json::json!({"text": "stateless"}))
            .await
            .unwrap();
        assert_eq!(bridge_support::text_of(&echoed), "stateless", "{mode}");
        let (_, progress) = bridge_support::countdown(&client, 3).await;
        assert_eq!(progress, vec![1.0, 2.0, 3.0], "{mode}");
        let sampled = client
            .call_tool("sample", serde_json::json!({"prompt": "x"}))
            .await
            .unwrap();
        assert!(
            bridge_support::text_of(&sampled).contains("sampled x"),
            "{mode}: {sampled:?}"
        );
        drop(client);
        connection.close().await;
    }
}
