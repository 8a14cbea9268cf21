//! Ferry's client against `ferry serve` as a child process over real stdio: every
//! revision and both eras, every method, pagination across pages, the server's requests
//! (session-era requests and stateless round trips), progress, cancel-on-drop, timeouts,
//! a server crash mid-call, and supervised restarts.

use std::collections::BTreeMap;
use std::time::Duration;

use ferry::client::{
    Backoff, CallOptions, Client, ClientBuilder, ClientError, ElicitationModes, Supervisor,
};
use ferry::engine::{ChildCommand, ChildProcess, ShutdownStage, ShutdownTimeouts};
use ferry::protocol::methods::ServerNotification;
use ferry::protocol::types::{
    ContentBlock, CreateMessageResult, ElicitAction, ElicitResult, Reference, Role, Root,
    SamplingContents,
};
use ferry::protocol::{Era, ProtocolVersion};
use serde_json::json;

fn command() -> ChildCommand {
    ChildCommand::new(env!("CARGO_BIN_EXE_ferry"))
        .arg("serve")
        .env("FERRY_PAGE_SIZE", "3")
}

fn builder() -> ClientBuilder {
    Client::builder("client-stdio-tests", "1")
        .on_sampling(|_| async {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContents::text("Paris"),
                model: "test-model".into(),
                stop_reason: None,
                meta: None,
            })
        })
        .on_elicitation_with(ElicitationModes::Form, |_| async {
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: json!({"name": "Ada", "colour": "green"})
                    .as_object()
                    .cloned(),
                meta: None,
            })
        })
        .roots(vec![Root {
            uri: "file:///work".into(),
            name: Some("work".into()),
            meta: None,
        }])
}

async fn spawn(builder: ClientBuilder) -> (Client, ChildProcess) {
    builder.spawn(&command()).await.expect("spawn and connect")
}

fn text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn every_method_in_every_revision() {
    for version in ProtocolVersion::ALL {
        let (client, child) = spawn(builder().version(version)).await;
        assert_eq!(client.version(), version);
        let tools = client.list_all_tools().await.unwrap();
        assert!(
            tools.len() > 15,
            "{version:?}: every page ({} tools)",
            tools.len()
        );
        let first = client.list_tools(None).await.unwrap();
        assert_eq!(first.tools.len(), 3, "pages of three");
        let echo = client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert_eq!(text(&echo.content), "hi");
        let sum = client
            .call_tool("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        if version >= ProtocolVersion::V2025_06_18 {
            assert_eq!(
                sum.structured_content,
                Some(json!({"sum": 3.0})),
                "{version:?}"
            );
        }
        let resources = client.list_all_resources().await.unwrap();
        assert!(resources.iter().any(|r| r.uri == "server://info"));
        let templates = client.list_all_resource_templates().await.unwrap();
        assert_eq!(templates[0].uri_template, "ferry://notes/{id}");
        let note = client.read_resource("ferry://notes/2").await.unwrap();
        assert_eq!(note.contents[0].uri(), "ferry://notes/2");
        let prompts = client.list_all_prompts().await.unwrap();
        assert_eq!(prompts.len(), 2);
        let prompt = client
            .get_prompt("code_review", BTreeMap::from([("code".into(), "x".into())]))
            .await
            .unwrap();
        assert!(!prompt.messages.is_empty());
        let completion = client
            .complete(Reference::prompt("code_review"), "language", "ru", None)
            .await
            .unwrap();
        assert_eq!(completion.completion.values, ["ruby", "rust"]);
        client.ping().await.unwrap();
        if version.era() == Era::Stateless {
            let discovered = client.discover().await.unwrap();
            assert!(!discovered.supported_versions.is_empty());
        } else {
            client.subscribe("ferry://readme").await.unwrap();
            client.unsubscribe("ferry://readme").await.unwrap();
        }
        let missing = client.call_tool("nope", json!({})).await.unwrap_err();
        assert_eq!(
            missing.kind(),
            Some(ferry::client::ErrorKind::InvalidParams)
        );
        let shutdown = child.shutdown(ShutdownTimeouts::default()).await.unwrap();
        assert_eq!(shutdown.stage, ShutdownStage::StdinClosed, "{version:?}");
        assert!(shutdown.status.success());
    }
}

#[tokio::test]
async fn negotiation_picks_the_stateless_era_by_default() {
    let (client, _child) = spawn(builder()).await;
    assert_eq!(client.version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.server_info().unwrap().name, "ferry");
}

#[tokio::test]
async fn the_servers_requests_in_both_eras() {
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let (client, _child) = spawn(builder().version(version)).await;
        let sampled = client
            .call_tool("sample", json!({"prompt": "Capital?"}))
            .await
            .unwrap();
        assert_eq!(
            text(&sampled.content),
            "test-model says: Paris",
            "{version:?}"
        );
        let roots = client.call_tool("roots", json!({})).await.unwrap();
        assert_eq!(
            text(&roots.content),
            "1 roots\nwork: file:///work",
            "{version:?}"
        );
        let elicited = client
            .call_tool("elicit", json!({"message": "Who?"}))
            .await
            .unwrap();
        assert_eq!(
            text(&elicited.content),
            "accepted: name=Ada, colour=green",
            "{version:?}"
        );
    }
}

#[tokio::test]
async fn progress_timeouts_and_cancel_on_drop() {
    let (client, _child) = spawn(builder().version(ProtocolVersion::V2025_06_18)).await;
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let counted = client
        .call_tool_with("countdown", json!({"steps": 5, "interval_ms": 5}), options)
        .await
        .unwrap();
    assert_eq!(text(&counted.content), "counted 5 steps");
    let mut seen = Vec::new();
    while let Ok(update) = rx.try_recv() {
        seen.push(update.progress);
    }
    assert_eq!(seen, [1.0, 2.0, 3.0, 4.0, 5.0]);

    let short = CallOptions {
        timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let error = client
        .call_tool_with("countdown", json!({"steps": 100, "interval_ms": 50}), short)
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Timeout(_)), "{error:?}");

    // Drop a call after it has reported progress: the server stops reporting.
    let mut notifications = client.notifications();
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let call = client.call_tool_with(
        "countdown",
        json!({"steps": 1000, "interval_ms": 20}),
        options,
    );
    tokio::select! {
        _ = call => panic!("a 20 s call finished"),
        _ = async { rx.recv().await; rx.recv().await } => {}
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut late = 0;
    while let Ok(n) = notifications.try_recv() {
        if matches!(n, ServerNotification::Progress(_)) {
            late += 1;
        }
    }
    assert!(
        late <= 1,
        "the server kept reporting after the cancel: {late}"
    );
    let echo = client
        .call_tool("echo", json!({"text": "unaffected"}))
        .await
        .unwrap();
    assert_eq!(text(&echo.content), "unaffected");
}

fn kill_9(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

#[tokio::test]
async fn a_crash_mid_call_fails_the_call_at_once() {
    let (client, child) = spawn(builder().version(ProtocolVersion::V2025_11_25)).await;
    let pid = child.id();
    let call = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .call_tool("countdown", json!({"steps": 1000, "interval_ms": 20}))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    kill_9(pid);
    let outcome = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("no hang")
        .unwrap();
    assert_eq!(outcome.unwrap_err(), ClientError::ConnectionLost);
    let after = client
        .call_tool("echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert_eq!(after, ClientError::ConnectionLost);
    assert!(!client.is_connected());
}

#[tokio::test]
async fn the_supervisor_restarts_and_reconnects() {
    let backoff = Backoff {
        initial: Duration::from_millis(50),
        ..Default::default()
    };
    let supervisor = Supervisor::start(command(), builder, backoff)
        .await
        .unwrap();
    let first = supervisor.client(Duration::from_secs(5)).await.unwrap();
    let echo = first
        .call_tool("echo", json!({"text": "one"}))
        .await
        .unwrap();
    assert_eq!(text(&echo.content), "one");
    let old_pid = supervisor.pid();
    kill_9(old_pid);
    let lost = first
        .call_tool("echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert_eq!(lost, ClientError::ConnectionLost);
    let second = supervisor.client(Duration::from_secs(10)).await.unwrap();
    assert!(second.is_connected(), "a live connection, not the dead one");
    let echo = second
        .call_tool("echo", json!({"text": "two"}))
        .await
        .unwrap();
    assert_eq!(text(&echo.content), "two");
    assert_eq!(supervisor.restarts(), 1);
    assert_ne!(supervisor.pid(), old_pid);
}
