//! The client against a Ferry server over the in-memory transport: era negotiation (probe,
//! fallback, pinning), typed calls with pagination and capability checks, the server's
//! requests answered by handlers in both eras, timeouts, progress, cancellation, listening.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ferry::client::{CallOptions, Client, ClientError, ElicitationModes, ErrorKind};
use ferry::engine::Transport;
use ferry::protocol::methods::ServerNotification;
use ferry::protocol::types::{
    ContentBlock, CreateMessageResult, ElicitAction, ElicitRequestFormParams, ElicitRequestParams,
    ElicitResult, ElicitationSchema, LoggingLevel, Reference, Role, Root, SamplingContents,
    SubscriptionFilter,
};
use ferry::protocol::{Era, ProtocolVersion, VersionSet};
use ferry::server::{Cancel, Context, Progress, Server, State};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Wait {
    /// Milliseconds.
    ms: u64,
    /// Report progress every 20 ms.
    #[serde(default)]
    progress: bool,
}

struct Stopped(AtomicBool);

async fn wait(args: Wait, progress: Progress, cancel: Cancel, stopped: State<Stopped>) -> String {
    let steps = args.ms / 20;
    for step in 0..steps {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
            () = cancel.0.cancelled() => {
                stopped.0.store(true, Ordering::SeqCst);
                return "cancelled".into();
            }
        }
        if args.progress
            && let Some(p) = &progress.0
        {
            let _ = p.report((step + 1) as f64, Some(steps as f64), None).await;
        }
    }
    "done".into()
}

async fn ask(_: Text, cx: Context) -> Result<String, String> {
    let name = cx
        .elicit(ElicitRequestParams::Form(ElicitRequestFormParams {
            message: "Name?".into(),
            requested_schema: ElicitationSchema::default(),
            ..Default::default()
        }))
        .await
        .map_err(|e| e.to_string())?;
    let roots = cx.list_roots().await.map_err(|e| e.to_string())?;
    let name = name.content.unwrap_or_default()["name"].clone();
    Ok(format!("{name} with {} roots", roots.roots.len()))
}

fn server(versions: VersionSet) -> Server {
    let mut builder = Server::builder("test", "1")
        .versions(versions)
        .page_size(2)
        .state(Stopped(AtomicBool::new(false)))
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .tool("wait", "Wait", wait)
        .tool("ask", "Ask the user", ask)
        .tool("log", "Log", |a: Text, cx: Context| async move {
            cx.log(LoggingLevel::Warning, None, a.text).await;
            "logged"
        })
        .prompt("greet", "Greet", |a: Text, _cx: Context| async move {
            format!("Hello {}", a.text)
        })
        .complete_prompt_argument("greet", "text", |req, _cx| async move {
            vec![format!("{}x", req.value)]
        });
    for i in 0..3 {
        builder = builder.tool(
            &format!("t{i}"),
            "filler",
            |a: Text, _cx: Context| async move { a.text },
        );
    }
    builder.build()
}

fn client_builder() -> ferry::client::ClientBuilder {
    Client::builder("tests", "1")
        .on_elicitation_with(ElicitationModes::Form, |_params| async {
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(
                    json!({"name": "Ada"})
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                ),
                meta: None,
            })
        })
        .roots(vec![Root {
            uri: "file:///a".into(),
            name: None,
            meta: None,
        }])
        .on_sampling(|_params| async {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContents::text("hi"),
                model: "m".into(),
                stop_reason: None,
                meta: None,
            })
        })
}

async fn connect_to(server: &Server, builder: ferry::client::ClientBuilder) -> Client {
    let (client_side, server_side) = Transport::pair(64);
    let _serving = server.serve(server_side);
    builder.connect(client_side).await.expect("connect")
}

#[tokio::test]
async fn negotiation_probes_falls_back_and_pins() {
    let both = server(VersionSet::all());
    let client = connect_to(&both, client_builder()).await;
    assert_eq!(client.version(), ProtocolVersion::V2026_07_28);
    let session_only = server(VersionSet::only([
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
    ]));
    let client = connect_to(&session_only, client_builder()).await;
    assert_eq!(
        client.version(),
        ProtocolVersion::V2025_06_18,
        "fell back to initialize"
    );
    assert_eq!(client.server_info().unwrap().name, "test");
    let pinned = connect_to(
        &both,
        client_builder().version(ProtocolVersion::V2024_11_05),
    )
    .await;
    assert_eq!(pinned.version(), ProtocolVersion::V2024_11_05);
    let era = connect_to(&both, client_builder().era(Era::Session)).await;
    assert_eq!(era.version(), ProtocolVersion::V2025_11_25);
}

/// A session-era server that answers every method it does not know with `{}` (as the
/// conformance suite's mock servers do): the probe's answer is no discover result, so the
/// client initializes.
#[tokio::test]
async fn a_probe_answered_with_no_discover_result_falls_back_to_initialize() {
    let (client_side, mut server_side) = Transport::pair(8);
    tokio::spawn(async move {
        while let Some(event) = server_side.incoming.recv().await {
            let ferry::engine::TransportEvent::Frame(frame) = event else {
                continue;
            };
            let message: serde_json::Value = serde_json::from_slice(&frame).unwrap();
            let Some(id) = message.get("id").cloned() else {
                continue;
            };
            let result = match message["method"].as_str() {
                Some("initialize") => json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "serverInfo": {"name": "empty-answers", "version": "1"}
                }),
                _ => json!({}),
            };
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
            if server_side
                .outgoing
                .send(answer.to_string().into_bytes())
                .await
                .is_err()
            {
                return;
            }
        }
    });
    let client = client_builder()
        .connect(client_side)
        .await
        .expect("connect");
    assert_eq!(client.version(), ProtocolVersion::V2025_06_18);
    assert_eq!(client.server_info().unwrap().name, "empty-answers");
}

/// A server that starts serving late (a child still compiling): the handshake waits up to
/// the connect timeout, longer than the request timeout, whose later calls keep it; a
/// shorter connect timeout fails the handshake with `Timeout`.
#[tokio::test]
async fn the_handshake_waits_for_the_connect_timeout_not_the_request_timeout() {
    let late = |delay| {
        let (client_side, server_side) = Transport::pair(8);
        let server = server(VersionSet::all());
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = server.serve(server_side).task.await;
        });
        client_side
    };
    let request = Duration::from_millis(300);
    for probe in [Duration::from_millis(100), Duration::ZERO] {
        let client = client_builder()
            .timeout(request)
            .probe_timeout(probe)
            .connect_timeout(Duration::from_secs(10))
            .connect(late(Duration::from_millis(1_200)))
            .await
            .unwrap_or_else(|e| panic!("probe {probe:?}: connected after 1.2 s: {e}"));
        let echoed = client.call_tool("echo", json!({"text": "hi"})).await;
        assert_eq!(echoed.unwrap().content, vec![ContentBlock::text("hi")]);
        let waited = client
            .call_tool("wait", json!({"ms": 1_000}))
            .await
            .expect_err("the request timeout still bounds calls");
        assert!(matches!(waited, ClientError::Timeout(_)), "{waited:?}");
    }
    let refused = client_builder()
        .timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_millis(400))
        .connect(late(Duration::from_secs(5)))
        .await
        .map(|_| ())
        .expect_err("no answer within the connect timeout");
    assert!(matches!(refused, ClientError::Timeout(_)), "{refused:?}");
}

#[tokio::test]
async fn typed_calls_in_both_eras() {
    let server = server(VersionSet::all());
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let client = connect_to(&server, client_builder().version(version)).await;
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 7, "{version:?}: every page");
        let first = client.list_tools(None).await.unwrap();
        assert_eq!(first.tools.len(), 2);
        assert!(first.next_cursor.is_some());
        let echoed = client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert_eq!(echoed.content, vec![ContentBlock::text("hi")]);
        let asked = client.call_tool("ask", json!({"text": ""})).await.unwrap();
        assert_eq!(
            asked.content,
            vec![ContentBlock::text("\"Ada\" with 1 roots")],
            "{version:?}"
        );
        let prompt = client
            .get_prompt("greet", BTreeMap::from([("text".into(), "Bob".into())]))
            .await
            .unwrap();
        assert_eq!(prompt.messages.len(), 1);
        let completion = client
            .complete(Reference::prompt("greet"), "text", "a", None)
            .await
            .unwrap();
        assert_eq!(completion.completion.values, ["ax"]);
        client.ping().await.unwrap();
        let error = client.call_tool("nope", json!({})).await.unwrap_err();
        assert_eq!(error.kind(), Some(ErrorKind::InvalidParams));
        let error = client.read_resource("x://y").await.unwrap_err();
        assert_eq!(
            error,
            ClientError::Unsupported("resources"),
            "checked before sending"
        );
    }
}

#[tokio::test]
async fn log_messages_reach_the_notification_stream_in_both_eras() {
    let server = server(VersionSet::all());
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let client = connect_to(&server, client_builder().version(version)).await;
        let mut notifications = client.notifications();
        client.set_log_level(LoggingLevel::Info).await.unwrap();
        client
            .call_tool("log", json!({"text": "careful"}))
            .await
            .unwrap();
        let message = tokio::time::timeout(Duration::from_secs(5), notifications.recv())
            .await
            .unwrap()
            .unwrap();
        match message {
            ServerNotification::LoggingMessage(params) => {
                assert_eq!(params.data, json!("careful"), "{version:?}");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn timeouts_progress_and_cancellation() {
    let server = server(VersionSet::all());
    let client = connect_to(
        &server,
        client_builder().version(ProtocolVersion::V2025_06_18),
    )
    .await;
    let short = CallOptions {
        timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let error = client
        .call_tool_with("wait", json!({"ms": 2000}), short)
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Timeout(_)), "{error:?}");

    // Progress restarts the timeout: 400 ms of work under a 100 ms timeout.
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions {
        timeout: Some(Duration::from_millis(100)),
        progress: Some(tx),
        reset_timeout_on_progress: true,
        ..Default::default()
    };
    let done = client
        .call_tool_with("wait", json!({"ms": 400, "progress": true}), options)
        .await
        .unwrap();
    assert_eq!(done.content, vec![ContentBlock::text("done")]);
    let mut updates = 0;
    while rx.try_recv().is_ok() {
        updates += 1;
    }
    assert!(updates >= 10, "{updates} progress updates");

    // ...but not beyond the maximum total.
    let options = CallOptions {
        timeout: Some(Duration::from_millis(100)),
        reset_timeout_on_progress: true,
        max_total_timeout: Some(Duration::from_millis(200)),
        ..Default::default()
    };
    let error = client
        .call_tool_with("wait", json!({"ms": 1000, "progress": true}), options)
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Timeout(_)), "{error:?}");

    // Dropping the call's future cancels it on the server.
    let call = client.call_tool("wait", json!({"ms": 5000}));
    let _ = tokio::time::timeout(Duration::from_millis(100), call).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let echoed = client
        .call_tool("echo", json!({"text": "still fine"}))
        .await
        .unwrap();
    assert_eq!(echoed.content, vec![ContentBlock::text("still fine")]);
}

/// Sets its flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_dropped_call_is_observed_by_the_server() {
    let stopped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stopped);
    let server = Server::builder("cancel", "1")
        .tool("wait", "Wait", move |_: Text, _cx: Context| {
            // The engine drops a cancelled handler: the guard sees it go.
            let guard = SetOnDrop(Arc::clone(&flag));
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                "never sent"
            }
        })
        .build();
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        stopped.store(false, Ordering::SeqCst);
        let client = connect_to(&server, Client::builder("t", "1").version(version)).await;
        let call = client.call_tool("wait", json!({"text": ""}));
        let _ = tokio::time::timeout(Duration::from_millis(50), call).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            stopped.load(Ordering::SeqCst),
            "{version:?}: the server saw the cancel"
        );
    }
}

#[tokio::test]
async fn listening_in_the_stateless_era() {
    let server = server(VersionSet::all());
    let client = connect_to(&server, client_builder()).await;
    let mut notifications = client.notifications();
    let subscription = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let ack = tokio::time::timeout(Duration::from_secs(5), notifications.recv())
        .await
        .unwrap()
        .unwrap();
    let ServerNotification::SubscriptionsAcknowledged(ack) = ack else {
        panic!("{ack:?}")
    };
    assert_eq!(
        ack.meta.and_then(|m| m.subscription_id).as_ref(),
        Some(subscription.id())
    );
    server.add_tool(
        "late",
        "Late",
        |a: Text, _cx: Context| async move { a.text },
    );
    let changed = tokio::time::timeout(Duration::from_secs(5), notifications.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(changed, ServerNotification::ToolListChanged(_)),
        "{changed:?}"
    );
    drop(subscription);
}
