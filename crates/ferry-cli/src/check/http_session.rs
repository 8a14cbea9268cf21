//! The session era's Streamable HTTP rules (2025-03-26 to 2025-11-25): the session id's
//! form, 400 without it, 404 for an unknown one, DELETE ends the session, and the
//! `MCP-Protocol-Version` header (from 2025-06-18).

use ferry::protocol::ProtocolVersion;
use reqwest::{Method, StatusCode};

use super::http::{answerable, judged, post};
use super::http_peer::{SESSION, VERSION};
use super::model::{Outcome, requirement};
use super::probe::Probe;
use super::target::shorten;

requirement!(
    SESSION_ID_VISIBLE,
    "http.session-id-visible-ascii",
    Http,
    Must,
    "a session id contains only visible ASCII (0x21 to 0x7E)",
    "basic/transports#session-management"
);
requirement!(
    MISSING_SESSION,
    "http.missing-session-400",
    Http,
    Should,
    "a request without the session id (once one was assigned) other than initialize is answered 400 Bad Request",
    "basic/transports#session-management"
);
requirement!(
    UNKNOWN_SESSION,
    "http.unknown-session-404",
    Http,
    Must,
    "a request with an unknown (or ended) session id is answered 404 Not Found",
    "basic/transports#session-management"
);
requirement!(
    DELETE_ENDS,
    "http.delete-ends-session",
    Http,
    Must,
    "DELETE with the session id ends the session (or is refused with 405): later requests get 404",
    "basic/transports#session-management"
);
requirement!(
    VERSION_HEADER,
    "http.invalid-protocol-version-400",
    Http,
    Must,
    "a request with an unsupported MCP-Protocol-Version header is answered 400 Bad Request (from 2025-06-18)",
    "basic/transports#protocol-version-header"
);

/// The session id's form, right after the handshake.
pub(crate) fn after_handshake(probe: &mut Probe<'_>) {
    let session = probe.conn.http.as_ref().and_then(|h| h.session.clone());
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

/// The version header, then the session rules (last: DELETE ends the session).
pub(crate) async fn check(probe: &mut Probe<'_>) {
    version_header(probe).await;
    sessions(probe).await;
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
    let outcome = judged(reply, &[400], "POST (ping) without Mcp-Session-Id");
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
            let outcome = judged(after, &[404], "POST with the session id after DELETE");
            if outcome == Outcome::Pass {
                // An ended session is an unknown one.
                probe.record(&UNKNOWN_SESSION, Outcome::Pass);
            }
            outcome
        }
        Ok((status, _, body)) => Outcome::Fail(format!("DELETE: {status} {}", shorten(&body, 120))),
        Err(e) => Outcome::Fail(format!("DELETE: {e}")),
    };
    probe.record(&DELETE_ENDS, outcome);
    if let Some(http) = &mut probe.conn.http {
        http.session = None; // ended
    }
}
