//! Resources: `resources/list`, `resources/templates/list`, `resources/read`, subscriptions.

use serde::{Deserialize, Serialize};

use super::common::{Annotations, CacheScope, Cursor, Icon, ResultType};
use super::content::ResourceContents;
use super::meta::{Meta, NotificationMeta, RequestMeta, ResultMeta};
use super::mrtr::InputResponses;

/// A resource the server can read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name (from 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes, before any encoding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons (from 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (from 2025-06-18).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A family of resources described by an RFC 6570 URI template.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name (from 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every matching resource, if they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons (from 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (from 2025-06-18).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `resources/list` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// The resources.
    pub resources: Vec<Resource>,
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

/// `resources/templates/list` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// The templates.
    pub resource_templates: Vec<ResourceTemplate>,
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

/// `resources/read` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceRequestParams {
    /// The resource's URI.
    pub uri: String,
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

/// `resources/read` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// The contents (a template or a directory may yield several).
    pub contents: Vec<ResourceContents>,
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

impl ReadResourceResult {
    /// The text of the text contents, joined with newlines (blobs are skipped): what a
    /// reader returning a `String` gave.
    ///
    /// ```
    /// use ferry_protocol::types::{ReadResourceResult, ResourceContents};
    ///
    /// let read = ReadResourceResult {
    ///     contents: vec![ResourceContents::text("notes://1", "text/plain", "milk")],
    ///     ..Default::default()
    /// };
    /// assert_eq!(read.text(), "milk");
    /// ```
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .contents
            .iter()
            .filter_map(ResourceContents::as_text)
            .collect();
        texts.join("\n")
    }

    /// The bytes of the first blob contents, decoded from base64; `None` when there is no
    /// blob, or it is not valid base64.
    ///
    /// ```
    /// use ferry_protocol::types::{ReadResourceResult, ResourceContents};
    ///
    /// let read = ReadResourceResult {
    ///     contents: vec![ResourceContents::blob("logo://png", "image/png", "iVBORw==")],
    ///     ..Default::default()
    /// };
    /// assert_eq!(read.blob().unwrap(), b"\x89PNG");
    /// ```
    pub fn blob(&self) -> Option<Vec<u8>> {
        self.contents
            .iter()
            .find(|contents| matches!(contents, ResourceContents::Blob(_)))
            .and_then(ResourceContents::blob_bytes)
    }

    /// The text contents (see [`text`](Self::text)) parsed as JSON into `T`: what a
    /// reader returning `Json<T>` gave.
    ///
    /// ```
    /// use ferry_protocol::types::{ReadResourceResult, ResourceContents};
    ///
    /// let read = ReadResourceResult {
    ///     contents: vec![ResourceContents::text("config://app", "application/json", r#"{"debug":true}"#)],
    ///     ..Default::default()
    /// };
    /// let config: serde_json::Value = read.json().unwrap();
    /// assert_eq!(config["debug"], true);
    /// ```
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.text())
    }
}

/// `resources/subscribe` and `resources/unsubscribe` params (session era).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceRequestParams {
    /// The resource's URI.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// `notifications/resources/updated` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdatedNotificationParams {
    /// The URI of the resource that changed (possibly a sub-resource of the subscribed one).
    pub uri: String,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}
