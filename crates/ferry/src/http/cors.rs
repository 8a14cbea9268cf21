//! CORS for browser clients on allowed origins (the `Origin` check itself is in
//! `guard.rs`: a foreign origin is refused with 403 before anything here runs, preflights
//! included).
//!
//! A preflight (`OPTIONS` with `Origin`) is answered 204 with the methods MCP uses and the
//! request headers asked for when each is one MCP defines (`MCP-Session-Id`,
//! `MCP-Protocol-Version`, `Last-Event-ID`, `Mcp-Method`, `Mcp-Name`, any `Mcp-Param-*`,
//! `Authorization`, `Content-Type`, `Accept`); a preflight asking for another header is
//! answered without permission for it, so the browser refuses the request. Every other
//! response to an allowed origin carries `Access-Control-Allow-Origin` (that origin, never
//! `*`) and exposes `MCP-Session-Id` and `WWW-Authenticate` to scripts. Written by hand:
//! four headers do not justify `tower-http` (and its dependency tree) here.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

const ALLOWED_HEADERS: &[&str] = &[
    "content-type",
    "accept",
    "authorization",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
];
const PARAM_PREFIX: &str = "mcp-param-";
const ALLOW_METHODS: &str = "GET, POST, DELETE, OPTIONS";
const EXPOSE_HEADERS: &str = "MCP-Session-Id, WWW-Authenticate";
/// How long a browser may cache a preflight: 10 minutes.
const MAX_AGE: &str = "600";

fn allowed(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    ALLOWED_HEADERS.contains(&name.as_str())
        || name
            .strip_prefix(PARAM_PREFIX)
            .is_some_and(|rest| !rest.is_empty())
}

/// The answer to a preflight from an allowed `origin`.
pub(crate) fn preflight(origin: &HeaderValue, request: &HeaderMap) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(ALLOW_METHODS),
    );
    let asked: Vec<&str> = request
        .get_all(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|name| allowed(name))
        .collect();
    let allow = if asked.is_empty() {
        ALLOWED_HEADERS.join(", ")
    } else {
        asked.join(", ")
    };
    if let Ok(value) = HeaderValue::from_str(&allow) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, value);
    }
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static(MAX_AGE),
    );
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
    response
}

/// Add the CORS headers of an allowed `origin` to a response.
pub(crate) fn decorate(response: &mut Response, origin: HeaderValue) {
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSE_HEADERS),
    );
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
}

#[cfg(test)]
mod tests {
    #[test]
    fn mcp_headers_are_allowed() {
        for ok in ["MCP-Session-Id", "mcp-param-region", " Authorization "] {
            assert!(super::allowed(ok), "{ok}");
        }
        for no in ["x-custom", "mcp-param-", "cookie"] {
            assert!(!super::allowed(no), "{no}");
        }
    }
}
