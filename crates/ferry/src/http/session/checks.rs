//! What every session-era request is checked against: its session (400 without one, 404
//! unknown or expired), the `MCP-Protocol-Version` rules, and the refusals for limits.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::{Era, ProtocolVersion};

use super::state::Session;
use crate::http::stateless::error_response;
use crate::http::{Shared, headers};

pub(super) fn too_many_streams(limit: usize) -> Response {
    error_response(
        StatusCode::TOO_MANY_REQUESTS,
        None,
        ErrorObject::invalid_request(format!(
            "too many open streams on this session (limit {limit}); close one first"
        )),
    )
}

pub(super) fn standalone_conflict() -> Response {
    error_response(
        StatusCode::CONFLICT,
        None,
        ErrorObject::invalid_request("Conflict: this session already has a standalone SSE stream"),
    )
}

/// 400 for a session-era request without a session: -32602 as 2026-07-28 requires for a
/// request missing its `_meta` fields, with both ways forward in the message.
pub(super) fn missing_session() -> Response {
    error_response(
        StatusCode::BAD_REQUEST,
        None,
        ErrorObject::invalid_params(format!(
            "Bad Request: no Mcp-Session-Id header: send initialize first to start a session \
             (2025-11-25 and earlier), or carry {} in the request's _meta (2026-07-28)",
            ferry_protocol::types::keys::PROTOCOL_VERSION
        )),
    )
}

pub(super) fn unknown_session() -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        None,
        ErrorObject::new(
            -32001,
            "Session not found: it ended or expired; send initialize to start a new one",
        ),
    )
}

pub(super) fn bad_request(message: impl std::fmt::Display) -> Response {
    error_response(
        StatusCode::BAD_REQUEST,
        None,
        ErrorObject::invalid_request(message),
    )
}

/// The `MCP-Protocol-Version` rules of a session (see the module docs).
pub(super) fn check_version(
    shared: &Shared,
    headers: &HeaderMap,
    session: &Session,
) -> Result<(), Response> {
    let header = headers::protocol_version(headers)
        .map_err(|e| error_response(StatusCode::BAD_REQUEST, None, e))?;
    let Some(header) = header else {
        return Ok(());
    };
    let versions = shared.backend.versions();
    let supported = header
        .parse::<ProtocolVersion>()
        .ok()
        .filter(|v| v.era() == Era::Session && versions.contains(*v));
    let Some(version) = supported else {
        let list: Vec<&str> = versions
            .versions()
            .iter()
            .filter(|v| v.era() == Era::Session)
            .map(|v| v.as_str())
            .collect();
        return Err(bad_request(format!(
            "Bad Request: unsupported MCP-Protocol-Version {header:?} (supported: {})",
            list.join(", ")
        )));
    };
    let negotiated = session.version();
    if version > negotiated {
        return Err(bad_request(format!(
            "Bad Request: MCP-Protocol-Version {header} is newer than the session's {negotiated}"
        )));
    }
    Ok(())
}

/// `GET` or `DELETE` without a session id.
pub(super) fn method_not_allowed() -> Response {
    let mut response = error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        None,
        ErrorObject::invalid_request(
            "GET and DELETE need an Mcp-Session-Id (session era); stateless requests are POSTed",
        ),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}
