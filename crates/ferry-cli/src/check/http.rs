//! The Streamable HTTP transport, in both eras: status codes, content types, the `Accept`
//! rules, Origin protection, GET, and whether the endpoint is encrypted. The session era's
//! sessions and version header are in [`super::http_session`], resumability in
//! [`super::http_resume`], the stateless era's request headers in
//! [`super::stateless_http`].

use ferry::protocol::{Era, ProtocolVersion};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::http_peer::content_type;
use super::model::{Outcome, requirement};
use super::probe::Probe;
use super::target::shorten;
use super::{http_resume, http_session, stateless_http};

requirement!(
    REACHABLE,
    "http.reachable",
    Http,
    Must,
    "every POST of the checker gets an HTTP response",
    "basic/transports#streamable-http"
);
requirement!(
    ACCEPTED_202,
    "http.notification-202",
    Http,
    Must,
    "a POSTed notification or response is answered 202 Accepted (or an error status if refused)",
    "basic/transports#sending-messages-to-the-server"
);
requirement!(
    REQUEST_CONTENT_TYPE,
    "http.request-content-type",
    Http,
    Must,
    "a POSTed request is answered with Content-Type application/json or text/event-stream",
    "basic/transports#sending-messages-to-the-server"
);
requirement!(
    ACCEPT_POST,
    "http.post-accept-406",
    Http,
    Should,
    "a POST whose Accept header lists neither application/json nor text/event-stream is refused with 406 Not Acceptable",
    "basic/transports#sending-messages-to-the-server"
);
requirement!(
    ACCEPT_GET,
    "http.get-accept-406",
    Http,
    Should,
    "a GET whose Accept header does not list text/event-stream is refused with 406 Not Acceptable (or 405 where GET is not offered)",
    "basic/transports#listening-for-messages-from-the-server"
);
requirement!(
    GET_STREAM,
    "http.get-sse-or-405",
    Http,
    Must,
    "GET on the endpoint opens an SSE stream (text/event-stream) or is refused with 405 (session era)",
    "basic/transports#listening-for-messages-from-the-server"
);
requirement!(
    ORIGIN,
    "http.origin-403",
    Http,
    Must,
    "a request with an invalid Origin header is answered 403 Forbidden",
    "basic/transports#security-warning"
);
requirement!(
    ENCRYPTED,
    "http.https-unless-loopback",
    Http,
    Should,
    "an endpoint reached over the network is served over https (plain http only on a loopback address)",
    "basic/transports#security-warning"
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
    http_session::after_handshake(probe);
}

/// A request body the server must answer with a result in this revision.
pub(crate) fn answerable(probe: &Probe<'_>, id: &str) -> String {
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
    let url = http.url.clone();
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
    encrypted(probe, &url);
    origin(probe).await;
    accept_post(probe).await;
    if probe.stateless() {
        stateless_http::check(probe).await;
    } else {
        get_stream(probe).await;
        accept_get(probe).await;
        http_resume::check(probe).await;
        http_session::check(probe).await;
    }
}

/// Send `body` (POST) with `headers`; `bare` leaves out the session and version headers.
/// The default `Accept` (both types) is replaced by an `accept` in `headers`.
pub(crate) async fn post(
    probe: &Probe<'_>,
    headers: &[(&str, &str)],
    body: &str,
    bare: bool,
) -> Result<(StatusCode, String), String> {
    let Some(http) = &probe.conn.http else {
        return Err("not HTTP".into());
    };
    let mut all = Vec::new();
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("accept"))
    {
        all.push(("accept", "application/json, text/event-stream"));
    }
    all.extend_from_slice(headers);
    http.raw(Method::POST, &all, Some(body), bare)
        .await
        .map(|(status, _, text)| (status, text))
}

/// Pass when the status is one of `expected`.
pub(crate) fn judged(
    status: Result<(StatusCode, String), String>,
    expected: &[u16],
    what: &str,
) -> Outcome {
    match status {
        Ok((status, _)) if expected.contains(&status.as_u16()) => Outcome::Pass,
        Ok((status, body)) => Outcome::Fail(format!("{what}: {status} {}", shorten(&body, 120))),
        Err(e) => Outcome::Fail(format!("{what}: {e}")),
    }
}

/// Pass when the status is `expected` and the body a JSON-RPC error with `code`.
pub(crate) fn judged_error(
    status: Result<(StatusCode, String), String>,
    expected: u16,
    code: i64,
    what: &str,
) -> Outcome {
    match status {
        Ok((status, body)) if status.as_u16() == expected => {
            let found = serde_json::from_str::<Value>(&body)
                .ok()
                .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64));
            if found == Some(code) {
                Outcome::Pass
            } else {
                Outcome::Fail(format!(
                    "{what}: {status} without error {code}: {}",
                    shorten(&body, 120)
                ))
            }
        }
        Ok((status, body)) => Outcome::Fail(format!(
            "{what}: {status} {} (expected {expected} with error {code})",
            shorten(&body, 120)
        )),
        Err(e) => Outcome::Fail(format!("{what}: {e}")),
    }
}

/// Plain http is fine on loopback only.
fn encrypted(probe: &mut Probe<'_>, url: &str) {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return;
    };
    let host = parsed.host_str().unwrap_or_default();
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    let ok = parsed.scheme() == "https" || loopback;
    probe.expect(&ENCRYPTED, ok, || {
        format!(
            "plain http to {}: messages and credentials travel unencrypted over the network",
            parsed.host_str().unwrap_or("?")
        )
    });
}

async fn origin(probe: &mut Probe<'_>) {
    let body = answerable(probe, "ferry-check-origin");
    let headers = stateless_http::headers_for(probe, &body);
    let mut headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    headers.push(("origin", "http://ferry-check.invalid"));
    let reply = post(probe, &headers, &body, false).await;
    let outcome = judged(
        reply,
        &[403],
        "POST with Origin: http://ferry-check.invalid",
    );
    probe.record(&ORIGIN, outcome);
}

async fn accept_post(probe: &mut Probe<'_>) {
    let body = answerable(probe, "ferry-check-accept");
    let headers = stateless_http::headers_for(probe, &body);
    let mut headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    headers.push(("accept", "text/html"));
    let reply = post(probe, &headers, &body, false).await;
    let outcome = judged(reply, &[406], "POST with Accept: text/html");
    probe.record(&ACCEPT_POST, outcome);
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

async fn accept_get(probe: &mut Probe<'_>) {
    let Some(http) = &probe.conn.http else { return };
    let reply = http
        .raw(Method::GET, &[("accept", "application/json")], None, false)
        .await
        .map(|(status, _, body)| (status, body));
    let outcome = judged(reply, &[405, 406], "GET with Accept: application/json");
    probe.record(&ACCEPT_GET, outcome);
}

/// The HTTP status of the last POST, for an HTTP connection.
pub(crate) fn last_status(probe: &Probe<'_>) -> Option<StatusCode> {
    probe.conn.http.as_ref()?.exchanges.last().map(|e| e.status)
}
