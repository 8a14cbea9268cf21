//! Tools: `tools/list`, `tools/call`.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::common::{CacheScope, Cursor, Icon, ResultType};
use super::content::{ContentBlock, TextContent};
use super::meta::{JsonObject, Meta, RequestMeta, ResultMeta};
use super::mrtr::InputResponses;
use super::tasks::TaskMetadata;
use crate::conform::WRAPPED_RESULT;

/// A tool the server offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name.
    pub name: String,
    /// Display name (from 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; `type` is `"object"`.
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent` (from 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints (from 2025-03-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Execution properties (2025-11-25 tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Icons (from 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata (from 2025-06-18).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Tool {
            name: name.into(),
            input_schema,
            ..Default::default()
        }
    }

    /// A tool with a name and a description; the input schema is filled in later (a
    /// server derives it from the argument type).
    pub fn described(name: impl Into<String>, description: impl Into<String>) -> Self {
        Tool {
            name: name.into(),
            description: Some(description.into()),
            ..Default::default()
        }
    }
}

/// Hints about a tool's behaviour. Untrusted unless the server is trusted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling again with the same arguments has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// Whether a tool can run as a task (2025-11-25).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never as a task (the default).
    #[default]
    Forbidden,
    /// With or without a task.
    Optional,
    /// Only as a task.
    Required,
}

/// Execution properties of a tool (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Task support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// `tools/call` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// The tool's name.
    pub name: String,
    /// The arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Answers to an `input_required` result (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The `requestState` of an `input_required` result, echoed (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// `tools/call` result. A tool that fails reports it here with `isError: true`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result, conforming to the tool's `outputSchema` (from 2025-06-18; any
    /// JSON value from 2026-07-28, an object before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<serde_json::Value>,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `complete` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl CallToolResult {
    /// A successful result with the given content.
    pub fn success(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            content,
            ..Default::default()
        }
    }

    /// A failed result (`isError: true`) with a text explanation.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(message)],
            is_error: Some(true),
            ..Default::default()
        }
    }

    /// The result as JSON text: exactly what `serde_json::to_string` writes, faster.
    /// Plain text blocks (most results are one) are written directly with an escaper that
    /// tests eight bytes at a time; the rest goes through serde (the engine then sends the
    /// text as it is; bench/results/profile.md has the measurement).
    pub fn to_json(&self) -> serde_json::Result<String> {
        let text: usize = self.content.iter().map(text_len).sum();
        // Room for the members and, after them, for a response's envelope (see
        // `ResultResponse::wrap`).
        let mut out = String::with_capacity(text + 64 + crate::jsonrpc::ENVELOPE_ROOM);
        out.push_str(r#"{"content":["#);
        for (i, block) in self.content.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match block {
                ContentBlock::Text(TextContent {
                    text,
                    annotations: None,
                    meta: None,
                }) => {
                    push_text_block(&mut out, text);
                }
                other => out.push_str(&serde_json::to_string(other)?),
            }
        }
        out.push(']');
        if let Some(structured) = &self.structured_content {
            out.push_str(r#","structuredContent":"#);
            out.push_str(&serde_json::to_string(structured)?);
        }
        match self.is_error {
            Some(true) => out.push_str(r#","isError":true"#),
            Some(false) => out.push_str(r#","isError":false"#),
            None => {}
        }
        if let Some(result_type) = &self.result_type {
            out.push_str(r#","resultType":"#);
            out.push_str(&serde_json::to_string(result_type)?);
        }
        if let Some(meta) = &self.meta {
            out.push_str(r#","_meta":"#);
            out.push_str(&serde_json::to_string(meta)?);
        }
        out.push('}');
        Ok(out)
    }
}

impl CallToolResult {
    /// The text of the result's text blocks, joined with newlines (other blocks are
    /// skipped): what a tool returning a `String` said, or an `isError` result's message.
    ///
    /// ```
    /// use ferry_protocol::types::{CallToolResult, ContentBlock};
    ///
    /// let result = CallToolResult::success(vec![ContentBlock::text("3")]);
    /// assert_eq!(result.text(), "3");
    /// assert_eq!(CallToolResult::error("no such city").text(), "no such city");
    /// ```
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        texts.join("\n")
    }

    /// Whether the tool reported a failure (`isError: true`).
    ///
    /// ```
    /// use ferry_protocol::types::CallToolResult;
    ///
    /// assert!(CallToolResult::error("division by zero").is_error());
    /// assert!(!CallToolResult::success(vec![]).is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    /// `structuredContent` deserialized into `T`: the tool's typed output.
    ///
    /// Before 2026-07-28 structured content must be an object, and a server sends a
    /// non-object output (a list, a number) wrapped as `{"result": value}` (see
    /// [`conform::WRAPPED_RESULT`](crate::conform::WRAPPED_RESULT)): when the content
    /// is not a `T` but is such a wrapper, its `result` is read instead, so `T` is the
    /// tool's output type in every revision. An error when there is no structured
    /// content or it is not a `T`.
    ///
    /// ```
    /// use ferry_protocol::types::CallToolResult;
    /// use serde_json::json;
    ///
    /// let result = CallToolResult {
    ///     structured_content: Some(json!({"value": 0.25})),
    ///     ..Default::default()
    /// };
    /// #[derive(serde::Deserialize)]
    /// struct Quotient {
    ///     value: f64,
    /// }
    /// assert_eq!(result.structured::<Quotient>().unwrap().value, 0.25);
    ///
    /// // A list, as a client of 2025-06-18 receives it.
    /// let wrapped = CallToolResult {
    ///     structured_content: Some(json!({"result": ["red", "blue"]})),
    ///     ..Default::default()
    /// };
    /// assert_eq!(wrapped.structured::<Vec<String>>().unwrap(), ["red", "blue"]);
    /// assert!(CallToolResult::default().structured::<Vec<String>>().is_err());
    /// ```
    pub fn structured<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        let Some(value) = &self.structured_content else {
            return Err(serde::de::Error::custom(
                "the result has no structuredContent",
            ));
        };
        match T::deserialize(value) {
            Ok(typed) => Ok(typed),
            Err(error) => match value.as_object() {
                Some(wrapper) if wrapper.len() == 1 => match wrapper.get(WRAPPED_RESULT) {
                    Some(inner) => T::deserialize(inner),
                    None => Err(error),
                },
                _ => Err(error),
            },
        }
    }

    /// The JSON text of `CallToolResult::success(vec![ContentBlock::text(text)])`, the
    /// result of most tools, written without building it: the same bytes as
    /// [`to_json`](CallToolResult::to_json) (one allocation and a content block fewer per
    /// call).
    pub fn text_json(text: &str) -> String {
        Self::text_json_then(text, "}")
    }

    /// The JSON text of a result with one plain text block followed by `rest`: what
    /// [`to_json`](CallToolResult::to_json) writes after `{"content":[]` for the same result
    /// without content (its other members and the closing brace). A server that adds the
    /// same members to every result writes them once.
    pub fn text_json_then(text: &str, rest: &str) -> String {
        let mut out =
            String::with_capacity(text.len() + rest.len() + 48 + crate::jsonrpc::ENVELOPE_ROOM);
        out.push_str(r#"{"content":["#);
        push_text_block(&mut out, text);
        out.push(']');
        out.push_str(rest);
        out
    }
}

/// A plain text content block.
fn push_text_block(out: &mut String, text: &str) {
    out.push_str(r#"{"type":"text","text":"#);
    crate::write::push_str(out, text);
    out.push('}');
}

fn text_len(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text(text) => text.text.len() + 32,
        _ => 64,
    }
}

/// `tools/list` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// The tools.
    pub tools: Vec<Tool>,
    /// Cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// `complete` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Freshness hint in milliseconds (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Annotations, ImageContent};

    /// `to_json` writes what serde writes, whatever the result holds.
    #[test]
    fn call_tool_results_are_written_as_serde_writes_them() {
        let annotated = ContentBlock::Text(TextContent {
            text: "annotated".into(),
            annotations: Some(Annotations {
                priority: Some(0.25),
                ..Default::default()
            }),
            meta: None,
        });
        let image = ContentBlock::Image(ImageContent {
            data: "AAAA".into(),
            mime_type: "image/png".into(),
            ..Default::default()
        });
        let mut meta = ResultMeta::default();
        meta.other
            .insert("k".into(), serde_json::json!({"a": [1, "\n"]}));
        let contents = [
            vec![],
            vec![ContentBlock::text("hi")],
            vec![
                ContentBlock::text("tab\tquote\" é 🦀 \u{1}"),
                ContentBlock::text(""),
            ],
            vec![annotated, image, ContentBlock::text("last")],
        ];
        for content in contents {
            for is_error in [None, Some(true), Some(false)] {
                for extras in 0..2 {
                    let mut result = CallToolResult {
                        content: content.clone(),
                        is_error,
                        ..Default::default()
                    };
                    if extras == 1 {
                        result.structured_content = Some(serde_json::json!({"n": 1.5}));
                        result.result_type = Some(ResultType::Complete);
                        result.meta = Some(meta.clone());
                    }
                    let serde = serde_json::to_string(&result).expect("serializes");
                    assert_eq!(result.to_json().expect("writes"), serde);
                }
            }
        }
        for text in ["", "hi", "tab\tquote\" é 🦀 \u{1}\u{7f}\\"] {
            let result = CallToolResult::success(vec![ContentBlock::text(text)]);
            let serde = serde_json::to_string(&result).expect("serializes");
            assert_eq!(CallToolResult::text_json(text), serde, "{text:?}");
            let mut with_rest = CallToolResult::success(vec![]);
            with_rest.result_type = Some(ResultType::Complete);
            with_rest.meta = Some(meta.clone());
            let rest = with_rest.to_json().expect("writes")[r#"{"content":[]"#.len()..].to_owned();
            with_rest.content = vec![ContentBlock::text(text)];
            let serde = serde_json::to_string(&with_rest).expect("serializes");
            assert_eq!(
                CallToolResult::text_json_then(text, &rest),
                serde,
                "{text:?}"
            );
        }
    }
}
