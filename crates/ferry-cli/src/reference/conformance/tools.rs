//! The tools of the `tools-*`, `elicitation-sep1034-defaults`, `elicitation-sep1330-enums`,
//! `json-schema-2020-12` and `server-sse-polling` scenarios.

use std::time::Duration;

use ferry::protocol::types::{
    AudioContent, CallToolResult, ContentBlock, CreateMessageRequestParams, ElicitAction,
    ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ElicitationSchema,
    EmbeddedResource, ImageContent, JsonObject, LoggingLevel, ResourceContents, Role,
    SamplingContent, SamplingContents, SamplingMessage, Tool,
};
use ferry::server::{ServerBuilder, ToolContext};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{PNG_BASE64, WAV_BASE64, forms};

/// The pause between the steps of the logging and progress tools (the suite: "~50ms").
const STEP: Duration = Duration::from_millis(50);

/// How long `test_reconnection` works before it answers: three times
/// [`super::SSE_POLL_AFTER`], so over HTTP its POST stream is closed first and the client
/// gets the answer on the resumed stream.
pub(super) const RECONNECTION_PAUSE: Duration = Duration::from_millis(750);

/// The three messages `test_tool_with_logging` logs at `info`, in order.
const LOG_MESSAGES: [&str; 3] = [
    "Tool execution started",
    "Tool processing data",
    "Tool execution completed",
];

/// The text of `test_error_handling`'s `isError` result.
const ERROR_TEXT: &str = "This tool intentionally returns an error for testing";

/// The arguments of a tool that takes none.
#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// The arguments of `test_sampling`.
#[derive(Deserialize, JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the LLM.
    prompt: String,
}

/// The arguments of `test_elicitation`.
#[derive(Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

/// The input schema of `json_schema_2020_12_tool`, verbatim from the suite (SEP-1613):
/// `$schema`, `$defs` with a `$ref`, and `additionalProperties: false` must survive listing.
fn json_schema_2020_12() -> JsonObject {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" }
                }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" }
        },
        "additionalProperties": false
    });
    match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// Register every tool the scenarios call.
pub(super) fn register(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            "test_simple_text",
            "Tests simple text content response",
            |_: NoArgs, _cx: ToolContext| async { "This is a simple text response for testing." },
        )
        .tool(
            "test_image_content",
            "Tests image content response",
            |_: NoArgs, _cx: ToolContext| async { CallToolResult::success(vec![image()]) },
        )
        .tool(
            "test_audio_content",
            "Tests audio content response",
            |_: NoArgs, _cx: ToolContext| async {
                CallToolResult::success(vec![ContentBlock::Audio(AudioContent {
                    data: WAV_BASE64.into(),
                    mime_type: "audio/wav".into(),
                    ..Default::default()
                })])
            },
        )
        .tool(
            "test_embedded_resource",
            "Tests embedded resource content response",
            |_: NoArgs, _cx: ToolContext| async {
                CallToolResult::success(vec![embedded(ResourceContents::text(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                ))])
            },
        )
        .tool(
            "test_multiple_content_types",
            "Tests response with multiple content types (text, image, resource)",
            |_: NoArgs, _cx: ToolContext| async {
                CallToolResult::success(vec![
                    ContentBlock::text("Multiple content types test:"),
                    image(),
                    embedded(ResourceContents::text(
                        "test://mixed-content-resource",
                        "application/json",
                        r#"{"test":"data","value":123}"#,
                    )),
                ])
            },
        )
        .tool(
            "test_tool_with_logging",
            "Tests tool that emits log messages during execution",
            with_logging,
        )
        .tool(
            "test_tool_with_progress",
            "Tests tool that reports progress notifications",
            with_progress,
        )
        .tool(
            "test_error_handling",
            "Tests error response handling",
            |_: NoArgs, _cx: ToolContext| async { Err::<String, _>(ERROR_TEXT) },
        )
        .tool(
            "test_sampling",
            "Tests server-initiated sampling (LLM completion request)",
            sampling,
        )
        .tool(
            "test_elicitation",
            "Tests server-initiated elicitation (user input request)",
            |args: ElicitationArgs, cx: ToolContext| async move {
                let answer = elicit(&cx, args.message, forms::contact_form()).await?;
                Ok::<_, String>(format!("User response: {}", describe(&answer)))
            },
        )
        .tool(
            "test_elicitation_sep1034_defaults",
            "Tests elicitation with default values per SEP-1034",
            |_: NoArgs, cx: ToolContext| async move {
                let message = "Please review and update the form fields with defaults";
                let answer = elicit(&cx, message.into(), forms::defaults_form()).await?;
                Ok::<_, String>(format!("Elicitation completed: {}", describe(&answer)))
            },
        )
        .tool(
            "test_elicitation_sep1330_enums",
            "Tests elicitation with enum schema improvements per SEP-1330",
            |_: NoArgs, cx: ToolContext| async move {
                let message = "Please select options from the enum fields";
                let answer = elicit(&cx, message.into(), forms::enums_form()).await?;
                Ok::<_, String>(format!("Elicitation completed: {}", describe(&answer)))
            },
        )
        .raw_tool(
            Tool {
                description: Some("Tool with JSON Schema 2020-12 features".into()),
                ..Tool::new("json_schema_2020_12_tool", json_schema_2020_12())
            },
            |args: JsonObject, _cx: ToolContext| async move {
                format!(
                    "JSON Schema 2020-12 tool called with: {}",
                    Value::Object(args)
                )
            },
        )
        .tool(
            "test_reconnection",
            "Tests SSE stream disconnection and client reconnection (SEP-1699): over HTTP the \
             server closes the stream mid-call and sends the result after the client reconnects.",
            |_: NoArgs, _cx: ToolContext| async {
                tokio::time::sleep(RECONNECTION_PAUSE).await;
                "Reconnection test completed successfully. If you received this, the client \
                 properly reconnected after stream closure."
            },
        )
}

/// The test image as a content block.
fn image() -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data: PNG_BASE64.into(),
        mime_type: "image/png".into(),
        ..Default::default()
    })
}

/// `contents` as an embedded resource block.
fn embedded(contents: ResourceContents) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: contents,
        annotations: None,
        meta: None,
    })
}

/// `test_tool_with_logging`: three `info` messages 50 ms apart.
async fn with_logging(_: NoArgs, cx: ToolContext) -> &'static str {
    for (i, message) in LOG_MESSAGES.into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(STEP).await;
        }
        cx.log(LoggingLevel::Info, Some("conformance"), message)
            .await;
    }
    "Tool with logging executed successfully"
}

/// `test_tool_with_progress`: progress 0, 50 and 100 of 100, 50 ms apart, when the client
/// sent a progress token; the same pauses without one.
async fn with_progress(_: NoArgs, cx: ToolContext) -> String {
    for (i, step) in [0u8, 50, 100].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(STEP).await;
        }
        if let Some(progress) = &cx.progress {
            // A report only fails once the request is over or the client gone: nobody to
            // tell, and the result says how far it went anyway.
            let message = format!("Completed step {step} of 100");
            let _ = progress
                .report(f64::from(step), Some(100.0), Some(message))
                .await;
        }
    }
    match &cx.progress {
        Some(progress) => format!(
            "Progress 100/100 reported with token {}",
            serde_json::to_string(progress.token()).unwrap_or_default()
        ),
        None => "Done (no progress token, so no progress reported)".into(),
    }
}

/// `test_sampling`: the prompt to the client's LLM (`maxTokens` 100), its answer back.
async fn sampling(args: SamplingArgs, cx: ToolContext) -> Result<String, String> {
    let request = CreateMessageRequestParams {
        messages: vec![SamplingMessage {
            role: Role::User,
            content: SamplingContents::text(args.prompt),
            meta: None,
        }],
        max_tokens: 100,
        ..Default::default()
    };
    let answer = cx
        .sample(request)
        .await
        .map_err(|e| format!("Sampling failed: {e}"))?;
    let text = answer
        .content
        .blocks()
        .iter()
        .find_map(|block| match block {
            SamplingContent::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .unwrap_or("No response");
    Ok(format!("LLM response: {text}"))
}

/// Ask the user to fill `schema` (form mode).
async fn elicit(
    cx: &ToolContext,
    message: String,
    schema: ElicitationSchema,
) -> Result<ElicitResult, String> {
    let request = ElicitRequestParams::Form(ElicitRequestFormParams {
        message,
        requested_schema: schema,
        ..Default::default()
    });
    cx.elicit(request)
        .await
        .map_err(|e| format!("Elicitation failed: {e}"))
}

/// `action=<action>, content=<JSON>`, as the suite's elicitation tools answer.
fn describe(answer: &ElicitResult) -> String {
    let action = match answer.action {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        ElicitAction::Cancel => "cancel",
    };
    let content = answer.content.clone().unwrap_or_default();
    let content = serde_json::to_string(&content).unwrap_or_default();
    format!("action={action}, content={content}")
}
