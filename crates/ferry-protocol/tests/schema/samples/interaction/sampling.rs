//! Samples: sampling (`sampling/createMessage`): model preferences and hints, sampling
//! messages and their content blocks (tool use and tool results from 2025-11-25), tools and
//! tool choice, in both eras.

use ferry_protocol::ProtocolVersion::*;
use ferry_protocol::methods::ServerRequest;
use ferry_protocol::types::*;
use serde_json::json;

use crate::schema::Sample;
use crate::schema::samples::support::{
    annotations, client_result, input_request, input_response, meta, object, progress_meta,
    request_with_meta, result_meta, server_request,
};

const SESSION: (
    ferry_protocol::ProtocolVersion,
    ferry_protocol::ProtocolVersion,
) = (V2024_11_05, V2025_11_25);

fn text(text: &str) -> SamplingContent {
    SamplingContent::Text(TextContent::new(text))
}

fn image() -> SamplingContent {
    SamplingContent::Image(ImageContent {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
        annotations: Some(annotations()),
        meta: Some(meta()),
    })
}

fn audio() -> SamplingContent {
    SamplingContent::Audio(AudioContent {
        data: "UklGRg==".into(),
        mime_type: "audio/wav".into(),
        annotations: None,
        meta: None,
    })
}

fn tool_use() -> SamplingContent {
    SamplingContent::ToolUse(ToolUseContent {
        id: "call_1".into(),
        name: "get_weather".into(),
        input: object(json!({"city": "Paris"})),
        meta: None,
    })
}

fn tool_result() -> SamplingContent {
    SamplingContent::ToolResult(ToolResultContent {
        tool_use_id: "call_1".into(),
        content: vec![ContentBlock::text("18°C, sunny")],
        structured_content: Some(json!({"temperature": 18, "conditions": "sunny"})),
        is_error: Some(false),
        meta: Some(meta()),
    })
}

fn user(content: SamplingContent) -> SamplingMessage {
    SamplingMessage {
        role: Role::User,
        content: SamplingContents::One(content),
        meta: None,
    }
}

fn weather_tool() -> Tool {
    Tool {
        description: Some("Current weather in a city".into()),
        ..Tool::new(
            "get_weather",
            object(json!({
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"]
            })),
        )
    }
}

fn params_minimal() -> CreateMessageRequestParams {
    CreateMessageRequestParams {
        messages: vec![user(text("What is the capital of France?"))],
        max_tokens: 100,
        ..Default::default()
    }
}

/// Every member every revision has.
fn params_full(include_context: IncludeContext) -> CreateMessageRequestParams {
    CreateMessageRequestParams {
        messages: vec![
            user(text("Describe this picture")),
            user(image()),
            SamplingMessage {
                role: Role::Assistant,
                content: SamplingContents::One(text("It is a cat.")),
                meta: Some(meta()),
            },
        ],
        model_preferences: Some(ModelPreferences {
            hints: Some(vec![
                ModelHint {
                    name: Some("claude-3-sonnet".into()),
                },
                ModelHint::default(),
            ]),
            cost_priority: Some(0.3),
            speed_priority: Some(0.8),
            intelligence_priority: Some(0.5),
        }),
        system_prompt: Some("You are a helpful assistant.".into()),
        include_context: Some(include_context),
        temperature: Some(0.7),
        max_tokens: 400,
        stop_sequences: Some(vec!["\n\nHuman:".into()]),
        metadata: Some(object(json!({"provider": {"top_k": 40}}))),
        // 2025-11-25 only; omitted elsewhere.
        task: Some(TaskMetadata { ttl: Some(60_000) }),
        ..Default::default()
    }
}

/// A sampling round with tools (from 2025-11-25): the model called a tool, the server
/// answered it.
fn params_with_tools(mode: Option<ToolChoiceMode>) -> CreateMessageRequestParams {
    CreateMessageRequestParams {
        messages: vec![
            user(text("What's the weather in Paris?")),
            SamplingMessage {
                role: Role::Assistant,
                content: SamplingContents::Many(vec![text("Let me check."), tool_use()]),
                meta: None,
            },
            SamplingMessage {
                role: Role::User,
                content: SamplingContents::Many(vec![tool_result()]),
                meta: Some(meta()),
            },
        ],
        tools: Some(vec![weather_tool()]),
        tool_choice: Some(ToolChoice { mode }),
        ..params_minimal()
    }
}

fn result_minimal() -> CreateMessageResult {
    CreateMessageResult {
        role: Role::Assistant,
        content: SamplingContents::One(text("Paris.")),
        model: "claude-3-sonnet-20240307".into(),
        stop_reason: None,
        meta: None,
    }
}

fn result_tool_use() -> CreateMessageResult {
    CreateMessageResult {
        content: SamplingContents::Many(vec![text("Let me check."), tool_use()]),
        stop_reason: Some("toolUse".into()),
        meta: Some(result_meta()),
        ..result_minimal()
    }
}

pub fn samples() -> Vec<Sample> {
    let mut all = objects();
    all.extend(session_requests());
    all.extend(input_requests());
    all.extend(results());
    all
}

fn objects() -> Vec<Sample> {
    let block: &[&str] = &["SamplingMessageContentBlock"];
    let message: &[&str] = &["SamplingMessage"];
    let choice = |mode| ToolChoice { mode: Some(mode) };
    vec![
        Sample::object(
            "model hint",
            &["ModelHint"],
            ModelHint {
                name: Some("claude".into()),
            },
        ),
        Sample::object("model hint, empty", &["ModelHint"], ModelHint::default()),
        Sample::object(
            "model preferences, empty",
            &["ModelPreferences"],
            ModelPreferences::default(),
        ),
        Sample::object(
            "model preferences, full",
            &["ModelPreferences"],
            params_full(IncludeContext::None).model_preferences,
        ),
        Sample::object(
            "tool choice, auto",
            &["ToolChoice"],
            choice(ToolChoiceMode::Auto),
        ),
        Sample::object(
            "tool choice, required",
            &["ToolChoice"],
            choice(ToolChoiceMode::Required),
        ),
        Sample::object(
            "tool choice, none",
            &["ToolChoice"],
            choice(ToolChoiceMode::None),
        ),
        Sample::object("tool choice, empty", &["ToolChoice"], ToolChoice::default()),
        Sample::object("sampling block, image", block, image()),
        Sample::object("sampling block, audio", block, audio()).revisions(V2025_03_26, V2026_07_28),
        Sample::object(
            "sampling block, tool use, full",
            &["ToolUseContent", "SamplingMessageContentBlock"],
            SamplingContent::ToolUse(ToolUseContent {
                meta: Some(meta()),
                ..match tool_use() {
                    SamplingContent::ToolUse(t) => t,
                    _ => unreachable!("a tool use"),
                }
            }),
        )
        .revisions(V2025_11_25, V2026_07_28),
        Sample::object(
            "sampling block, tool use, empty input",
            &["ToolUseContent", "SamplingMessageContentBlock"],
            SamplingContent::ToolUse(ToolUseContent {
                id: "call_2".into(),
                name: "now".into(),
                input: JsonObject::new(),
                meta: None,
            }),
        )
        .revisions(V2025_11_25, V2026_07_28),
        Sample::object(
            "sampling block, tool result, full",
            &["ToolResultContent", "SamplingMessageContentBlock"],
            tool_result(),
        )
        .revisions(V2025_11_25, V2026_07_28),
        Sample::object(
            "sampling block, tool result, minimal error",
            &["ToolResultContent", "SamplingMessageContentBlock"],
            SamplingContent::ToolResult(ToolResultContent {
                tool_use_id: "call_1".into(),
                content: vec![ContentBlock::text("city not found")],
                is_error: Some(true),
                ..Default::default()
            }),
        )
        .revisions(V2025_11_25, V2026_07_28),
        // Any JSON value from 2026-07-28; an object before.
        Sample::object(
            "sampling block, tool result, non-object structured content",
            &["ToolResultContent", "SamplingMessageContentBlock"],
            SamplingContent::ToolResult(ToolResultContent {
                tool_use_id: "call_1".into(),
                content: vec![ContentBlock::text("[18, 19]")],
                structured_content: Some(json!([18, 19])),
                ..Default::default()
            }),
        )
        .revisions(V2026_07_28, V2026_07_28),
        Sample::object("sampling message, text", message, user(text("Hi"))),
        Sample::object(
            "sampling message, image, with _meta",
            message,
            SamplingMessage {
                meta: Some(meta()),
                ..user(image())
            },
        ),
        Sample::object("sampling message, audio", message, user(audio()))
            .revisions(V2025_03_26, V2026_07_28),
        // A one-block array is the single block where arrays are not allowed.
        Sample::object(
            "sampling message, one block in an array",
            message,
            SamplingMessage {
                role: Role::Assistant,
                content: SamplingContents::Many(vec![text("Hello")]),
                meta: None,
            },
        ),
        Sample::object(
            "sampling message, several blocks",
            message,
            SamplingMessage {
                role: Role::Assistant,
                content: SamplingContents::Many(vec![text("Let me check."), tool_use()]),
                meta: Some(meta()),
            },
        )
        .revisions(V2025_11_25, V2026_07_28),
        Sample::object(
            "sampling message, tool result",
            message,
            user(tool_result()),
        )
        .revisions(V2025_11_25, V2026_07_28),
    ]
}

fn session_requests() -> Vec<Sample> {
    let params: &[&str] = &["CreateMessageRequestParams"];
    let request: &[&str] = &["CreateMessageRequest"];
    let (since, until) = SESSION;
    let mut all: Vec<Sample> = [
        IncludeContext::None,
        IncludeContext::ThisServer,
        IncludeContext::AllServers,
    ]
    .into_iter()
    .map(|context| {
        server_request(
            &format!("sampling/createMessage, full, includeContext {context:?}"),
            &["CreateMessageRequestParams", "TaskAugmentedRequestParams"],
            request,
            ServerRequest::CreateMessage(params_full(context)),
        )
        .revisions(since, until)
    })
    .collect();
    all.extend([
        server_request(
            "sampling/createMessage, minimal",
            params,
            request,
            ServerRequest::CreateMessage(params_minimal()),
        )
        .revisions(since, until),
        server_request(
            "sampling/createMessage, audio",
            params,
            request,
            ServerRequest::CreateMessage(CreateMessageRequestParams {
                messages: vec![user(audio())],
                ..params_minimal()
            }),
        )
        .revisions(V2025_03_26, until),
        request_with_meta(
            "sampling/createMessage, with _meta",
            params,
            ServerRequest::CreateMessage(CreateMessageRequestParams {
                meta: Some(progress_meta("sampling-1")),
                ..params_minimal()
            }),
        )
        .revisions(since, until),
        server_request(
            "sampling/createMessage, tools, tool choice without mode",
            params,
            request,
            ServerRequest::CreateMessage(params_with_tools(None)),
        )
        .revisions(V2025_11_25, until),
        server_request(
            "sampling/createMessage, tools, tool choice required",
            params,
            request,
            ServerRequest::CreateMessage(params_with_tools(Some(ToolChoiceMode::Required))),
        )
        .revisions(V2025_11_25, until),
    ]);
    all
}

/// 2026-07-28: the same requests inside an `input_required` result.
fn input_requests() -> Vec<Sample> {
    let method = "sampling/createMessage";
    let params: &[&str] = &["CreateMessageRequestParams"];
    let request = "CreateMessageRequest";
    vec![
        input_request(
            method,
            "sampling input, minimal",
            params,
            request,
            params_minimal(),
        ),
        input_request(
            method,
            "sampling input, full",
            params,
            request,
            CreateMessageRequestParams {
                meta: Some(progress_meta("sampling-2")),
                ..params_full(IncludeContext::ThisServer)
            },
        ),
        input_request(
            method,
            "sampling input, tools, tool choice auto",
            params,
            request,
            params_with_tools(Some(ToolChoiceMode::Auto)),
        ),
        input_request(
            method,
            "sampling input, tools, tool choice none",
            params,
            request,
            params_with_tools(Some(ToolChoiceMode::None)),
        ),
    ]
}

fn results() -> Vec<Sample> {
    let result: &[&str] = &["CreateMessageResult"];
    vec![
        client_result("sampling result, minimal", result, result_minimal()),
        client_result(
            "sampling result, image, full",
            result,
            CreateMessageResult {
                content: SamplingContents::One(image()),
                stop_reason: Some("endTurn".into()),
                meta: Some(result_meta()),
                ..result_minimal()
            },
        ),
        client_result(
            "sampling result, audio",
            result,
            CreateMessageResult {
                content: SamplingContents::One(audio()),
                stop_reason: Some("maxTokens".into()),
                ..result_minimal()
            },
        )
        .revisions(V2025_03_26, V2025_11_25),
        client_result("sampling result, tool use", result, result_tool_use())
            .revisions(V2025_11_25, V2025_11_25),
        input_response("sampling answer, minimal", result, result_minimal()),
        input_response("sampling answer, tool use", result, result_tool_use()),
        input_response(
            "sampling answer, audio",
            result,
            CreateMessageResult {
                content: SamplingContents::One(audio()),
                stop_reason: Some("stopSequence".into()),
                ..result_minimal()
            },
        ),
    ]
}
