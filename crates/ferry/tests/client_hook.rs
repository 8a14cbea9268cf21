//! The client's hook around each request: `_meta` added before sending, and a failed
//! request sent again when the hook says so (against a server whose middleware refuses
//! the first attempts).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ferry::client::{Client, ClientError, RequestHook};
use ferry::engine::{HandlerResult, Transport};
use ferry::protocol::ProtocolVersion::{self, V2025_06_18, V2026_07_28};
use ferry::protocol::jsonrpc::ErrorObject;
use ferry::server::{BoxFuture, Meta, Middleware, Next, RequestInfo, Server};
use serde_json::{Value, json};

/// Refuses the first `refusals` tool calls with -32000 ("busy").
struct Flaky {
    refusals: u32,
    seen: Arc<AtomicU32>,
}

impl Middleware for Flaky {
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, HandlerResult> {
        Box::pin(async move {
            if request.method == "tools/call"
                && self.seen.fetch_add(1, Ordering::SeqCst) < self.refusals
            {
                return Err(ErrorObject::new(-32000, "busy"));
            }
            next.run().await
        })
    }
}

/// Adds a tenant to `_meta`; retries "busy" up to `retries` times.
struct Tenant {
    retries: u32,
    attempts: Arc<AtomicU32>,
}

impl RequestHook for Tenant {
    fn before(&self, method: &str, params: &mut Value) {
        if method == "tools/call" {
            self.attempts.fetch_add(1, Ordering::SeqCst);
        }
        params["_meta"]["example.com/tenant"] = json!("acme");
    }

    fn retry(&self, _method: &str, attempt: u32, error: &ClientError) -> Option<Duration> {
        let busy = matches!(error, ClientError::Rpc(e) if e.code == -32000);
        (busy && attempt <= self.retries).then_some(Duration::from_millis(1))
    }
}

async fn tenant(meta: Meta) -> String {
    meta.0
        .other
        .get("example.com/tenant")
        .and_then(Value::as_str)
        .unwrap_or("none")
        .to_owned()
}

async fn connect(
    version: ProtocolVersion,
    refusals: u32,
    retries: u32,
) -> (Client, Arc<AtomicU32>) {
    let server = Server::builder("flaky", "1")
        .middleware(Flaky {
            refusals,
            seen: Arc::default(),
        })
        .tool("tenant", "The tenant in _meta", tenant)
        .build();
    let (client_side, server_side) = Transport::pair(64);
    // (The serving task runs on after its handle is dropped, until the client hangs up.)
    let _serving = server.serve(server_side);
    let attempts = Arc::new(AtomicU32::new(0));
    let client = Client::builder("t", "1")
        .version(version)
        .request_hook(Tenant {
            retries,
            attempts: attempts.clone(),
        })
        .connect(client_side)
        .await
        .unwrap();
    (client, attempts)
}

#[tokio::test]
async fn the_hook_adds_meta_and_retries_what_it_chooses() {
    for version in [V2025_06_18, V2026_07_28] {
        let (client, attempts) = connect(version, 2, 3).await;
        let result = client.call_tool("tenant", json!({})).await.unwrap();
        assert_eq!(
            result.content[0],
            ferry::protocol::types::ContentBlock::text("acme"),
            "{version}"
        );
        assert_eq!(
            attempts.load(Ordering::SeqCst),
            3,
            "{version}: two refusals, then through"
        );

        // A hook that gives up sooner returns the server's error.
        let (client, attempts) = connect(version, 5, 1).await;
        let error = client.call_tool("tenant", json!({})).await.unwrap_err();
        assert!(
            matches!(&error, ClientError::Rpc(e) if e.code == -32000),
            "{error}"
        );
        assert_eq!(attempts.load(Ordering::SeqCst), 2, "{version}");
    }
}
