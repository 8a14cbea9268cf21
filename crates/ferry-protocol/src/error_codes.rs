//! Error codes, named, with their revision history.
//!
//! | code     | name                                | revisions |
//! |----------|-------------------------------------|-----------|
//! | `-32700` | parse error                         | all (JSON-RPC 2.0) |
//! | `-32600` | invalid request                     | all |
//! | `-32601` | method not found                    | all |
//! | `-32602` | invalid params                      | all; also "resource not found" from 2026-07-28 |
//! | `-32603` | internal error                      | all |
//! | `-32002` | resource not found                  | 2024-11-05 .. 2025-11-25 (clients keep accepting it) |
//! | `-32042` | URL elicitation required            | 2025-11-25 only |
//! | `-32020` | header mismatch                     | from 2026-07-28 |
//! | `-32021` | missing required client capability  | from 2026-07-28 |
//! | `-32022` | unsupported protocol version        | from 2026-07-28 |
//! | `-32800` | request cancelled                   | not an MCP code (LSP's); see [`REQUEST_CANCELLED`] |
//!
//! Where the seeds disagree with the spec, Ferry follows the spec: seeds 001 and 002 use
//! `-32001` (and 002 `-32003`) for "not found"; the spec defines `-32002` for a missing
//! resource until 2025-11-25 and `-32602` afterwards, and an unknown tool or prompt is
//! `-32602` (invalid params) in every revision. From 2026-07-28 the range `-32000..=-32019`
//! is "legacy": new code must not emit it.

use crate::version::{Feature, ProtocolVersion};

/// Invalid JSON (or invalid UTF-8) was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON is not a valid JSON-RPC request.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available (in this revision or state).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters (also: unknown tool, prompt, and from 2026-07-28 resource).
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error (also: a handler that panicked).
pub const INTERNAL_ERROR: i64 = -32603;
/// Resource not found, 2024-11-05 .. 2025-11-25. Use [`resource_not_found`] to pick the
/// right code for a revision.
pub const RESOURCE_NOT_FOUND_LEGACY: i64 = -32002;
/// URL elicitation required (2025-11-25 only): `data.elicitations` lists URL elicitations.
pub const URL_ELICITATION_REQUIRED: i64 = -32042;
/// An HTTP `Mcp-*` header disagrees with the body (2026-07-28).
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a client capability the request's `_meta` did not declare (2026-07-28);
/// `data.requiredCapabilities` names it.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// The request's protocol version is not supported (2026-07-28); `data.requested` and
/// `data.supported` say which ones are.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// Request cancelled. Not defined by MCP (it comes from LSP and seed 001): the spec says a
/// cancelled request gets no response at all, so Ferry never sends it; Ferry's client maps
/// it, when a peer sends it, to a cancellation error.
pub const REQUEST_CANCELLED: i64 = -32800;

/// The code for "resource not found" in `version`: `-32002` until 2025-11-25, `-32602` after.
pub fn resource_not_found(version: ProtocolVersion) -> i64 {
    if version.has(Feature::RequestMeta) {
        INVALID_PARAMS
    } else {
        RESOURCE_NOT_FOUND_LEGACY
    }
}

/// The standard name of a code, for messages and logs (`None` for application codes).
pub fn name(code: i64) -> Option<&'static str> {
    Some(match code {
        PARSE_ERROR => "Parse error",
        INVALID_REQUEST => "Invalid Request",
        METHOD_NOT_FOUND => "Method not found",
        INVALID_PARAMS => "Invalid params",
        INTERNAL_ERROR => "Internal error",
        RESOURCE_NOT_FOUND_LEGACY => "Resource not found",
        URL_ELICITATION_REQUIRED => "URL elicitation required",
        HEADER_MISMATCH => "Header mismatch",
        MISSING_REQUIRED_CLIENT_CAPABILITY => "Missing required client capability",
        UNSUPPORTED_PROTOCOL_VERSION => "Unsupported protocol version",
        REQUEST_CANCELLED => "Request cancelled",
        _ => return None,
    })
}

/// Whether `code` may be emitted by an implementation of `version`.
///
/// From 2026-07-28, `-32002` and `-32042` are retired and the legacy range
/// `-32000..=-32019` should not be used; the MCP range `-32020..=-32099` holds only codes the
/// spec defines.
pub fn allowed_in(code: i64, version: ProtocolVersion) -> bool {
    match code {
        PARSE_ERROR | INVALID_REQUEST | METHOD_NOT_FOUND | INVALID_PARAMS | INTERNAL_ERROR => true,
        RESOURCE_NOT_FOUND_LEGACY => !version.has(Feature::RequestMeta),
        URL_ELICITATION_REQUIRED => version.has(Feature::UrlElicitationRequiredError),
        HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION => {
            version.has(Feature::RequestMeta)
        }
        -32019..=-32000 => !version.has(Feature::RequestMeta),
        -32099..=-32020 => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProtocolVersion::*;

    #[test]
    fn resource_not_found_moves_in_2026() {
        assert_eq!(resource_not_found(V2024_11_05), -32002);
        assert_eq!(resource_not_found(V2025_11_25), -32002);
        assert_eq!(resource_not_found(V2026_07_28), -32602);
    }

    #[test]
    fn codes_are_gated_by_revision() {
        assert!(allowed_in(URL_ELICITATION_REQUIRED, V2025_11_25));
        assert!(!allowed_in(URL_ELICITATION_REQUIRED, V2025_06_18));
        assert!(!allowed_in(URL_ELICITATION_REQUIRED, V2026_07_28));
        assert!(allowed_in(UNSUPPORTED_PROTOCOL_VERSION, V2026_07_28));
        assert!(!allowed_in(RESOURCE_NOT_FOUND_LEGACY, V2026_07_28));
        assert!(!allowed_in(-32050, V2026_07_28));
        assert!(allowed_in(-1, V2026_07_28));
        assert_eq!(name(-32601), Some("Method not found"));
    }
}
