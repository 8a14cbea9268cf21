//! Argument completion: `completion/complete`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::common::ResultType;
use super::meta::{RequestMeta, ResultMeta};

/// What is being completed: a prompt's argument or a resource template's variable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Reference {
    /// `ref/prompt`.
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// `ref/resource` (a resource template).
    #[serde(rename = "ref/resource")]
    Resource(ResourceTemplateReference),
}

impl Reference {
    /// A reference to the prompt `name`.
    pub fn prompt(name: impl Into<String>) -> Self {
        Reference::Prompt(PromptReference {
            name: name.into(),
            title: None,
        })
    }

    /// A reference to the resource template (or resource) `uri`.
    pub fn resource(uri: impl Into<String>) -> Self {
        Reference::Resource(ResourceTemplateReference { uri: uri.into() })
    }
}

/// A prompt, by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptReference {
    /// The prompt's name.
    pub name: String,
    /// Display name (from 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A resource template, by URI template (or URI).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceTemplateReference {
    /// The URI or URI template.
    pub uri: String,
}

/// The argument being completed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompletionArgument {
    /// The argument's name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
}

/// Values of other arguments, already resolved (from 2025-06-18).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompletionContext {
    /// Argument name to value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// `completion/complete` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequestParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument.
    pub argument: CompletionArgument,
    /// Other arguments' values (from 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The completion values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// How many values exist in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more values than these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// `completion/complete` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The values.
    pub completion: Completion,
    /// `complete` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}
