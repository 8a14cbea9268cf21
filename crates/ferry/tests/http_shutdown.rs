//! Graceful shutdown of the HTTP server (`serve_with_shutdown`) with 2026-07-28 (stateless)
//! exchanges open, over 127.0.0.1: a call in flight still gets its result (drained), a
//! long-lived `subscriptions/listen` stream ends instead of holding the server forever,
//! and the server stops.

use std::time::Duration;

use ferry::http::HttpConfig;
use ferry::server::{Context, Server};
use reqwest::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Pause {
    /// Milliseconds to wait before answering.
    ms: u64,
}

fn request(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn post(http: &reqwest::Client, url: &str, body: &Value) -> reqwest::RequestBuilder {
    let mut builder = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", body["method"].as_str().unwrap());
    if let Some(name) = body["params"]["name"].as_str() {
        builder = builder.header("mcp-name", name);
    }
    builder.body(body.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_calls_and_ends_listen_streams() {
    let (started_tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let server = Server::builder("shutdown-test", "1.0.0")
        .tool(
            "wait",
            "Waits, then answers",
            move |a: Pause, _cx: Context| {
                let started = started_tx.clone();
                async move {
                    let _ = started.send(());
                    tokio::time::sleep(Duration::from_millis(a.ms)).await;
                    "done".to_owned()
                }
            },
        )
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(ferry::http::serve_with_shutdown(
        server,
        listener,
        HttpConfig::default(),
        async move {
            let _ = stopped.await;
        },
    ));
    let http = reqwest::Client::new();
    let listen = request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let mut stream = post(&http, &url, &listen).send().await.unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let ack = tokio::time::timeout(Duration::from_secs(10), stream.chunk())
        .await
        .expect("the acknowledgement")
        .unwrap()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&ack).contains("subscriptions/acknowledged"),
        "{ack:?}"
    );
    let call = request(
        2,
        "tools/call",
        json!({"name": "wait", "arguments": {"ms": 300}}),
    );
    let in_flight = tokio::spawn(post(&http, &url, &call).send());
    started.recv().await.expect("the call is running");

    stop.send(()).unwrap();
    let answer = in_flight.await.unwrap().unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let answer: Value = serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
    // The listen stream ends (keep-alive comments aside).
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(chunk) = stream.chunk().await.unwrap_or(None) {
            assert!(chunk.starts_with(b":"), "only keep-alives: {chunk:?}");
        }
    })
    .await;
    assert!(ended.is_ok(), "the listen stream ended");
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
}

/// A router dropped without `serve_with_shutdown` (an app that rebuilds its routes, a test)
/// ends its sessions' engines instead of leaving them waiting for input forever.
#[tokio::test(flavor = "current_thread")]
async fn a_dropped_router_ends_its_sessions() {
    use tower::ServiceExt;
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    for _ in 0..3 {
        let app = ferry::http::router(
            Server::builder("dropped", "1.0.0").build(),
            HttpConfig::default(),
        );
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let request = axum::http::Request::post("/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(axum::body::Body::from(initialize.to_string()))
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert!(response.headers().contains_key("mcp-session-id"));
        drop(response);
        drop(app);
    }
    // Let the engines see their input closed and end.
    for _ in 0..100 {
        if metrics.num_alive_tasks() == before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        metrics.num_alive_tasks(),
        before,
        "tasks left behind by dropped routers"
    );
}
