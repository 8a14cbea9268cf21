//! Content blocks: what tools return, prompts hold and sampling exchanges.

use serde::{Deserialize, Serialize};

use super::common::{Annotations, Icon};
use super::meta::{JsonObject, Meta};

/// A block of content in a tool result, prompt message or resource.
///
/// 2024-11-05 has text, image and embedded resources; 2025-03-26 adds audio; 2025-06-18 adds
/// resource links.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum ContentBlock {
    /// `text`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `image`.
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `audio` (from 2025-03-26).
    #[serde(rename = "audio")]
    Audio(AudioContent),
    /// `resource_link` (from 2025-06-18).
    #[serde(rename = "resource_link")]
    ResourceLink(ResourceLink),
    /// `resource`: an embedded resource.
    #[serde(rename = "resource")]
    Resource(EmbeddedResource),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// The text of a text block; `None` for any other kind.
    ///
    /// ```
    /// use ferry_protocol::types::ContentBlock;
    ///
    /// assert_eq!(ContentBlock::text("hi").as_text(), Some("hi"));
    /// assert_eq!(ContentBlock::image("iVBORw0KGgo=", "image/png").as_text(), None);
    /// ```
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(text) => Some(&text.text),
            _ => None,
        }
    }

    /// The wire name of this block's type.
    pub fn kind(&self) -> &'static str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::Resource(_) => "resource",
        }
    }
}

/// Text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (from 2025-06-18).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// Text without annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            text: text.into(),
            ..Default::default()
        }
    }
}

/// An image, base64-encoded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image data.
    pub data: String,
    /// The image's MIME type.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (from 2025-06-18).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Audio, base64-encoded (from 2025-03-26).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Base64-encoded audio data.
    pub data: String,
    /// The audio's MIME type.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (from 2025-06-18).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A link to a resource the server can read (from 2025-06-18). Not guaranteed to appear in
/// `resources/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
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
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A resource's contents embedded in a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (from 2025-06-18).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The contents of a resource: text or a base64 blob.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// Text contents of `uri` with a MIME type.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ResourceContents::Text(TextResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: text.into(),
            meta: None,
        })
    }

    /// Binary contents of `uri` (`blob` is base64) with a MIME type.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        blob: impl Into<String>,
    ) -> Self {
        ResourceContents::Blob(BlobResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: blob.into(),
            meta: None,
        })
    }

    /// The text of text contents; `None` for a blob.
    ///
    /// ```
    /// use ferry_protocol::types::ResourceContents;
    ///
    /// let note = ResourceContents::text("notes://1", "text/plain", "milk");
    /// assert_eq!(note.as_text(), Some("milk"));
    /// let logo = ResourceContents::blob("logo://png", "image/png", "iVBORw0KGgo=");
    /// assert_eq!(logo.as_text(), None);
    /// ```
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => Some(&t.text),
            ResourceContents::Blob(_) => None,
        }
    }

    /// The URI of the contents.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }

    /// The MIME type of the contents, if given.
    ///
    /// ```
    /// use ferry_protocol::types::ResourceContents;
    ///
    /// let note = ResourceContents::text("notes://1", "text/plain", "milk");
    /// assert_eq!(note.mime_type(), Some("text/plain"));
    /// ```
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => t.mime_type.as_deref(),
            ResourceContents::Blob(b) => b.mime_type.as_deref(),
        }
    }

    /// The bytes of blob contents, decoded from base64; `None` for text, or a blob that is
    /// not valid base64.
    ///
    /// ```
    /// use ferry_protocol::types::ResourceContents;
    ///
    /// let logo = ResourceContents::blob("logo://png", "image/png", "iVBORw==");
    /// assert_eq!(logo.blob_bytes(), Some(vec![0x89, b'P', b'N', b'G']));
    /// assert_eq!(ResourceContents::text("notes://1", "text/plain", "milk").blob_bytes(), None);
    /// ```
    pub fn blob_bytes(&self) -> Option<Vec<u8>> {
        use base64::Engine as _;
        match self {
            ResourceContents::Text(_) => None,
            ResourceContents::Blob(b) => base64::engine::general_purpose::STANDARD
                .decode(&b.blob)
                .ok(),
        }
    }
}

/// Text contents of a resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Metadata (from 2025-06-18).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Binary contents of a resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded bytes.
    pub blob: String,
    /// Metadata (from 2025-06-18).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A block of content in a sampling message (2025-11-25 adds tool use and tool results).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum SamplingContent {
    /// `text`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `image`.
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `audio` (from 2025-03-26).
    #[serde(rename = "audio")]
    Audio(AudioContent),
    /// `tool_use`: the model calls a tool (from 2025-11-25).
    #[serde(rename = "tool_use")]
    ToolUse(ToolUseContent),
    /// `tool_result`: the result of a tool use (from 2025-11-25).
    #[serde(rename = "tool_result")]
    ToolResult(ToolResultContent),
}

impl SamplingContent {
    /// The wire name of this block's type.
    pub fn kind(&self) -> &'static str {
        match self {
            SamplingContent::Text(_) => "text",
            SamplingContent::Image(_) => "image",
            SamplingContent::Audio(_) => "audio",
            SamplingContent::ToolUse(_) => "tool_use",
            SamplingContent::ToolResult(_) => "tool_result",
        }
    }
}

/// One sampling content block or several (2025-11-25 allows an array).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingContents {
    /// A single block (every revision).
    One(SamplingContent),
    /// Several blocks (from 2025-11-25).
    Many(Vec<SamplingContent>),
}

impl SamplingContents {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContents::One(SamplingContent::Text(TextContent::new(text)))
    }

    /// The blocks, one or many.
    pub fn blocks(&self) -> &[SamplingContent] {
        match self {
            SamplingContents::One(b) => std::slice::from_ref(b),
            SamplingContents::Many(v) => v,
        }
    }
}

/// The model asks to call a tool (sampling with tools, 2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolUseContent {
    /// Unique id of this tool use.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The tool's arguments.
    pub input: JsonObject,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool use, sent back to the model (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The id of the tool use this answers.
    pub tool_use_id: String,
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<serde_json::Value>,
    /// Whether the tool use failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
