//! `_meta`: the extension point on every request, result, notification and most objects,
//! with typed access to the well-known keys.

use serde::{Deserialize, Serialize};

use super::capabilities::ClientCapabilities;
use super::common::{Implementation, LoggingLevel, ProgressToken};
use super::tasks::RelatedTaskMetadata;
use crate::jsonrpc::RequestId;

/// A JSON object (`{ [key: string]: unknown }`).
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// `_meta` on objects (tools, resources, content...): a free-form JSON object.
pub type Meta = JsonObject;

/// Well-known `_meta` keys.
pub mod keys {
    /// The request's protocol version (2026-07-28, required on every client request).
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's capabilities for this request (2026-07-28, required).
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// The client's identity (2026-07-28, should be sent).
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The desired log level for this request (2026-07-28; absent means no log messages).
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// The server's identity on a result (2026-07-28).
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// The subscription a notification belongs to (2026-07-28, `subscriptions/listen`).
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// The task a message relates to (2025-11-25 tasks).
    pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
    /// The progress token of a request.
    pub const PROGRESS_TOKEN: &str = "progressToken";
    /// W3C trace context (OpenTelemetry propagation, SEP-414).
    pub const TRACEPARENT: &str = "traceparent";
    /// W3C trace state.
    pub const TRACESTATE: &str = "tracestate";
    /// W3C baggage.
    pub const BAGGAGE: &str = "baggage";
}

/// `_meta` of a request: progress token, and in the stateless era the version,
/// capabilities, identity and log level of the client for this one request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestMeta {
    /// The token for `notifications/progress` about this request.
    #[serde(
        rename = "progressToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub progress_token: Option<ProgressToken>,
    /// `io.modelcontextprotocol/protocolVersion` (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// `io.modelcontextprotocol/clientCapabilities` (2026-07-28). Boxed, as is `client_info`:
    /// they are rare and large, and every request and handler context carries a `_meta`.
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<Box<ClientCapabilities>>,
    /// `io.modelcontextprotocol/clientInfo` (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Box<Implementation>>,
    /// `io.modelcontextprotocol/logLevel` (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// `io.modelcontextprotocol/related-task` (2025-11-25).
    #[serde(
        rename = "io.modelcontextprotocol/related-task",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub related_task: Option<RelatedTaskMetadata>,
    /// Every other key (trace context, vendor keys), kept as is.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl RequestMeta {
    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self == &RequestMeta::default()
    }
}

/// `_meta` of a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultMeta {
    /// `io.modelcontextprotocol/serverInfo` (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// `io.modelcontextprotocol/subscriptionId` (2026-07-28, `subscriptions/listen` result).
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// `io.modelcontextprotocol/related-task` (2025-11-25).
    #[serde(
        rename = "io.modelcontextprotocol/related-task",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub related_task: Option<RelatedTaskMetadata>,
    /// Every other key.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// `_meta` of a notification.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationMeta {
    /// `io.modelcontextprotocol/subscriptionId` (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// `io.modelcontextprotocol/related-task` (2025-11-25).
    #[serde(
        rename = "io.modelcontextprotocol/related-task",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub related_task: Option<RelatedTaskMetadata>,
    /// Every other key.
    #[serde(flatten)]
    pub other: JsonObject,
}
