//! Asking the client for input (sampling, roots, elicitation) in both eras: real requests
//! in the session era; `input_required` round trips with a sealed `requestState` in the
//! stateless era; missing capabilities; tampered, foreign and wrong answers.

use std::sync::Arc;

use ferry::engine::CallError;
use ferry::protocol::ProtocolVersion::{self, *};
use ferry::protocol::types::{
    CreateMessageRequestParams, ElicitRequestFormParams, ElicitRequestParams, ElicitationSchema,
    Role, SamplingContent, SamplingContents, SamplingMessage, TextContent,
};
use ferry::server::{Context, Server, TestClient, TestResponder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Topic {
    /// What to ask about.
    topic: String,
}

/// Asks the user's name, then the model, then the roots; reports all three.
async fn interview(args: Topic, cx: Context) -> Result<String, String> {
    let name = cx
        .elicit(ElicitRequestParams::Form(ElicitRequestFormParams {
            message: "Your name?".into(),
            requested_schema: ElicitationSchema::default(),
            ..Default::default()
        }))
        .await
        .map_err(|e| e.to_string())?;
    let name = name
        .content
        .and_then(|c| c.get("name").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "nobody".into());
    let answer = cx
        .sample(CreateMessageRequestParams {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: SamplingContents::One(SamplingContent::Text(TextContent {
                    text: format!("About {}?", args.topic),
                    annotations: None,
                    meta: None,
                })),
                meta: None,
            }],
            max_tokens: 10,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    let roots = cx.list_roots().await.map_err(|e| e.to_string())?;
    Ok(format!(
        "{name} / {} / {} roots",
        serde_json::to_value(&answer.content).unwrap_or_default()["text"]
            .as_str()
            .unwrap_or("?"),
        roots.roots.len()
    ))
}

fn server() -> Server {
    Server::builder("input", "1.0.0")
        .tool("interview", "Asks three things", interview)
        .build()
}

fn responder() -> TestResponder {
    Arc::new(|method: &str, params: Value| match method {
        "elicitation/create" => Ok(json!({"action": "accept", "content": {"name": "Ada"}})),
        "sampling/createMessage" => {
            let asked = params["messages"][0]["content"]["text"].clone();
            Ok(
                json!({"role": "assistant", "content": {"type": "text", "text": asked},
                      "model": "test-model"}),
            )
        }
        "roots/list" => Ok(json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]})),
        other => panic!("unexpected {other}"),
    })
}

fn all_capabilities() -> Value {
    json!({"sampling": {}, "roots": {}, "elicitation": {}})
}

async fn client(version: ProtocolVersion, capabilities: Value) -> TestClient {
    TestClient::connect_with(&server(), version, capabilities, Some(responder()))
        .await
        .expect("connect")
}

fn code(error: CallError) -> (i64, Option<Value>) {
    match error {
        CallError::Rpc(e) => (e.code, e.data),
        other => panic!("expected an error response, got {other:?}"),
    }
}

#[tokio::test]
async fn the_same_handler_gets_its_answers_in_both_eras() {
    for version in [V2025_06_18, V2025_11_25, V2026_07_28] {
        let client = client(version, all_capabilities()).await;
        let result = client
            .call_tool("interview", json!({"topic": "tides"}))
            .await
            .unwrap();
        assert_eq!(
            result["content"][0]["text"], "Ada / About tides? / 2 roots",
            "{version:?}: {result}"
        );
        assert!(result.get("isError").is_none_or(|e| e == false));
    }
}

#[tokio::test]
async fn session_era_refuses_what_the_client_did_not_declare() {
    let client = client(V2025_06_18, json!({"sampling": {}})).await;
    let result = client
        .call_tool("interview", json!({"topic": "x"}))
        .await
        .unwrap();
    assert_eq!(result["isError"], true);
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("elicitation"),
        "{result}"
    );
}

/// One stateless round: the `input_required` result of `params`.
async fn round(client: &TestClient, params: Value) -> Value {
    let result = client.request_once("tools/call", params).await.unwrap();
    assert_eq!(result["resultType"], "input_required", "{result}");
    result
}

#[tokio::test]
async fn stateless_round_trips_ask_one_thing_at_a_time() {
    let client = client(V2026_07_28, all_capabilities()).await;
    let call = json!({"name": "interview", "arguments": {"topic": "tides"}});
    let first = round(&client, call.clone()).await;
    let requests = first["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests["input-0"]["method"], "elicitation/create");
    let state = first["requestState"].as_str().unwrap().to_owned();
    assert!(
        !state.contains("Ada") && !state.contains("interview"),
        "opaque"
    );

    let mut retry = call.clone();
    retry["requestState"] = json!(state);
    retry["inputResponses"] =
        json!({"input-0": {"action": "accept", "content": {"name": "Grace"}}});
    let second = round(&client, retry.clone()).await;
    assert_eq!(
        second["inputRequests"]["input-1"]["method"],
        "sampling/createMessage"
    );
    assert_eq!(
        second["inputRequests"]["input-1"]["params"]["messages"][0]["content"]["text"],
        "About tides?"
    );

    // A retry that leaves the question unanswered is asked it again.
    let mut unanswered = call.clone();
    unanswered["requestState"] = second["requestState"].clone();
    let again = round(&client, unanswered).await;
    assert!(again["inputRequests"].get("input-1").is_some(), "{again}");

    let mut third = call.clone();
    third["requestState"] = second["requestState"].clone();
    third["inputResponses"] = json!({"input-1": {"role": "assistant",
        "content": {"type": "text", "text": "Moon"}, "model": "m"}});
    let third = round(&client, third).await;
    assert_eq!(third["inputRequests"]["input-2"]["method"], "roots/list");

    let mut last = call.clone();
    last["requestState"] = third["requestState"].clone();
    last["inputResponses"] = json!({"input-2": {"roots": [{"uri": "file:///x"}]},
        "unasked": {"roots": []}});
    let done = client.request_once("tools/call", last).await.unwrap();
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["content"][0]["text"], "Grace / Moon / 1 roots");
}

#[tokio::test]
async fn stateless_refuses_tampered_foreign_and_mismatched_state() {
    let client = client(V2026_07_28, all_capabilities()).await;
    let call = json!({"name": "interview", "arguments": {"topic": "tides"}});
    let first = round(&client, call.clone()).await;
    let state = first["requestState"].as_str().unwrap().to_owned();

    let mut tampered = call.clone();
    let mut chars: Vec<char> = state.chars().collect();
    let last = chars.len() - 2;
    chars[last] = if chars[last] == 'A' { 'B' } else { 'A' };
    tampered["requestState"] = json!(chars.into_iter().collect::<String>());
    let error = client
        .request_once("tools/call", tampered)
        .await
        .unwrap_err();
    assert_eq!(code(error).0, -32602);

    // The same state on a request with other arguments.
    let mut other = json!({"name": "interview", "arguments": {"topic": "stars"}});
    other["requestState"] = json!(state);
    let error = client.request_once("tools/call", other).await.unwrap_err();
    assert_eq!(code(error).0, -32602);

    // Key order of the arguments does not matter.
    let mut reordered = json!({"arguments": {"topic": "tides"}, "name": "interview"});
    reordered["requestState"] = json!(state);
    round(&client, reordered).await;

    // A state from another server (another key).
    let other_server = TestClient::connect_with(
        &server(),
        V2026_07_28,
        all_capabilities(),
        Some(responder()),
    )
    .await
    .unwrap();
    let mut foreign = call.clone();
    foreign["requestState"] = json!(state);
    let error = other_server
        .request_once("tools/call", foreign)
        .await
        .unwrap_err();
    assert_eq!(code(error).0, -32602);

    // An answer of the wrong kind.
    let mut wrong = call.clone();
    wrong["requestState"] = json!(state);
    wrong["inputResponses"] = json!({"input-0": {"roots": []}});
    let error = client.request_once("tools/call", wrong).await.unwrap_err();
    assert_eq!(code(error).0, -32602);
}

#[tokio::test]
async fn a_shared_key_resumes_on_another_instance() {
    let key = [42; 32];
    let make = || {
        Server::builder("input", "1.0.0")
            .request_state_key(key)
            .tool("interview", "Asks three things", interview)
            .build()
    };
    let a = TestClient::connect_with(&make(), V2026_07_28, all_capabilities(), None)
        .await
        .unwrap();
    let b = TestClient::connect_with(&make(), V2026_07_28, all_capabilities(), None)
        .await
        .unwrap();
    let call = json!({"name": "interview", "arguments": {"topic": "tides"}});
    let first = round(&a, call.clone()).await;
    let mut retry = call;
    retry["requestState"] = first["requestState"].clone();
    retry["inputResponses"] = json!({"input-0": {"action": "decline"}});
    let second = round(&b, retry).await;
    assert!(second["inputRequests"].get("input-1").is_some());
}

#[tokio::test]
async fn stateless_missing_capability_is_32021() {
    let client = client(V2026_07_28, json!({"sampling": {}, "roots": {}})).await;
    let error = client
        .request_once(
            "tools/call",
            json!({"name": "interview", "arguments": {"topic": "x"}}),
        )
        .await
        .unwrap_err();
    let (code, data) = code(error);
    assert_eq!(code, -32021);
    assert_eq!(
        data.unwrap()["requiredCapabilities"],
        json!({"elicitation": {}})
    );
}
