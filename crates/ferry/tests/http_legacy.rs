//! The 2024-11-05 HTTP+SSE server transport over real sockets on 127.0.0.1: the `endpoint`
//! event, POSTs answered 202 with their answers on the SSE stream, progress, every refusal
//! (400, 403, 404, 406, 413, 415, 503), keep-alives, the session ending with its stream
//! or after its idle time, the shared session limit and graceful shutdown.

use std::time::Duration;

use ferry::http::HttpConfig;
use ferry::server::{Context, Progress, Server};
use reqwest::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Pause {
    /// Milliseconds to wait before answering.
    ms: u64,
}

fn server() -> Server {
    Server::builder("http-legacy-test", "1.0.0")
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .tool(
            "session",
            "The session key the request reports",
            |(), cx: Context| async move { cx.session_key().to_owned() },
        )
        .tool(
            "slow",
            "Reports progress, waits, answers",
            |a: Pause, Progress(p): Progress| async move {
                if let Some(p) = p {
                    p.report(1.0, Some(2.0), None).await.unwrap();
                }
                tokio::time::sleep(Duration::from_millis(a.ms)).await;
                "done".to_owned()
            },
        )
        .build()
}

struct Fixture {
    base: String,
    http: reqwest::Client,
}

async fn start(config: HttpConfig) -> Fixture {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(ferry::http::serve(server(), listener, config));
    Fixture {
        base: format!("http://{address}"),
        http: reqwest::Client::new(),
    }
}

/// One SSE event: its name (`message` when unnamed) and data.
#[derive(Debug)]
struct Event {
    name: String,
    data: String,
}

/// Reads SSE events from a response; counts keep-alive comments.
struct Events {
    response: reqwest::Response,
    buffer: String,
    comments: usize,
}

impl Events {
    fn new(response: reqwest::Response) -> Events {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Events {
            response,
            buffer: String::new(),
            comments: 0,
        }
    }

    /// The next event; `None` when the stream ends.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let raw: String = self.buffer.drain(..end + 2).collect();
                if raw
                    .lines()
                    .filter(|l| !l.is_empty())
                    .all(|l| l.starts_with(':'))
                {
                    self.comments += 1;
                    continue;
                }
                let field = |name: &str| {
                    raw.lines()
                        .filter_map(|l| l.strip_prefix(name))
                        .collect::<Vec<_>>()
                        .join("\n")
                };
                let name = field("event: ");
                return Some(Event {
                    name: if name.is_empty() {
                        "message".into()
                    } else {
                        name
                    },
                    data: field("data: "),
                });
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.response.chunk())
                .await
                .expect("an event in time")
                .unwrap()?;
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// The next `message` event's JSON.
    async fn message(&mut self) -> Value {
        let event = self.next().await.expect("a message");
        assert_eq!(event.name, "message", "{event:?}");
        serde_json::from_str(&event.data).unwrap_or_else(|e| panic!("{e}: {event:?}"))
    }
}

/// An open HTTP+SSE session: its stream and its messages URL.
struct Session {
    events: Events,
    endpoint: String,
    http: reqwest::Client,
}

impl Fixture {
    async fn open(&self) -> Session {
        let response = self
            .http
            .get(format!("{}/sse", self.base))
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        let mut events = Events::new(response);
        let first = events.next().await.unwrap();
        assert_eq!(first.name, "endpoint", "{first:?}");
        let id = first
            .data
            .strip_prefix("/messages?sessionId=")
            .unwrap_or_else(|| panic!("endpoint {:?}", first.data));
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        Session {
            events,
            endpoint: format!("{}{}", self.base, first.data),
            http: self.http.clone(),
        }
    }
}

impl Session {
    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .post(&self.endpoint)
            .header("content-type", "application/json")
            .body(body.to_string())
    }

    async fn send(&self, body: &Value) {
        let response = self.post(body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::ACCEPTED);
    }

    async fn initialize(&mut self) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "legacy-test", "version": "1"}}}),
        )
        .await;
        let answer = self.events.message().await;
        assert_eq!(answer["id"], 0);
        assert_eq!(
            answer["result"]["protocolVersion"], "2024-11-05",
            "{answer}"
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

#[tokio::test]
async fn end_to_end() {
    let f = start(HttpConfig::default()).await;
    let mut s = f.open().await;
    s.initialize().await;

    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let list = s.events.message().await;
    assert_eq!(list["id"], 1);
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 3);

    s.send(&call(2, "echo", json!({"text": "over sse"}))).await;
    let answer = s.events.message().await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["content"][0]["text"], "over sse");

    // Notifications the request causes travel on the same stream, before its response.
    let mut slow = call(3, "slow", json!({"ms": 10}));
    slow["params"]["_meta"] = json!({"progressToken": "p"});
    s.send(&slow).await;
    let progress = s.events.message().await;
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert_eq!(progress["params"]["progressToken"], "p");
    assert_eq!(s.events.message().await["id"], 3);

    // Handlers see the session as the client names it.
    s.send(&call(4, "session", json!({}))).await;
    let key = s.events.message().await;
    let id = s.endpoint.rsplit_once("sessionId=").unwrap().1;
    assert_eq!(key["result"]["content"][0]["text"], id, "{key}");

    // A second connection is a second session.
    let mut other = f.open().await;
    assert_ne!(other.endpoint, s.endpoint);
    other.initialize().await;
}

#[tokio::test]
async fn refusals() {
    let f = start(HttpConfig::default().max_body_bytes(1024)).await;
    let s = f.open().await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let messages = format!("{}/messages", f.base);
    let post = |url: String, body: String| {
        f.http
            .post(url)
            .header("content-type", "application/json")
            .body(body)
    };

    let status = |r: reqwest::Response| r.status();
    let unknown = post(
        format!("{messages}?sessionId=00000000000000000000000000000000"),
        ping.to_string(),
    );
    assert_eq!(status(unknown.send().await.unwrap()), StatusCode::NOT_FOUND);
    let missing = post(messages.clone(), ping.to_string());
    assert_eq!(
        status(missing.send().await.unwrap()),
        StatusCode::BAD_REQUEST
    );
    let not_json = post(s.endpoint.clone(), "{oops".to_owned());
    assert_eq!(
        status(not_json.send().await.unwrap()),
        StatusCode::BAD_REQUEST
    );
    let too_big = post(s.endpoint.clone(), format!("\"{}\"", "x".repeat(2000)));
    assert_eq!(
        status(too_big.send().await.unwrap()),
        StatusCode::PAYLOAD_TOO_LARGE
    );
    let text = f
        .http
        .post(&s.endpoint)
        .header("content-type", "text/plain")
        .body(ping.to_string());
    assert_eq!(
        status(text.send().await.unwrap()),
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );
    let foreign = f
        .http
        .get(format!("{}/sse", f.base))
        .header("origin", "https://evil.example");
    assert_eq!(status(foreign.send().await.unwrap()), StatusCode::FORBIDDEN);
    let foreign_post = s.post(&ping).header("origin", "https://evil.example");
    assert_eq!(
        status(foreign_post.send().await.unwrap()),
        StatusCode::FORBIDDEN
    );
    let json_only = f
        .http
        .get(format!("{}/sse", f.base))
        .header("accept", "application/json");
    assert_eq!(
        status(json_only.send().await.unwrap()),
        StatusCode::NOT_ACCEPTABLE
    );
    // The session is unharmed by the refused POSTs.
    assert_eq!(
        status(s.post(&ping).send().await.unwrap()),
        StatusCode::ACCEPTED
    );
}

#[tokio::test]
async fn closing_the_stream_ends_the_session() {
    let f = start(HttpConfig::default().sse_keep_alive(Duration::from_millis(20))).await;
    let mut s = f.open().await;
    s.initialize().await;
    // Idle: keep-alive comments arrive.
    let before = s.events.comments;
    s.send(&call(1, "slow", json!({"ms": 150}))).await;
    assert_eq!(s.events.message().await["id"], 1);
    assert!(s.events.comments > before, "keep-alives while the tool ran");

    let endpoint = s.endpoint.clone();
    drop(s.events);
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    // The server notices the hang-up at its next write (a keep-alive at the latest).
    let status = loop {
        let response = f
            .http
            .post(&endpoint)
            .header("content-type", "application/json")
            .body(ping.to_string())
            .send()
            .await
            .unwrap();
        if response.status() != StatusCode::ACCEPTED {
            break response.status();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn sessions_of_both_transports_share_the_limit() {
    let f = start(HttpConfig::default().max_sessions(1)).await;
    let s = f.open().await;
    let response = f.http.get(format!("{}/sse", f.base)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many sessions"),
        "{body}"
    );
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let response = f
        .http
        .post(format!("{}/mcp", f.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    drop(s);
}

#[tokio::test]
async fn an_abandoned_session_expires_and_frees_its_place() {
    let config = HttpConfig::default()
        .session_idle_timeout(Duration::from_millis(300))
        .sse_keep_alive(Duration::from_millis(50))
        .max_sessions(1);
    let f = start(config).await;
    let mut s = f.open().await;
    s.initialize().await;
    // A request in flight longer than the idle time keeps the session.
    s.send(&call(1, "slow", json!({"ms": 900}))).await;
    assert_eq!(s.events.message().await["id"], 1);
    s.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(s.events.message().await["id"], 2);
    // Then the client goes quiet but keeps the connection (reading its keep-alives, which
    // are no activity): the session expires and its stream ends.
    let comments = s.events.comments;
    let end = tokio::time::timeout(Duration::from_secs(10), s.events.next())
        .await
        .expect("the idle session's stream ended");
    assert!(end.is_none(), "no message was due: {end:?}");
    assert!(s.events.comments > comments, "keep-alives while idle");
    let response = s
        .post(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    // Its place under the session limit is free again.
    let mut again = f.open().await;
    again.initialize().await;
}

#[tokio::test]
async fn disabled_or_moved() {
    let f = start(HttpConfig::default().legacy_sse(None)).await;
    let response = f.http.get(format!("{}/sse", f.base)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    let f = start(HttpConfig::default().legacy_sse(Some(("/old/sse", "/old/post")))).await;
    let response = f
        .http
        .get(format!("{}/old/sse", f.base))
        .send()
        .await
        .unwrap();
    let mut events = Events::new(response);
    let endpoint = events.next().await.unwrap();
    assert!(
        endpoint.data.starts_with("/old/post?sessionId="),
        "{endpoint:?}"
    );
}

/// Nested under a prefix (axum's `nest`), or behind a proxy that strips one and says so in
/// `X-Forwarded-Prefix`, the `endpoint` event names the path the client can POST to.
#[tokio::test]
async fn the_endpoint_event_names_the_path_the_client_uses() {
    let app =
        axum::Router::new().nest("/api", ferry::http::router(server(), HttpConfig::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(ferry::http::serve_router(app, listener));
    let http = reqwest::Client::new();
    for (forwarded, expected) in [
        (None, "/api/messages?sessionId="),
        (Some("/edge/"), "/edge/api/messages?sessionId="),
    ] {
        let mut get = http.get(format!("http://{address}/api/sse"));
        if let Some(prefix) = forwarded {
            get = get.header("x-forwarded-prefix", prefix);
        }
        let mut events = Events::new(get.send().await.unwrap());
        let endpoint = events.next().await.unwrap();
        assert_eq!(endpoint.name, "endpoint");
        assert!(endpoint.data.starts_with(expected), "{endpoint:?}");
        if forwarded.is_none() {
            // The named path takes the session's POSTs.
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
            let response = http
                .post(format!("http://{address}{}", endpoint.data))
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::ACCEPTED);
            let answer = events.message().await;
            assert_eq!(answer["id"], 1, "{answer}");
        }
    }
    // A prefix that is not a plain path is ignored.
    let get = http
        .get(format!("http://{address}/api/sse"))
        .header("x-forwarded-prefix", "/x?y=1");
    let mut events = Events::new(get.send().await.unwrap());
    let endpoint = events.next().await.unwrap();
    assert!(
        endpoint.data.starts_with("/api/messages?sessionId="),
        "{endpoint:?}"
    );
}

#[tokio::test]
async fn graceful_shutdown_answers_in_flight_requests() {
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
        base: format!("http://{address}"),
        http: reqwest::Client::new(),
    };
    let mut s = f.open().await;
    s.initialize().await;
    let mut slow = call(1, "slow", json!({"ms": 300}));
    slow["params"]["_meta"] = json!({"progressToken": 1});
    s.send(&slow).await;
    // The handler is running: progress arrived.
    assert_eq!(s.events.message().await["method"], "notifications/progress");
    stop.send(()).unwrap();
    let answer = s.events.message().await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    assert!(s.events.next().await.is_none(), "then the stream ends");
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
}
