//! Interop: Ferry's client against the official reference server
//! `@modelcontextprotocol/server-everything` (npm, pinned in `interop/package.json`) over
//! stdio: list, call (text, image, structured), read, prompt, sampling, progress.
//!
//! The test installs the package itself (`interop/install.sh npm`: `npm ci`, reused), so
//! `cargo test --workspace` needs only Node.js and the npm registry.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use ferry::client::{CallOptions, Client};
use ferry::engine::{ChildCommand, ChildProcess, ShutdownTimeouts, StderrMode};
use ferry::protocol::types::{
    ContentBlock, CreateMessageResult, Role, Root, SamplingContent, SamplingContents, TextContent,
};
use ferry::protocol::{Era, ProtocolVersion};
use serde_json::json;

/// `interop/` at the workspace root.
fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

/// Install the pinned npm packages (once: `interop/install.sh` reuses an install whose
/// lock file has not changed, and serializes concurrent test binaries).
fn installed_server() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let dir = interop_dir();
    let bin = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let _once = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let status = std::process::Command::new(dir.join("install.sh"))
        .arg("npm")
        .status()
        .expect("interop/install.sh runs (Node.js is needed for the interop tests)");
    assert!(status.success(), "interop/install.sh npm failed");
    assert!(bin.exists(), "{bin:?} missing after the install");
    bin
}

/// The client's sampling answer: the question's text, echoed.
fn answer(params: &ferry::protocol::types::CreateMessageRequestParams) -> CreateMessageResult {
    let asked = serde_json::to_value(&params.messages[0].content).unwrap_or_default();
    CreateMessageResult {
        role: Role::Assistant,
        content: SamplingContents::One(SamplingContent::Text(TextContent::new(format!(
            "ferry answers: {}",
            asked["text"].as_str().unwrap_or("?")
        )))),
        model: "ferry-test-model".into(),
        stop_reason: Some("endTurn".into()),
        meta: None,
    }
}

async fn connect(version: Option<ProtocolVersion>) -> (Client, ChildProcess) {
    let server = installed_server();
    let command = ChildCommand::new("node")
        .arg(server)
        .arg("stdio")
        .stderr(StderrMode::Discard);
    let mut builder = Client::builder("ferry-interop", "1")
        .timeout(Duration::from_secs(30))
        .on_sampling(|params| async move { Ok(answer(&params)) })
        .roots(vec![Root {
            uri: "file:///tmp".into(),
            name: Some("tmp".into()),
            meta: None,
        }]);
    if let Some(version) = version {
        builder = builder.version(version);
    }
    builder
        .spawn(&command)
        .await
        .expect("connect to server-everything")
}

fn first_text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .find_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn ferry_client_against_server_everything() {
    // Default negotiation: the probe is refused, so the client initializes.
    let (client, child) = connect(None).await;
    assert_eq!(client.era(), Era::Session);
    assert_eq!(client.version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.server_info().unwrap().name, "mcp-servers/everything");

    // Tools that depend on client capabilities are added after initialization.
    let mut tools = client.list_all_tools().await.unwrap();
    for _ in 0..40 {
        if tools.iter().any(|t| t.name == "trigger-sampling-request") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        tools = client.list_all_tools().await.unwrap();
    }
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "get-structured-content",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }

    let echoed = client
        .call_tool("echo", json!({"message": "hello"}))
        .await
        .unwrap();
    assert!(first_text(&echoed.content).contains("hello"), "{echoed:?}");

    let image = client.call_tool("get-tiny-image", json!({})).await.unwrap();
    assert!(
        image
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::Image(i) if i.mime_type == "image/png" && !i.data.is_empty())),
        "{image:?}"
    );

    let structured = client
        .call_tool("get-structured-content", json!({"location": "Chicago"}))
        .await
        .unwrap();
    let weather = structured.structured_content.expect("structured content");
    assert!(weather.get("temperature").is_some(), "{weather}");

    let resources = client.list_all_resources().await.unwrap();
    let uri = resources[0].uri.clone();
    let read = client.read_resource(&uri).await.unwrap();
    assert_eq!(read.contents[0].uri(), uri);

    let prompt = client
        .get_prompt(
            "args-prompt",
            BTreeMap::from([("city".into(), "Oslo".into())]),
        )
        .await
        .unwrap();
    let text = serde_json::to_string(&prompt.messages).unwrap();
    assert!(text.contains("Oslo"), "{text}");

    if names.contains(&"trigger-sampling-request") {
        let sampled = client
            .call_tool(
                "trigger-sampling-request",
                json!({"prompt": "What is MCP?", "maxTokens": 20}),
            )
            .await
            .unwrap();
        let text = serde_json::to_string(&sampled.content).unwrap();
        assert!(text.contains("ferry answers"), "{text}");
    } else {
        panic!("server-everything did not register its sampling tool: {names:?}");
    }

    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let long = client
        .call_tool_with(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
            options,
        )
        .await
        .unwrap();
    assert!(first_text(&long.content).contains("completed"), "{long:?}");
    let mut updates = Vec::new();
    while let Ok(update) = rx.try_recv() {
        updates.push(update.progress);
    }
    assert_eq!(updates.len(), 4, "{updates:?}");
    assert!(updates.windows(2).all(|w| w[0] < w[1]));

    let shutdown = child.shutdown(ShutdownTimeouts::default()).await.unwrap();
    assert!(
        shutdown.status.success() || shutdown.status.code().is_none(),
        "{shutdown:?}"
    );
}

#[tokio::test]
async fn every_session_revision_against_server_everything() {
    for version in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
    ] {
        let (client, _child) = connect(Some(version)).await;
        assert_eq!(client.version(), version);
        let sum = client
            .call_tool("get-sum", json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert!(
            first_text(&sum.content).contains("42"),
            "{version:?}: {sum:?}"
        );
    }
}

/// Tasks both ways (2025-11-25): the research tool that must run as a task (statuses, a
/// clarification asked by elicitation while `tasks/result` waits, the report; a
/// cancellation), and the server's sampling request run as a task on Ferry's client,
/// polled and fetched by the server.
#[tokio::test]
async fn tasks_both_ways_against_server_everything() {
    use ferry::client::{ElicitationModes, TaskEvent};
    use ferry::protocol::types::{ElicitRequestParams, ElicitResult, TaskStatus};

    let server = installed_server();
    let command = ChildCommand::new("node")
        .arg(server)
        .arg("stdio")
        .stderr(StderrMode::Discard);
    let (client, child) = Client::builder("ferry-interop", "1")
        .version(ProtocolVersion::V2025_11_25)
        .timeout(Duration::from_secs(30))
        .on_sampling(|params| async move { Ok(answer(&params)) })
        .on_elicitation_with(ElicitationModes::Form, |params| async move {
            // Picks the first interpretation offered.
            let ElicitRequestParams::Form(form) = params else {
                return Ok(ElicitResult::decline());
            };
            let schema = serde_json::to_value(&form.requested_schema).unwrap_or_default();
            let first = schema["properties"]["interpretation"]["oneOf"][0]["const"].clone();
            Ok(ElicitResult::accept(json!({ "interpretation": first })))
        })
        .spawn(&command)
        .await
        .expect("connect to server-everything");

    let mut statuses = Vec::new();
    let mut research = client
        .call_tool_as_task("simulate-research-query", json!({"topic": "rust"}), None)
        .await
        .unwrap();
    let report = research
        .wait_with(|event| {
            if let TaskEvent::Status(task) = event {
                statuses.push(task.status_message.unwrap_or_default());
            }
        })
        .await
        .unwrap();
    let text = first_text(&report.content);
    assert!(text.contains("# Research Report: rust"), "{text}");
    assert_eq!(research.task().status, TaskStatus::Completed);
    assert!(
        statuses.iter().any(|m| m.contains("Analyzing content")),
        "{statuses:?}"
    );

    // Ambiguous: the task waits for input; the clarification is asked while the client
    // waits on tasks/result, and the report names it.
    let ambiguous = client
        .call_tool_as_task(
            "simulate-research-query",
            json!({"topic": "python", "ambiguous": true}),
            None,
        )
        .await
        .unwrap();
    let report = ambiguous.result().await.unwrap();
    let text = first_text(&report.content);
    assert!(text.contains("python (programming)"), "{text}");

    // Cancelled while it works.
    let mut cancelled = client
        .call_tool_as_task("simulate-research-query", json!({"topic": "go"}), None)
        .await
        .unwrap();
    assert_eq!(
        cancelled.cancel().await.unwrap().status,
        TaskStatus::Cancelled
    );
    let listed = client.list_all_tasks().await.unwrap();
    assert!(
        listed
            .iter()
            .any(|t| t.task_id == cancelled.id() && t.status == TaskStatus::Cancelled)
    );

    // The other way: the server asks Ferry's client to sample as a task and polls it.
    let asked = client
        .call_tool("trigger-sampling-request-async", json!({"prompt": "hello"}))
        .await
        .unwrap();
    let text = first_text(&asked.content);
    assert!(text.starts_with("[COMPLETED]"), "{text}");
    assert!(text.contains("\"text\": \"ferry answers: "), "{text}");
    assert!(text.contains("context: hello\""), "{text}");
    assert!(
        text.contains("io.modelcontextprotocol/related-task"),
        "{text}"
    );
    child
        .shutdown(ShutdownTimeouts::all(Duration::from_secs(2)))
        .await
        .unwrap();
}
