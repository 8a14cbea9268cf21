//! `TestClient`'s typed API from the outside: typed results and their helpers in both
//! eras, progress collected with a call's result, and errors that are the same in every
//! revision although the codes on the wire differ.

use ferry::engine::CallError;
use ferry::protocol::ProtocolVersion::{self, *};
use ferry::protocol::jsonrpc::ErrorObject;
use ferry::protocol::types::{PromptMessage, Resource, ResourceContents, ResourceTemplate};
use ferry::server::{
    Context, Json, Progress, ReadResult, ResourceError, Server, TemplateVars, TestClient, TestError,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A revision of each era.
const ERAS: [ProtocolVersion; 2] = [V2025_06_18, V2026_07_28];

#[derive(Deserialize, JsonSchema)]
struct Pair {
    a: f64,
    b: f64,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Sum {
    value: f64,
}

async fn add(args: Pair) -> Json<Sum> {
    Json(Sum {
        value: args.a + args.b,
    })
}

async fn tags() -> Json<Vec<String>> {
    Json(vec!["red".into(), "blue".into()])
}

async fn fail() -> Result<String, String> {
    Err("no luck".into())
}

#[derive(Deserialize, JsonSchema)]
struct Steps {
    steps: u32,
}

/// Reports `steps` steps, each with a message, then whether it was asked for progress.
async fn count(args: Steps, progress: Progress) -> String {
    let asked = progress.0.is_some();
    for step in 1..=args.steps {
        progress
            .report(
                f64::from(step),
                Some(f64::from(args.steps)),
                Some(format!("step {step}")),
            )
            .await;
    }
    format!("asked for progress: {asked}")
}

/// Asks the client for its roots (a request to the client in the session era, an
/// `input_required` round in the stateless era).
async fn roots(cx: Context) -> String {
    match cx.list_roots().await {
        Ok(list) => list
            .roots
            .iter()
            .map(|root| root.uri.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        Err(error) => format!("no roots: {error}"),
    }
}

async fn motd() -> ReadResult {
    Ok(vec![ResourceContents::text(
        "motd://today",
        "text/plain",
        "Hello!",
    )])
}

async fn logo() -> ReadResult {
    Ok(vec![ResourceContents::blob(
        "logo://png",
        "image/png",
        "iVBORw==",
    )])
}

async fn note(uri: String, vars: TemplateVars) -> ReadResult {
    match vars["id"].as_str() {
        "1" => Ok(vec![ResourceContents::text(uri, "text/plain", "milk")]),
        "x" => Err(ResourceError::InvalidParams("id must be a number".into())),
        "boom" => Err(ResourceError::Failed("disk on fire".into())),
        _ => Err(ResourceError::NotFound(uri)),
    }
}

#[derive(Deserialize, JsonSchema)]
struct Topic {
    /// What to write about.
    topic: String,
}

async fn essay(args: Topic) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(format!("Write about {}.", args.topic)),
        PromptMessage::assistant("Gladly."),
    ]
}

async fn broken(_: Topic) -> Result<String, std::io::Error> {
    Err(std::io::Error::other("disk on fire"))
}

async fn picky(_: Topic) -> Result<String, ErrorObject> {
    Err(ErrorObject::new(-32099, "not today"))
}

fn server() -> Server {
    Server::builder("typed", "1")
        .page_size(1)
        .tool("add", "Add", add)
        .tool("tags", "The tags", tags)
        .tool("fail", "Fail", fail)
        .tool("count", "Count with progress", count)
        .tool("roots", "The client's roots", roots)
        .resource(Resource::new("motd://today", "motd"), motd)
        .resource(Resource::new("logo://png", "logo"), logo)
        .resource_template(ResourceTemplate::new("notes://{id}", "note"), note)
        .prompt("essay", "An essay", essay)
        .prompt("broken", "Fails", broken)
        .prompt("picky", "Refuses with a code of its own", picky)
        .build()
}

async fn client(version: ProtocolVersion) -> TestClient {
    TestClient::builder(&server())
        .version(version)
        .connect()
        .await
        .unwrap()
}

#[tokio::test]
async fn new_speaks_the_newest_revision() {
    let client = TestClient::new(&server()).await.unwrap();
    assert_eq!(client.version(), ProtocolVersion::LATEST);
    assert_eq!(client.version(), V2026_07_28);
    let sum = client.call("add", json!({"a": 1, "b": 2})).await.unwrap();
    assert_eq!(sum.structured::<Sum>().unwrap(), Sum { value: 3.0 });
}

#[tokio::test]
async fn tool_results_are_typed_in_both_eras() {
    for version in ERAS {
        let client = client(version).await;
        let sum = client.call("add", json!({"a": 1, "b": 2})).await.unwrap();
        assert!(!sum.is_error());
        assert_eq!(sum.text(), r#"{"value":3.0}"#, "{version:?}");
        assert_eq!(sum.structured::<Sum>().unwrap(), Sum { value: 3.0 });
        let sum: Sum = client
            .call_tool_as("add", json!({"a": 2, "b": 2}))
            .await
            .unwrap();
        assert_eq!(sum, Sum { value: 4.0 });

        // A list is wrapped before 2026-07-28 and not after; typed, it is a list in both.
        let raw = client.call_tool("tags", json!({})).await.unwrap();
        let wrapped = version < V2026_07_28;
        assert_eq!(raw["structuredContent"].is_object(), wrapped, "{version:?}");
        let tags = client.call("tags", json!({})).await.unwrap();
        assert_eq!(tags.structured::<Vec<String>>().unwrap(), ["red", "blue"]);
        let tags: Vec<String> = client.call_tool_as("tags", json!({})).await.unwrap();
        assert_eq!(tags, ["red", "blue"]);

        let failed = client.call("fail", json!({})).await.unwrap();
        assert!(failed.is_error());
        assert_eq!(failed.text(), "no luck");
        let failed = client.call_tool_as::<Sum>("fail", json!({})).await;
        assert_eq!(failed, Err(TestError::ToolFailed("no luck".into())));
        let not_a_sum = client.call_tool_as::<Sum>("tags", json!({})).await;
        assert!(
            matches!(&not_a_sum, Err(TestError::InvalidResult(m)) if m.contains("Sum")),
            "{not_a_sum:?}"
        );
    }
}

#[tokio::test]
async fn call_tool_as_reads_the_text_where_there_is_no_structured_content() {
    for version in [V2024_11_05, V2025_03_26] {
        let client = client(version).await;
        let raw = client
            .call_tool("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(raw.get("structuredContent"), None, "{version:?}");
        let sum: Sum = client
            .call_tool_as("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(sum, Sum { value: 3.0 });
        let tags: Vec<String> = client.call_tool_as("tags", json!({})).await.unwrap();
        assert_eq!(tags, ["red", "blue"]);
    }
}

#[tokio::test]
async fn resources_and_prompts_are_typed_in_both_eras() {
    for version in ERAS {
        let client = client(version).await;
        let motd = client.read_resource("motd://today").await.unwrap();
        assert_eq!(motd.text(), "Hello!", "{version:?}");
        assert_eq!(motd.contents[0].mime_type(), Some("text/plain"));
        assert_eq!(motd.blob(), None);
        let logo = client.read_resource("logo://png").await.unwrap();
        assert_eq!(logo.blob().unwrap(), b"\x89PNG");
        assert_eq!(logo.text(), "");
        let note = client.read_resource("notes://1").await.unwrap();
        assert_eq!(note.text(), "milk");
        assert_eq!(note.contents[0].uri(), "notes://1");

        let essay = client
            .get_prompt("essay", json!({"topic": "rivers"}))
            .await
            .unwrap();
        assert_eq!(essay.text(), "Write about rivers.\nGladly.");
        assert_eq!(essay.messages.len(), 2);
    }
}

#[tokio::test]
async fn lists_follow_every_page_in_both_eras() {
    for version in ERAS {
        let client = client(version).await;
        let tools: Vec<String> = client
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(
            tools,
            ["add", "tags", "fail", "count", "roots"],
            "{version:?}"
        );
        let resources: Vec<String> = client
            .list_resources()
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.uri)
            .collect();
        assert_eq!(resources, ["motd://today", "logo://png"]);
        let templates = client.list_resource_templates().await.unwrap();
        assert_eq!(templates.len(), 1);
        assert_eq!(templates[0].uri_template, "notes://{id}");
        let prompts: Vec<String> = client
            .list_prompts()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(prompts, ["essay", "broken", "picky"]);
    }
}

#[tokio::test]
async fn progress_is_collected_with_the_result_in_both_eras() {
    for version in ERAS {
        let client = client(version).await;
        let (result, progress) = client
            .call_with_progress("count", json!({"steps": 3}))
            .await
            .unwrap();
        assert_eq!(result.text(), "asked for progress: true", "{version:?}");
        let steps: Vec<(f64, Option<f64>, Option<&str>)> = progress
            .iter()
            .map(|p| (p.progress, p.total, p.message.as_deref()))
            .collect();
        assert_eq!(
            steps,
            [
                (1.0, Some(3.0), Some("step 1")),
                (2.0, Some(3.0), Some("step 2")),
                (3.0, Some(3.0), Some("step 3")),
            ],
            "{version:?}"
        );
        // Every update names the call's token, and none is left over for the next call.
        let token = &progress[0].progress_token;
        assert!(progress.iter().all(|p| &p.progress_token == token));
        let (_, none) = client
            .call_with_progress("count", json!({"steps": 0}))
            .await
            .unwrap();
        assert!(none.is_empty(), "{none:?}");
        // A plain typed call carries a token too, so a tool that reports progress works.
        let plain = client.call("count", json!({"steps": 2})).await.unwrap();
        assert_eq!(plain.text(), "asked for progress: true");
        // The raw call is sent as given: no token.
        let raw = client
            .call_tool("count", json!({"steps": 1}))
            .await
            .unwrap();
        assert_eq!(raw["content"][0]["text"], "asked for progress: false");
    }
}

/// Unknown tools, prompts and resources are `NotFound`, naming what was asked for, in
/// all five revisions; on the wire a missing resource is `-32002` until 2025-11-25 and
/// `-32602` from 2026-07-28.
#[tokio::test]
async fn not_found_is_the_same_error_in_every_revision() {
    for version in ProtocolVersion::ALL {
        let client = client(version).await;
        let tool = client.call("nope", json!({})).await.unwrap_err();
        assert_eq!(tool, TestError::NotFound("nope".into()), "{version:?}");
        let typed = client.call_tool_as::<Sum>("nope", json!({})).await;
        assert_eq!(typed, Err(TestError::NotFound("nope".into())));
        let prompt = client.get_prompt("nope", json!({})).await.unwrap_err();
        assert_eq!(prompt, TestError::NotFound("nope".into()), "{version:?}");
        // No resource or template has this URI.
        let unmatched = client.read_resource("other://x").await.unwrap_err();
        assert_eq!(unmatched, TestError::NotFound("other://x".into()));
        // The template matched; its reader said not found.
        let refused = client.read_resource("notes://7").await.unwrap_err();
        assert_eq!(refused, TestError::NotFound("notes://7".into()));

        let raw = client
            .request("resources/read", json!({"uri": "other://x"}))
            .await;
        let Err(CallError::Rpc(wire)) = raw else {
            panic!("{raw:?}")
        };
        let code = if version < V2026_07_28 {
            -32002
        } else {
            -32602
        };
        assert_eq!(wire.code, code, "{version:?}");
        assert_eq!(wire.data, Some(json!({"uri": "other://x"})));
    }
}

/// The data that tells an unknown tool or prompt from bad params, on the wire.
#[tokio::test]
async fn unknown_tools_and_prompts_are_named_in_the_error_data() {
    for version in ERAS {
        let client = client(version).await;
        for (method, params) in [
            ("tools/call", json!({"name": "nope", "arguments": {}})),
            ("prompts/get", json!({"name": "nope"})),
        ] {
            let answer = client.request(method, params).await;
            let Err(CallError::Rpc(error)) = answer else {
                panic!("{method}: {answer:?}")
            };
            assert_eq!(error.code, -32602, "{method} {version:?}");
            assert_eq!(error.data, Some(json!({"name": "nope"})), "{method}");
        }
    }
}

#[tokio::test]
async fn other_errors_are_the_same_in_every_revision() {
    for version in ProtocolVersion::ALL {
        let client = client(version).await;
        let missing = client.get_prompt("essay", json!({})).await.unwrap_err();
        assert!(
            matches!(&missing, TestError::InvalidParams(m) if m.contains("topic")),
            "{version:?}: {missing:?}"
        );
        let internal = client
            .get_prompt("broken", json!({"topic": "x"}))
            .await
            .unwrap_err();
        assert!(
            matches!(&internal, TestError::Internal(m) if m.contains("disk on fire")),
            "{version:?}: {internal:?}"
        );
        let own = client
            .get_prompt("picky", json!({"topic": "x"}))
            .await
            .unwrap_err();
        assert_eq!(own, TestError::Rpc(ErrorObject::new(-32099, "not today")));
        let invalid = client.read_resource("notes://x").await.unwrap_err();
        assert!(
            matches!(&invalid, TestError::InvalidParams(m) if m.contains("id must be a number")),
            "{version:?}: {invalid:?}"
        );
        let failed = client.read_resource("notes://boom").await.unwrap_err();
        assert!(
            matches!(&failed, TestError::Internal(m) if m.contains("disk on fire")),
            "{version:?}: {failed:?}"
        );
    }
}

/// Arguments that do not fit the schema: `-32602` up to 2025-06-18, an `isError` result
/// the model can read from 2025-11-25 (the spec changed; the TestClient shows it).
#[tokio::test]
async fn bad_arguments_follow_the_revision() {
    let old = client(V2025_06_18).await;
    let error = old.call("add", json!({"a": "one"})).await.unwrap_err();
    assert!(matches!(error, TestError::InvalidParams(_)), "{error:?}");
    let new = client(V2025_11_25).await;
    let result = new.call("add", json!({"a": "one"})).await.unwrap();
    assert!(result.is_error(), "{result:?}");
}

#[tokio::test]
async fn the_responder_answers_the_server_in_both_eras() {
    for version in ERAS {
        let client = TestClient::builder(&server())
            .version(version)
            .capabilities(json!({"roots": {}}))
            .responder(|method, _| match method {
                "roots/list" => Ok(json!({"roots": [{"uri": "file:///work"}]})),
                other => Err(ErrorObject::method_not_found(other)),
            })
            .connect()
            .await
            .unwrap();
        let roots = client.call("roots", json!({})).await.unwrap();
        assert_eq!(roots.text(), "file:///work", "{version:?}");
    }
}

/// Without a responder a stateless-era client cannot answer `input_required`: the typed
/// call says so instead of failing to read the result as a tool result.
#[tokio::test]
async fn input_required_without_a_responder_is_explained() {
    let client = TestClient::builder(&server())
        .capabilities(json!({"roots": {}}))
        .connect()
        .await
        .unwrap();
    let error = client.call("roots", json!({})).await.unwrap_err();
    assert!(
        matches!(&error, TestError::InvalidResult(m) if m.contains("responder")),
        "{error:?}"
    );
    let raw: Value = client.call_tool("roots", json!({})).await.unwrap();
    assert_eq!(raw["resultType"], "input_required");
}
