//! Sampling: `sampling/createMessage`, the server asking the client's LLM for a completion.

use serde::{Deserialize, Serialize};

use super::common::Role;
use super::content::SamplingContents;
use super::meta::{JsonObject, Meta, RequestMeta, ResultMeta};
use super::tasks::TaskMetadata;
use super::tools::Tool;

/// A message in a sampling conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// One block, or several (from 2025-11-25).
    pub content: SamplingContents,
    /// Metadata (from 2025-11-25).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A hint for model selection.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelHint {
    /// A full or partial model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The server's model preferences; priorities are from 0 to 1.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// Which MCP context to include in the prompt (`thisServer`/`allServers` are deprecated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// None.
    None,
    /// Context from this server.
    ThisServer,
    /// Context from every connected server.
    AllServers,
}

/// How the model may use tools (2025-11-25).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides.
    Auto,
    /// The model must use a tool.
    Required,
    /// The model must not use tools.
    None,
}

/// Tool choice for sampling (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolChoice {
    /// The mode (default `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// `sampling/createMessage` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// System prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens to sample.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use (from 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use them (from 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// `sampling/createMessage` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// The role of the sampled message.
    pub role: Role,
    /// The sampled content.
    pub content: SamplingContents,
    /// The model that produced it.
    pub model: String,
    /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse` or other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl CreateMessageResult {
    /// The model's answer as one text block from the assistant, which ended its turn
    /// (`stopReason: "endTurn"`): what a sampling handler usually returns.
    ///
    /// ```
    /// use ferry_protocol::types::{CreateMessageResult, Role};
    ///
    /// let result = CreateMessageResult::text("claude-sonnet-4", "Paris.");
    /// assert_eq!(result.role, Role::Assistant);
    /// assert_eq!(
    ///     serde_json::to_value(&result).unwrap(),
    ///     serde_json::json!({
    ///         "role": "assistant",
    ///         "content": {"type": "text", "text": "Paris."},
    ///         "model": "claude-sonnet-4",
    ///         "stopReason": "endTurn"
    ///     })
    /// );
    /// ```
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(model, SamplingContents::text(text))
    }

    /// The model's answer with any content (several blocks, tool uses from 2025-11-25),
    /// from the assistant, which ended its turn.
    pub fn new(model: impl Into<String>, content: SamplingContents) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content,
            model: model.into(),
            stop_reason: Some("endTurn".into()),
            meta: None,
        }
    }

    /// Say why sampling stopped instead: `stopSequence`, `maxTokens`, `toolUse`, or a
    /// reason of the provider's own.
    #[must_use]
    pub fn stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }
}
