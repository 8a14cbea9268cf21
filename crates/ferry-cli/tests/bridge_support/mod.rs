//! Test support for `ferry bridge`: the built `ferry` binary as real processes on
//! 127.0.0.1 (`ferry serve --http`, `ferry bridge --http`), and Ferry's client.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use ferry::client::{CallOptions, Client};
use ferry::http_client::{HttpClientConfig, HttpConnection};
use ferry::protocol::ProtocolVersion;
use ferry::protocol::types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// The `ferry` binary.
pub const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

/// A running `ferry` process serving HTTP, killed when dropped.
pub struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// Everything it wrote to stderr after its banner.
    pub stderr: Arc<Mutex<String>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Wait for the process to exit.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.child.wait().expect("wait")
    }
}

/// Run `ferry ARGS` (which must print `... MCP on URL` first on stderr).
pub fn spawn(args: &[&str]) -> Served {
    let mut child = Command::new(FERRY)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut banner = String::new();
    stderr.read_line(&mut banner).expect("banner");
    let url = banner
        .trim()
        .split_once("MCP on ")
        .map(|(_, url)| url.to_owned())
        .unwrap_or_else(|| panic!("banner {banner:?}"));
    let log = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&log);
    std::thread::spawn(move || {
        for line in stderr.lines() {
            let Ok(line) = line else { break };
            sink.lock().unwrap().push_str(&line);
            sink.lock().unwrap().push('\n');
        }
    });
    Served {
        child,
        url,
        stderr: log,
    }
}

/// `ferry bridge --http 127.0.0.1:0 MODE... -- COMMAND...`.
pub fn bridge_http(mode: &[&str], command: &[&str]) -> Served {
    let mut args = vec!["bridge", "--http", "127.0.0.1:0"];
    args.extend_from_slice(mode);
    args.push("--");
    args.extend_from_slice(command);
    spawn(&args)
}

/// `ferry serve --http 127.0.0.1:0`.
pub fn serve_http() -> Served {
    spawn(&["serve", "--http", "127.0.0.1:0"])
}

/// A client builder answering sampling (`sampled <prompt>` from model `test`).
pub fn builder() -> ferry::client::ClientBuilder {
    Client::builder("bridge-test", "1.0.0").on_sampling(|params| async move {
        let asked = serde_json::to_value(&params.messages[0].content).unwrap();
        Ok(serde_json::from_value(json!({
            "role": "assistant", "model": "test",
            "content": {"type": "text", "text": format!("sampled {}", asked["text"].as_str().unwrap_or("?"))}
        }))
        .unwrap())
    })
}

/// Connect Ferry's client over HTTP (a session-era `version`, or the newest era).
pub async fn connect(url: &str, version: Option<ProtocolVersion>) -> (Client, HttpConnection) {
    let mut builder = builder();
    if let Some(version) = version {
        builder = builder.version(version);
    }
    builder
        .connect_http(url, HttpClientConfig::default())
        .await
        .expect("connect")
}

/// The text of a tool result.
pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

/// `countdown` with a progress receiver: its text and the progress values seen.
pub async fn countdown(client: &Client, steps: u32) -> (String, Vec<f64>) {
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let result = client
        .call_tool_with(
            "countdown",
            json!({"steps": steps, "interval_ms": 10}),
            options,
        )
        .await
        .expect("countdown");
    let mut seen = Vec::new();
    while let Ok(update) = rx.try_recv() {
        seen.push(update.progress);
    }
    (text_of(&result), seen)
}

/// The reference server's `server://info` as JSON.
pub async fn info(client: &Client) -> Value {
    let read = client.read_resource("server://info").await.expect("read");
    let text = serde_json::to_value(&read.contents[0]).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    serde_json::from_str(&text).unwrap()
}

/// What every session-era exchange checks: echo, progress, sampling.
pub async fn exercise(client: &Client, label: &str) {
    let echoed = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap_or_else(|e| panic!("{label}: echo {e:?}"));
    assert_eq!(text_of(&echoed), "hi", "{label}");
    let (done, progress) = countdown(client, 3).await;
    assert_eq!(done, "counted 3 steps", "{label}");
    assert_eq!(progress, vec![1.0, 2.0, 3.0], "{label}");
    let sampled = client
        .call_tool("sample", json!({"prompt": "x"}))
        .await
        .unwrap_or_else(|e| panic!("{label}: sample {e:?}"));
    assert_eq!(text_of(&sampled), "test says: sampled x", "{label}");
}
