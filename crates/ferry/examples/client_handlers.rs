//! A client that answers the server's requests: sampling (a completion from the client's
//! model) and elicitation (a question for the user). The server's tool asks both while it
//! runs; the client's handlers answer, and the tool's result says what they answered.
//!
//!     cargo run -p ferry-mcp --example client_handlers
//!
//! Both sides are written once for both eras: in the session era the server sends
//! `elicitation/create` and `sampling/createMessage` requests; in the stateless era
//! (2026-07-28) the tool's call is answered `input_required` and Ferry's client answers
//! with the same handlers and retries by itself.

use ferry::client::{Client, ClientBuilder, ElicitationModes};
use ferry::engine::Transport;
use ferry::protocol::Era;
use ferry::protocol::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestFormParams,
    ElicitRequestParams, ElicitResult, ElicitationSchema, PrimitiveSchemaDefinition, Role,
    SamplingContent, SamplingContents, SamplingMessage, StringSchema,
};
use ferry::server::{Context, Server};
use serde_json::{Value, json};

// ---- The server: a tool that asks the user, then the model ----

async fn write_haiku(cx: Context) -> Result<String, String> {
    // Ask the user for a topic with a one-field form.
    let form = ElicitationSchema {
        properties: [(
            "topic".to_string(),
            PrimitiveSchemaDefinition::String(StringSchema {
                title: Some("Topic".into()),
                ..Default::default()
            }),
        )]
        .into_iter()
        .collect(),
        required: Some(vec!["topic".into()]),
        ..Default::default()
    };
    let answer = cx
        .elicit(ElicitRequestParams::Form(ElicitRequestFormParams {
            message: "What should the haiku be about?".into(),
            requested_schema: form,
            ..Default::default()
        }))
        .await
        .map_err(|e| e.to_string())?;
    // Declining or cancelling is the user's choice, not a failure.
    let topic = match (answer.action, answer.content) {
        (ElicitAction::Accept, Some(content)) => match content.get("topic") {
            Some(Value::String(topic)) => topic.clone(),
            _ => return Err("the form came back without a topic".into()),
        },
        _ => return Ok("No haiku today.".into()),
    };

    // Ask the client's model.
    let reply = cx
        .sample(CreateMessageRequestParams {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: SamplingContents::text(format!("Write a haiku about {topic}.")),
                meta: None,
            }],
            max_tokens: 60,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    let haiku = match reply.content.blocks().first() {
        Some(SamplingContent::Text(text)) => text.text.clone(),
        _ => return Err("the model answered without text".into()),
    };
    Ok(format!("{haiku}\n(by {})", reply.model))
}

// ---- The client: one handler per kind of request it accepts ----

/// The builder with the handlers; giving a handler declares the matching capability.
fn client_builder() -> ClientBuilder {
    Client::builder("haiku-app", "1.0.0")
        // Form elicitation only (`ElicitationModes::FormAndUrl` would accept URL mode too).
        .on_elicitation_with(ElicitationModes::Form, |request| async move {
            // A real client shows the message and a form built from the schema.
            println!("  elicitation: {}", request.message());
            Ok(ElicitResult::accept(json!({"topic": "the sea"})))
        })
        .on_sampling(|request| async move {
            // A real client asks its model, usually after the user approves.
            if let Some(message) = request.messages.first()
                && let Some(SamplingContent::Text(text)) = message.content.blocks().first()
            {
                println!("  sampling: {}", text.text);
            }
            Ok(CreateMessageResult::text(
                "example-model",
                "Grey waves fold and fold,\nsalt wind combs the empty beach,\nthe tide keeps its time.",
            )
            .stop_reason("endTurn"))
        })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("poet", "1.0.0")
        .tool(
            "write_haiku",
            "Write a haiku on a topic the user picks",
            write_haiku,
        )
        .build();
    for era in [Era::Session, Era::Stateless] {
        let (client_side, server_side) = Transport::pair(16);
        let _serving = server.serve(server_side);
        let client = client_builder().era(era).connect(client_side).await?;
        println!("-- {era:?} era ({})", client.version().as_str());
        let result = client.call_tool("write_haiku", json!({})).await?;
        for text in result.content.iter().filter_map(|block| block.as_text()) {
            println!("{text}");
        }
    }
    Ok(())
}
