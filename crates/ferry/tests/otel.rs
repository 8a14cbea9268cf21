//! OpenTelemetry (feature `otel`) with spans and metrics kept in memory: a traced client
//! and a traced server over an in-memory pair, in both eras (2025-06-18 and 2026-07-28).
//! The server's span is the child of the client's (the trace context went in `_meta`),
//! a tool's own span is the child of the server's, the attributes of the semantic
//! conventions are there, failures carry `error.type`; a `traceparent` sent by hand is
//! honoured and a malformed one ignored; the duration histograms are recorded (a session's
//! when its connection ends); over HTTP the client's spans name the session; and the OTLP
//! guard shuts down without blocking the runtime.

use std::collections::BTreeMap;

use ferry::client::{CallOptions, Client};
use ferry::engine::Transport;
use ferry::otel::{ClientTracing, ServerTracing};
use ferry::protocol::ProtocolVersion;
use ferry::protocol::types::{Resource, ResourceContents};
use ferry::server::{Context, ReadResult, Server};
use opentelemetry::trace::{SpanId, SpanKind, Status, Tracer, TracerProvider};
use opentelemetry::{KeyValue, Value as AttributeValue};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

/// Providers that keep what they record, and their exporters.
struct Telemetry {
    tracers: SdkTracerProvider,
    spans: InMemorySpanExporter,
    meters: SdkMeterProvider,
    metrics: InMemoryMetricExporter,
}

impl Telemetry {
    fn new() -> Self {
        let spans = InMemorySpanExporter::default();
        let metrics = InMemoryMetricExporter::default();
        Telemetry {
            tracers: SdkTracerProvider::builder()
                .with_simple_exporter(spans.clone())
                .build(),
            spans,
            meters: SdkMeterProvider::builder()
                .with_reader(PeriodicReader::builder(metrics.clone()).build())
                .build(),
            metrics,
        }
    }

    fn spans(&self) -> Vec<SpanData> {
        self.tracers.force_flush().unwrap();
        self.spans.get_finished_spans().unwrap()
    }

    /// The data points' attributes of the histogram `name`.
    fn histogram(&self, name: &str) -> Vec<Vec<KeyValue>> {
        self.meters.force_flush().unwrap();
        let mut points = Vec::new();
        // Cumulative: the last export holds everything recorded.
        if let Some(resource) = self.metrics.get_finished_metrics().unwrap().last() {
            for scope in resource.scope_metrics() {
                for metric in scope.metrics().filter(|m| m.name() == name) {
                    assert_eq!(metric.unit(), "s");
                    let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data()
                    else {
                        panic!("{name} is not an f64 histogram");
                    };
                    for point in histogram.data_points() {
                        assert!(point.count() > 0);
                        points.push(point.attributes().cloned().collect());
                    }
                }
            }
        }
        points
    }
}

/// The traced server: a tool that answers, one that fails (`isError`), one that makes a
/// span of its own, a resource and a prompt.
fn server(telemetry: &Telemetry) -> Server {
    let tool_tracer = telemetry.tracers.tracer("the-tool");
    Server::builder("traced", "1")
        .middleware(ServerTracing::with_providers(
            &telemetry.tracers,
            &telemetry.meters,
        ))
        .tool("echo", "Echo", |a: Text| async move { a.text })
        .tool("fail", "Fails", |a: Text| async move {
            Err::<String, String>(format!("no: {}", a.text))
        })
        .tool("nested", "Works in a span", move |a: Text, _cx: Context| {
            // Started in the request's context: the server's span is its parent.
            let span = tool_tracer.start("inner work");
            async move {
                drop(span);
                a.text
            }
        })
        .resource(
            Resource::new("notes://all", "all"),
            |_cx: Context| async move {
                let read: ReadResult = Ok(vec![ResourceContents::text(
                    "notes://all",
                    "text/plain",
                    "x",
                )]);
                read
            },
        )
        .prompt("greet", "Greet", |a: Text, _cx: Context| async move {
            format!("Hello {}", a.text)
        })
        .build()
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a AttributeValue> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn text(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}

/// The one span of `kind` named `name`.
fn span<'a>(spans: &'a [SpanData], kind: SpanKind, name: &str) -> &'a SpanData {
    let found: Vec<_> = spans
        .iter()
        .filter(|s| s.span_kind == kind && s.name == name)
        .collect();
    assert_eq!(found.len(), 1, "{kind:?} {name:?} in {spans:#?}");
    found[0]
}

#[tokio::test]
async fn client_and_server_spans_share_the_trace_in_both_eras() {
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let telemetry = Telemetry::new();
        let (client_side, server_side) = Transport::pair(16);
        let _serving = server(&telemetry).serve(server_side);
        let client = Client::builder("app", "1")
            .version(version)
            .middleware(ClientTracing::with_providers(
                &telemetry.tracers,
                &telemetry.meters,
            ))
            .connect(client_side)
            .await
            .unwrap();
        let ok = client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert_ne!(ok.is_error, Some(true));
        let failed = client
            .call_tool("fail", json!({"text": "x"}))
            .await
            .unwrap();
        assert_eq!(failed.is_error, Some(true));
        client
            .call_tool("nested", json!({"text": "n"}))
            .await
            .unwrap();
        let unknown = client.call_tool("missing", json!({})).await.unwrap_err();
        assert!(unknown.to_string().contains("missing"), "{unknown}");
        client.read_resource("notes://all").await.unwrap();
        let arguments = BTreeMap::from([("text".to_owned(), "you".to_owned())]);
        client.get_prompt("greet", arguments).await.unwrap();
        drop(client);

        let spans = telemetry.spans();
        let v = version.as_str();
        for name in [
            "tools/call echo",
            "tools/call fail",
            "tools/call nested",
            "tools/call missing",
            "resources/read notes://all",
            "prompts/get greet",
        ] {
            let client_span = span(&spans, SpanKind::Client, name);
            let server_span = span(&spans, SpanKind::Server, name);
            let (c, s) = (&client_span.span_context, &server_span.span_context);
            assert_eq!(s.trace_id(), c.trace_id(), "{v} {name}: one trace");
            assert_eq!(server_span.parent_span_id, c.span_id(), "{v} {name}");
            assert!(server_span.parent_span_is_remote);
            assert_eq!(client_span.parent_span_id, SpanId::INVALID, "a root");
            for span in [client_span, server_span] {
                let method = name.split(' ').next().unwrap();
                assert_eq!(text(span, "mcp.method.name").as_deref(), Some(method));
                assert_eq!(text(span, "mcp.protocol.version").as_deref(), Some(v));
            }
            assert!(text(server_span, "jsonrpc.request.id").is_some());
            assert_eq!(
                text(client_span, "jsonrpc.request.id"),
                text(server_span, "jsonrpc.request.id"),
                "{v} {name}: the id the request went with"
            );
            // A session in the session era (the connection), none in the stateless era.
            assert_eq!(
                text(server_span, "mcp.session.id").is_some(),
                version == ProtocolVersion::V2025_06_18,
                "{v} {name}"
            );
        }

        for kind in [SpanKind::Client, SpanKind::Server] {
            let echo = span(&spans, kind.clone(), "tools/call echo");
            assert_eq!(text(echo, "gen_ai.tool.name").as_deref(), Some("echo"));
            assert_eq!(text(echo, "error.type"), None);
            assert_eq!(echo.status, Status::Unset);
            let fail = span(&spans, kind.clone(), "tools/call fail");
            assert_eq!(text(fail, "error.type").as_deref(), Some("tool_error"));
            assert!(matches!(fail.status, Status::Error { .. }));
            let missing = span(&spans, kind.clone(), "tools/call missing");
            assert_eq!(text(missing, "error.type").as_deref(), Some("-32602"));
            assert!(matches!(missing.status, Status::Error { .. }));
            let read = span(&spans, kind.clone(), "resources/read notes://all");
            assert_eq!(
                text(read, "mcp.resource.uri").as_deref(),
                Some("notes://all")
            );
            let prompt = span(&spans, kind, "prompts/get greet");
            assert_eq!(text(prompt, "gen_ai.prompt.name").as_deref(), Some("greet"));
        }

        // The handshake is traced too: `initialize` (session era) or `server/discover`.
        let handshake = if version == ProtocolVersion::V2025_06_18 {
            "initialize"
        } else {
            "server/discover"
        };
        let client_handshake = span(&spans, SpanKind::Client, handshake);
        let server_handshake = span(&spans, SpanKind::Server, handshake);
        assert_eq!(
            server_handshake.parent_span_id,
            client_handshake.span_context.span_id(),
            "{v}: the handshake's trace context went in its _meta"
        );
        assert!(text(client_handshake, "jsonrpc.request.id").is_some());

        // The tool's own span is the child of the server's.
        let server_nested = span(&spans, SpanKind::Server, "tools/call nested");
        let inner = span(&spans, SpanKind::Internal, "inner work");
        assert_eq!(inner.parent_span_id, server_nested.span_context.span_id());
        assert_eq!(
            inner.span_context.trace_id(),
            server_nested.span_context.trace_id()
        );

        let server_points = telemetry.histogram("mcp.server.operation.duration");
        let has = |points: &[Vec<KeyValue>], method: &str, error: Option<&str>| {
            points.iter().any(|attributes| {
                let get = |key: &str| {
                    attributes
                        .iter()
                        .find(|kv| kv.key.as_str() == key)
                        .map(|kv| kv.value.as_str().into_owned())
                };
                get("mcp.method.name").as_deref() == Some(method)
                    && get("error.type").as_deref() == error
            })
        };
        assert!(has(&server_points, "tools/call", None), "{server_points:?}");
        assert!(has(&server_points, "tools/call", Some("tool_error")));
        assert!(has(&server_points, "resources/read", None));
        let client_points = telemetry.histogram("mcp.client.operation.duration");
        assert!(
            has(&client_points, "tools/call", Some("-32602")),
            "{client_points:?}"
        );
        assert!(has(&client_points, "prompts/get", None));
        assert_eq!(telemetry.histogram("mcp.client.session.duration").len(), 1);
    }
}

/// A request sent by hand (no traced client) with a trace context of its own in `_meta`.
async fn raw_call(telemetry: &Telemetry, meta: serde_json::Value) -> SpanData {
    let (client_side, server_side) = Transport::pair(16);
    let _serving = server(telemetry).serve(server_side);
    let client = Client::builder("app", "1")
        .version(ProtocolVersion::V2025_06_18)
        .connect(client_side)
        .await
        .unwrap();
    let params = json!({"name": "echo", "arguments": {"text": "hi"}, "_meta": meta});
    let answer = client
        .peer()
        .call("tools/call", &params, CallOptions::default())
        .await
        .unwrap();
    assert!(answer.get().contains("hi"), "answered: {}", answer.get());
    let spans = telemetry.spans();
    assert!(spans.iter().all(|s| s.span_kind != SpanKind::Client));
    span(&spans, SpanKind::Server, "tools/call echo").clone()
}

#[tokio::test]
async fn a_traceparent_in_meta_is_the_parent() {
    let telemetry = Telemetry::new();
    let server_span = raw_call(
        &telemetry,
        json!({
            "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "tracestate": "vendor=abc"
        }),
    )
    .await;
    let context = &server_span.span_context;
    assert_eq!(
        context.trace_id().to_string(),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(server_span.parent_span_id.to_string(), "00f067aa0ba902b7");
    assert_eq!(context.trace_state().get("vendor"), Some("abc"));
}

#[tokio::test]
async fn a_malformed_traceparent_is_ignored() {
    for bad in [
        json!({"traceparent": "not a trace context"}),
        json!({"traceparent": {"object": true}}),
        json!({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"}),
    ] {
        let telemetry = Telemetry::new();
        let server_span = raw_call(&telemetry, bad.clone()).await;
        assert_eq!(server_span.parent_span_id, SpanId::INVALID, "{bad}: a root");
        assert!(server_span.span_context.is_valid());
    }
}

/// Reads one HTTP request (its head and `content-length` body) from `stream`: its
/// request line and body as text, or `None` at the end of the connection.
async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<(String, String)> {
    use tokio::io::AsyncReadExt;
    let mut data = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_string();
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    while data.len() < head_end + length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&chunk[..n]);
    }
    let line = head.lines().next().unwrap_or_default().to_owned();
    let body = String::from_utf8_lossy(&data[head_end..head_end + length]).to_string();
    Some((line, body))
}

#[tokio::test]
async fn the_export_guard_shuts_down_without_blocking_the_runtime() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use tokio::io::AsyncWriteExt;

    // A collector on loopback that takes half a second to answer each export, served by
    // this test's single-threaded runtime: a shutdown that blocked the runtime would
    // keep it from answering at all.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let received = Arc::new(Mutex::new(Vec::new()));
    let seen = received.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                while let Some(request) = read_request(&mut stream).await {
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                    seen.lock().unwrap().push(request);
                    let answer = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
                    if stream.write_all(answer.as_bytes()).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    let telemetry = ferry::otel::init_otlp(&format!("http://{address}"), "shutdown-test").unwrap();
    opentelemetry::global::tracer("test").in_span("exported at shutdown", |_| {});

    let ticks = Arc::new(AtomicU64::new(0));
    let ticker = tokio::spawn({
        let ticks = ticks.clone();
        async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                ticks.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    telemetry.shutdown().await.expect("exported");
    ticker.abort();
    assert!(
        ticks.load(Ordering::SeqCst) >= 10,
        "the runtime went on while the export waited: {} ticks",
        ticks.load(Ordering::SeqCst)
    );
    let received = received.lock().unwrap();
    assert!(
        received
            .iter()
            .any(|(line, body)| line.starts_with("POST /v1/traces")
                && body.contains("exported at shutdown")),
        "{received:?}"
    );
}

#[tokio::test]
async fn a_session_eras_session_is_measured_when_its_connection_ends() {
    let telemetry = Telemetry::new();
    let server = server(&telemetry);
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let (client_side, server_side) = Transport::pair(16);
        let serving = server.serve(server_side);
        let client = Client::builder("app", "1")
            .version(version)
            .connect(client_side)
            .await
            .unwrap();
        client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert!(
            telemetry.histogram("mcp.server.session.duration").len() <= 1,
            "not before the connection ends"
        );
        drop(client);
        // The server's side of the connection ends once the client's is gone.
        tokio::time::timeout(std::time::Duration::from_secs(5), serving.task)
            .await
            .expect("the connection ended")
            .unwrap();
    }
    // One session: the stateless era has none.
    let sessions = telemetry.histogram("mcp.server.session.duration");
    assert_eq!(
        sessions,
        [vec![KeyValue::new("mcp.protocol.version", "2025-06-18")]]
    );
}

/// Over HTTP in the session era the spans of both ends carry the session's
/// `Mcp-Session-Id`; in the stateless era there is none.
#[cfg(all(feature = "http-server", feature = "http-client"))]
#[tokio::test]
async fn both_ends_spans_name_the_http_session() {
    let telemetry = Telemetry::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(ferry::http::serve(
        server(&telemetry),
        listener,
        ferry::http::HttpConfig::default(),
    ));
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let (client, connection) = Client::builder("app", "1")
            .version(version)
            .middleware(ClientTracing::with_providers(
                &telemetry.tracers,
                &telemetry.meters,
            ))
            .connect_http(&url, ferry::http_client::HttpClientConfig::default())
            .await
            .unwrap();
        client
            .call_tool("echo", json!({"text": version.as_str()}))
            .await
            .unwrap();
        let session = connection.session_id();
        assert_eq!(session.is_some(), version == ProtocolVersion::V2025_06_18);
        let spans = telemetry.spans();
        let call = spans
            .iter()
            .rev()
            .find(|s| s.span_kind == SpanKind::Client && s.name == "tools/call echo")
            .expect("the client's span");
        assert_eq!(text(call, "mcp.session.id"), session, "{version}");
        let served = spans
            .iter()
            .rev()
            .find(|s| s.span_kind == SpanKind::Server && s.name == "tools/call echo")
            .expect("the server's span");
        assert_eq!(text(served, "mcp.session.id"), session, "{version}");
        drop(client);
        connection.close().await;
    }
}
