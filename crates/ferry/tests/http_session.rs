//! The session-era Streamable HTTP server (2025-03-26, 2025-06-18, 2025-11-25) over real
//! sockets on 127.0.0.1: sessions, JSON and SSE answers, the GET stream, server requests
//! answered by POST, resumability, the protocol-version header, batches, limits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ferry::http::HttpConfig;
use ferry::protocol::types::{
    CreateMessageRequestParams, LoggingLevel, Role, SamplingContent, SamplingContents,
    SamplingMessage, TextContent,
};
use ferry::server::{Context, Progress, Server};
use reqwest::StatusCode;
use reqwest::header::CONTENT_TYPE;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

struct Fixture {
    server: Server,
    url: String,
    http: reqwest::Client,
}

fn server() -> Server {
    Server::builder("http-session-test", "1.0.0")
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .tool(
            "slow",
            "Reports progress twice",
            |_a: Nothing, Progress(p): Progress| async move {
                let p = p.expect("a progress token");
                p.report(1.0, Some(2.0), None).await.unwrap();
                tokio::time::sleep(Duration::from_millis(20)).await;
                p.report(2.0, Some(2.0), None).await.unwrap();
                "done".to_owned()
            },
        )
        .tool(
            "sleepy",
            "Reports progress (when asked), then works for 800 ms",
            |_a: Nothing, Progress(p): Progress| async move {
                if let Some(p) = p {
                    p.report(1.0, None, None).await.unwrap();
                }
                tokio::time::sleep(Duration::from_millis(800)).await;
                "rested".to_owned()
            },
        )
        .tool(
            "ask",
            "Asks the client's model",
            |a: Text, cx: Context| async move {
                let answer = cx
                    .sample(CreateMessageRequestParams {
                        messages: vec![SamplingMessage {
                            role: Role::User,
                            content: SamplingContents::One(SamplingContent::Text(TextContent {
                                text: a.text,
                                annotations: None,
                                meta: None,
                            })),
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
        .tool(
            "session",
            "The session key the request reports",
            |(), cx: Context| async move { cx.session_key().to_owned() },
        )
        .build()
}

async fn start(config: HttpConfig) -> Fixture {
    let server = server();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(ferry::http::serve(server.clone(), listener, config));
    Fixture {
        server,
        url: format!("http://{address}/mcp"),
        http: reqwest::Client::new(),
    }
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

/// One client session.
struct Client {
    http: reqwest::Client,
    url: String,
    id: String,
    version: &'static str,
}

impl Fixture {
    fn raw_post(&self, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string())
    }

    /// `initialize` (with the sampling capability), then `notifications/initialized`.
    async fn connect(&self, version: &'static str) -> Client {
        let response = self
            .raw_post(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version,
                "capabilities": {"sampling": {}},
                "clientInfo": {"name": "test", "version": "1"}}}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let body = json_of(response).await;
        assert_eq!(body["result"]["protocolVersion"], version, "{body}");
        let client = Client {
            http: self.http.clone(),
            url: self.url.clone(),
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
}

impl Client {
    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", self.version)
            .body(body.to_string())
    }

    fn get(&self) -> reqwest::RequestBuilder {
        self.http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", self.version)
    }

    async fn events(&self, response: reqwest::Response) -> Events {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[CONTENT_TYPE], "text/event-stream");
        Events {
            response,
            buffer: String::new(),
            last_id: None,
        }
    }
}

async fn json_of(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

/// Reads SSE events (their `data`, as JSON) from a response, remembering the last id.
struct Events {
    response: reqwest::Response,
    buffer: String,
    last_id: Option<String>,
}

impl Events {
    /// The next message; `None` when the stream ends.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                if let Some(id) = event.lines().find_map(|l| l.strip_prefix("id: ")) {
                    self.last_id = Some(id.to_owned());
                }
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .filter(|d| !d.is_empty())
                    .collect();
                if data.is_empty() {
                    continue; // a comment or the priming event
                }
                return Some(serde_json::from_str(&data.join("\n")).unwrap());
            }
            let chunk = tokio::time::timeout(Duration::from_secs(5), self.response.chunk())
                .await
                .expect("an event in time")
                .unwrap()?;
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}

#[tokio::test]
async fn session_lifecycle() {
    let f = start(HttpConfig::default()).await;
    let c = f.connect("2025-11-25").await;
    assert_eq!(c.id.len(), 32);
    assert!(c.id.bytes().all(|b| b.is_ascii_hexdigit()));

    let response = c
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
    assert_eq!(
        json_of(response).await["result"]["tools"][0]["name"],
        "echo"
    );

    // Without the session id (nor a 2026-07-28 `_meta`): 400 with -32602, as 2026-07-28
    // requires for a request missing its `_meta`, naming both ways forward; with an
    // unknown one: 404.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let response = f.raw_post(&list).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let refused = json_of(response).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("initialize") && message.contains("protocolVersion"),
        "{message}"
    );
    let response = f
        .raw_post(&list)
        .header("mcp-session-id", "0123")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    // A notification and a ping.
    let response = c
        .post(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert!(response.bytes().await.unwrap().is_empty());
    let response = c
        .post(&json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(response).await["id"], "p");

    // Handlers see the session as the client names it (`Mcp-Session-Id`).
    let response = c.post(&call(3, "session", json!({}))).send().await.unwrap();
    let key = json_of(response).await;
    assert_eq!(key["result"]["content"][0]["text"], c.id.as_str(), "{key}");

    // A second session is distinct.
    let other = f.connect("2025-06-18").await;
    assert_ne!(other.id, c.id);

    // DELETE ends the session: then 404.
    let response = f
        .http
        .delete(&f.url)
        .header("mcp-session-id", &c.id)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let response = c.post(&list).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = c.get().send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    // The other session lives on.
    let response = other.post(&list).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn json_and_sse_answers() {
    let f = start(HttpConfig::default()).await;
    let c = f.connect("2025-11-25").await;
    let response = c
        .post(&call(1, "echo", json!({"text": "hi"})))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
    assert_eq!(
        json_of(response).await["result"]["content"][0]["text"],
        "hi"
    );

    let mut body = call(2, "slow", json!({}));
    body["params"]["_meta"] = json!({"progressToken": "t"});
    let response = c.post(&body).send().await.unwrap();
    let mut events = c.events(response).await;
    let first = events.next().await.unwrap();
    assert_eq!(first["method"], "notifications/progress", "{first}");
    assert_eq!(first["params"]["progressToken"], "t");
    assert_eq!(
        events.next().await.unwrap()["method"],
        "notifications/progress"
    );
    let result = events.next().await.unwrap();
    assert_eq!(result["id"], 2);
    assert_eq!(result["result"]["content"][0]["text"], "done");
    assert!(events.next().await.is_none(), "the stream ends");
    assert!(events.last_id.unwrap().starts_with(|c: char| c != '0'));
}

#[tokio::test]
async fn sse_responses_for_every_request_when_configured() {
    let f = start(HttpConfig::default().sse_responses(true)).await;
    for version in ["2025-03-26", "2025-11-25"] {
        let response = f
            .raw_post(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}),
            )
            .send()
            .await
            .unwrap();
        let c = Client {
            http: f.http.clone(),
            url: f.url.clone(),
            id: response.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_owned(),
            version,
        };
        let mut events = c.events(response).await;
        assert_eq!(
            events.next().await.unwrap()["result"]["protocolVersion"],
            version
        );
        assert!(events.next().await.is_none(), "the stream ends");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = c.post(&initialized).send().await.unwrap();
        assert_eq!(
            response.status(),
            StatusCode::ACCEPTED,
            "notifications: 202"
        );

        let response = c
            .post(&call(1, "echo", json!({"text": "hi"})))
            .send()
            .await
            .unwrap();
        let mut events = c.events(response).await;
        let result = events.next().await.unwrap();
        assert_eq!(result["id"], 1);
        assert_eq!(result["result"]["content"][0]["text"], "hi");
        assert!(
            events.next().await.is_none(),
            "the stream ends at the response"
        );
        assert!(events.last_id.is_some(), "events carry ids: resumable");
    }
}

#[tokio::test]
async fn quiet_post_streams_are_closed_for_the_client_to_poll() {
    let f = start(HttpConfig::default().sse_poll_after(Duration::from_millis(100))).await;
    let c = f.connect("2025-11-25").await;
    // Nothing to send for a while: the priming event alone, then the end.
    let response = c.post(&call(1, "sleepy", json!({}))).send().await.unwrap();
    let mut events = c.events(response).await;
    assert!(events.next().await.is_none(), "closed before the response");
    let cursor = events.last_id.expect("the priming event's id");
    let response = c
        .get()
        .header("last-event-id", &cursor)
        .send()
        .await
        .unwrap();
    let mut events = c.events(response).await;
    let result = events.next().await.unwrap();
    assert_eq!(result["id"], 1, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], "rested");
    assert!(events.next().await.is_none(), "the resumed stream ends");

    // Quiet after an event: closed after it; the resumed stream has the rest.
    let mut body = call(2, "sleepy", json!({}));
    body["params"]["_meta"] = json!({"progressToken": "p"});
    let response = c.post(&body).send().await.unwrap();
    let mut events = c.events(response).await;
    let progress = events.next().await.unwrap();
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert!(events.next().await.is_none(), "closed before the response");
    let cursor = events.last_id.unwrap();
    let response = c
        .get()
        .header("last-event-id", &cursor)
        .send()
        .await
        .unwrap();
    let mut events = c.events(response).await;
    assert_eq!(events.next().await.unwrap()["id"], 2);

    // A quick answer is still one JSON object.
    let response = c
        .post(&call(3, "echo", json!({"text": "hi"})))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");

    // Older sessions are never polled: their clients need not resume a stream cut short.
    let old = f.connect("2025-06-18").await;
    let response = old
        .post(&call(4, "sleepy", json!({})))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
    assert_eq!(
        json_of(response).await["result"]["content"][0]["text"],
        "rested"
    );
}

#[tokio::test]
async fn get_stream_hears_list_changes() {
    let f = start(HttpConfig::default()).await;
    let c = f.connect("2025-06-18").await;
    let response = c.get().send().await.unwrap();
    let mut events = c.events(response).await;
    // One standalone stream at a time.
    let response = c.get().send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CONFLICT);
    f.server
        .add_tool("late", "Added later", |a: Text, _cx: Context| async move {
            a.text
        });
    let event = events.next().await.unwrap();
    assert_eq!(event["method"], "notifications/tools/list_changed");
    assert!(event.get("id").is_none());

    // GET and DELETE without a session are 405 (the stateless era's answer).
    let response = f
        .http
        .get(&f.url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn sampling_request_travels_on_the_post_stream() {
    let f = start(HttpConfig::default()).await;
    let c = f.connect("2025-11-25").await;
    let response = c
        .post(&call(5, "ask", json!({"text": "why?"})))
        .send()
        .await
        .unwrap();
    let mut events = c.events(response).await;
    let request = events.next().await.unwrap();
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "role": "assistant", "model": "m",
        "content": {"type": "text", "text": "because"}}});
    let response = c.post(&answer).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let result = events.next().await.unwrap();
    assert_eq!(result["id"], 5);
    assert_eq!(
        result["result"]["content"][0]["text"], "because",
        "{result}"
    );
    assert!(events.next().await.is_none());
}

#[tokio::test]
async fn resuming_the_get_stream_loses_and_repeats_nothing() {
    let f = start(HttpConfig::default()).await;
    let c = f.connect("2025-11-25").await;
    let response = c.get().send().await.unwrap();
    let mut events = c.events(response).await;
    let tool = |_a: Text, _cx: Context| async move { String::new() };
    let mut seen = Vec::new();
    for i in 0..3 {
        f.server.add_tool(&format!("t{i}"), "", tool);
        events.next().await.unwrap();
        seen.push(events.last_id.clone().unwrap());
    }
    drop(events);
    // Changes while disconnected are kept for the resumption.
    for i in 3..6 {
        f.server.add_tool(&format!("t{i}"), "", tool);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let response = c
        .get()
        .header("last-event-id", seen.last().unwrap())
        .send()
        .await
        .unwrap();
    let mut events = c.events(response).await;
    for _ in 3..6 {
        let event = events.next().await.unwrap();
        assert_eq!(event["method"], "notifications/tools/list_changed");
        seen.push(events.last_id.clone().unwrap());
    }
    // And live again after the replay.
    f.server.add_tool("t6", "", tool);
    events.next().await.unwrap();
    seen.push(events.last_id.clone().unwrap());
    let expected: Vec<String> = (1..=7).map(|n| format!("0-{n}")).collect();
    assert_eq!(seen, expected);

    // A malformed or foreign Last-Event-ID is refused.
    for bad in ["x", "99-1"] {
        let response = c.get().header("last-event-id", bad).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{bad}");
    }
}

#[tokio::test]
async fn resuming_a_post_stream_replays_its_response() {
    let f = start(HttpConfig::default()).await;
    let c = f.connect("2025-11-25").await;
    let mut body = call(3, "slow", json!({}));
    body["params"]["_meta"] = json!({"progressToken": 1});
    let response = c.post(&body).send().await.unwrap();
    let mut events = c.events(response).await;
    events.next().await.unwrap();
    let cursor = events.last_id.clone().unwrap();
    drop(events);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let response = c
        .get()
        .header("last-event-id", &cursor)
        .send()
        .await
        .unwrap();
    let mut events = c.events(response).await;
    assert_eq!(
        events.next().await.unwrap()["method"],
        "notifications/progress"
    );
    assert_eq!(events.next().await.unwrap()["id"], 3);
    assert!(events.next().await.is_none());
}

#[tokio::test]
async fn protocol_version_header() {
    let f = start(HttpConfig::default()).await;
    let c = f.connect("2025-06-18").await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let status = |version: Option<&'static str>| {
        let mut request = f
            .http
            .post(&f.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &c.id)
            .body(list.to_string());
        if let Some(version) = version {
            request = request.header("mcp-protocol-version", version);
        }
        async move { request.send().await.unwrap().status() }
    };
    assert_eq!(status(None).await, StatusCode::OK, "missing: 2025-03-26");
    assert_eq!(status(Some("2025-06-18")).await, StatusCode::OK);
    assert_eq!(status(Some("2025-03-26")).await, StatusCode::OK, "older");
    assert_eq!(status(Some("2025-11-25")).await, StatusCode::BAD_REQUEST);
    assert_eq!(status(Some("1999-01-01")).await, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn batches_in_2025_03_26_only() {
    let f = start(HttpConfig::default()).await;
    let c = f.connect("2025-03-26").await;
    let batch = json!([
        call(1, "echo", json!({"text": "a"})),
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        call(2, "echo", json!({"text": "b"})),
    ]);
    let response = c.post(&batch).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = json_of(response).await;
    let mut texts: Vec<(i64, String)> = body
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap(),
                r["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect();
    texts.sort();
    assert_eq!(texts, vec![(1, "a".to_owned()), (2, "b".to_owned())]);

    let newer = f.connect("2025-06-18").await;
    let response = newer.post(&batch).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn idle_sessions_expire() {
    let f = start(HttpConfig::default().session_idle_timeout(Duration::from_millis(200))).await;
    let c = f.connect("2025-11-25").await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(c.post(&list).send().await.unwrap().status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        c.post(&list).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
}

/// A full table makes room by ending the quietest session that never made a request after
/// `initialize` (an `initialize` flood cannot lock clients out for the idle timeout); a
/// session in use is kept, and with nothing to evict a new one gets 503.
#[tokio::test]
async fn a_full_table_evicts_the_unused_sessions_first() {
    let grace = Duration::from_millis(100);
    let f = start(
        HttpConfig::default()
            .max_sessions(2)
            .unused_session_grace(grace),
    )
    .await;
    let used = f.connect("2025-06-18").await;
    let unused = f.connect("2025-06-18").await;
    let response = used
        .post(&call(1, "echo", json!({"text": "hi"})))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    // Within the grace: nothing to evict yet.
    let response = f.raw_post(&initialize).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    tokio::time::sleep(grace * 2).await;
    let response = f.raw_post(&initialize).send().await.unwrap();
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "the unused session made room"
    );
    let gone = unused
        .post(&call(2, "echo", json!({"text": "x"})))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    let kept = used
        .post(&call(3, "echo", json!({"text": "x"})))
        .send()
        .await
        .unwrap();
    assert_eq!(kept.status(), StatusCode::OK, "the session in use stays");
}

#[tokio::test]
async fn session_limit_and_foreign_origin() {
    let f = start(HttpConfig::default().max_sessions(1)).await;
    let _c = f.connect("2025-11-25").await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let response = f.raw_post(&init).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body = json_of(response).await;
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many sessions"),
        "{body}"
    );
    let response = f
        .raw_post(&init)
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn graceful_shutdown_ends_streams() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(ferry::http::serve_with_shutdown(
        server(),
        listener,
        HttpConfig::default(),
        async move {
            let _ = stopped.await;
        },
    ));
    let f = Fixture {
        server: server(),
        url: format!("http://{address}/mcp"),
        http: reqwest::Client::new(),
    };
    let c = f.connect("2025-11-25").await;
    let response = c.get().send().await.unwrap();
    let mut events = c.events(response).await;
    stop.send(()).unwrap();
    assert!(events.next().await.is_none(), "the stream ends");
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_sessions() {
    let f = start(HttpConfig::default()).await;
    let started = std::time::Instant::now();
    let mut tasks = Vec::new();
    for s in 0..200 {
        let f = Fixture {
            server: f.server.clone(),
            url: f.url.clone(),
            http: f.http.clone(),
        };
        tasks.push(tokio::spawn(async move {
            let c = f.connect("2025-11-25").await;
            for i in 0..50 {
                let text = format!("{s}-{i}");
                let response = c
                    .post(&call(i, "echo", json!({"text": text})))
                    .send()
                    .await
                    .unwrap();
                let body = json_of(response).await;
                assert_eq!(body["id"], i);
                assert_eq!(body["result"]["content"][0]["text"], text.as_str());
            }
        }));
    }
    tokio::time::timeout(Duration::from_secs(300), async {
        for task in tasks {
            task.await.unwrap();
        }
    })
    .await
    .expect("10,000 calls over 200 sessions, none stuck (a hang guard, not a speed test)");
    eprintln!("200 sessions x 50 calls: {:?}", started.elapsed());
}

/// A GET stream whose reader stops reading (a real socket with a small receive buffer,
/// never read after the headers) is cut once its queue fills: the server holds a bounded
/// backlog for it, the session goes on, and a new GET stream can take its place.
#[tokio::test]
async fn a_slow_sse_reader_is_cut_after_its_queue_fills() {
    // Events of ~7 KB each: what the kernel buffers is soon full.
    let uri = format!("memo://{}", "x".repeat(7000));
    let resource: ferry::protocol::types::Resource =
        serde_json::from_value(json!({"uri": uri, "name": "big"})).unwrap();
    let server = Server::builder("slow-reader-test", "1.0.0")
        .resource(resource, |_cx: Context| async move {
            Vec::<ferry::protocol::types::ResourceContents>::new()
        })
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(ferry::http::serve(
        server.clone(),
        listener,
        HttpConfig::default(),
    ));
    let f = Fixture {
        server,
        url: format!("http://{address}/mcp"),
        http: reqwest::Client::new(),
    };
    let c = f.connect("2025-11-25").await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
                           "params": {"uri": uri}});
    assert_eq!(
        c.post(&subscribe).send().await.unwrap().status(),
        StatusCode::OK
    );

    // The slow reader: the GET's headers read, then nothing.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut slow = socket.connect(address).await.unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n\r\n",
        c.id
    );
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    slow.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        assert_eq!(slow.read(&mut byte).await.unwrap(), 1, "headers");
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 200"), "{head:?}");
    // While it is live, no second standalone stream.
    assert_eq!(c.get().send().await.unwrap().status(), StatusCode::CONFLICT);

    // ~28 MB of updates: far past the kernel's buffers and the stream's queue.
    for _ in 0..4000 {
        f.server.notify_resource_updated(&uri);
        tokio::task::yield_now().await;
    }
    // Cut: the standalone slot is free again, and the session still answers.
    let mut replaced = None;
    for _ in 0..100 {
        let response = c.get().send().await.unwrap();
        if response.status() == StatusCode::OK {
            replaced = Some(response);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(replaced.is_some(), "the slow reader's stream was never cut");
    let response = c.post(&call(2, "echo", json!({"text": "x"}))).send().await;
    assert!(response.is_ok());
    // What the slow reader is still owed is bounded: it reaches the end of its stream.
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), slow.read_to_end(&mut rest))
        .await
        .expect("the cut stream ends")
        .unwrap();
    assert!(
        rest.len() < 20 * 1024 * 1024,
        "{} bytes still sent to the slow reader",
        rest.len()
    );
}

/// A POST stream whose reader stops reading is cut once more than
/// `stream_max_unread_bytes` wait for it, long before its queue's count bound: a few huge
/// events do not pile up for it (here 40 log messages of 512 KiB against a 2 MiB bound).
/// The session goes on.
#[tokio::test]
async fn a_slow_sse_reader_is_cut_past_its_unread_bytes() {
    let done = Arc::new(AtomicBool::new(false));
    let finished = done.clone();
    let server = Server::builder("slow-reader-test", "1.0.0")
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .tool(
            "chatty",
            "Logs 40 messages of 512 KiB, then answers",
            move |_a: Nothing, cx: Context| {
                let finished = finished.clone();
                async move {
                    for _ in 0..40 {
                        cx.log(LoggingLevel::Info, None, "x".repeat(512 * 1024))
                            .await;
                    }
                    finished.store(true, Ordering::SeqCst);
                    "said".to_owned()
                }
            },
        )
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let config = HttpConfig::default().stream_max_unread_bytes(2 * 1024 * 1024);
    tokio::spawn(ferry::http::serve(server.clone(), listener, config));
    let f = Fixture {
        server,
        url: format!("http://{address}/mcp"),
        http: reqwest::Client::new(),
    };
    let c = f.connect("2025-11-25").await;

    // The slow reader: its POST's answer headers read, then nothing.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut slow = socket.connect(address).await.unwrap();
    let body = call(1, "chatty", json!({})).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        c.id,
        body.len()
    );
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    slow.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        assert_eq!(slow.read(&mut byte).await.unwrap(), 1, "headers");
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 200"), "{head:?}");
    while !done.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The session goes on.
    let echoed = json_of(
        c.post(&call(2, "echo", json!({"text": "x"})))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(echoed["result"]["content"][0]["text"], "x", "{echoed}");
    // What the slow reader still gets: the bound, one event past it, and what the kernel
    // and hyper hold; then the stream ends, without its response (the client may resume
    // it from the event store). Nowhere near the 20 MiB said.
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), slow.read_to_end(&mut rest))
        .await
        .expect("the cut stream ends")
        .unwrap();
    assert!(
        rest.len() < 8 * 1024 * 1024,
        "{} bytes still sent to the slow reader",
        rest.len()
    );
    assert!(!String::from_utf8_lossy(&rest).contains("said"));
}
