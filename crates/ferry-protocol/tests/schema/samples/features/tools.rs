//! Samples: tools (`tools/list`, `tools/call`) with annotations, icons, input and output
//! schemas, execution (task support), structured and error results, and
//! `notifications/tools/list_changed`.

use ferry_protocol::ProtocolVersion::*;
use ferry_protocol::methods::{ClientRequest, ServerNotification};
use ferry_protocol::types::*;
use serde_json::json;

use crate::schema::Sample;
use crate::schema::samples::support::{
    annotations, client_request, icon, meta, notification_meta, object, progress_meta,
    request_with_meta, result_meta, server_notification, server_result,
};

fn input_schema() -> JsonObject {
    object(json!({
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City name or zip code"},
            "units": {"type": "string", "enum": ["metric", "imperial"]}
        },
        "required": ["location"]
    }))
}

fn output_schema() -> JsonObject {
    object(json!({
        "type": "object",
        "properties": {
            "temperature": {"type": "number"},
            "conditions": {"type": "string"}
        },
        "required": ["temperature", "conditions"]
    }))
}

fn annotations_full() -> ToolAnnotations {
    ToolAnnotations {
        title: Some("Weather".into()),
        read_only_hint: Some(true),
        destructive_hint: Some(false),
        idempotent_hint: Some(true),
        open_world_hint: Some(true),
    }
}

fn tool_minimal() -> Tool {
    Tool::new("ping_host", object(json!({"type": "object"})))
}

/// Every member of a tool; each revision keeps what it has.
fn tool_full() -> Tool {
    Tool {
        name: "get_weather".into(),
        title: Some("Weather Information Provider".into()),
        description: Some("Get current weather information for a location".into()),
        input_schema: input_schema(),
        output_schema: Some(output_schema()),
        annotations: Some(annotations_full()),
        execution: Some(ToolExecution {
            task_support: Some(TaskSupport::Optional),
        }),
        icons: Some(vec![icon()]),
        meta: Some(meta()),
    }
}

/// A tool whose output is not an object: 2026-07-28 describes it; earlier revisions list
/// the tool without its `outputSchema`.
fn tool_array_output() -> Tool {
    Tool {
        description: Some("Recent temperatures".into()),
        output_schema: Some(object(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"type": "number"}
        }))),
        execution: Some(ToolExecution {
            task_support: Some(TaskSupport::Required),
        }),
        ..Tool::new("temperature_history", input_schema())
    }
}

fn weather() -> serde_json::Value {
    json!({"temperature": 22.5, "conditions": "Partly cloudy"})
}

pub fn samples() -> Vec<Sample> {
    let mut all = definitions();
    all.extend(listing());
    all.extend(calls());
    all.extend(results());
    all
}

fn definitions() -> Vec<Sample> {
    let execution = |task_support| ToolExecution {
        task_support: Some(task_support),
    };
    vec![
        Sample::object("tool, minimal", &["Tool", "BaseMetadata"], tool_minimal()),
        Sample::object(
            "tool, full",
            &["Tool", "BaseMetadata", "Icons"],
            tool_full(),
        ),
        Sample::object(
            "tool, non-object output",
            &["Tool", "BaseMetadata"],
            tool_array_output(),
        ),
        Sample::object(
            "tool, annotations partly set",
            &["Tool"],
            Tool {
                annotations: Some(ToolAnnotations {
                    read_only_hint: Some(false),
                    destructive_hint: Some(true),
                    ..Default::default()
                }),
                ..tool_minimal()
            },
        ),
        Sample::object(
            "tool annotations, full",
            &["ToolAnnotations"],
            annotations_full(),
        ),
        Sample::object(
            "tool annotations, empty",
            &["ToolAnnotations"],
            ToolAnnotations::default(),
        ),
        Sample::object(
            "tool execution, forbidden",
            &["ToolExecution"],
            execution(TaskSupport::Forbidden),
        ),
        Sample::object(
            "tool execution, optional",
            &["ToolExecution"],
            execution(TaskSupport::Optional),
        ),
        Sample::object(
            "tool execution, required",
            &["ToolExecution"],
            execution(TaskSupport::Required),
        ),
        Sample::object(
            "tool execution, empty",
            &["ToolExecution"],
            ToolExecution::default(),
        ),
    ]
}

fn listing() -> Vec<Sample> {
    let list: &[&str] = &["ListToolsRequest", "PaginatedRequest"];
    let result: &[&str] = &["ListToolsResult", "PaginatedResult", "CacheableResult"];
    let response: &[&str] = &["ListToolsResultResponse"];
    vec![
        client_request(
            "tools/list, first page",
            &["PaginatedRequestParams"],
            list,
            ClientRequest::ListTools(PaginatedRequestParams::default()),
        ),
        client_request(
            "tools/list, next page",
            &["PaginatedRequestParams"],
            list,
            ClientRequest::ListTools(PaginatedRequestParams {
                cursor: Some("eyJwYWdlIjoyfQ==".into()),
                meta: None,
            }),
        ),
        request_with_meta(
            "tools/list, with _meta",
            &["PaginatedRequestParams"],
            ClientRequest::ListTools(PaginatedRequestParams {
                cursor: Some("eyJwYWdlIjoyfQ==".into()),
                meta: Some(progress_meta("list-1")),
            }),
        ),
        server_result(
            "tools/list result, empty",
            result,
            response,
            ListToolsResult::default(),
        ),
        server_result(
            "tools/list result, full",
            result,
            response,
            ListToolsResult {
                tools: vec![tool_minimal(), tool_full(), tool_array_output()],
                next_cursor: Some("eyJwYWdlIjozfQ==".into()),
                ttl_ms: Some(60_000),
                cache_scope: Some(CacheScope::Public),
                meta: Some(result_meta()),
                ..Default::default()
            },
        ),
        server_notification(
            "tools list changed",
            &["NotificationParams"],
            &["ToolListChangedNotification"],
            ServerNotification::ToolListChanged(NotificationParams::default()),
        ),
        server_notification(
            "tools list changed, with _meta",
            &["NotificationParams"],
            &["ToolListChangedNotification"],
            ServerNotification::ToolListChanged(NotificationParams {
                meta: Some(notification_meta()),
            }),
        ),
    ]
}

fn calls() -> Vec<Sample> {
    let call: &[&str] = &["CallToolRequest"];
    let params: &[&str] = &["CallToolRequestParams"];
    vec![
        client_request(
            "tools/call, no arguments",
            params,
            call,
            ClientRequest::CallTool(CallToolRequestParams {
                name: "ping_host".into(),
                ..Default::default()
            }),
        ),
        client_request(
            "tools/call, arguments",
            params,
            call,
            ClientRequest::CallTool(CallToolRequestParams {
                name: "get_weather".into(),
                arguments: Some(object(json!({"location": "New York", "units": "metric"}))),
                ..Default::default()
            }),
        ),
        request_with_meta(
            "tools/call, with _meta",
            params,
            ClientRequest::CallTool(CallToolRequestParams {
                name: "get_weather".into(),
                arguments: Some(object(json!({"location": "Paris"}))),
                meta: Some(progress_meta("call-1")),
                ..Default::default()
            }),
        ),
    ]
}

fn results() -> Vec<Sample> {
    let result: &[&str] = &["CallToolResult"];
    let response: &[&str] = &["CallToolResultResponse"];
    let text = || ContentBlock::text("Current weather in New York: 22.5°C, partly cloudy");
    let every_revision = vec![
        text(),
        ContentBlock::Image(ImageContent {
            data: "iVBORw0KGgo=".into(),
            mime_type: "image/png".into(),
            annotations: Some(annotations()),
            meta: Some(meta()),
        }),
        ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::text("file:///weather.md", "text/markdown", "# Sunny"),
            annotations: None,
            meta: None,
        }),
    ];
    vec![
        server_result(
            "tools/call result, text",
            result,
            response,
            CallToolResult::success(vec![text()]),
        ),
        server_result(
            "tools/call result, empty content",
            result,
            response,
            CallToolResult::success(Vec::new()),
        ),
        server_result(
            "tools/call result, tool error",
            result,
            response,
            CallToolResult::error("Failed to fetch weather data: API rate limit exceeded"),
        ),
        server_result(
            "tools/call result, text image and embedded resource, full",
            result,
            response,
            CallToolResult {
                content: every_revision.clone(),
                structured_content: Some(weather()),
                is_error: Some(false),
                meta: Some(result_meta()),
                ..Default::default()
            },
        ),
        server_result(
            "tools/call result, audio",
            result,
            response,
            CallToolResult::success(vec![ContentBlock::Audio(AudioContent {
                data: "UklGRg==".into(),
                mime_type: "audio/wav".into(),
                annotations: None,
                meta: None,
            })]),
        )
        .revisions(V2025_03_26, V2026_07_28),
        server_result(
            "tools/call result, every content block",
            result,
            response,
            CallToolResult {
                content: [
                    every_revision,
                    vec![
                        ContentBlock::Audio(AudioContent {
                            data: "UklGRg==".into(),
                            mime_type: "audio/wav".into(),
                            annotations: Some(annotations()),
                            meta: Some(meta()),
                        }),
                        ContentBlock::ResourceLink(ResourceLink {
                            uri: "file:///forecast.json".into(),
                            name: "forecast".into(),
                            mime_type: Some("application/json".into()),
                            ..Default::default()
                        }),
                    ],
                ]
                .concat(),
                structured_content: Some(weather()),
                ..Default::default()
            },
        )
        .revisions(V2025_06_18, V2026_07_28),
        // Any JSON value from 2026-07-28; earlier revisions carry the text form only.
        server_result(
            "tools/call result, non-object structured content",
            result,
            response,
            CallToolResult {
                content: vec![ContentBlock::text("[21.0, 22.5, 19.8]")],
                structured_content: Some(json!([21.0, 22.5, 19.8])),
                ..Default::default()
            },
        ),
    ]
}
