//! More traps of the first hour (issue #24), each closed and proved from outside: what a
//! cancelled handler runs, logging without declaring it, non-object structured output on
//! every revision, prompts returning text, the client's result constructors and
//! elicitation modes, and a builder hook for the client's roots changing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ferry::client::{CallOptions, Client, ClientError, ElicitationModes};
use ferry::engine::Transport;
use ferry::protocol::ProtocolVersion::{self, *};
use ferry::protocol::types::{
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ElicitationSchema, LoggingLevel,
    PromptMessage, Role, Root, SamplingContents, SamplingMessage,
};
use ferry::protocol::{Era, Feature};
use ferry::schemars::JsonSchema;
use ferry::server::{Cancel, Context, Json, RootsChanged, Server, State, TestClient};
use serde::{Deserialize, Serialize};
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

/// An item of a list output.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Tag {
    name: String,
}

async fn tag_names(_: ()) -> Json<Vec<String>> {
    Json(vec!["red".into(), "blue".into()])
}

async fn tags(_: ()) -> Json<Vec<Tag>> {
    Json(vec![Tag { name: "red".into() }])
}

async fn answer(_: ()) -> Json<u32> {
    Json(42)
}

fn structured_server() -> Server {
    Server::builder("structured", "1")
        .tool("tag_names", "Tag names", tag_names)
        .tool("tags", "Tags", tags)
        .tool("answer", "The answer", answer)
        .build()
}

#[tokio::test]
async fn non_object_structured_output_is_wrapped_where_the_revision_needs_an_object() {
    let server = structured_server();
    for version in ProtocolVersion::ALL {
        let client = TestClient::connect(&server, version).await.unwrap();
        let listed = client.request("tools/list", json!({})).await.unwrap();
        let schema_of = |name: &str| {
            listed["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|tool| tool["name"] == name)
                .unwrap()
                .get("outputSchema")
                .cloned()
        };
        let names = client.call_tool("tag_names", json!({})).await.unwrap();
        // The text block is the value itself, in every revision.
        assert_eq!(
            names["content"][0]["text"], r#"["red","blue"]"#,
            "{version}"
        );
        let answered = client.call_tool("answer", json!({})).await.unwrap();
        if !version.has(Feature::StructuredOutput) {
            assert_eq!(schema_of("tag_names"), None, "{version}");
            assert!(names.get("structuredContent").is_none(), "{version}");
        } else if version < V2026_07_28 {
            let schema = schema_of("tag_names").expect("an output schema");
            assert_eq!(schema["type"], "object", "{version}");
            assert_eq!(schema["required"], json!(["result"]), "{version}");
            assert_eq!(schema["properties"]["result"]["type"], "array");
            assert_eq!(schema["x-fastmcp-wrap-result"], true);
            assert_eq!(
                names["structuredContent"],
                json!({"result": ["red", "blue"]}),
                "{version}"
            );
            assert_eq!(answered["structuredContent"], json!({"result": 42}));
            // The dialect is named at the top, the item's schema kept inside.
            let tags = schema_of("tags").expect("an output schema");
            assert!(tags["$schema"].is_string(), "{tags}");
            assert!(
                tags["properties"]["result"].get("$schema").is_none(),
                "{tags}"
            );
            let item = &tags["properties"]["result"]["items"];
            assert_eq!(item["required"], json!(["name"]), "{tags}");
        } else {
            assert_eq!(schema_of("tag_names").unwrap()["type"], "array");
            assert_eq!(names["structuredContent"], json!(["red", "blue"]));
            assert_eq!(answered["structuredContent"], json!(42));
        }
    }
}

#[tokio::test]
async fn typed_results_read_wrapped_output_as_the_tools_type() {
    for version in [V2025_06_18, V2025_11_25, V2026_07_28] {
        let (client_side, server_side) = Transport::pair(16);
        let _serving = structured_server().serve(server_side);
        let client = Client::builder("app", "1")
            .version(version)
            .connect(client_side)
            .await
            .unwrap();
        let names: Vec<String> = client.call_tool_as("tag_names", json!({})).await.unwrap();
        assert_eq!(names, ["red", "blue"], "{version}");
        let tags: Vec<Tag> = client.call_tool_as("tags", json!({})).await.unwrap();
        assert_eq!(tags, [Tag { name: "red".into() }], "{version}");
        let answer: u32 = client.call_tool_as("answer", json!({})).await.unwrap();
        assert_eq!(answer, 42, "{version}");
    }
}

/// What the client declared of elicitation, and what it answered a form.
async fn ask(cx: Context) -> Result<String, String> {
    let url = cx
        .client_capabilities()
        .elicitation
        .as_ref()
        .is_some_and(|e| e.url.is_some());
    let answer = cx
        .elicit(ElicitRequestParams::Form(ElicitRequestFormParams {
            message: "Your name?".into(),
            requested_schema: ElicitationSchema::default(),
            ..Default::default()
        }))
        .await
        .map_err(|e| e.to_string())?;
    let name = answer
        .content
        .as_ref()
        .and_then(|c| c.get("name"))
        .and_then(|n| n.as_str())
        .unwrap_or("nobody")
        .to_owned();
    Ok(format!("{:?} {name} url={url}", answer.action))
}

async fn sample(cx: Context) -> Result<String, String> {
    let answer = cx
        .sample(CreateMessageRequestParams {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: SamplingContents::text("Capital of France?"),
                meta: None,
            }],
            max_tokens: 10,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    Ok(serde_json::to_string(&answer).unwrap())
}

#[tokio::test]
async fn client_handlers_answer_with_constructors_and_name_their_modes() {
    let server = Server::builder("asking", "1")
        .tool("ask", "Asks", ask)
        .tool("sample", "Samples", sample)
        .build();
    let cases = [
        (ElicitationModes::Form, false),
        (ElicitationModes::FormAndUrl, true),
    ];
    for version in [V2025_11_25, V2026_07_28] {
        for (modes, url) in cases {
            let (client_side, server_side) = Transport::pair(16);
            let _serving = server.serve(server_side);
            let client = Client::builder("app", "1")
                .version(version)
                .on_elicitation_with(modes, |_| async {
                    Ok(ElicitResult::accept(json!({"name": "Ada"})))
                })
                .on_sampling(|_| async { Ok(CreateMessageResult::text("model-1", "Paris.")) })
                .connect(client_side)
                .await
                .unwrap();
            let asked = client.call_tool("ask", json!({})).await.unwrap();
            assert_eq!(
                asked.content,
                [ContentBlock::text(format!("Accept Ada url={url}"))],
                "{version} {modes:?}"
            );
            let sampled = client.call_tool("sample", json!({})).await.unwrap();
            let ContentBlock::Text(text) = &sampled.content[0] else {
                panic!("{sampled:?}")
            };
            let sampled: serde_json::Value = serde_json::from_str(&text.text).unwrap();
            assert_eq!(
                sampled,
                json!({"role": "assistant", "content": {"type": "text", "text": "Paris."},
                       "model": "model-1", "stopReason": "endTurn"}),
                "{version}"
            );
        }
    }
    for (answer, action) in [
        (ElicitResult::decline(), ElicitAction::Decline),
        (ElicitResult::cancel(), ElicitAction::Cancel),
        (ElicitResult::accept_url(), ElicitAction::Accept),
    ] {
        assert_eq!((answer.action, answer.content), (action, None));
    }
}

#[derive(Deserialize, JsonSchema)]
struct Greeting {
    /// Whom to greet.
    name: String,
}

async fn greet(args: Greeting) -> String {
    format!("Greet {}", args.name)
}

#[tokio::test]
async fn prompts_return_text_or_one_message() {
    let server = Server::builder("prompts", "1")
        .prompt("fixed", "A fixed text", || async { "Say hello." })
        .prompt("greet", "Greets", greet)
        .prompt("reply", "One message", || async {
            PromptMessage::assistant("Hello!")
        })
        .build();
    for version in ProtocolVersion::ALL {
        let client = TestClient::connect(&server, version).await.unwrap();
        let get = |name: &'static str, arguments| {
            let client = &client;
            async move {
                client
                    .request("prompts/get", json!({"name": name, "arguments": arguments}))
                    .await
                    .unwrap()
            }
        };
        let fixed = get("fixed", json!({})).await;
        assert_eq!(
            fixed["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Say hello."}}]),
            "{version}"
        );
        let greeted = get("greet", json!({"name": "Ada"})).await;
        assert_eq!(greeted["messages"][0]["content"]["text"], "Greet Ada");
        let reply = get("reply", json!({})).await;
        assert_eq!(reply["messages"][0]["role"], "assistant", "{version}");
        assert_eq!(reply["messages"].as_array().unwrap().len(), 1);
    }
}

#[tokio::test]
async fn a_builder_hook_hears_that_the_clients_roots_changed() {
    let (heard, mut hearing) = tokio::sync::mpsc::unbounded_channel();
    let server = Server::builder("roots", "1")
        .on_roots_changed(move |changed: RootsChanged| {
            let heard = heard.clone();
            async move {
                let listed = changed.list_roots().await.expect("the roots");
                let _ = heard.send(listed.roots);
            }
        })
        .build();
    let roots = Arc::new(std::sync::Mutex::new(vec!["file:///one".to_owned()]));
    let (client_side, server_side) = Transport::pair(16);
    let _serving = server.serve(server_side);
    let offered = roots.clone();
    let client = Client::builder("app", "1")
        .version(V2025_06_18)
        .roots_with(move || {
            let uris = offered.lock().unwrap().clone();
            async move {
                uris.into_iter()
                    .map(|uri| Root {
                        uri,
                        name: None,
                        meta: None,
                    })
                    .collect()
            }
        })
        .connect(client_side)
        .await
        .unwrap();
    roots.lock().unwrap().push("file:///two".to_owned());
    client.roots_changed().await.unwrap();
    let listed = tokio::time::timeout(Duration::from_secs(5), hearing.recv())
        .await
        .expect("the hook ran")
        .unwrap();
    let uris: Vec<&str> = listed.iter().map(|root| root.uri.as_str()).collect();
    assert_eq!(uris, ["file:///one", "file:///two"]);
}
