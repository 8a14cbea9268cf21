//! Middleware around every request: the order of the chain, short-circuits, changed
//! results, a panicking middleware, and the shipped ones (metrics, concurrency and rate
//! limits per principal, authorization, redacted request logs), in both eras.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use ferry::engine::{CallError, HandlerResult, ResultJson};
use ferry::protocol::ProtocolVersion::{self, V2025_06_18, V2026_07_28};
use ferry::protocol::jsonrpc::ErrorObject;
use ferry::server::{
    Authorize, BoxFuture, ConcurrencyLimit, LogRequests, Metrics, Middleware, Next,
    NotificationInfo, RateLimit, RequestInfo, Server, State, TestClient,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

const VERSIONS: [ProtocolVersion; 2] = [V2025_06_18, V2026_07_28];

/// Writes what it sees into a shared log, named.
struct Recorder {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}

impl Middleware for Recorder {
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, HandlerResult> {
        Box::pin(async move {
            self.log.lock().unwrap().push(format!(
                "{} before {} {:?} {:?}",
                self.name,
                request.method,
                request.target,
                request.version.map(|v| v.as_str())
            ));
            let result = next.run().await;
            let shape = match &result {
                Ok(json) if json.get().contains("\"ran\"") => "result ran",
                Ok(_) => "result",
                Err(_) => "error",
            };
            self.log
                .lock()
                .unwrap()
                .push(format!("{} after {shape}", self.name));
            result
        })
    }

    fn notification(&self, notification: &NotificationInfo) -> bool {
        self.log.lock().unwrap().push(format!(
            "{} notification {}",
            self.name, notification.method
        ));
        true
    }
}

struct Log(Arc<Mutex<Vec<String>>>);

async fn ran(log: State<Log>) -> String {
    log.0.lock().unwrap().push("handler".into());
    "ran".into()
}

fn error_of(result: Result<Value, CallError>) -> ErrorObject {
    match result {
        Err(CallError::Rpc(error)) => error,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[tokio::test]
async fn middleware_see_the_request_first_and_the_reply_last_in_order() {
    for version in VERSIONS {
        let log = Arc::new(Mutex::new(Vec::new()));
        let server = Server::builder("order", "1")
            .state(Log(log.clone()))
            .middleware(Recorder {
                name: "outer",
                log: log.clone(),
            })
            .middleware(Recorder {
                name: "inner",
                log: log.clone(),
            })
            .tool("ran", "Ran", ran)
            .build();
        let client = TestClient::connect(&server, version).await.unwrap();
        log.lock().unwrap().clear();
        client.call_tool("ran", json!({})).await.unwrap();
        let v = version.as_str();
        assert_eq!(
            *log.lock().unwrap(),
            [
                format!("outer before tools/call Some(\"ran\") Some(\"{v}\")"),
                format!("inner before tools/call Some(\"ran\") Some(\"{v}\")"),
                "handler".to_owned(),
                "inner after result ran".to_owned(),
                "outer after result ran".to_owned(),
            ],
            "{version}"
        );
        client.close().await;
    }
}

#[tokio::test]
async fn notifications_pass_through_middleware() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let server = Server::builder("n", "1")
        .middleware(Recorder {
            name: "m",
            log: log.clone(),
        })
        .build();
    let client = TestClient::connect(&server, V2025_06_18).await.unwrap();
    client.request("ping", json!({})).await.unwrap();
    let seen = log.lock().unwrap().clone();
    assert!(
        seen.contains(&"m notification notifications/initialized".to_owned()),
        "{seen:?}"
    );
    client.close().await;
}

/// Answers `tools/call` of `blocked` itself; rewrites every other tool's result.
struct Gate;

impl Middleware for Gate {
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, HandlerResult> {
        Box::pin(async move {
            if request.target.as_deref() == Some("blocked") {
                return Err(ErrorObject::invalid_request("blocked by policy"));
            }
            let result = next.run().await?;
            if request.method != "tools/call" {
                return Ok(result);
            }
            let mut value: Value = serde_json::from_str(result.get()).unwrap();
            value["content"][0]["text"] = json!("rewritten");
            Ok(ResultJson::from_value(&value).unwrap())
        })
    }
}

#[tokio::test]
async fn middleware_short_circuit_and_change_results() {
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let server = Server::builder("gate", "1")
        .middleware(Gate)
        .tool("blocked", "Never runs", move |_: ()| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { "ran" }
        })
        .tool("open", "Runs", |_: ()| async { "original" })
        .build();
    for version in VERSIONS {
        let client = TestClient::connect(&server, version).await.unwrap();
        let refused = error_of(client.call_tool("blocked", json!({})).await);
        assert_eq!(
            (refused.code, refused.message.as_str()),
            (-32600, "Invalid Request: blocked by policy")
        );
        let changed = client.call_tool("open", json!({})).await.unwrap();
        assert_eq!(changed["content"][0]["text"], "rewritten", "{version}");
        client.close().await;
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "the blocked tool never ran"
    );
}

struct Panics;

impl Middleware for Panics {
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, HandlerResult> {
        Box::pin(async move {
            if request.target.as_deref() == Some("boom") {
                panic!("middleware bug");
            }
            next.run().await
        })
    }
}

#[tokio::test]
async fn a_panicking_middleware_is_answered_and_serving_goes_on() {
    let server = Server::builder("p", "1")
        .middleware(Panics)
        .tool("boom", "Panics in middleware", |_: ()| async { "no" })
        .tool("fine", "Fine", |_: ()| async { "fine" })
        .build();
    for version in VERSIONS {
        let client = TestClient::connect(&server, version).await.unwrap();
        let error = error_of(client.call_tool("boom", json!({})).await);
        assert_eq!(error.code, -32603, "{version}");
        let fine = client.call_tool("fine", json!({})).await.unwrap();
        assert_eq!(fine["content"][0]["text"], "fine", "{version}");
        client.close().await;
    }
}

#[tokio::test]
async fn metrics_count_calls_and_errors_per_target() {
    let metrics = Metrics::new();
    let server = Server::builder("m", "1")
        .middleware(metrics.clone())
        .tool("fine", "Fine", |_: ()| async { "fine" })
        .tool("failing", "Fails", |_: ()| async {
            Err::<String, _>("the disk is full")
        })
        .build();
    let client = TestClient::connect(&server, V2026_07_28).await.unwrap();
    for _ in 0..3 {
        client.call_tool("fine", json!({})).await.unwrap();
    }
    error_of(client.call_tool("missing", json!({})).await);
    let failed = client.call_tool("failing", json!({})).await.unwrap();
    assert_eq!(failed["isError"], true);
    let snapshot = metrics.snapshot();
    let fine = snapshot[&("tools/call".to_owned(), Some("fine".to_owned()))];
    assert_eq!((fine.count, fine.errors, fine.tool_errors), (3, 0, 0));
    assert!(fine.max <= fine.total && fine.total > std::time::Duration::ZERO);
    let missing = snapshot[&("tools/call".to_owned(), Some("missing".to_owned()))];
    assert_eq!(
        (missing.count, missing.errors, missing.tool_errors),
        (1, 1, 0)
    );
    // An `isError` result is an error too, told apart from JSON-RPC errors.
    let failing = snapshot[&("tools/call".to_owned(), Some("failing".to_owned()))];
    assert_eq!(
        (failing.count, failing.errors, failing.tool_errors),
        (1, 1, 1)
    );
    client.close().await;
}

/// A server allowing one request in flight per caller, with a tool `wait` that answers
/// once the returned `Notify` is told, and a tool `quick`.
fn one_at_a_time() -> (Server, Arc<Notify>) {
    let release = Arc::new(Notify::new());
    let waiting = release.clone();
    let server = Server::builder("c", "1")
        .middleware(ConcurrencyLimit::per_principal(1))
        .tool("wait", "Waits", move |_: ()| {
            let waiting = waiting.clone();
            async move {
                waiting.notified().await;
                "released"
            }
        })
        .tool("quick", "Quick", |_: ()| async { "quick" })
        .build();
    (server, release)
}

#[tokio::test]
async fn the_concurrency_limit_holds_per_principal() {
    let (server, release) = one_at_a_time();
    let first = TestClient::connect(&server, V2025_06_18).await.unwrap();
    let other = TestClient::connect(&server, V2025_06_18).await.unwrap();
    let first = Arc::new(first);
    let busy = tokio::spawn({
        let first = first.clone();
        async move { first.call_tool("wait", json!({})).await }
    });
    // Until the first call holds its slot, a second may still get through: wait for it.
    let refused = loop {
        match first.call_tool("quick", json!({})).await {
            Err(CallError::Rpc(error)) => break error,
            Ok(_) => tokio::task::yield_now().await,
            Err(other) => panic!("{other:?}"),
        }
    };
    assert_eq!(refused.code, -32000);
    assert!(
        refused.message.contains("at most 1 per caller"),
        "{refused:?}"
    );
    // Another principal (another session here) has its own slot.
    let other_call = other.call_tool("quick", json!({})).await.unwrap();
    assert_eq!(other_call["content"][0]["text"], "quick");
    release.notify_one();
    let released = busy.await.unwrap().unwrap();
    assert_eq!(released["content"][0]["text"], "released");
    // The slot is back.
    first.call_tool("quick", json!({})).await.unwrap();
}

#[tokio::test]
async fn the_concurrency_limit_does_not_count_the_handshake() {
    let (server, release) = one_at_a_time();
    let client = Arc::new(TestClient::connect(&server, V2026_07_28).await.unwrap());
    let busy = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("wait", json!({})).await }
    });
    while client.call_tool("quick", json!({})).await.is_ok() {
        tokio::task::yield_now().await;
    }
    // The caller's one slot is taken, yet it may still discover the server.
    let discovered = client.request("server/discover", json!({})).await.unwrap();
    assert!(discovered["supportedVersions"].is_array(), "{discovered}");
    release.notify_one();
    busy.await.unwrap().unwrap();
}

#[tokio::test]
async fn the_rate_limit_refuses_past_the_burst_and_says_when_to_retry() {
    let server = Server::builder("r", "1")
        .middleware(RateLimit::per_principal(0.5, 2))
        .tool("quick", "Quick", |_: ()| async { "quick" })
        .build();
    let client = TestClient::connect(&server, V2026_07_28).await.unwrap();
    client.call_tool("quick", json!({})).await.unwrap();
    client.call_tool("quick", json!({})).await.unwrap();
    let refused = error_of(client.call_tool("quick", json!({})).await);
    assert_eq!(refused.code, -32000);
    let retry = refused.data.as_ref().unwrap()["retryAfterMs"]
        .as_u64()
        .unwrap();
    assert!((1..=2000).contains(&retry), "{retry}");
    // Another principal has its own bucket.
    let other = TestClient::connect(&server, V2026_07_28).await.unwrap();
    other.call_tool("quick", json!({})).await.unwrap();
    client.close().await;
    other.close().await;
}

#[tokio::test]
async fn the_rate_limit_does_not_count_the_handshake() {
    let server = Server::builder("r", "1")
        .middleware(RateLimit::per_principal(0.01, 1))
        .tool("quick", "Quick", |_: ()| async { "quick" })
        .build();
    // `initialize` and `ping` (session era), `server/discover` (stateless era) are free:
    // the one request of the burst is the first call.
    for version in [V2025_06_18, V2026_07_28] {
        let client = TestClient::connect(&server, version).await.unwrap();
        if version == V2026_07_28 {
            client.request("server/discover", json!({})).await.unwrap();
        } else {
            client.request("ping", json!({})).await.unwrap();
        }
        client.call_tool("quick", json!({})).await.unwrap();
        let refused = error_of(client.call_tool("quick", json!({})).await);
        assert_eq!(refused.code, -32000, "{version}");
        client.close().await;
    }
}

#[tokio::test]
async fn authorize_refuses_what_its_check_refuses() {
    let server = Server::builder("a", "1")
        .middleware(Authorize::new(|request: &RequestInfo| {
            if request.method == "prompts/get" {
                Err(ErrorObject::new(-32001, "prompts are off today"))
            } else {
                Ok(())
            }
        }))
        .prompt("hi", "Hi", || async { "hi".to_owned() })
        .build();
    let client = TestClient::connect(&server, V2025_06_18).await.unwrap();
    let refused = error_of(client.request("prompts/get", json!({"name": "hi"})).await);
    assert_eq!(
        (refused.code, refused.message.as_str()),
        (-32001, "prompts are off today")
    );
    client.request("prompts/list", json!({})).await.unwrap();
    client.close().await;
}

#[test]
fn request_logs_redact_the_named_arguments_at_any_depth() {
    let log = LogRequests::new().redact(["password", "token"]);
    let params = r#"{"name":"login","arguments":{"user":"ada","password":"hunter2","nested":[{"token":"t"}]}}"#;
    let logged = log.redacted(params);
    assert!(
        !logged.contains("hunter2") && !logged.contains("\"t\""),
        "{logged}"
    );
    assert!(
        logged.contains(r#""password":"[redacted]""#) && logged.contains(r#""user":"ada""#),
        "{logged}"
    );
    assert_eq!(log.redacted("not json"), "(params that are not JSON)");
}

/// Over HTTP without authentication the caller is its address: the stateless era's
/// requests (each on a connection of its own) and a session-era session from the same
/// address draw on one budget, and middleware see `address 127.0.0.1`.
#[cfg(all(feature = "http-server", feature = "http-client"))]
#[tokio::test]
async fn anonymous_http_callers_are_limited_by_address() {
    use ferry::client::Client;
    use ferry::http_client::HttpClientConfig;

    let principals = Arc::new(Mutex::new(Vec::new()));
    let seen = principals.clone();
    let server = Server::builder("limited", "1")
        .middleware(Authorize::new(move |request: &RequestInfo| {
            seen.lock().unwrap().push(request.principal());
            Ok(())
        }))
        .middleware(RateLimit::per_principal(0.01, 1))
        .tool("quick", "Quick", |_: ()| async { "quick" })
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(ferry::http::serve(
        server,
        listener,
        ferry::http::HttpConfig::default(),
    ));
    let connect = |version| {
        Client::builder("app", "1")
            .version(version)
            .connect_http(&url, HttpClientConfig::default())
    };
    let (stateless, connection) = connect(V2026_07_28).await.unwrap();
    stateless.call_tool("quick", json!({})).await.unwrap();
    let refused = stateless.call_tool("quick", json!({})).await.unwrap_err();
    assert!(refused.to_string().contains("rate limit"), "{refused}");
    connection.close().await;
    // Another session from the same address: its handshake is free, its call is not.
    let (session, connection) = connect(V2025_06_18).await.unwrap();
    let refused = session.call_tool("quick", json!({})).await.unwrap_err();
    assert!(refused.to_string().contains("rate limit"), "{refused}");
    connection.close().await;
    let principals = principals.lock().unwrap();
    assert!(!principals.is_empty());
    assert!(
        principals.iter().all(|p| p == "address 127.0.0.1"),
        "{principals:?}"
    );
}
