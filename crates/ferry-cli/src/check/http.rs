//! The Streamable HTTP transport: status codes, content types, sessions, the protocol
//! version header, Origin protection, and in the stateless era the request headers.

use ferry::protocol::{Era, ProtocolVersion};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::http_peer::{SESSION, VERSION, content_type};
use super::model::{Outcome, requirement};
use super::probe::Probe;
use super::target::shorten;

requirement!(
    REACHABLE,
    "http.reachable",
    Http,
    Must,
    "every POST of the checker gets an HTTP response"
);
requirement!(
    ACCEPTED_202,
    "http.notification-202",
    Http,
    Must,
    "a POSTed notification or response is answered 202 Accepted (or an error status if refused)"
);
requirement!(
    REQUEST_CONTENT_TYPE,
    "http.request-content-type",
    Http,
    Must,
    "a POSTed request is answered with Content-Type application/json or text/event-stream"
);
requirement!(
    SESSION_ID_VISIBLE,
    "http.session-id-visible-ascii",
    Http,
    Must,
    "a session id contains only visible ASCII (0x21 to 0x7E)"
);
requirement!(
    MISSING_SESSION,
    "http.missing-session-400",
    Http,
    Should,
    "a request without the session id (once one was assigned) is answered 400 Bad Request"
);
requirement!(
    UNKNOWN_SESSION,
    "http.unknown-session-404",
    Http,
    Must,
    "a request with an unknown session id is answered 404 Not Found"
);
requirement!(
    DELETE_ENDS,
    "http.delete-ends-session",
    Http,
    Must,
    "DELETE with the session id ends the session (or is refused with 405): later requests get 404"
);
requirement!(
    GET_STREAM,
    "http.get-sse-or-405",
    Http,
    Must,
    "GET on the endpoint opens an SSE stream (text/event-stream) or is refused with 405"
);
requirement!(
    VERSION_HEADER,
    "http.invalid-protocol-version-400",
    Http,
    Must,
    "a request with an unsupported MCP-Protocol-Version header is answered 400 Bad Request (from 2025-06-18)"
);
requirement!(
    ORIGIN,
    "http.origin-403",
    Http,
    Must,
    "a request with an invalid Origin header is answered 403 Forbidden"
);
requirement!(
    HEADER_MISMATCH,
    "http.header-mismatch-400",
    Http,
    Must,
    "an MCP-Protocol-Version header that differs from the body's _meta is answered 400 (2026-07-28)"
);
requirement!(
    UNKNOWN_METHOD_404,
    "http.unknown-method-404",
    Http,
    Must,
    "an unknown method is answered 404 Not Found with error -32601 (2026-07-28)"
);
requirement!(
    RESUMABLE,
    "http.resumability",
    Http,
    Should,
    "a stream with event ids can be resumed with Last-Event-ID"
);

/// After the handshake of a session-era revision: the session id's form, and the version
/// header from now on.
pub(crate) fn after_handshake(probe: &mut Probe<'_>) {
    let revision = probe.revision;
    let Some(http) = &mut probe.conn.http else {
        return;
    };
    if revision >= ProtocolVersion::V2025_06_18 {
        http.version = Some(revision.as_str().to_owned());
    }
    if revision.era() == Era::Stateless {
        http.stateless = true;
        return;
    }
    let session = http.session.clone();
    match session {
        None => probe.record(
            &SESSION_ID_VISIBLE,
            Outcome::Skip("the server assigned no session id".into()),
        ),
        Some(id) => probe.expect(
            &SESSION_ID_VISIBLE,
            id.bytes().all(|b| (0x21..=0x7e).contains(&b)),
            || format!("session id {id:?}"),
        ),
    }
}

/// A request body the server must answer with a result in this revision.
fn answerable(probe: &Probe<'_>, id: &str) -> String {
    let mut message = json!({"jsonrpc": "2.0", "id": id, "method": probe.barrier_method()});
    let params = probe.params(json!({}));
    if params.as_object().is_some_and(|p| !p.is_empty()) {
        message["params"] = params;
    }
    message.to_string()
}

/// Every HTTP check of the revision (HTTP targets only; run last: it ends the session).
pub(crate) async fn check(probe: &mut Probe<'_>) {
    let Some(http) = &probe.conn.http else { return };
    let exchanges = http.exchanges.clone();
    let errors = std::mem::take(&mut probe.conn.transport_errors);
    match errors.first() {
        None => probe.record(&REACHABLE, Outcome::Pass),
        Some(first) => probe.record(&REACHABLE, Outcome::Fail(first.clone())),
    }
    for exchange in &exchanges {
        let what = exchange.method.as_deref().unwrap_or("a response");
        if exchange.is_request && exchange.status == StatusCode::OK {
            let ok = matches!(
                exchange.content_type.as_str(),
                "application/json" | "text/event-stream"
            );
            probe.expect(&REQUEST_CONTENT_TYPE, ok, || {
                format!(
                    "POST {what}: 200 with Content-Type {:?}",
                    exchange.content_type
                )
            });
        } else if !exchange.is_request {
            let ok = exchange.status == StatusCode::ACCEPTED || exchange.status.is_client_error();
            probe.expect(&ACCEPTED_202, ok, || {
                format!("POST of {what} (no request in it): {}", exchange.status)
            });
        }
    }
    let stateless = probe.revision.era() == Era::Stateless;
    origin(probe).await;
    get_stream(probe).await;
    if stateless {
        stateless_headers(probe).await;
    } else {
        version_header(probe).await;
        sessions(probe).await;
    }
    probe.record(
        &RESUMABLE,
        Outcome::Skip("not checked by this version of ferry check".into()),
    );
}

/// Send `body` (POST) with `headers`; `bare` leaves out the session and version headers.
async fn post(
    probe: &Probe<'_>,
    headers: &[(&str, &str)],
    body: &str,
    bare: bool,
) -> Result<(StatusCode, String), String> {
    let Some(http) = &probe.conn.http else {
        return Err("not HTTP".into());
    };
    let mut all = vec![("accept", "application/json, text/event-stream")];
    all.extend_from_slice(headers);
    http.raw(Method::POST, &all, Some(body), bare)
        .await
        .map(|(status, _, text)| (status, text))
}

fn judged(status: Result<(StatusCode, String), String>, expected: &[u16], what: &str) -> Outcome {
    match status {
        Ok((status, _)) if expected.contains(&status.as_u16()) => Outcome::Pass,
        Ok((status, body)) => Outcome::Fail(format!("{what}: {status} {}", shorten(&body, 120))),
        Err(e) => Outcome::Fail(format!("{what}: {e}")),
    }
}

async fn origin(probe: &mut Probe<'_>) {
    let body = answerable(probe, "ferry-check-origin");
    let reply = post(
        probe,
        &[("origin", "http://ferry-check.invalid")],
        &body,
        false,
    )
    .await;
    let outcome = judged(
        reply,
        &[403],
        "POST with Origin: http://ferry-check.invalid",
    );
    probe.record(&ORIGIN, outcome);
}

async fn get_stream(probe: &mut Probe<'_>) {
    let Some(http) = &probe.conn.http else { return };
    let reply = http
        .raw(Method::GET, &[("accept", "text/event-stream")], None, false)
        .await;
    let outcome = match reply {
        Ok((StatusCode::METHOD_NOT_ALLOWED, _, _)) => Outcome::Pass,
        Ok((status, headers, _))
            if status.is_success() && content_type(&headers) == "text/event-stream" =>
        {
            Outcome::Pass
        }
        Ok((status, headers, body)) => Outcome::Fail(format!(
            "GET: {status}, Content-Type {:?} {}",
            content_type(&headers),
            shorten(&body, 120)
        )),
        Err(e) => Outcome::Fail(format!("GET: {e}")),
    };
    probe.record(&GET_STREAM, outcome);
}

async fn version_header(probe: &mut Probe<'_>) {
    if probe.revision < ProtocolVersion::V2025_06_18 {
        return;
    }
    let body = answerable(probe, "ferry-check-version");
    let Some(http) = &probe.conn.http else { return };
    let session = http.session.clone();
    let mut headers = vec![(VERSION, "1999-01-01")];
    if let Some(session) = &session {
        headers.push((SESSION, session.as_str()));
    }
    let reply = post(probe, &headers, &body, true).await;
    let outcome = judged(reply, &[400], "POST with MCP-Protocol-Version: 1999-01-01");
    probe.record(&VERSION_HEADER, outcome);
}

async fn sessions(probe: &mut Probe<'_>) {
    let Some(http) = &probe.conn.http else { return };
    let Some(session) = http.session.clone() else {
        for requirement in [&MISSING_SESSION, &UNKNOWN_SESSION, &DELETE_ENDS] {
            probe.record(
                requirement,
                Outcome::Skip("the server assigned no session id".into()),
            );
        }
        return;
    };
    let version = http.version.clone();
    let body = answerable(probe, "ferry-check-session");
    let mut headers: Vec<(&str, &str)> = Vec::new();
    if let Some(version) = &version {
        headers.push((VERSION, version.as_str()));
    }
    let reply = post(probe, &headers, &body, true).await;
    let outcome = judged(reply, &[400], "POST without Mcp-Session-Id");
    probe.record(&MISSING_SESSION, outcome);
    let mut unknown = headers.clone();
    unknown.push((SESSION, "ferry-check-no-such-session"));
    let reply = post(probe, &unknown, &body, true).await;
    let outcome = judged(
        reply,
        &[404],
        "POST with Mcp-Session-Id: ferry-check-no-such-session",
    );
    probe.record(&UNKNOWN_SESSION, outcome);

    let Some(http) = &probe.conn.http else { return };
    let deleted = http.raw(Method::DELETE, &[], None, false).await;
    let outcome = match deleted {
        Ok((StatusCode::METHOD_NOT_ALLOWED, _, _)) => Outcome::Pass,
        Ok((status, _, _)) if status.is_success() => {
            let mut headers = headers.clone();
            headers.push((SESSION, session.as_str()));
            let after = post(probe, &headers, &body, true).await;
            judged(after, &[404], "POST with the session id after DELETE")
        }
        Ok((status, _, body)) => Outcome::Fail(format!("DELETE: {status} {}", shorten(&body, 120))),
        Err(e) => Outcome::Fail(format!("DELETE: {e}")),
    };
    probe.record(&DELETE_ENDS, outcome);
    if let Some(http) = &mut probe.conn.http {
        http.session = None; // ended
    }
}

async fn stateless_headers(probe: &mut Probe<'_>) {
    let body = answerable(probe, "ferry-check-mismatch");
    let method = probe.barrier_method();
    let reply = post(
        probe,
        &[(VERSION, "2025-11-25"), ("mcp-method", method)],
        &body,
        true,
    )
    .await;
    let outcome = judged(
        reply,
        &[400],
        "POST with MCP-Protocol-Version 2025-11-25 and _meta 2026-07-28",
    );
    probe.record(&HEADER_MISMATCH, outcome);

    let params = probe.params(json!({}));
    let body = json!({"jsonrpc": "2.0", "id": "ferry-check-404", "method": "ferry-check/no-such-method", "params": params}).to_string();
    let version = probe.revision.as_str();
    let reply = post(
        probe,
        &[
            (VERSION, version),
            ("mcp-method", "ferry-check/no-such-method"),
        ],
        &body,
        true,
    )
    .await;
    let outcome = match reply {
        Ok((StatusCode::NOT_FOUND, text)) => {
            let code = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64));
            if code == Some(-32601) {
                Outcome::Pass
            } else {
                Outcome::Fail(format!("404 without error -32601: {}", shorten(&text, 120)))
            }
        }
        Ok((status, text)) => {
            Outcome::Fail(format!("unknown method: {status} {}", shorten(&text, 120)))
        }
        Err(e) => Outcome::Fail(format!("unknown method: {e}")),
    };
    probe.record(&UNKNOWN_METHOD_404, outcome);
}

/// The HTTP status of the last POST, for an HTTP connection.
pub(crate) fn last_status(probe: &Probe<'_>) -> Option<StatusCode> {
    probe.conn.http.as_ref()?.exchanges.last().map(|e| e.status)
}
