//! A session-era client for tests over real sockets: `initialize`, POST, GET, and an SSE
//! reader that remembers event ids and counts keep-alive comments.

#![allow(dead_code)] // each test file uses part of it

use std::time::Duration;

use ferry::http::HttpConfig;
use ferry::protocol::types::{
    CreateMessageRequestParams, LoggingLevel, Role, SamplingContents, SamplingMessage,
};
use ferry::server::{Context, Progress, Server};
use reqwest::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Text {
    /// The text.
    pub(crate) text: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Ticks {
    /// How many progress notifications.
    pub(crate) steps: u32,
    /// Milliseconds after each.
    pub(crate) ms: u64,
}

/// `echo`; `ticker`: `steps` progress notifications (1..=steps), `ms` apart, then "done";
/// `ask`: logs "asking {text}", asks the client's model `text`, answers what it said.
pub(crate) fn server() -> Server {
    Server::builder("http-test", "1.0.0")
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .tool(
            "ticker",
            "Reports progress steps times, ms apart",
            |a: Ticks, Progress(p): Progress| async move {
                for i in 1..=a.steps {
                    if let Some(p) = &p {
                        p.report(f64::from(i), Some(f64::from(a.steps)), None)
                            .await
                            .map_err(|e| e.to_string())?;
                    }
                    tokio::time::sleep(Duration::from_millis(a.ms)).await;
                }
                Ok::<_, String>("done".to_owned())
            },
        )
        .tool(
            "ask",
            "Logs, then asks the client's model",
            |a: Text, cx: Context| async move {
                cx.log(LoggingLevel::Info, None, format!("asking {}", a.text))
                    .await;
                let answer = cx
                    .sample(CreateMessageRequestParams {
                        messages: vec![SamplingMessage {
                            role: Role::User,
                            content: SamplingContents::text(a.text),
                            meta: None,
                        }],
                        max_tokens: 10,
                        ..Default::default()
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                Ok::<_, String>(
                    serde_json::to_value(&answer.content).unwrap()["text"]
                        .as_str()
                        .unwrap_or("?")
                        .to_owned(),
                )
            },
        )
        .build()
}

/// Serve `server()` on a fresh 127.0.0.1 port; the endpoint's URL.
pub(crate) async fn start(config: HttpConfig) -> String {
    start_with(server(), config).await
}

/// Serve `server` on a fresh 127.0.0.1 port; the endpoint's URL.
pub(crate) async fn start_with(server: Server, config: HttpConfig) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(ferry::http::serve(server, listener, config));
    format!("http://{address}/mcp")
}

pub(crate) fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

/// A `ticker` call with a progress token (answered on SSE).
pub(crate) fn ticker(id: u64, steps: u32, ms: u64) -> Value {
    let mut body = call(id, "ticker", json!({"steps": steps, "ms": ms}));
    body["params"]["_meta"] = json!({"progressToken": id});
    body
}

/// One client session.
#[derive(Clone)]
pub(crate) struct Client {
    pub(crate) http: reqwest::Client,
    pub(crate) url: String,
    pub(crate) id: String,
    pub(crate) version: &'static str,
}

impl Client {
    /// `initialize` (declaring sampling), then `notifications/initialized`.
    pub(crate) async fn connect(
        http: &reqwest::Client,
        url: &str,
        version: &'static str,
    ) -> Client {
        let response = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": version, "capabilities": {"sampling": {}},
                    "clientInfo": {"name": "test", "version": "1"}}})
                .to_string(),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let client = Client {
            http: http.clone(),
            url: url.to_owned(),
            id,
            version,
        };
        let response = client
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        client
    }

    pub(crate) fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", self.version)
            .body(body.to_string())
    }

    pub(crate) fn get(&self) -> reqwest::RequestBuilder {
        self.http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", self.version)
    }
}

pub(crate) async fn json_of(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

/// Reads SSE events (their `data`, as JSON) from a response.
pub(crate) struct Events {
    response: reqwest::Response,
    buffer: String,
    /// The id of the last event read.
    pub(crate) last_id: Option<String>,
    /// Keep-alive comments seen.
    pub(crate) comments: usize,
}

impl Events {
    pub(crate) fn new(response: reqwest::Response) -> Events {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Events {
            response,
            buffer: String::new(),
            last_id: None,
            comments: 0,
        }
    }

    /// The next message; `None` when the stream ends. Comments and priming events are
    /// skipped (comments counted).
    pub(crate) async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let lines: Vec<&str> = event.lines().filter(|l| !l.is_empty()).collect();
                if lines.iter().all(|l| l.starts_with(':')) {
                    self.comments += 1;
                    continue;
                }
                if let Some(id) = lines.iter().find_map(|l| l.strip_prefix("id: ")) {
                    self.last_id = Some(id.to_owned());
                }
                let data: Vec<&str> = lines
                    .iter()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .filter(|d| !d.is_empty())
                    .collect();
                if data.is_empty() {
                    continue; // the priming event
                }
                return Some(serde_json::from_str(&data.join("\n")).unwrap());
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.response.chunk())
                .await
                .expect("an event in time")
                .unwrap()?;
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}
