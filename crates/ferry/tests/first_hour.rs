//! The traps a new user meets in the first hour, each closed: tools without arguments,
//! non-object input schemas and missing state refused when the server is built, `State<T>`
//! as a `T`, resource readers with extractors, user errors of prompts and resources with
//! their own codes, and typed tool results on the client.

use ferry::client::{Client, ClientError};
use ferry::engine::{CallError, Transport};
use ferry::protocol::ProtocolVersion::{self, *};
use ferry::protocol::jsonrpc::ErrorObject;
use ferry::protocol::types::{
    PromptMessage, Resource, ResourceContents, ResourceTemplate, Tool, ToolAnnotations,
};
use ferry::schemars::JsonSchema;
use ferry::server::{Json, ReadResult, ResourceError, Server, State, TemplateVars, TestClient};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Revisions of both eras and of both argument-error styles.
const VERSIONS: [ProtocolVersion; 3] = [V2025_06_18, V2025_11_25, V2026_07_28];

struct Notes(Vec<String>);

async fn count(notes: State<Notes>) -> String {
    // `State<Notes>` derefs to `Notes`.
    notes.0.len().to_string()
}

async fn now() -> String {
    "noon".into()
}

async fn unit_args(_: ()) -> String {
    "unit".into()
}

async fn half(args: Pair) -> f64 {
    (args.a + args.b) / 2.0
}

async fn all_notes(notes: State<Notes>) -> ReadResult {
    Ok(vec![ResourceContents::text(
        "notes://all",
        "text/plain",
        notes.0.join("\n"),
    )])
}

async fn one_note(uri: String, vars: TemplateVars, notes: State<Notes>) -> ReadResult {
    let index: usize = vars["id"].parse().map_err(|_| {
        ResourceError::InvalidParams(format!("note id {:?} is not a number", vars["id"]))
    })?;
    let note = notes
        .0
        .get(index)
        .ok_or_else(|| ResourceError::NotFound(uri.clone()))?;
    Ok(vec![ResourceContents::text(
        uri,
        "text/plain",
        note.clone(),
    )])
}

#[derive(Deserialize, JsonSchema)]
struct Topic {
    /// What to write about.
    topic: String,
}

async fn essay(args: Topic) -> Result<Vec<PromptMessage>, ErrorObject> {
    if args.topic.is_empty() {
        return Err(ErrorObject::invalid_params("topic must not be empty"));
    }
    Ok(vec![PromptMessage::user(format!(
        "Write about {}",
        args.topic
    ))])
}

async fn broken(_: Topic) -> Result<String, std::io::Error> {
    Err(std::io::Error::other("disk on fire"))
}

#[derive(Deserialize, JsonSchema)]
struct Pair {
    a: f64,
    b: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
struct Sum {
    value: f64,
}

async fn add(args: Pair) -> Json<Sum> {
    Json(Sum {
        value: args.a + args.b,
    })
}

fn server() -> Server {
    Server::builder("first-hour", "1")
        .state(Notes(vec!["first".into(), "second".into()]))
        .tool("count", "Count the notes", count)
        .tool("now", "The time", now)
        .tool("unit", "Unit arguments", unit_args)
        .tool("half", "Half the sum", half)
        .tool_with(
            Tool::described("add", "Add")
                .title("Add two numbers")
                .annotations(ToolAnnotations::new().read_only(true).idempotent(true)),
            add,
        )
        .resource(
            Resource::new("notes://all", "all").mime_type("text/plain"),
            all_notes,
        )
        .resource_template(ResourceTemplate::new("notes://{id}", "note"), one_note)
        .prompt("essay", "An essay", essay)
        .prompt("broken", "Fails", broken)
        .build()
}

fn error_of(result: Result<Value, CallError>) -> ErrorObject {
    match result {
        Err(CallError::Rpc(error)) => error,
        other => panic!("expected an error response, got {other:?}"),
    }
}

#[tokio::test]
async fn tools_without_arguments_are_objects_and_callable() {
    let server = server();
    for version in VERSIONS {
        let client = TestClient::connect(&server, version).await.unwrap();
        let list = client.request("tools/list", json!({})).await.unwrap();
        for name in ["count", "now", "unit"] {
            let tool = list["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name)
                .unwrap();
            assert_eq!(
                tool["inputSchema"],
                json!({"type": "object", "additionalProperties": false}),
                "{version} {name}"
            );
        }
        let counted = client.call_tool("count", json!({})).await.unwrap();
        assert_eq!(counted["content"][0]["text"], "2", "{version}");
        let now = client
            .request("tools/call", json!({"name": "now"}))
            .await
            .unwrap();
        assert_eq!(now["content"][0]["text"], "noon", "{version}");
        let unit = client.call_tool("unit", json!({})).await.unwrap();
        assert_eq!(unit["content"][0]["text"], "unit", "{version}");
        // A number is a result too.
        let half = client
            .call_tool("half", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(half["content"][0]["text"], "1.5", "{version}");

        // An argument given to a tool that takes none is an argument error.
        let extra = client.call_tool("now", json!({"x": 1})).await;
        if version >= V2025_11_25 {
            let result = extra.unwrap();
            assert_eq!(result["isError"], true, "{version}");
            let text = result["content"][0]["text"].as_str().unwrap();
            assert!(text.contains("takes no arguments"), "{version}: {text}");
        } else {
            let error = error_of(extra);
            assert_eq!(error.code, -32602, "{version}");
            assert!(error.message.contains("takes no arguments"), "{error}");
        }
        client.close().await;
    }
}

#[test]
fn a_tool_whose_arguments_are_not_an_object_does_not_build() {
    async fn shout(text: String) -> String {
        text.to_uppercase()
    }
    let error = Server::builder("x", "1")
        .tool("shout", "Shout", shout)
        .try_build()
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains(r#"tool "shout"'s input schema must have "type": "object""#),
        "{message}"
    );
    assert!(message.contains(r#"not "string""#), "{message}");
}

#[test]
fn missing_state_is_reported_for_every_handler_when_built() {
    struct Missing;
    async fn tool(_: State<Missing>) -> String {
        String::new()
    }
    async fn prompt(_: Topic, _: State<Missing>) -> String {
        String::new()
    }
    async fn read(_: State<Missing>) -> ReadResult {
        Ok(vec![])
    }
    let error = Server::builder("x", "1")
        .tool("t", "T", tool)
        .prompt("p", "P", prompt)
        .resource(Resource::new("x://r", "r"), read)
        .try_build()
        .unwrap_err();
    let problems = error.problems();
    assert_eq!(problems.len(), 3, "{problems:?}");
    for (problem, handler) in
        problems
            .iter()
            .zip(["tool \"t\"", "prompt \"p\"", "resource \"x://r\""])
    {
        assert!(problem.starts_with(handler), "{problem}");
        assert!(
            problem.contains("State<first_hour::") && problem.contains("Missing>"),
            "{problem}"
        );
    }
    // Given the state, the same server builds.
    Server::builder("x", "1")
        .tool("t", "T", tool)
        .state(Missing)
        .build();
}

#[test]
#[should_panic(expected = "tool \"t\" is registered twice")]
fn build_panics_naming_the_mistake() {
    Server::builder("x", "1")
        .tool("t", "T", now)
        .tool("t", "T", now)
        .build();
}

#[test]
#[should_panic(expected = "no first_hour::Notes was given")]
fn adding_a_tool_at_runtime_checks_state_too() {
    let server = Server::builder("x", "1").build();
    server.add_tool("count", "Count", count);
}

#[tokio::test]
async fn resource_readers_take_extractors_and_answer_user_errors() {
    let server = server();
    for version in VERSIONS {
        let client = TestClient::connect(&server, version).await.unwrap();
        let all = client
            .request("resources/read", json!({"uri": "notes://all"}))
            .await
            .unwrap();
        assert_eq!(all["contents"][0]["text"], "first\nsecond", "{version}");
        let one = client
            .request("resources/read", json!({"uri": "notes://1"}))
            .await
            .unwrap();
        assert_eq!(one["contents"][0]["text"], "second", "{version}");
        let bad = error_of(
            client
                .request("resources/read", json!({"uri": "notes://x"}))
                .await,
        );
        assert_eq!(bad.code, -32602, "{version}");
        assert!(
            bad.message.ends_with(r#"note id "x" is not a number"#),
            "{bad}"
        );
        let missing = error_of(
            client
                .request("resources/read", json!({"uri": "notes://9"}))
                .await,
        );
        let not_found = if version >= V2026_07_28 {
            -32602
        } else {
            -32002
        };
        assert_eq!(missing.code, not_found, "{version}");
        client.close().await;
    }
}

#[tokio::test]
async fn prompts_answer_their_own_error_codes() {
    let server = server();
    for version in VERSIONS {
        let client = TestClient::connect(&server, version).await.unwrap();
        let ok = client
            .request(
                "prompts/get",
                json!({"name": "essay", "arguments": {"topic": "rust"}}),
            )
            .await
            .unwrap();
        assert_eq!(ok["messages"][0]["content"]["text"], "Write about rust");
        let user_error = error_of(
            client
                .request(
                    "prompts/get",
                    json!({"name": "essay", "arguments": {"topic": ""}}),
                )
                .await,
        );
        assert_eq!(user_error.code, -32602, "{version}");
        assert!(
            user_error.message.ends_with("topic must not be empty"),
            "{user_error}"
        );
        let failure = error_of(
            client
                .request(
                    "prompts/get",
                    json!({"name": "broken", "arguments": {"topic": "x"}}),
                )
                .await,
        );
        assert_eq!(failure.code, -32603, "{version}");
        assert!(failure.message.ends_with("disk on fire"), "{failure}");
        client.close().await;
    }
}

#[tokio::test]
async fn typed_tool_results_are_validated_against_the_output_schema() {
    // The honest tool's schema says `value` is a number; the liar's says the same while
    // its result has a string there.
    async fn liar(_: Pair) -> ferry::protocol::types::CallToolResult {
        ferry::protocol::types::CallToolResult {
            structured_content: Some(json!({"value": "three"})),
            ..Default::default()
        }
    }
    async fn failing(_: Pair) -> Result<Json<Sum>, String> {
        Err("no numbers today".into())
    }
    let schema = ferry::schemars::schema_for!(Sum);
    let server = Server::builder("typed", "1")
        .tool("add", "Add", add)
        .tool_with(
            Tool::described("liar", "Lies").output_schema(schema.as_object().cloned().unwrap()),
            liar,
        )
        .tool("failing", "Fails", failing)
        .tool("plain", "No structured content", now)
        .build();
    for version in [V2025_06_18, V2026_07_28] {
        let (client_side, server_side) = Transport::pair(64);
        let _serving = server.serve(server_side);
        let client = Client::builder("t", "1")
            .version(version)
            .connect(client_side)
            .await
            .unwrap();
        let sum: Sum = client
            .call_tool_as("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(sum, Sum { value: 3.0 });
        let lie = client
            .call_tool_as::<Sum>("liar", json!({"a": 1, "b": 2}))
            .await
            .unwrap_err();
        assert!(
            matches!(&lie, ClientError::InvalidResult(m) if m.contains("does not match its outputSchema")),
            "{lie}"
        );
        let failed = client
            .call_tool_as::<Sum>("failing", json!({"a": 1, "b": 2}))
            .await
            .unwrap_err();
        assert!(
            matches!(&failed, ClientError::ToolFailed(m) if m == "no numbers today"),
            "{failed}"
        );
        let plain = client
            .call_tool_as::<Sum>("plain", json!({}))
            .await
            .unwrap_err();
        assert!(
            matches!(&plain, ClientError::InvalidResult(m) if m.contains("no structuredContent")),
            "{plain}"
        );
        let wrong_type = client
            .call_tool_as::<Vec<u8>>("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap_err();
        assert!(
            matches!(&wrong_type, ClientError::InvalidResult(m) if m.contains("is not a")),
            "{wrong_type}"
        );
    }
}
