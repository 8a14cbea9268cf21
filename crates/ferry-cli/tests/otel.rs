//! OpenTelemetry end to end: `ferry call --otlp` against `ferry serve --otlp`, on stdio
//! (the server as the client's child) and then over HTTP, both exporting OTLP/HTTP (JSON)
//! to a receiver this test runs on 127.0.0.1. The server's span is in the client's trace,
//! the client's span its parent (the trace context went in `_meta`), the attributes of
//! the semantic conventions for MCP are there, an `isError` call (`calculate 1/0`) gives
//! error spans, and both duration metrics arrive. Unix only (SIGTERM ends the HTTP server).
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::Value;

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

/// What the receiver got: (path, body).
type Received = Arc<Mutex<Vec<(String, Value)>>>;

/// An OTLP/HTTP receiver on 127.0.0.1 (JSON bodies at `/v1/traces` and `/v1/metrics`),
/// on a thread of its own; its base URL and what it received.
fn receiver() -> (String, Received) {
    let received = Received::default();
    async fn store(path: &'static str, received: Received, body: Bytes) -> StatusCode {
        match serde_json::from_slice::<Value>(&body) {
            Ok(json) => {
                received.lock().unwrap().push((path.to_owned(), json));
                StatusCode::OK
            }
            Err(_) => StatusCode::BAD_REQUEST,
        }
    }
    let app = Router::new()
        .route(
            "/v1/traces",
            post(|State(r): State<Received>, body: Bytes| store("traces", r, body)),
        )
        .route(
            "/v1/metrics",
            post(|State(r): State<Received>, body: Bytes| store("metrics", r, body)),
        )
        .with_state(received.clone());
    let (tx, rx) = std::sync::mpsc::channel::<SocketAddr>();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    let addr = rx.recv().unwrap();
    (format!("http://{addr}"), received)
}

/// One exported span, flattened.
#[derive(Debug, Clone)]
struct Span {
    service: String,
    name: String,
    kind: i64,
    trace_id: String,
    span_id: String,
    parent: String,
    status: i64,
    attributes: Vec<(String, String)>,
}

impl Span {
    fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// An OTLP JSON attribute value as text (`stringValue`, `intValue`...).
fn attribute_text(value: &Value) -> String {
    match value.as_object().and_then(|o| o.values().next()) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn attributes(list: &Value) -> Vec<(String, String)> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|kv| {
            (
                kv["key"].as_str().unwrap_or_default().to_owned(),
                attribute_text(&kv["value"]),
            )
        })
        .collect()
}

fn spans(received: &Received) -> Vec<Span> {
    let mut spans = Vec::new();
    for (path, body) in received.lock().unwrap().iter() {
        if path != "traces" {
            continue;
        }
        for resource in body["resourceSpans"].as_array().into_iter().flatten() {
            let service = attributes(&resource["resource"]["attributes"])
                .into_iter()
                .find(|(k, _)| k == "service.name")
                .map(|(_, v)| v)
                .unwrap_or_default();
            for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                for span in scope["spans"].as_array().into_iter().flatten() {
                    let text = |key: &str| span[key].as_str().unwrap_or_default().to_owned();
                    spans.push(Span {
                        service: service.clone(),
                        name: text("name"),
                        kind: span["kind"].as_i64().unwrap_or(-1),
                        trace_id: text("traceId"),
                        span_id: text("spanId"),
                        parent: text("parentSpanId"),
                        status: span["status"]["code"].as_i64().unwrap_or(0),
                        attributes: attributes(&span["attributes"]),
                    });
                }
            }
        }
    }
    spans
}

fn metric_names(received: &Received) -> Vec<String> {
    let mut names = Vec::new();
    for (path, body) in received.lock().unwrap().iter() {
        if path != "metrics" {
            continue;
        }
        for resource in body["resourceMetrics"].as_array().into_iter().flatten() {
            for scope in resource["scopeMetrics"].as_array().into_iter().flatten() {
                for metric in scope["metrics"].as_array().into_iter().flatten() {
                    names.push(metric["name"].as_str().unwrap_or_default().to_owned());
                }
            }
        }
    }
    names
}

/// OTLP span kinds.
const SERVER: i64 = 2;
const CLIENT: i64 = 3;
/// OTLP status code Error.
const STATUS_ERROR: i64 = 2;

/// Run `ferry args...`; its exit code.
fn ferry(args: &[&str]) -> Option<i32> {
    let output = Command::new(FERRY)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run ferry");
    if !matches!(output.status.code(), Some(0 | 1)) {
        panic!(
            "ferry {args:?}: {:?}\nstdout:\n{}\nstderr:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    output.status.code()
}

/// The client and server spans of one call (`name`), checked to be one trace, the client's
/// span the server's parent, with the attributes every request has.
fn call_spans(spans: &[Span], name: &str, version: &str) -> (Span, Span) {
    let one = |kind: i64, service: &str| {
        let found: Vec<_> = spans
            .iter()
            .filter(|s| s.kind == kind && s.name == name && s.service == service)
            .collect();
        assert_eq!(found.len(), 1, "{service} {name}: {spans:#?}");
        found[0].clone()
    };
    let client = one(CLIENT, "ferry-cli");
    let server = one(SERVER, "ferry-serve");
    assert_eq!(client.trace_id.len(), 32, "{client:?}");
    assert_eq!(server.trace_id, client.trace_id, "one trace: {name}");
    assert_eq!(
        server.parent, client.span_id,
        "the client's span is the parent"
    );
    for span in [&client, &server] {
        assert_eq!(span.attribute("mcp.method.name"), Some("tools/call"));
        assert_eq!(span.attribute("mcp.protocol.version"), Some(version));
    }
    assert!(
        server.attribute("jsonrpc.request.id").is_some(),
        "{server:?}"
    );
    (client, server)
}

/// The spans of an answered `echo` and a failed `calculate 1/0`, and the metrics.
fn check(received: &Received, version: &str, session: bool) {
    let spans = spans(received);
    let (client, server) = call_spans(&spans, "tools/call echo", version);
    for span in [&client, &server] {
        assert_eq!(span.attribute("gen_ai.tool.name"), Some("echo"));
        assert_eq!(span.attribute("error.type"), None);
        assert_ne!(span.status, STATUS_ERROR);
    }
    assert_eq!(
        server.attribute("mcp.session.id").is_some(),
        session,
        "{server:?}"
    );
    let (client, server) = call_spans(&spans, "tools/call calculate", version);
    for span in [&client, &server] {
        assert_eq!(span.attribute("gen_ai.tool.name"), Some("calculate"));
        assert_eq!(span.attribute("error.type"), Some("tool_error"), "{span:?}");
        assert_eq!(span.status, STATUS_ERROR, "{span:?}");
    }
    let metrics = metric_names(received);
    for name in [
        "mcp.server.operation.duration",
        "mcp.client.operation.duration",
        "mcp.client.session.duration",
    ] {
        assert!(metrics.iter().any(|m| m == name), "{name} in {metrics:?}");
    }
}

#[test]
fn stdio_call_and_serve_export_one_trace() {
    let (url, received) = receiver();
    let server = ["--", FERRY, "serve", "--otlp", &url];
    let echo = [&["call", "--otlp", &url, "echo", "text=hi"][..], &server].concat();
    assert_eq!(ferry(&echo), Some(0));
    let fail = [
        &["call", "--otlp", &url, "calculate", "expression=1/0"][..],
        &server,
    ]
    .concat();
    assert_eq!(ferry(&fail), Some(1));
    // Both processes exported before they exited; the stateless era has no session.
    check(&received, "2026-07-28", false);
}

#[test]
fn http_call_and_serve_export_one_trace() {
    let (url, received) = receiver();
    let mut child = Command::new(FERRY)
        .args(["serve", "--http", "127.0.0.1:0", "--otlp", &url])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("banner");
    let endpoint = line
        .trim()
        .strip_prefix("ferry serve: MCP on ")
        .unwrap_or_else(|| panic!("banner {line:?}"))
        .to_owned();
    let rest = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    // The session era over HTTP: the server's spans name the session.
    let common = [
        "--otlp",
        &url,
        "--url",
        &endpoint,
        "--protocol-version",
        "2025-06-18",
    ];
    assert_eq!(
        ferry(&[&["call"][..], &common, &["echo", "text=hi"]].concat()),
        Some(0)
    );
    let fail = [&["call"][..], &common, &["calculate", "expression=1/0"]].concat();
    assert_eq!(ferry(&fail), Some(1));

    // SIGTERM: the server shuts down and exports what is left.
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "{status:?}: {}", rest.join().unwrap());
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("ferry serve did not exit after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    check(&received, "2025-06-18", true);
}
