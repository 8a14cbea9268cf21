//! The stateless era's Streamable HTTP rules (2026-07-28): the request metadata headers
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) must match the body or the request
//! is refused with 400 and `HeaderMismatch` (-32020); an unsupported version is 400 with
//! -32022; an unknown method 404 with -32601; GET and DELETE (sessions, standalone
//! streams) are gone: 405.

use reqwest::Method;
use serde_json::{Value, json};

use super::http::{answerable, judged, judged_error, post};
use super::http_peer::VERSION;
use super::model::requirement;
use super::probe::{Probe, client_info};

requirement!(
    VERSION_MISMATCH,
    "http.header-mismatch-400",
    Http,
    Must,
    "an MCP-Protocol-Version header unlike the body's _meta protocolVersion is answered 400 with error -32020 (2026-07-28)",
    "basic/transports/streamable-http#protocol-version-header"
);
requirement!(
    METHOD_MISMATCH,
    "http.mcp-method-mismatch-400",
    Http,
    Must,
    "an Mcp-Method header unlike the body's method is answered 400 with error -32020 (2026-07-28)",
    "basic/transports/streamable-http#server-validation"
);
requirement!(
    METHOD_MISSING,
    "http.mcp-method-missing-400",
    Http,
    Must,
    "a request without the Mcp-Method header is answered 400 with error -32020 (2026-07-28)",
    "basic/transports/streamable-http#server-validation"
);
requirement!(
    NAME_MISMATCH,
    "http.mcp-name-mismatch-400",
    Http,
    Must,
    "an Mcp-Name header unlike the body's params.name or params.uri is answered 400 with error -32020 (2026-07-28)",
    "basic/transports/streamable-http#server-validation"
);
requirement!(
    UNSUPPORTED_VERSION,
    "http.unsupported-version-400",
    Http,
    Must,
    "a request for a protocol version the server does not serve is answered 400 with error -32022 (2026-07-28)",
    "basic/transports/streamable-http#protocol-version-header"
);
requirement!(
    UNKNOWN_METHOD_404,
    "http.unknown-method-404",
    Http,
    Must,
    "an unknown method is answered 404 Not Found with error -32601 (2026-07-28)",
    "basic/transports/streamable-http#protocol-version-header"
);
requirement!(
    GET_DELETE_405,
    "http.get-delete-405",
    Http,
    Should,
    "GET and DELETE without a session are answered 405 Method Not Allowed (2026-07-28: no sessions, no standalone stream)",
    "basic/transports/streamable-http#earlier-streamable-http-revisions"
);

/// The metadata headers a conforming client sends with `body` in the stateless era (none
/// in the session era: the connection adds its own).
pub(crate) fn headers_for(probe: &Probe<'_>, body: &str) -> Vec<(&'static str, String)> {
    if !probe.stateless() {
        return Vec::new();
    }
    let message: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let mut headers = vec![(VERSION, probe.revision.as_str().to_owned())];
    if let Some(method) = message.get("method").and_then(Value::as_str) {
        headers.push(("mcp-method", method.to_owned()));
    }
    let name = message
        .pointer("/params/name")
        .or_else(|| message.pointer("/params/uri"));
    if let Some(name) = name.and_then(Value::as_str) {
        headers.push(("mcp-name", name.to_owned()));
    }
    headers
}

/// A request message in this era's dialect.
fn request(probe: &Probe<'_>, id: &str, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": probe.params(params)})
        .to_string()
}

/// Every header rule of the era (HTTP targets only).
pub(crate) async fn check(probe: &mut Probe<'_>) {
    let version = probe.revision.as_str();
    let method = probe.barrier_method();
    let body = answerable(probe, "ferry-check-mismatch");
    let reply = post(
        probe,
        &[(VERSION, "2025-11-25"), ("mcp-method", method)],
        &body,
        true,
    )
    .await;
    let what = format!("POST {method} with MCP-Protocol-Version 2025-11-25, _meta {version}");
    probe.record(&VERSION_MISMATCH, judged_error(reply, 400, -32020, &what));

    let reply = post(
        probe,
        &[(VERSION, version), ("mcp-method", "tools/list")],
        &body,
        true,
    )
    .await;
    let what = format!("POST {method} with Mcp-Method: tools/list");
    probe.record(&METHOD_MISMATCH, judged_error(reply, 400, -32020, &what));

    let reply = post(probe, &[(VERSION, version)], &body, true).await;
    let what = format!("POST {method} without Mcp-Method");
    probe.record(&METHOD_MISSING, judged_error(reply, 400, -32020, &what));

    name_mismatch(probe).await;
    unsupported_version(probe).await;
    unknown_method(probe).await;
    get_delete(probe).await;
}

/// A named request whose `Mcp-Name` names something else. The names are made up: a server
/// that looked the body's name up instead of refusing the request answers an error of
/// another kind, and nothing is run.
async fn name_mismatch(probe: &mut Probe<'_>) {
    let (method, params) = if probe.declares("prompts") {
        ("prompts/get", json!({"name": "ferry-check-body-name"}))
    } else if probe.declares("resources") {
        ("resources/read", json!({"uri": "ferry-check://body-name"}))
    } else if probe.declares("tools") {
        (
            "tools/call",
            json!({"name": "ferry-check-body-name", "arguments": {}}),
        )
    } else {
        probe.record(
            &NAME_MISMATCH,
            super::model::Outcome::Skip(
                "the server declares no tools, prompts or resources (no named request)".into(),
            ),
        );
        return;
    };
    let body = request(probe, "ferry-check-name", method, params);
    let version = probe.revision.as_str();
    let reply = post(
        probe,
        &[
            (VERSION, version),
            ("mcp-method", method),
            ("mcp-name", "ferry-check-header-name"),
        ],
        &body,
        true,
    )
    .await;
    let what =
        format!("POST {method} of ferry-check-body-name with Mcp-Name: ferry-check-header-name");
    probe.record(&NAME_MISMATCH, judged_error(reply, 400, -32020, &what));
}

async fn unsupported_version(probe: &mut Probe<'_>) {
    let unsupported = "1999-01-01";
    let body =
        json!({"jsonrpc": "2.0", "id": "ferry-check-unsupported", "method": "server/discover",
        "params": {"_meta": {
            ferry::protocol::types::keys::PROTOCOL_VERSION: unsupported,
            ferry::protocol::types::keys::CLIENT_CAPABILITIES: {},
            ferry::protocol::types::keys::CLIENT_INFO: client_info(),
        }}})
        .to_string();
    let reply = post(
        probe,
        &[(VERSION, unsupported), ("mcp-method", "server/discover")],
        &body,
        true,
    )
    .await;
    let what = format!("POST server/discover with protocol version {unsupported}");
    probe.record(
        &UNSUPPORTED_VERSION,
        judged_error(reply, 400, -32022, &what),
    );
}

async fn unknown_method(probe: &mut Probe<'_>) {
    let method = "ferry-check/no-such-method";
    let body = request(probe, "ferry-check-404", method, json!({}));
    let version = probe.revision.as_str();
    let reply = post(
        probe,
        &[(VERSION, version), ("mcp-method", method)],
        &body,
        true,
    )
    .await;
    let what = format!("POST {method}");
    probe.record(&UNKNOWN_METHOD_404, judged_error(reply, 404, -32601, &what));
}

async fn get_delete(probe: &mut Probe<'_>) {
    let Some(http) = &probe.conn.http else { return };
    let version = probe.revision.as_str();
    let mut outcomes = Vec::new();
    for (method, accept) in [
        (Method::GET, "text/event-stream"),
        (Method::DELETE, "application/json, text/event-stream"),
    ] {
        let reply = http
            .raw(
                method.clone(),
                &[(VERSION, version), ("accept", accept)],
                None,
                true,
            )
            .await
            .map(|(status, _, body)| (status, body));
        outcomes.push(judged(
            reply,
            &[405],
            &format!("{method} without a session"),
        ));
    }
    for outcome in outcomes {
        probe.record(&GET_DELETE_405, outcome);
    }
}
