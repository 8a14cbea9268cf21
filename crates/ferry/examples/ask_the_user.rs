//! A tool that asks the user through the client (elicitation), written once for both eras,
//! driven by the in-memory `TestClient`: a session-era client gets an
//! `elicitation/create` request; a stateless-era client gets `input_required` and retries.

use std::sync::Arc;

use ferry::protocol::ProtocolVersion;
use ferry::protocol::types::{ElicitRequestFormParams, ElicitRequestParams, ElicitationSchema};
use ferry::server::{Context, Server, TestClient};
use serde_json::{Value, json};

/// No arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

async fn greet(_: NoArgs, cx: Context) -> Result<String, String> {
    let answer = cx
        .elicit(ElicitRequestParams::Form(ElicitRequestFormParams {
            message: "What is your name?".into(),
            requested_schema: ElicitationSchema::default(),
            ..Default::default()
        }))
        .await
        .map_err(|e| e.to_string())?;
    let name = answer
        .content
        .and_then(|c| c.get("name").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "stranger".into());
    Ok(format!("Hello, {name}!"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = Server::builder("greeter", "1.0.0")
        .tool("greet", "Greet the user by name", greet)
        .build();
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let client = TestClient::connect_with(
            &server,
            version,
            json!({"elicitation": {}}),
            Some(Arc::new(|_method: &str, _params: Value| {
                Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
            })),
        )
        .await
        .expect("connect");
        let result = client.call_tool("greet", json!({})).await.expect("call");
        println!("{}: {}", version.as_str(), result["content"][0]["text"]);
    }
}
