//! The `data` of MCP-defined errors.

use serde::{Deserialize, Serialize};

use super::capabilities::ClientCapabilities;

/// `data` of `-32022` unsupported protocol version (2026-07-28).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionData {
    /// The version the request named.
    pub requested: String,
    /// The versions the server supports.
    pub supported: Vec<String>,
}

/// `data` of `-32021` missing required client capability (2026-07-28).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs.
    pub required_capabilities: ClientCapabilities,
}
