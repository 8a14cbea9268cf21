//! The server side of the HTTP client tests: Ferry's HTTP server with a few tools, a layer
//! recording the `Authorization` header of every request (and able to hold `initialize`
//! requests for a while), and a TCP proxy that can cut a response stream after a given
//! event.

#![allow(dead_code)] // each test file uses part of it

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferry::http::HttpConfig;
use ferry::protocol::types::{CallToolResult, Tool, ToolAnnotations};
use ferry::server::{Context, Progress, Server};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Text {
    /// The text.
    pub(crate) text: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Nothing {}

/// Notes when the `hang` tool's future is dropped.
struct DropGuard(tokio::sync::mpsc::UnboundedSender<&'static str>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

pub(crate) struct Fixture {
    pub(crate) server: Server,
    pub(crate) address: SocketAddr,
    pub(crate) url: String,
    pub(crate) http: reqwest::Client,
    pub(crate) hang_events: tokio::sync::mpsc::UnboundedReceiver<&'static str>,
    authorizations: Arc<Mutex<Vec<String>>>,
    initializes: Arc<AtomicUsize>,
    initialize_delay_ms: Arc<AtomicU64>,
}

impl Fixture {
    /// Session-starting POSTs (those without `Mcp-Session-Id`) received so far.
    pub(crate) fn initializes(&self) -> usize {
        self.initializes.load(Ordering::SeqCst)
    }

    /// Hold every later session-starting POST for `delay` before the server sees it.
    pub(crate) fn hold_initialize(&self, delay: Duration) {
        self.initialize_delay_ms
            .store(delay.as_millis() as u64, Ordering::SeqCst);
    }

    /// The `Authorization` header of every request so far (requests without one are not
    /// listed).
    pub(crate) fn authorizations(&self) -> Vec<String> {
        self.authorizations.lock().unwrap().clone()
    }
}

/// The first content block's text.
pub(crate) fn text_of(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content[0]).unwrap()["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

pub(crate) fn server() -> (Server, tokio::sync::mpsc::UnboundedReceiver<&'static str>) {
    let (tx, hang_events) = tokio::sync::mpsc::unbounded_channel();
    let sql: Tool = serde_json::from_value(json!({
        "name": "sql",
        "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"}}}
    }))
    .unwrap();
    let peek = Tool {
        annotations: Some(ToolAnnotations {
            read_only_hint: Some(true),
            ..Default::default()
        }),
        ..Tool::described("peek", "Reads, changes nothing")
    };
    let server = Server::builder("http-client-test-server", "1.0.0")
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .tool_with(peek, |_a: Nothing, _cx: Context| async move { "peeked" })
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
            "Waits until cancelled",
            move |_a: Nothing, _cx: Context| {
                let tx = tx.clone();
                async move {
                    let _guard = DropGuard(tx.clone());
                    let _ = tx.send("started");
                    std::future::pending::<String>().await
                }
            },
        )
        .tool(
            "ask",
            "Asks the client's model",
            |a: Text, cx: Context| async move {
                let answer = cx
                .sample(serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": a.text}}],
                    "maxTokens": 10
                })).unwrap())
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
        .raw_tool(sql, |args, _cx: Context| async move {
            args.get("region").cloned().unwrap_or_default().to_string()
        })
        .build();
    (server, hang_events)
}

/// Serve [`server`] on 127.0.0.1, recording `Authorization` headers.
pub(crate) async fn start(config: HttpConfig) -> Fixture {
    let (server, hang_events) = server();
    let authorizations = Arc::new(Mutex::new(Vec::new()));
    let initializes = Arc::new(AtomicUsize::new(0));
    let initialize_delay_ms = Arc::new(AtomicU64::new(0));
    let seen = Arc::clone(&authorizations);
    let (starts, delay) = (Arc::clone(&initializes), Arc::clone(&initialize_delay_ms));
    let router = ferry::http::router(server.clone(), config).layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let seen = Arc::clone(&seen);
            let (starts, delay) = (Arc::clone(&starts), Arc::clone(&delay));
            async move {
                if let Some(value) = request.headers().get("authorization") {
                    seen.lock()
                        .unwrap()
                        .push(value.to_str().unwrap_or("?").to_owned());
                }
                if request.method() == axum::http::Method::POST
                    && !request.headers().contains_key("mcp-session-id")
                {
                    starts.fetch_add(1, Ordering::SeqCst);
                    let hold = delay.load(Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(hold)).await;
                }
                next.run(request).await
            }
        },
    ));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    Fixture {
        server,
        address,
        url: format!("http://{address}/mcp"),
        http: reqwest::Client::new(),
        hang_events,
        authorizations,
        initializes,
        initialize_delay_ms,
    }
}

/// A TCP proxy to a server that, while armed, severs the first connection whose response
/// carries `trigger`, right after the SSE event containing it (both sockets closed).
pub(crate) struct Proxy {
    pub(crate) url: String,
    armed: Arc<AtomicBool>,
    cuts: Arc<AtomicUsize>,
}

impl Proxy {
    pub(crate) async fn start(target: SocketAddr, trigger: &'static [u8]) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let armed = Arc::new(AtomicBool::new(false));
        let cuts = Arc::new(AtomicUsize::new(0));
        let (a, c) = (Arc::clone(&armed), Arc::clone(&cuts));
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (armed, cuts) = (Arc::clone(&a), Arc::clone(&c));
                tokio::spawn(relay(client, target, trigger, armed, cuts));
            }
        });
        Proxy {
            url: format!("http://{address}/mcp"),
            armed,
            cuts,
        }
    }

    pub(crate) fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    pub(crate) fn reset(&self) {
        self.armed.store(false, Ordering::SeqCst);
        self.cuts.store(0, Ordering::SeqCst);
    }

    pub(crate) fn cuts(&self) -> usize {
        self.cuts.load(Ordering::SeqCst)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

async fn relay(
    client: TcpStream,
    target: SocketAddr,
    trigger: &'static [u8],
    armed: Arc<AtomicBool>,
    cuts: Arc<AtomicUsize>,
) {
    let Ok(server) = TcpStream::connect(target).await else {
        return;
    };
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let upstream = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
        let _ = server_write.shutdown().await;
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match server_read.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        if armed.load(Ordering::SeqCst)
            && let Some(at) = find(chunk, trigger)
            && armed.swap(false, Ordering::SeqCst)
        {
            // Pass the event carrying the trigger, then sever the connection.
            let end = find(&chunk[at..], b"\n\n").map_or(at, |e| at + e + 2);
            let _ = client_write.write_all(&chunk[..end]).await;
            cuts.fetch_add(1, Ordering::SeqCst);
            upstream.abort();
            return;
        }
        if client_write.write_all(chunk).await.is_err() {
            break;
        }
    }
    let _ = client_write.shutdown().await;
    upstream.abort();
}
