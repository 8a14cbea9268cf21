//! Session-era sessions shared by two instances through one session store, over real
//! sockets on 127.0.0.1: each instance is its own server and router; they share only a
//! `MemorySessionStore`, as instances share Redis. A session started on one is served by
//! the other without the client initializing again, with its log level and subscriptions;
//! a DELETE on either ends it on both.

use std::sync::Arc;
use std::time::Duration;

use ferry::http::HttpConfig;
use ferry::http::store::{MemorySessionStore, SessionStore};
use ferry::protocol::types::{LoggingLevel, Resource};
use ferry::server::{Context, Server};
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

fn server() -> Server {
    let notes: Resource = serde_json::from_value(json!({"uri": "memo://notes", "name": "notes"}))
        .expect("a resource");
    Server::builder("shared-test", "1.0.0")
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .tool(
            "chatty",
            "Logs at info, then answers",
            |a: Text, cx: Context| async move {
                cx.log(LoggingLevel::Info, None, json!("working")).await;
                a.text
            },
        )
        .tool(
            "ask",
            "Asks the client's model",
            |a: Text, cx: Context| async move {
                let params = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": a.text}}],
                    "maxTokens": 10
                }))
                .expect("sampling params");
                let answer = cx.sample(params).await.map_err(|e| e.to_string())?;
                Ok::<_, String>(serde_json::to_value(&answer.content).unwrap()["text"].to_string())
            },
        )
        .resource(notes, |_cx: Context| async move {
            let contents: ferry::protocol::types::ResourceContents =
                serde_json::from_value(json!({"uri": "memo://notes", "text": "hello"}))
                    .expect("contents");
            vec![contents]
        })
        .build()
}

struct Instance {
    server: Server,
    url: String,
}

async fn instance(store: &Arc<MemorySessionStore>, idle: Duration) -> Instance {
    instance_with(store, HttpConfig::default().session_idle_timeout(idle)).await
}

async fn instance_with(store: &Arc<MemorySessionStore>, config: HttpConfig) -> Instance {
    let server = server();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shared: Arc<dyn SessionStore> = store.clone();
    let config = config.session_store(shared);
    tokio::spawn(ferry::http::serve(server.clone(), listener, config));
    Instance {
        server,
        url: format!("http://{address}/mcp"),
    }
}

fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut request = http
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18");
    }
    request
}

/// GET the session's stream at `url`, resuming after `last_event_id` if given.
async fn get(
    http: &reqwest::Client,
    url: &str,
    session: &str,
    last_event_id: Option<&str>,
) -> reqwest::Response {
    let mut request = http
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(id) = last_event_id {
        request = request.header("last-event-id", id);
    }
    request.send().await.unwrap()
}

async fn initialize(http: &reqwest::Client, url: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"sampling": {}},
        "clientInfo": {"name": "t", "version": "1"}}});
    let response = post(http, url, None, &body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = post(http, url, Some(&id), &initialized)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    id
}

/// The answer to a request: the JSON body, or every SSE event's data in order.
async fn answer(response: reqwest::Response) -> Vec<Value> {
    let sse = response.headers()[CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream");
    let text = response.text().await.unwrap();
    if !sse {
        return vec![serde_json::from_str(&text).unwrap()];
    }
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            (!data.is_empty() && !data.concat().is_empty())
                .then(|| serde_json::from_str(&data.join("\n")).unwrap())
        })
        .collect()
}

fn call(id: u64, name: &str, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": {"text": text}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_started_on_one_instance_is_served_by_another() {
    let store = Arc::new(MemorySessionStore::new());
    let a = instance(&store, Duration::from_secs(60)).await;
    let b = instance(&store, Duration::from_secs(60)).await;
    let http = reqwest::Client::new();
    let session = initialize(&http, &a.url).await;
    assert_eq!(store.len(), 1, "the session is recorded");

    // A call on B: B adopts the session (no initialize from the client) and answers.
    let response = post(&http, &b.url, Some(&session), &call(2, "echo", "on b"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let events = answer(response).await;
    assert_eq!(events.last().unwrap()["id"], 2, "{events:?}");
    assert_eq!(
        events.last().unwrap()["result"]["content"][0]["text"],
        "on b"
    );

    // The log level set on A holds on B: no info log before the answer.
    let set_level = json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel",
                           "params": {"level": "error"}});
    let response = post(&http, &a.url, Some(&session), &set_level)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // A third instance adopts it now, with the level in its record.
    let c = instance(&store, Duration::from_secs(60)).await;
    let response = post(&http, &c.url, Some(&session), &call(4, "chatty", "quiet"))
        .send()
        .await
        .unwrap();
    let events = answer(response).await;
    assert_eq!(
        events.len(),
        1,
        "no log message below the level: {events:?}"
    );
    assert_eq!(events[0]["result"]["content"][0]["text"], "quiet");
    // Without a level, an adopted session gets every log (the check above can fail).
    let fresh = initialize(&http, &a.url).await;
    let response = post(&http, &c.url, Some(&fresh), &call(5, "chatty", "loud"))
        .send()
        .await
        .unwrap();
    let events = answer(response).await;
    assert_eq!(events.len(), 2, "the log, then the answer: {events:?}");
    assert_eq!(events[0]["method"], "notifications/message");
    drop(c);

    // A subscription taken on A is served by B: B's own server announces the update on
    // B's GET stream.
    let subscribe = json!({"jsonrpc": "2.0", "id": 6, "method": "resources/subscribe",
                           "params": {"uri": "memo://notes"}});
    let response = post(&http, &a.url, Some(&session), &subscribe)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let d = instance(&store, Duration::from_secs(60)).await;
    let mut stream = get(&http, &d.url, &session, None).await;
    assert_eq!(stream.status(), StatusCode::OK);
    d.server.notify_resource_updated("memo://notes");
    let mut seen = String::new();
    while !seen.contains("notifications/resources/updated") {
        let chunk = tokio::time::timeout(Duration::from_secs(5), stream.chunk())
            .await
            .expect("the update on the adopting instance's GET stream")
            .unwrap()
            .expect("the stream stays open");
        seen.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    assert!(seen.contains("memo://notes"), "{seen}");
    drop(stream);

    // DELETE on B ends the session on A too.
    let response = http
        .delete(&b.url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    for url in [&a.url, &b.url, &d.url] {
        let response = post(&http, url, Some(&session), &call(7, "echo", "gone"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{url}");
    }
    drop(a.server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_id_of_another_instance_resumes_that_instances_stream() {
    let store = Arc::new(MemorySessionStore::new());
    let a = instance(&store, Duration::from_secs(60)).await;
    let b = instance(&store, Duration::from_secs(60)).await;
    let http = reqwest::Client::new();
    let session = initialize(&http, &a.url).await;
    // A's GET stream, with a priming event id (2025-11-25 sessions only): open one POST
    // stream on A with SSE instead, by asking for progress.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "chatty", "arguments": {"text": "x"}}});
    let response = post(&http, &a.url, Some(&session), &body)
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    let event_id = text
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .expect("an SSE event with an id")
        .to_owned();
    // B opens streams of its own for the session (numbered as A's would be, were the
    // numbers not drawn apart)...
    for id in 3..5 {
        let response = post(&http, &b.url, Some(&session), &call(id, "chatty", "y"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response.text().await.unwrap();
    }
    // ...and A's event id resumes A's stream on B, from the shared log: A's events after
    // the cursor (its response), never B's streams' events.
    let response = get(&http, &b.url, &session, Some(&event_id)).await;
    assert_eq!(response.status(), StatusCode::OK, "{event_id}");
    let replayed = response.text().await.unwrap();
    let stream = event_id.split('-').next().unwrap();
    let ids: Vec<&str> = replayed
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .collect();
    assert!(!ids.is_empty(), "{replayed}");
    assert!(
        ids.iter().all(|id| id.starts_with(&format!("{stream}-"))),
        "only A's stream: {replayed}"
    );
    assert!(replayed.contains("\"id\":2"), "A's response: {replayed}");
    assert!(!replayed.contains("\"id\":3"), "not B's: {replayed}");
    // On A it resumes.
    let response = get(&http, &a.url, &session, Some(&event_id)).await;
    assert_eq!(response.status(), StatusCode::OK, "{event_id}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_expires_with_the_idle_timeout_unless_used() {
    let store = Arc::new(MemorySessionStore::new());
    let a = instance(&store, Duration::from_millis(400)).await;
    let b = instance(&store, Duration::from_millis(400)).await;
    let http = reqwest::Client::new();
    let session = initialize(&http, &a.url).await;
    // Used on B more often than the idle time: alive everywhere.
    for i in 0..4 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let response = post(&http, &b.url, Some(&session), &call(10 + i, "echo", "x"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "call {i}");
    }
    assert_eq!(store.len(), 1);
    // Then idle: gone from the store and from both instances.
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(store.len(), 0, "the record expired");
    for url in [&a.url, &b.url] {
        let response = post(&http, url, Some(&session), &call(20, "echo", "x"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{url}");
    }
}

/// The next SSE event's data of a streaming response, as JSON.
async fn next_event(response: &mut reqwest::Response, buffer: &mut String) -> Value {
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            if !data.is_empty() && !data.concat().is_empty() {
                return serde_json::from_str(&data.join("\n")).unwrap();
            }
            continue;
        }
        let chunk = tokio::time::timeout(Duration::from_secs(5), response.chunk())
            .await
            .expect("an event in time")
            .unwrap()
            .expect("the stream goes on");
        buffer.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

/// Sampling asked by a handler on one instance is answered by a POST that lands on
/// another: the answer is carried to the instance that asked (its id names it), and the
/// call completes there. A cancellation posted anywhere reaches the instance running the
/// request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_request_answered_on_another_instance_reaches_the_handler() {
    let store = Arc::new(MemorySessionStore::new());
    let a = instance(&store, Duration::from_secs(60)).await;
    let b = instance(&store, Duration::from_secs(60)).await;
    let http = reqwest::Client::new();
    let session = initialize(&http, &a.url).await;

    let mut first = post(&http, &b.url, Some(&session), &call(2, "ask", "hello"))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let mut buffer = String::new();
    let request = next_event(&mut first, &mut buffer).await;
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    let id = request["id"].clone();
    assert!(
        id.as_str().is_some_and(|id| id.contains(':')),
        "tagged: {id}"
    );
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": {
        "role": "assistant", "model": "m", "content": {"type": "text", "text": "sampled"}}});
    // Answered through A, which did not ask.
    let response = post(&http, &a.url, Some(&session), &answer)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let result = next_event(&mut first, &mut buffer).await;
    assert_eq!(result["id"], 2, "{result}");
    assert_eq!(
        result["result"]["content"][0]["text"], "\"sampled\"",
        "{result}"
    );

    // Cancelled through A while it waits for its sampling answer on B: the request ends
    // on B (its stream closes without a response).
    let mut second = post(&http, &b.url, Some(&session), &call(3, "ask", "again"))
        .send()
        .await
        .unwrap();
    let mut buffer = String::new();
    let request = next_event(&mut second, &mut buffer).await;
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 3, "reason": "changed my mind"}});
    let response = post(&http, &a.url, Some(&session), &cancel)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let rest = tokio::time::timeout(Duration::from_secs(5), second.text())
        .await
        .expect("the cancelled request's stream ends")
        .unwrap();
    assert!(
        !rest.contains("\"id\":3"),
        "no response after the cancellation: {rest}"
    );
}

/// A change made on one instance (a tool added, a resource updated) reaches the
/// `subscriptions/listen` streams (2026-07-28) and the session GET streams of another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_one_instance_reaches_the_listeners_of_another() {
    let store = Arc::new(MemorySessionStore::new());
    let a = instance(&store, Duration::from_secs(60)).await;
    let b = instance(&store, Duration::from_secs(60)).await;
    let http = reqwest::Client::new();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let listen = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["memo://notes"]},
        "_meta": meta}});
    let mut stream = http
        .post(&a.url)
        .header(CONTENT_TYPE, "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(listen.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let mut buffer = String::new();
    let ack = next_event(&mut stream, &mut buffer).await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );

    // B's changes (B has served nothing yet: it listens from its first request).
    let response = http
        .post(&b.url)
        .header(CONTENT_TYPE, "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    b.server.add_tool(
        "late",
        "Late",
        |t: Text, _cx: Context| async move { t.text },
    );
    let change = next_event(&mut stream, &mut buffer).await;
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    b.server.notify_resource_updated("memo://notes");
    let change = next_event(&mut stream, &mut buffer).await;
    assert_eq!(
        change["method"], "notifications/resources/updated",
        "{change}"
    );
    assert_eq!(change["params"]["uri"], "memo://notes", "{change}");
    drop(a.server);
}

/// A session bound to its principal stays bound on every instance: another principal
/// gets 404 wherever it asks, the owner is served anywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_stays_bound_to_its_principal_on_every_instance() {
    // The principal from a header, as an authentication layer would set it.
    async fn principal(
        mut request: axum::extract::Request,
        next: axum::middleware::Next,
    ) -> axum::response::Response {
        if let Some(who) = request
            .headers()
            .get("x-principal")
            .and_then(|v| v.to_str().ok())
        {
            let owner = ferry::http::SessionOwner(who.into());
            request.extensions_mut().insert(owner);
        }
        next.run(request).await
    }
    let store = Arc::new(MemorySessionStore::new());
    let mut urls = Vec::new();
    for _ in 0..2 {
        let shared: Arc<dyn SessionStore> = store.clone();
        let config = HttpConfig::default().session_store(shared);
        let app = ferry::http::router(server(), config).layer(axum::middleware::from_fn(principal));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        urls.push(format!("http://{}/mcp", listener.local_addr().unwrap()));
        tokio::spawn(ferry::http::serve_router(app, listener));
    }
    let http = reqwest::Client::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let response = post(&http, &urls[0], None, &body)
        .header("x-principal", "alice")
        .send()
        .await
        .unwrap();
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    for url in &urls {
        for (who, status) in [("bob", StatusCode::NOT_FOUND), ("alice", StatusCode::OK)] {
            let response = post(&http, url, Some(&session), &call(2, "echo", "x"))
                .header("x-principal", who)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), status, "{who} at {url}");
        }
    }
}

/// A session idle on an instance loses its local engine there (memory) but not its
/// record: its next request adopts it again, with its log level; a session holding a
/// stream keeps its engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_sessions_local_engine_is_released_and_adopted_again() {
    let store = Arc::new(MemorySessionStore::new());
    let config = HttpConfig::default().replica_idle_timeout(Duration::from_millis(300));
    let a = instance_with(&store, config).await;
    let http = reqwest::Client::new();
    let session = initialize(&http, &a.url).await;
    let set_level = json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel",
                           "params": {"level": "error"}});
    let response = post(&http, &a.url, Some(&session), &set_level)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(a.server.stats().connections_open, 1);

    let released = |open: u64| {
        let server = a.server.clone();
        async move {
            for _ in 0..100 {
                if server.stats().connections_open == open {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            false
        }
    };
    assert!(released(0).await, "the idle session's engine is released");
    assert_eq!(store.len(), 1, "the session stays in the store");

    let response = post(&http, &a.url, Some(&session), &call(4, "chatty", "quiet"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let events = answer(response).await;
    assert_eq!(events.len(), 1, "adopted again, level kept: {events:?}");
    assert_eq!(events[0]["result"]["content"][0]["text"], "quiet");
    let stats = a.server.stats();
    assert_eq!((stats.connections_open, stats.connections_total), (1, 2));

    // An open GET stream keeps the engine however long it is quiet.
    let stream = get(&http, &a.url, &session, None).await;
    assert_eq!(stream.status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(900)).await;
    let stats = a.server.stats();
    assert_eq!((stats.connections_open, stats.connections_total), (1, 2));
    drop(stream);
    assert!(released(0).await, "released once the stream is closed");
}

/// Writes into `log` what the middleware chain sees: each request's method and each
/// session hook, prefixed by the instance's name.
struct Seen {
    name: &'static str,
    log: Arc<std::sync::Mutex<Vec<String>>>,
}

impl ferry::server::Middleware for Seen {
    fn handle<'a>(
        &'a self,
        request: &'a ferry::server::RequestInfo,
        next: ferry::server::Next<'a>,
    ) -> ferry::server::BoxFuture<'a, ferry::engine::HandlerResult> {
        let line = format!("{} {}", self.name, request.method);
        self.log.lock().unwrap().push(line);
        Box::pin(next.run())
    }

    fn session_started(&self, _session: &ferry::server::SessionInfo) {
        let line = format!("{} started", self.name);
        self.log.lock().unwrap().push(line);
    }

    fn session_ended(&self, _session: &ferry::server::SessionInfo, _lasted: Duration) {
        let line = format!("{} ended", self.name);
        self.log.lock().unwrap().push(line);
    }
}

/// An instance adopting a session replays its `initialize`, log level and subscriptions
/// into its engine: its middleware see none of that, only the client's own request, and
/// no session begins there (the instance that answered the client's `initialize` began it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adopting_instances_middleware_see_only_the_clients_requests() {
    let store = Arc::new(MemorySessionStore::new());
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut urls = Vec::new();
    for name in ["a", "b"] {
        let server = Server::builder("seen", "1")
            .middleware(Seen {
                name,
                log: Arc::clone(&log),
            })
            .tool("echo", "Echo", |a: Text| async move { a.text })
            .resource(
                serde_json::from_value::<Resource>(json!({"uri": "memo://n", "name": "n"}))
                    .unwrap(),
                |_cx: Context| async move { Vec::<ferry::protocol::types::ResourceContents>::new() },
            )
            .build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        urls.push(format!("http://{}/mcp", listener.local_addr().unwrap()));
        let shared: Arc<dyn SessionStore> = store.clone();
        let config = HttpConfig::default().session_store(shared);
        tokio::spawn(ferry::http::serve(server, listener, config));
    }
    let http = reqwest::Client::new();
    let session = initialize(&http, &urls[0]).await;
    for body in [
        json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe", "params": {"uri": "memo://n"}}),
    ] {
        let response = post(&http, &urls[0], Some(&session), &body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    let response = post(&http, &urls[1], Some(&session), &call(4, "echo", "on b"))
        .send()
        .await
        .unwrap();
    let events = answer(response).await;
    assert_eq!(events.last().unwrap()["id"], 4, "{events:?}");
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            "a initialize",
            "a started",
            "a logging/setLevel",
            "a resources/subscribe",
            "b tools/call",
        ]
    );
}
