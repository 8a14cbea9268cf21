//! More traps of the first hour (issue #24), each closed and proved from outside: what a
//! cancelled handler runs, logging without declaring it, non-object structured output on
//! every revision, prompts returning text, and the client's result constructors.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ferry::client::{CallOptions, Client, ClientError};
use ferry::engine::Transport;
use ferry::protocol::Era;
use ferry::protocol::ProtocolVersion::*;
use ferry::protocol::types::LoggingLevel;
use ferry::server::{Cancel, Context, Server, State, TestClient};
use serde_json::json;

/// What a cancelled handler did: its `select!` branch on the token, its guard's `Drop`.
#[derive(Default)]
struct Seen {
    cancel_branch: AtomicBool,
    guard_dropped: AtomicBool,
}

/// Notes, when dropped before the handler finished, that it was abandoned.
struct Guard {
    seen: Arc<Seen>,
    finished: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.finished {
            self.seen.guard_dropped.store(true, Ordering::SeqCst);
        }
    }
}

async fn wait_forever(seen: State<Arc<Seen>>, cancel: Cancel) -> String {
    let mut guard = Guard {
        seen: Arc::clone(&seen),
        finished: false,
    };
    let answer = tokio::select! {
        () = cancel.cancelled() => {
            seen.cancel_branch.store(true, Ordering::SeqCst);
            "cancelled"
        }
        () = tokio::time::sleep(Duration::from_secs(30)) => "slept",
    };
    guard.finished = true;
    answer.to_owned()
}

async fn until(flag: &AtomicBool) -> bool {
    for _ in 0..200 {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test]
async fn a_cancelled_handler_is_dropped_and_its_guard_runs() {
    let seen = Arc::new(Seen::default());
    let server = Server::builder("cancel", "1")
        .state(Arc::clone(&seen))
        .tool("wait", "Waits", wait_forever)
        .build();
    let (client_side, server_side) = Transport::pair(16);
    let _serving = server.serve(server_side);
    let client = Client::builder("app", "1")
        .connect(client_side)
        .await
        .unwrap();
    let impatient = CallOptions {
        timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let error = client
        .call_tool_with("wait", json!({}), impatient)
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Timeout(_)), "{error}");
    assert!(
        until(&seen.guard_dropped).await,
        "the guard's Drop runs when the call is cancelled"
    );
    // As documented: the future is dropped at its await, before the branch could run.
    assert!(!seen.cancel_branch.load(Ordering::SeqCst));
    // The connection goes on.
    assert!(client.list_tools(None).await.is_ok());
}

async fn chatty(cx: Context) -> String {
    let sent = cx.log(LoggingLevel::Info, Some("chatty"), "hello").await;
    sent.to_string()
}

#[tokio::test]
async fn handlers_log_without_declaring_logging_and_can_be_silenced() {
    let talking = Server::builder("talking", "1")
        .tool("chatty", "Logs", chatty)
        .build();
    let quiet = Server::builder("quiet", "1")
        .without_logging()
        .tool("chatty", "Logs", chatty)
        .build();
    let wants_logs = json!({"_meta": {"io.modelcontextprotocol/logLevel": "debug"}});
    for version in [V2024_11_05, V2025_06_18, V2025_11_25, V2026_07_28] {
        let mut client = TestClient::connect(&talking, version).await.unwrap();
        if version.era() == Era::Session {
            client
                .request("logging/setLevel", json!({"level": "info"}))
                .await
                .unwrap();
        }
        let mut params = json!({"name": "chatty", "arguments": {}});
        if version.era() == Era::Stateless {
            params["_meta"] = wants_logs["_meta"].clone();
        }
        let result = client.request("tools/call", params.clone()).await.unwrap();
        assert_eq!(result["content"][0]["text"], "true", "{version}");
        let (method, message) = client.next_notification().await.unwrap();
        assert_eq!(method, "notifications/message", "{version}");
        assert_eq!(message["data"], "hello", "{version}");

        let client = TestClient::connect(&quiet, version).await.unwrap();
        if version.era() == Era::Session {
            let refused = client
                .request("logging/setLevel", json!({"level": "info"}))
                .await;
            assert!(refused.is_err(), "{version}: no logging, no setLevel");
        }
        let result = client.request("tools/call", params).await.unwrap();
        assert_eq!(result["content"][0]["text"], "false", "{version}");
    }
}
