//! The tool scenarios.

use serde_json::{Value, json};

use crate::client::{Client, assert_png, base64, block, replay, sampling_answer, text};

#[test]
fn tools_list() {
    replay("tools-list", |c| {
        let result = c.ok("tools/list", json!({}));
        let tools = result["tools"].as_array().expect("tools");
        for tool in tools {
            assert!(tool["name"].is_string(), "{tool}");
            assert!(
                tool["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{tool}"
            );
            assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        }
        let names: Vec<_> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        for called in [
            "test_simple_text",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
            "test_tool_with_logging",
            "test_tool_with_progress",
            "test_error_handling",
            "test_sampling",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "json_schema_2020_12_tool",
            "test_reconnection",
        ] {
            assert!(names.contains(&called), "{called} listed: {names:?}");
        }
    });
}

#[test]
fn tools_call_simple_text() {
    replay("tools-call-simple-text", |c| {
        // The suite calls it without `arguments`.
        let result = c.ok("tools/call", json!({"name": "test_simple_text"}));
        assert_eq!(result["content"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            text(block(&result, "text")),
            "This is a simple text response for testing."
        );
        assert!(result.get("isError").is_none_or(|e| e == false));
    });
}

#[test]
fn tools_call_image() {
    replay("tools-call-image", |c| {
        let result = c.call_tool("test_image_content", json!({}));
        assert_png(block(&result, "image"));
    });
}

#[test]
fn tools_call_audio() {
    replay("tools-call-audio", |c| {
        let result = c.call_tool("test_audio_content", json!({}));
        let audio = block(&result, "audio");
        assert_eq!(audio["mimeType"], "audio/wav");
        let data = base64(audio["data"].as_str().expect("data"));
        assert!(
            data.starts_with(b"RIFF") && data[8..12] == *b"WAVE",
            "a WAV: {audio}"
        );
    });
}

#[test]
fn tools_call_embedded_resource() {
    replay("tools-call-embedded-resource", |c| {
        let result = c.call_tool("test_embedded_resource", json!({}));
        let resource = &block(&result, "resource")["resource"];
        assert_eq!(
            resource,
            &json!({"uri": "test://embedded-resource", "mimeType": "text/plain",
                    "text": "This is an embedded resource content."})
        );
    });
}

#[test]
fn tools_call_mixed_content() {
    replay("tools-call-mixed-content", |c| {
        let result = c.call_tool("test_multiple_content_types", json!({}));
        let kinds: Vec<_> = result["content"]
            .as_array()
            .expect("content")
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["text", "image", "resource"]);
        assert_eq!(text(block(&result, "text")), "Multiple content types test:");
        assert_png(block(&result, "image"));
        let resource = &block(&result, "resource")["resource"];
        assert_eq!(resource["uri"], "test://mixed-content-resource");
        assert_eq!(resource["mimeType"], "application/json");
        let data: Value = serde_json::from_str(text(resource)).expect("JSON text");
        assert_eq!(data, json!({"test": "data", "value": 123}));
    });
}

#[test]
fn tools_call_with_logging() {
    replay("tools-call-with-logging", |c| {
        assert_eq!(
            c.ok("logging/setLevel", json!({"level": "debug"})),
            json!({})
        );
        let result = c.call_tool("test_tool_with_logging", json!({}));
        assert!(!text(block(&result, "text")).is_empty());
        let all = c.notifications("notifications/message");
        assert!(all.len() >= 3, "at least 3 log messages: {all:?}");
        // The tool's own messages (the library may forward other events at `debug`).
        let logs: Vec<_> = all
            .into_iter()
            .filter(|n| n["params"]["logger"] == "conformance")
            .collect();
        let data: Vec<_> = logs.iter().map(|n| n["params"]["data"].clone()).collect();
        assert_eq!(
            data,
            [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed"
            ],
            "three messages before the result: {logs:?}"
        );
        assert!(logs.iter().all(|n| n["params"]["level"] == "info"));
    });
}

#[test]
fn tools_call_error() {
    replay("tools-call-error", |c| {
        let result = c.call_tool("test_error_handling", json!({}));
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(
            text(&result["content"][0]),
            "This tool intentionally returns an error for testing"
        );
    });
}

#[test]
fn tools_call_with_progress() {
    replay("tools-call-with-progress", |c| {
        // The suite's client (TypeScript SDK, `onprogress`) sends the request id as the
        // progress token; a string token travels the same way.
        for token in [json!(c.next_id), json!("progress-test-1")] {
            let before = c.notifications("notifications/progress").len();
            let result = c.ok(
                "tools/call",
                json!({"name": "test_tool_with_progress", "arguments": {},
                       "_meta": {"progressToken": token}}),
            );
            assert!(result.get("isError").is_none_or(|e| e == false), "{result}");
            let progress: Vec<_> = c.notifications("notifications/progress")[before..]
                .iter()
                .map(|n| n["params"].clone())
                .collect();
            assert!(progress.iter().all(|p| p["progressToken"] == token));
            let values: Vec<_> = progress.iter().map(|p| p["progress"].as_f64()).collect();
            assert_eq!(values, [Some(0.0), Some(50.0), Some(100.0)], "{progress:?}");
            assert!(progress.iter().all(|p| p["total"] == 100.0));
        }
    });
}

#[test]
fn tools_call_sampling() {
    replay("tools-call-sampling", |c| {
        c.respond_with(|method, _| match method {
            "sampling/createMessage" => Ok(sampling_answer()),
            other => panic!("unexpected {other}"),
        });
        let result = c.call_tool(
            "test_sampling",
            json!({"prompt": "Test prompt for sampling"}),
        );
        assert_eq!(c.server_requests.len(), 1, "sampling requested");
        let asked = &c.server_requests[0]["params"];
        assert_eq!(asked["maxTokens"], 100);
        assert_eq!(
            asked["messages"],
            json!([{"role": "user",
                    "content": {"type": "text", "text": "Test prompt for sampling"}}])
        );
        assert_eq!(
            text(block(&result, "text")),
            "LLM response: This is a test response from the client"
        );
    });
}

#[test]
fn sampling_without_the_capability_is_a_tool_error() {
    let mut c = Client::connect_with("2025-06-18", json!({}));
    let result = c.call_tool("test_sampling", json!({"prompt": "x"}));
    assert_eq!(result["isError"], true, "{result}");
    let result = c.call_tool("test_elicitation", json!({"message": "x"}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(c.server_requests.is_empty());
}

#[test]
fn tools_call_elicitation() {
    replay("tools-call-elicitation", |c| {
        c.respond_with(|method, _| match method {
            "elicitation/create" => Ok(json!({"action": "accept",
                "content": {"username": "testuser", "email": "test@example.com"}})),
            other => panic!("unexpected {other}"),
        });
        let result = c.call_tool(
            "test_elicitation",
            json!({"message": "Please provide your information"}),
        );
        assert_eq!(c.server_requests.len(), 1, "elicitation requested");
        let asked = &c.server_requests[0]["params"];
        assert_eq!(asked["message"], "Please provide your information");
        let schema = &asked["requestedSchema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["username"]["type"], "string");
        assert_eq!(schema["properties"]["email"]["type"], "string");
        assert_eq!(schema["required"], json!(["username", "email"]));
        assert_eq!(
            text(block(&result, "text")),
            r#"User response: action=accept, content={"username":"testuser","email":"test@example.com"}"#
        );
    });
}

#[test]
fn json_schema_2020_12() {
    replay("json-schema-2020-12", |c| {
        let result = c.ok("tools/list", json!({}));
        let tool = result["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|t| t["name"] == "json_schema_2020_12_tool")
            .expect("json-schema-2020-12-tool-found");
        let schema = &tool["inputSchema"];
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "json-schema-2020-12-$schema"
        );
        assert_eq!(
            schema["additionalProperties"], false,
            "json-schema-2020-12-additionalProperties"
        );
        // json-schema-2020-12-$defs: `$defs.address`, referenced by `properties.address`.
        assert_eq!(schema["properties"]["address"]["$ref"], "#/$defs/address");
        let address = &schema["$defs"]["address"];
        for field in ["street", "city"] {
            assert!(address["properties"][field].is_object(), "{schema}");
        }
        let called = c.call_tool(
            "json_schema_2020_12_tool",
            json!({"name": "Ada", "address": {"city": "London"}}),
        );
        assert_eq!(
            text(block(&called, "text")),
            r#"JSON Schema 2020-12 tool called with: {"name":"Ada","address":{"city":"London"}}"#
        );
    });
}
