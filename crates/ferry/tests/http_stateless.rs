//! The 2026-07-28 Streamable HTTP server over real sockets on 127.0.0.1: JSON and SSE
//! answers, every status path, cancellation on disconnect, `subscriptions/listen`.

use std::time::Duration;

use ferry::http::HttpConfig;
use ferry::protocol::types::Tool;
use ferry::server::{Cancel, Context, Progress, Server};
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

/// Notes when the `hang` tool's future is dropped.
struct DropGuard(tokio::sync::mpsc::UnboundedSender<&'static str>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

struct Fixture {
    server: Server,
    url: String,
    http: reqwest::Client,
    hang_events: tokio::sync::mpsc::UnboundedReceiver<&'static str>,
}

async fn start(config: HttpConfig) -> Fixture {
    let (tx, hang_events) = tokio::sync::mpsc::unbounded_channel();
    let sql: Tool = serde_json::from_value(json!({
        "name": "sql",
        "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"}}}
    }))
    .unwrap();
    let server = Server::builder("http-test", "1.0.0")
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
            "hang",
            "Reports progress, then waits until cancelled",
            move |_a: Nothing, Progress(p): Progress, Cancel(cancel): Cancel| {
                let tx = tx.clone();
                async move {
                    let _guard = DropGuard(tx.clone());
                    if let Some(p) = p {
                        p.report(1.0, None, None).await.unwrap();
                    }
                    cancel.cancelled().await;
                    let _ = tx.send("token cancelled");
                    std::future::pending::<String>().await
                }
            },
        )
        .raw_tool(sql, |args, _cx: Context| async move {
            args.get("region").cloned().unwrap_or_default().to_string()
        })
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(ferry::http::serve(server.clone(), listener, config));
    Fixture {
        server,
        url: format!("http://{address}/mcp"),
        http: reqwest::Client::new(),
        hang_events,
    }
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {}})
}

fn request(method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
}

impl Fixture {
    /// A POST with the headers a conforming client sends for `body`.
    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        self.post_with(body, &[])
    }

    /// The same, with some headers replaced (an empty value removes one).
    fn post_with(
        &self,
        body: &Value,
        overrides: &[(&'static str, &str)],
    ) -> reqwest::RequestBuilder {
        use reqwest::header::{HeaderMap, HeaderValue};
        let mut headers = HeaderMap::new();
        let mut set = |name: &'static str, value: &str| {
            if value.is_empty() {
                headers.remove(name);
            } else {
                headers.insert(name, HeaderValue::from_str(value).unwrap());
            }
        };
        set("content-type", "application/json");
        set("accept", "application/json, text/event-stream");
        set("mcp-protocol-version", "2026-07-28");
        if let Some(method) = body["method"].as_str() {
            set("mcp-method", method);
        }
        let name = &body["params"]["name"];
        if let Some(name) = name.as_str().or(body["params"]["uri"].as_str()) {
            set("mcp-name", name);
        }
        for (name, value) in overrides {
            set(name, value);
        }
        self.http
            .post(&self.url)
            .headers(headers)
            .body(body.to_string())
    }
}

async fn json_of(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

/// Reads SSE events (their `data`, as JSON) from a response.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                if data.is_empty() {
                    continue; // a comment
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
async fn answers_json() {
    let f = start(HttpConfig::default()).await;
    let response = f
        .post(&request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
    let body = json_of(response).await;
    assert_eq!(body["id"], 7);
    // The whole result: the stateless era adds `resultType` and names the server.
    assert_eq!(
        body["result"],
        json!({
            "content": [{"type": "text", "text": "hi"}],
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "http-test", "version": "1.0.0"}},
        }),
        "{body}"
    );

    // Session and resumption headers are ignored.
    let response = f
        .post_with(
            &request("tools/list", json!({})),
            &[("mcp-session-id", "abc"), ("last-event-id", "3")],
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("mcp-session-id").is_none());
    let body = json_of(response).await;
    assert_eq!(
        body["result"]["tools"].as_array().unwrap().len(),
        4,
        "{body}"
    );
}

#[tokio::test]
async fn streams_progress_then_the_result() {
    let f = start(HttpConfig::default()).await;
    let mut body = request("tools/call", json!({"name": "slow", "arguments": {}}));
    body["params"]["_meta"]["progressToken"] = json!("p1");
    let response = f.post(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[CONTENT_TYPE], "text/event-stream");
    assert_eq!(response.headers()["x-accel-buffering"], "no");
    let mut events = Events {
        response,
        buffer: String::new(),
    };
    for expected in [1.0, 2.0] {
        let event = events.next().await.unwrap();
        assert_eq!(event["method"], "notifications/progress", "{event}");
        assert_eq!(event["params"]["progressToken"], "p1");
        assert_eq!(event["params"]["progress"], expected);
    }
    let last = events.next().await.unwrap();
    assert_eq!(last["id"], 7);
    assert_eq!(last["result"]["content"][0]["text"], "done", "{last}");
    assert_eq!(events.next().await, None, "the response ends the stream");
}

#[tokio::test]
async fn status_paths() {
    let f = start(HttpConfig::default().max_body_bytes(4096)).await;
    let echo = request(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );

    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let response = f.http.request(method, &f.url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    // Unknown method: 404 with -32601.
    let response = f.post(&request("no/such", json!({}))).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(json_of(response).await["error"]["code"], -32601);

    // Header mismatches: 400 with -32020.
    let mismatch = |r: reqwest::RequestBuilder| async move {
        let response = r.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let body = json_of(response).await;
        assert_eq!(body["error"]["code"], -32020, "{body}");
        assert_eq!(body["id"], 7);
    };
    mismatch(f.post_with(&echo, &[("mcp-name", "other")])).await;
    mismatch(f.post_with(&echo, &[("mcp-name", "=?base64?b3RoZXI=?=")])).await; // "other"
    mismatch(f.post_with(&echo, &[("mcp-name", "")])).await; // missing
    mismatch(f.post_with(&echo, &[("mcp-method", "tools/list")])).await;
    mismatch(f.post_with(&echo, &[("mcp-protocol-version", "2025-11-25")])).await;
    mismatch(f.post_with(&echo, &[("mcp-protocol-version", "")])).await;
    mismatch(f.post(&echo).header("mcp-name", "echo")).await; // twice
    let sql = request(
        "tools/call",
        json!({"name": "sql", "arguments": {"region": "eu", "query": "q"}}),
    );
    mismatch(f.post(&sql)).await; // Mcp-Param-Region missing
    mismatch(f.post_with(&sql, &[("mcp-param-region", "us")])).await;
    mismatch(f.post_with(&sql, &[("mcp-param-region", "=?base64?dXM=?=")])).await; // "us"

    // The base64 form, decoded, matches.
    let response = f
        .post_with(&echo, &[("mcp-name", "=?base64?ZWNobw==?=")]) // "echo"
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let response = f
        .post_with(&sql, &[("mcp-param-region", "=?base64?ZXU=?=")]) // "eu"
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        json_of(response).await["result"]["content"][0]["text"],
        "\"eu\""
    );

    // An unsupported revision: 400 with -32022.
    let mut future = echo.clone();
    future["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let response = f
        .post_with(&future, &[("mcp-protocol-version", "2099-01-01")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(json_of(response).await["error"]["code"], -32022);

    // Accept without text/event-stream: 406.
    let response = f
        .post_with(&echo, &[("accept", "application/json")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    let response = f
        .post_with(&echo, &[("content-type", "text/plain")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);

    // Too large: 413.
    let big = request(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x".repeat(5000)}}),
    );
    let response = f.post(&big).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // Under the request's id, read from the body's head: the client's call ends at once.
    let body = json_of(response).await;
    assert_eq!(
        (body["id"].clone(), body["error"]["code"].clone()),
        (json!(7), json!(-32600)),
        "{body}"
    );

    // A foreign Origin: 403, whatever the method; a loopback one passes.
    let response = f
        .post_with(&echo, &[("origin", "https://evil.example")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let response = f
        .http
        .get(&f.url)
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let response = f
        .post_with(&echo, &[("origin", "http://localhost:5173")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // A foreign Host (DNS rebinding): 421 Misdirected Request.
    let response = f
        .post_with(&echo, &[("host", "evil.example")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::MISDIRECTED_REQUEST);
    // Two Host headers, two Origin headers, or none (HTTP/1.1): refused, never the first
    // one checked and the other trusted.
    let address = f.url.trim_start_matches("http://").trim_end_matches("/mcp");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let raw_at = |target: &str, head: &str| {
        let request = format!(
            "POST {target} HTTP/1.1\r\n{head}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        let address = address.to_owned();
        async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
            socket.write_all(request.as_bytes()).await.unwrap();
            let mut answer = String::new();
            socket.read_to_string(&mut answer).await.unwrap();
            answer
        }
    };
    let raw = |head: &str| raw_at("/mcp", head);
    let two_hosts = format!("Host: {address}\r\nHost: evil.example\r\n");
    assert!(raw(&two_hosts).await.starts_with("HTTP/1.1 400"));
    let two_origins = format!(
        "Host: {address}\r\nOrigin: http://localhost:1\r\nOrigin: https://evil.example\r\n"
    );
    assert!(raw(&two_origins).await.starts_with("HTTP/1.1 403"));
    assert!(raw("").await.starts_with("HTTP/1.1 400"), "no Host");
    let one = format!("Host: {address}\r\n");
    assert!(
        raw(&one).await.starts_with("HTTP/1.1 200"),
        "one Host is fine"
    );
    // The absolute form names the host the request is for, and Host is then ignored
    // (RFC 9112 section 3.2.2): a foreign one is refused behind a loopback Host.
    let foreign = raw_at("http://evil.example/mcp", &one).await;
    assert!(foreign.starts_with("HTTP/1.1 421"), "{foreign}");
    let ours = raw_at(&format!("http://{address}/mcp"), &one).await;
    assert!(ours.starts_with("HTTP/1.1 200"), "{ours}");

    // A notification: 202, no body.
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": 1}});
    let response = f.post(&notification).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert!(response.bytes().await.unwrap().is_empty());

    // Missing _meta capabilities: 400 with -32602.
    let mut bare = echo.clone();
    bare["params"]["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let response = f.post(&bare).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(json_of(response).await["error"]["code"], -32602);
}

/// A body the engine refuses (a repeated member: JSON-RPC's reading of it is ambiguous)
/// posted outside any session is answered 400 with `-32600` at once, as stdio answers it,
/// never left waiting for an answer with an id the engine will not use.
#[tokio::test]
async fn a_repeated_member_outside_a_session_is_refused_at_once() {
    let f = start(HttpConfig::default()).await;
    let meta = meta().to_string();
    let initialize = r#""params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}"#;
    let bodies = [
        format!(r#"{{"jsonrpc":"2.0","id":5,"id":6,"method":"ping","params":{{"_meta":{meta}}}}}"#),
        format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"ping","method":"ping","params":{{"_meta":{meta}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","jsonrpc":"2.0","id":5,"method":"ping","params":{{"_meta":{meta}}}}}"#
        ),
        format!(r#"{{"jsonrpc":"2.0","id":5,"id":6,"method":"initialize",{initialize}}}"#),
        format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"initialize","method":"initialize",{initialize}}}"#
        ),
    ];
    for body in bodies {
        let sent = f
            .http
            .post(&f.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "ping")
            .body(body.clone())
            .send();
        let response = tokio::time::timeout(Duration::from_secs(5), sent)
            .await
            .unwrap_or_else(|_| panic!("no answer to {body}"))
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let answer = json_of(response).await;
        assert_eq!(answer["error"]["code"], -32600, "{body}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("duplicate field"),
            "{body}: {answer}"
        );
    }
}

#[tokio::test]
async fn closing_the_stream_cancels_the_request() {
    let mut f = start(HttpConfig::default()).await;
    let mut body = request("tools/call", json!({"name": "hang", "arguments": {}}));
    body["params"]["_meta"]["progressToken"] = json!(1);
    let response = f.post(&body).send().await.unwrap();
    assert_eq!(response.headers()[CONTENT_TYPE], "text/event-stream");
    let mut events = Events {
        response,
        buffer: String::new(),
    };
    let event = events.next().await.unwrap();
    assert_eq!(event["method"], "notifications/progress");
    drop(events);
    let observed = tokio::time::timeout(Duration::from_secs(2), f.hang_events.recv())
        .await
        .expect("the handler is cancelled soon after the client hangs up");
    assert!(observed.is_some());
}

#[tokio::test]
async fn hanging_up_before_a_json_answer_cancels_the_request() {
    let mut f = start(HttpConfig::default()).await;
    let body = request("tools/call", json!({"name": "hang", "arguments": {}}));
    let outcome = f
        .post(&body)
        .timeout(Duration::from_millis(300))
        .send()
        .await;
    assert!(outcome.is_err(), "the client gave up");
    let observed = tokio::time::timeout(Duration::from_secs(2), f.hang_events.recv())
        .await
        .expect("the handler is cancelled soon after the client hangs up");
    assert!(observed.is_some());
}

#[tokio::test]
async fn listen_streams_acknowledgement_then_changes() {
    let f = start(HttpConfig::default()).await;
    let body = request(
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let response = f.post(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[CONTENT_TYPE], "text/event-stream");
    let mut events = Events {
        response,
        buffer: String::new(),
    };
    let ack = events.next().await.unwrap();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    f.server.add_tool(
        "late",
        "Late",
        |a: Text, _cx: Context| async move { a.text },
    );
    let change = events.next().await.unwrap();
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
}

/// Not a check: prints the cost of the per-request engine. Run with
/// `cargo test --release -p ferry-mcp --features http-server --test http_stateless -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement"]
async fn measure_request_cost() {
    use ferry::engine::{Transport, TransportEvent};
    let f = start(HttpConfig::default()).await;
    let echo = request(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let n = 2000;

    // In-process: one engine per request (what each POST costs besides HTTP).
    let frame = echo.to_string().into_bytes();
    let started = std::time::Instant::now();
    for _ in 0..n {
        let (to_engine, incoming) = tokio::sync::mpsc::channel(4);
        let (outgoing, mut from_engine) = tokio::sync::mpsc::channel(16);
        drop(f.server.serve(Transport::new(incoming, outgoing)));
        to_engine
            .send(TransportEvent::Frame(frame.clone()))
            .await
            .unwrap();
        from_engine.recv().await.unwrap();
    }
    let per_engine = started.elapsed() / n;

    // In-process: one long-lived engine for every request.
    let (to_engine, incoming) = tokio::sync::mpsc::channel(4);
    let (outgoing, mut from_engine) = tokio::sync::mpsc::channel(16);
    let _handle = f.server.serve(Transport::new(incoming, outgoing));
    let started = std::time::Instant::now();
    for _ in 0..n {
        to_engine
            .send(TransportEvent::Frame(frame.clone()))
            .await
            .unwrap();
        from_engine.recv().await.unwrap();
    }
    let shared_engine = started.elapsed() / n;

    // Over HTTP, sequential on one keep-alive connection.
    let started = std::time::Instant::now();
    for _ in 0..n {
        let response = f.post(&echo).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response.bytes().await.unwrap();
    }
    let http_sequential = started.elapsed() / n;

    // Over HTTP, 32 clients at once.
    let started = std::time::Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let request = f.post(&echo);
        tasks.push(tokio::spawn(async move {
            for _ in 0..n / 32 {
                let r = request.try_clone().unwrap().send().await.unwrap();
                r.bytes().await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let http_rate = f64::from(n / 32 * 32) / started.elapsed().as_secs_f64();
    eprintln!(
        "per-request engine {per_engine:?}/request, shared engine {shared_engine:?}/request, \
         HTTP sequential {http_sequential:?}/request, HTTP 32 concurrent {http_rate:.0} requests/s"
    );
}
