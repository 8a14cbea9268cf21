//! Tasks (2025-11-25): task-augmented `tools/call`, `tasks/get`, `tasks/result`,
//! `tasks/list`, `tasks/cancel`, tool-level negotiation, and the capability's gating.

use std::time::Duration;

use ferry::engine::CallError;
use ferry::protocol::ProtocolVersion::{V2025_06_18, V2025_11_25, V2026_07_28};
use ferry::protocol::types::{TaskSupport, Tool, ToolExecution};
use ferry::server::{Context, Server, TestClient};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Sleep {
    /// Milliseconds to sleep.
    ms: u64,
    /// Fail instead of succeeding.
    #[serde(default)]
    fail: bool,
}

fn task_tool(name: &str, support: TaskSupport) -> Tool {
    Tool {
        execution: Some(ToolExecution {
            task_support: Some(support),
        }),
        ..Tool::described(name, "Sleeps, then answers")
    }
}

async fn sleep(args: Sleep, cx: Context) -> Result<String, String> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(args.ms)) => {}
        () = cx.cancel.cancelled() => return Err("cancelled".into()),
    }
    if args.fail {
        Err("it failed".into())
    } else {
        Ok(format!("slept {} ms", args.ms))
    }
}

fn server() -> Server {
    Server::builder("tasks", "1")
        .tool_with(task_tool("slow", TaskSupport::Optional), sleep)
        .tool_with(task_tool("only_task", TaskSupport::Required), sleep)
        .tool("plain", "No tasks", sleep)
        .build()
}

fn code(error: CallError) -> i64 {
    match error {
        CallError::Rpc(e) => e.code,
        other => panic!("expected an error response, got {other:?}"),
    }
}

async fn start(client: &TestClient, tool: &str, args: Value) -> String {
    let created = client
        .request(
            "tools/call",
            json!({"name": tool, "arguments": args, "task": {"ttl": 60000}}),
        )
        .await
        .unwrap();
    assert_eq!(created["task"]["status"], "working", "{created}");
    assert_eq!(created["task"]["ttl"], 60000);
    created["task"]["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_task_runs_in_the_background_and_yields_its_result() {
    let server = server();
    let mut client = TestClient::connect(&server, V2025_11_25).await.unwrap();
    let init_caps = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(
        init_caps["tools"][0]["execution"]["taskSupport"],
        "optional"
    );
    let id = start(&client, "slow", json!({"ms": 100})).await;
    let polled = client
        .request("tasks/get", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(polled["status"], "working");
    let result = client
        .request("tasks/result", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "slept 100 ms");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id
    );
    let done = client
        .request("tasks/get", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(done["status"], "completed");
    let (method, params) = client.next_notification().await.unwrap();
    assert_eq!(method, "notifications/tasks/status");
    assert_eq!(params["status"], "completed");
    let listed = client.request("tasks/list", json!({})).await.unwrap();
    assert_eq!(listed["tasks"][0]["taskId"], id);
    // A finished task cannot be cancelled; an unknown one does not exist.
    let error = client
        .request("tasks/cancel", json!({"taskId": id}))
        .await
        .unwrap_err();
    assert_eq!(code(error), -32602);
    let error = client
        .request("tasks/get", json!({"taskId": "nope"}))
        .await
        .unwrap_err();
    assert_eq!(code(error), -32602);
}

#[tokio::test]
async fn failures_and_cancellation_end_tasks() {
    let server = server();
    let client = TestClient::connect(&server, V2025_11_25).await.unwrap();
    let failing = start(&client, "slow", json!({"ms": 1, "fail": true})).await;
    let result = client
        .request("tasks/result", json!({"taskId": failing}))
        .await
        .unwrap();
    assert_eq!(result["isError"], true);
    let state = client
        .request("tasks/get", json!({"taskId": failing}))
        .await
        .unwrap();
    assert_eq!(state["status"], "failed");

    let long = start(&client, "slow", json!({"ms": 60_000})).await;
    let cancelled = client
        .request("tasks/cancel", json!({"taskId": long}))
        .await
        .unwrap();
    assert_eq!(cancelled["status"], "cancelled");
    let error = client
        .request("tasks/result", json!({"taskId": long}))
        .await
        .unwrap_err();
    assert_eq!(code(error), -32602, "a cancelled task has no result");
}

#[tokio::test]
async fn tool_level_negotiation() {
    let server = server();
    let client = TestClient::connect(&server, V2025_11_25).await.unwrap();
    let error = client
        .request(
            "tools/call",
            json!({"name": "plain", "arguments": {"ms": 1}, "task": {}}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        code(error),
        -32601,
        "a tool without task support refuses a task"
    );
    let error = client
        .call_tool("only_task", json!({"ms": 1}))
        .await
        .unwrap_err();
    assert_eq!(code(error), -32601, "a task-only tool refuses a plain call");
    let plain = client.call_tool("slow", json!({"ms": 1})).await.unwrap();
    assert_eq!(
        plain["content"][0]["text"], "slept 1 ms",
        "optional: plain calls work"
    );
}

#[tokio::test]
async fn tasks_exist_only_in_2025_11_25_and_per_connection() {
    let server = server();
    for version in [V2025_06_18, V2026_07_28] {
        let client = TestClient::connect(&server, version).await.unwrap();
        let error = client.request("tasks/list", json!({})).await.unwrap_err();
        assert_eq!(code(error), -32601, "{version:?}");
        // The task member is ignored: the call runs normally.
        let result = client
            .request(
                "tools/call",
                json!({"name": "slow", "arguments": {"ms": 1}, "task": {}}),
            )
            .await
            .unwrap();
        assert_eq!(result["content"][0]["text"], "slept 1 ms", "{version:?}");
    }
    let a = TestClient::connect(&server, V2025_11_25).await.unwrap();
    let b = TestClient::connect(&server, V2025_11_25).await.unwrap();
    let id = start(&a, "slow", json!({"ms": 1})).await;
    let error = b
        .request("tasks/get", json!({"taskId": id}))
        .await
        .unwrap_err();
    assert_eq!(
        code(error),
        -32602,
        "another connection's task is not visible"
    );
    let listed = b.request("tasks/list", json!({})).await.unwrap();
    assert_eq!(listed["tasks"], json!([]));
}

/// Sends when dropped: a task's tool ends either way when cancelled (the task drops it, or
/// it sees the cancellation first).
struct Ended(tokio::sync::mpsc::UnboundedSender<()>);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

#[tokio::test]
async fn a_connection_ending_cancels_its_running_tasks() {
    let (ended_tx, mut ended_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let server = Server::builder("tasks", "1")
        .tool_with(
            task_tool("wait", TaskSupport::Optional),
            move |_: Sleep, cx: Context| {
                let ended = Ended(ended_tx.clone());
                async move {
                    cx.cancel.cancelled().await;
                    drop(ended);
                    "cancelled".to_owned()
                }
            },
        )
        .build();
    let client = TestClient::connect(&server, V2025_11_25).await.unwrap();
    start(&client, "wait", json!({"ms": 0})).await;
    start(&client, "wait", json!({"ms": 0})).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(ended_rx.try_recv().is_err(), "running until the end");
    tokio::time::timeout(Duration::from_secs(30), client.close())
        .await
        .expect("the connection ends");
    for _ in 0..2 {
        tokio::time::timeout(Duration::from_secs(5), ended_rx.recv())
            .await
            .expect("every task is cancelled when its connection ends")
            .expect("the tool sends");
    }
}
