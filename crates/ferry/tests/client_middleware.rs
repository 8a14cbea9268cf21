//! The client's middleware, as a user writes it: it wraps every request (the handshake's
//! too) outermost first, changes params the server then sees, hears each send's id (a
//! retry's too), can answer without sending, and hears the connection close.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferry::client::{self, Client, ClientError, Outgoing, RequestHook};
use ferry::engine::{HandlerResult, Transport};
use ferry::protocol::ProtocolVersion::{self, V2025_06_18, V2026_07_28};
use ferry::protocol::RequestId;
use ferry::protocol::jsonrpc::ErrorObject;
use ferry::server::{self, Meta, RequestInfo, Server};
use serde_json::{Value, json};

type Log = Arc<Mutex<Vec<String>>>;

/// Writes what it sees to the log under its name; adds its name to `_meta`.
struct Recorder {
    name: &'static str,
    log: Log,
}

impl client::Middleware for Recorder {
    fn call<'a>(
        &'a self,
        mut request: Outgoing,
        next: client::Next<'a>,
    ) -> client::BoxFuture<'a, Result<Value, ClientError>> {
        Box::pin(async move {
            self.push(format!("{} > {}", self.name, request.method));
            request.params["_meta"][format!("example.com/{}", self.name)] = json!(true);
            let result = next.run(request).await;
            self.push(format!("{} < {}", self.name, result.is_ok()));
            result
        })
    }

    fn sent(&self, method: &str, id: &RequestId) {
        self.push(format!("{} sent {method} {id}", self.name));
    }

    fn closed(&self, version: ProtocolVersion, _lasted: Duration) {
        self.push(format!("{} closed {}", self.name, version.as_str()));
    }
}

impl Recorder {
    fn push(&self, line: String) {
        self.log.lock().unwrap().push(line);
    }
}

/// Answers a call of the tool `cached` itself, without sending it.
struct Cache;

impl client::Middleware for Cache {
    fn call<'a>(
        &'a self,
        request: Outgoing,
        next: client::Next<'a>,
    ) -> client::BoxFuture<'a, Result<Value, ClientError>> {
        Box::pin(async move {
            if request.method == "tools/call" && request.params["name"] == "cached" {
                return Ok(json!({"content": [{"type": "text", "text": "from the cache"}]}));
            }
            next.run(request).await
        })
    }
}

/// Refuses the first tool call with -32000, and counts the tool calls that reach it.
struct Flaky {
    seen: Arc<AtomicU32>,
}

impl server::Middleware for Flaky {
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: server::Next<'a>,
    ) -> server::BoxFuture<'a, HandlerResult> {
        Box::pin(async move {
            if request.method == "tools/call" && self.seen.fetch_add(1, Ordering::SeqCst) == 0 {
                return Err(ErrorObject::new(-32000, "busy"));
            }
            next.run().await
        })
    }
}

/// Retries "busy" once.
struct RetryBusy;

impl RequestHook for RetryBusy {
    fn retry(&self, _method: &str, attempt: u32, error: &ClientError) -> Option<Duration> {
        let busy = matches!(error, ClientError::Rpc(e) if e.code == -32000);
        (busy && attempt == 1).then_some(Duration::from_millis(1))
    }
}

/// The `_meta` keys the middleware added, as the tool saw them.
async fn marks(meta: Meta) -> String {
    let mut keys: Vec<&str> = meta
        .0
        .other
        .keys()
        .map(String::as_str)
        .filter(|k| k.starts_with("example.com/"))
        .collect();
    keys.sort();
    keys.join(",")
}

async fn run(version: ProtocolVersion) {
    let seen = Arc::new(AtomicU32::new(0));
    let server = Server::builder("marks", "1")
        .middleware(Flaky { seen: seen.clone() })
        .tool(
            "marks",
            "The _meta keys the client's middleware added",
            marks,
        )
        .build();
    let (client_side, server_side) = Transport::pair(64);
    let _serving = server.serve(server_side);
    let log = Log::default();
    let client = Client::builder("app", "1")
        .version(version)
        .middleware(Recorder {
            name: "outer",
            log: log.clone(),
        })
        .middleware(Recorder {
            name: "inner",
            log: log.clone(),
        })
        .middleware(Cache)
        .request_hook(RetryBusy)
        .connect(client_side)
        .await
        .unwrap();
    let handshake = match version {
        V2026_07_28 => "server/discover",
        _ => "initialize",
    };
    let logged = std::mem::take(&mut *log.lock().unwrap());
    assert_eq!(
        &logged[..2],
        [
            format!("outer > {handshake}"),
            format!("inner > {handshake}")
        ],
        "{version}: the handshake goes through the chain, outermost first: {logged:?}"
    );
    assert!(
        logged
            .iter()
            .any(|l| l.starts_with(&format!("outer sent {handshake} "))),
        "{version}: the handshake's send is heard: {logged:?}"
    );

    // The first send is refused and the hook retries: two sends, two ids, one call.
    let result = client.call_tool("marks", json!({})).await.unwrap();
    assert_eq!(
        result.content[0],
        ferry::protocol::types::ContentBlock::text("example.com/inner,example.com/outer"),
        "{version}: the server sees what both middleware added"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    let logged = std::mem::take(&mut *log.lock().unwrap());
    let sends: Vec<&String> = logged
        .iter()
        .filter(|l| l.starts_with("outer sent tools/call "))
        .collect();
    assert_eq!(sends.len(), 2, "{version}: {logged:?}");
    assert_ne!(sends[0], sends[1], "{version}: each send has its own id");
    assert_eq!(logged.first().unwrap(), "outer > tools/call");
    assert_eq!(logged.last().unwrap(), "outer < true");

    // Answered by the innermost middleware: the server never hears of it.
    let cached = client.call_tool("cached", json!({})).await.unwrap();
    assert_eq!(
        cached.content[0],
        ferry::protocol::types::ContentBlock::text("from the cache")
    );
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    let logged = std::mem::take(&mut *log.lock().unwrap());
    assert!(
        !logged.iter().any(|l| l.contains(" sent ")),
        "{version}: nothing was sent: {logged:?}"
    );

    drop(client);
    let logged = std::mem::take(&mut *log.lock().unwrap());
    assert_eq!(
        logged,
        [
            format!("outer closed {}", version.as_str()),
            format!("inner closed {}", version.as_str())
        ]
    );
}

#[tokio::test]
async fn middleware_wraps_every_request_in_the_session_era() {
    run(V2025_06_18).await;
}

#[tokio::test]
async fn middleware_wraps_every_request_in_the_stateless_era() {
    run(V2026_07_28).await;
}
