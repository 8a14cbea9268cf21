//! One request, one POST, exactly one response frame for the engine: the server's (from a
//! JSON body or from the request's SSE stream), or an error saying what went wrong over
//! HTTP (unreachable server, a status without a JSON-RPC body, a wrong content type, a
//! stream that ended first).

use std::sync::Arc;

use ferry_protocol::RequestId;
use ferry_protocol::error_codes::HEADER_MISMATCH;
use reqwest::header::{HeaderName, HeaderValue};
use reqwest::{Response, StatusCode, Url};
use serde_json::{Value, json};

use super::connection::{Failure, SESSION_ID, SessionState, Shared, body, hint, media_type};
use super::outgoing::{Outgoing, read_tools};
use super::restore::Restorable;
use super::{legacy, session, sse};

/// Send request `id` and hand its response (or a failure) to the engine.
pub(crate) async fn request(shared: Arc<Shared>, message: Outgoing, id: RequestId) {
    let outcome = exchange(&shared, &message, &id).await;
    shared.in_flight().remove(&id);
    match outcome {
        Ok(Some(frame)) => shared.deliver(frame).await,
        Ok(None) => {}
        Err(failure) => shared.fail(&id, failure).await,
    }
}

/// The response frame, or `None` when it will arrive on the 2024-11-05 event stream.
async fn exchange(
    shared: &Arc<Shared>,
    message: &Outgoing,
    id: &RequestId,
) -> Result<Option<Vec<u8>>, Failure> {
    let mut sent_again = false;
    loop {
        let state = shared.state().clone();
        if state.legacy.is_some() {
            legacy::request(shared, message, id).await?;
            return Ok(None);
        }
        if renewing(shared, message) {
            // Another request or the GET stream found the session gone and is starting a
            // new one: this request goes to the new session (read after the state above,
            // so a renewal that begins after this check is met by its 404 instead).
            drop(shared.reinit.lock().await);
            continue;
        }
        let metadata = match message.stateless_version() {
            Some(version) => message.metadata_headers(version, &shared.tools()),
            None => Vec::new(),
        };
        let response = post(shared, message, &state, &metadata).await?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND && state.id.is_some() && message.method() != "initialize"
        {
            if state.initialize.is_none() {
                // A session taken up (`resume`): there is no `initialize` to start anew.
                return Err(Failure::status(
                    status,
                    format!(
                        "the server does not know session {} (HTTP 404): it ended or expired",
                        state.id.as_deref().unwrap_or_default()
                    ),
                ));
            }
            session::reinitialize(shared, state.generation)
                .await
                .map_err(|e| {
                    Failure::status(
                        status,
                        format!("the session expired; starting a new one failed: {e}"),
                    )
                })?;
            let idempotent = message.idempotent(&shared.tools());
            if idempotent && !sent_again {
                sent_again = true;
                continue;
            }
            return Err(Failure::status(
                status,
                format!(
                    "the session expired and a new one was started, but {} was not sent again: \
                     it may not be safe to repeat",
                    message.method()
                ),
            ));
        }
        // The fallback's statuses (2025-11-25 "Backwards Compatibility"): not 401/403, a
        // refusal for want of authorization, whose GET would only be refused again (and
        // could set an authorization flow off twice).
        if message.method() == "initialize"
            && matches!(
                status,
                StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
            )
            && shared.config.legacy_fallback
        {
            match legacy::detect(shared).await {
                Ok(()) => continue,
                Err(e) => tracing::debug!("not a 2024-11-05 HTTP+SSE server either: {e}"),
            }
        }
        let frame = answer(shared, message, id, response, &state).await?;
        if status == StatusCode::BAD_REQUEST && !metadata.is_empty() {
            return Ok(Some(explain_mismatch(frame, &metadata)));
        }
        return Ok(Some(frame));
    }
}

/// Whether a new session is being started that a session-era request should wait for.
fn renewing(shared: &Shared, message: &Outgoing) -> bool {
    message.stateless_version().is_none()
        && message.method() != "initialize"
        && shared.reinit.try_lock().is_err()
}

/// POST the frame with the headers its era needs.
async fn post(
    shared: &Shared,
    message: &Outgoing,
    state: &SessionState,
    metadata: &[(HeaderName, HeaderValue)],
) -> Result<Response, Failure> {
    let stateless = message.stateless_version().is_some();
    shared
        .send(|| {
            let mut builder = shared.post(&shared.url, message.body.clone());
            if !stateless && message.method() != "initialize" {
                builder = Shared::with_session(builder, state);
            }
            for (name, value) in metadata {
                builder = builder.header(name, value);
            }
            builder
        })
        .await
}

/// Read the answer to request `id`: a JSON body, or the request's SSE stream.
async fn answer(
    shared: &Arc<Shared>,
    message: &Outgoing,
    id: &RequestId,
    response: Response,
    state: &SessionState,
) -> Result<Vec<u8>, Failure> {
    let status = response.status();
    let session_id = response
        .headers()
        .get(SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let kind = media_type(&response);
    let frame = if status.is_success() && kind == "text/event-stream" {
        let resumable = message.stateless_version().is_none();
        sse::follow(shared, response, id, resumable).await?
    } else if status == StatusCode::ACCEPTED {
        return Err(Failure::status(
            status,
            format!(
                "HTTP 202 Accepted from {} for the request {}: the server took it for a \
                 notification and sent no response",
                shared.url,
                message.method()
            ),
        ));
    } else {
        let bytes = body(response, shared.config.max_message_bytes).await?;
        json_answer(bytes, id, status, &kind, &shared.url)?
    };
    if Restorable::tracks(message.method()) && message.stateless_version().is_none() {
        let accepted =
            serde_json::from_slice::<Value>(&frame).is_ok_and(|v| v.get("result").is_some());
        if accepted {
            shared.state().restorable.accepted(message);
        }
        return Ok(frame);
    }
    let value: Option<Value> = match message.method() {
        "initialize" | "tools/list" => serde_json::from_slice(&frame).ok(),
        _ => None,
    };
    let Some(mut value) = value else {
        return Ok(frame);
    };
    let Some(result) = value.get_mut("result") else {
        return Ok(frame);
    };
    if message.method() == "initialize" {
        let mut state_now = shared.state();
        state_now.id = session_id;
        state_now.version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_owned);
        state_now.initialize = Some(message.body.clone());
        state_now.generation = state.generation + 1;
        state_now.restorable = Default::default();
        return Ok(frame);
    }
    // tools/list: learn each tool's headers and hints; a stateless-era list loses the
    // tools whose `x-mcp-header` annotations are invalid (the spec's rule).
    let (valid, invalid) = read_tools(result);
    shared.tools().extend(valid);
    if invalid.is_empty() || message.stateless_version().is_none() {
        return Ok(frame);
    }
    if let Some(Value::Array(tools)) = result.get_mut("tools") {
        tools.retain(|t| {
            !t.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| invalid.iter().any(|i| i == n))
        });
    }
    Ok(serde_json::to_vec(&value).unwrap_or(frame))
}

/// A `-32020` (2026-07-28: a header disagrees with the body) gets what to do added to the
/// server's message, and the headers sent in `data.sentHeaders`. It is not retried: the
/// headers mirror the body, so the same request would be refused again; something
/// between client and server changed them, or the tool's `x-mcp-header` annotations
/// changed since `tools/list` (listing the tools again learns the new ones).
fn explain_mismatch(frame: Vec<u8>, sent: &[(HeaderName, HeaderValue)]) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<Value>(&frame) else {
        return frame;
    };
    let Some(error) = value.get_mut("error").and_then(Value::as_object_mut) else {
        return frame;
    };
    if error.get("code").and_then(Value::as_i64) != Some(HEADER_MISMATCH) {
        return frame;
    }
    let headers: serde_json::Map<String, Value> = sent
        .iter()
        .map(|(name, value)| {
            let value = value.to_str().unwrap_or("?");
            (name.to_string(), Value::String(value.to_owned()))
        })
        .collect();
    let listed = headers
        .iter()
        .map(|(name, value)| format!("{name}: {}", value.as_str().unwrap_or("?")))
        .collect::<Vec<_>>()
        .join(", ");
    let said = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("Header mismatch")
        .to_owned();
    error.insert(
        "message".into(),
        Value::String(format!(
            "{said} (HTTP 400. Sent {listed}, mirrored from the request's body: a proxy \
             between may have changed them, or the tool's x-mcp-header annotations changed \
             since the tools were listed: list them again. Not retried.)"
        )),
    );
    match error.get_mut("data") {
        Some(Value::Object(data)) => {
            data.insert("sentHeaders".into(), Value::Object(headers));
        }
        None | Some(Value::Null) => {
            error.insert("data".into(), json!({ "sentHeaders": headers }));
        }
        Some(_) => {}
    }
    serde_json::to_vec(&value).unwrap_or(frame)
}

/// A JSON body as the response to `id`: a JSON-RPC response is passed on (with our id
/// when the server's error had none); anything else is a failure naming the status.
fn json_answer(
    bytes: Vec<u8>,
    id: &RequestId,
    status: StatusCode,
    kind: &str,
    url: &Url,
) -> Result<Vec<u8>, Failure> {
    let parsed = if kind == "application/json" || kind.ends_with("+json") || kind.is_empty() {
        serde_json::from_slice::<Value>(&bytes).ok()
    } else {
        None
    };
    let snippet = || {
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        let mut cut: String = text.chars().take(200).collect();
        if cut.len() < text.len() {
            cut.push('…');
        }
        cut
    };
    // "HTTP 404 Not Found from URL: <what it said> (<what it likely means>)".
    let refusal = |what: String| {
        let body = snippet();
        let mut text = if body.is_empty() {
            what
        } else {
            format!("{what}: {body}")
        };
        if let Some(hint) = hint(status) {
            text.push_str(&format!(" ({hint})"));
        }
        Failure::status(status, text)
    };
    let Some(Value::Object(mut object)) = parsed else {
        return Err(refusal(if status.is_success() {
            format!("HTTP {status} from {url} with {kind:?} instead of JSON or SSE")
        } else {
            format!("HTTP {status} from {url}")
        }));
    };
    // Not every JSON body with an `error` is JSON-RPC: an OAuth resource server's 401 says
    // `{"error":"invalid_token"}`, which must fail the request with its status (the engine
    // would drop it as an invalid response, and the request would wait for its timeout).
    let is_response = object.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && (object.contains_key("result") || object.contains_key("error"));
    if !is_response {
        return Err(refusal(format!(
            "HTTP {status} from {url} without a JSON-RPC response"
        )));
    }
    let ours = object
        .get("id")
        .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok())
        .is_some_and(|their| &their == id);
    if ours {
        return Ok(bytes);
    }
    if object.contains_key("result") {
        return Err(Failure::status(
            status,
            format!("{url} answered with the response to another request"),
        ));
    }
    object.insert("id".into(), serde_json::to_value(id).unwrap_or(Value::Null));
    serde_json::to_vec(&object).map_err(|e| Failure::new(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_bodies_become_responses_to_the_request() {
        let id = RequestId::Number(7);
        let url = Url::parse("http://127.0.0.1:9/mcp").unwrap();
        let ok = br#"{"jsonrpc":"2.0","id":7,"result":{}}"#.to_vec();
        assert_eq!(
            json_answer(ok.clone(), &id, StatusCode::OK, "application/json", &url).unwrap(),
            ok
        );
        let no_id = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"x"}}"#;
        let fixed = json_answer(
            no_id.to_vec(),
            &id,
            StatusCode::BAD_REQUEST,
            "application/json",
            &url,
        )
        .unwrap();
        let fixed: Value = serde_json::from_slice(&fixed).unwrap();
        assert_eq!(fixed["id"], 7);
        let html = json_answer(
            b"<h1>oops</h1>".to_vec(),
            &id,
            StatusCode::BAD_GATEWAY,
            "text/html",
            &url,
        )
        .unwrap_err();
        assert_eq!(
            html.message,
            "HTTP 502 Bad Gateway from http://127.0.0.1:9/mcp: <h1>oops</h1> (the server, or a \
             proxy in front of it, is unavailable: try again later)"
        );
        assert!(json_answer(Vec::new(), &id, StatusCode::OK, "text/plain", &url).is_err());
        let oauth = json_answer(
            br#"{"error":"invalid_token"}"#.to_vec(),
            &id,
            StatusCode::UNAUTHORIZED,
            "application/json",
            &url,
        )
        .unwrap_err();
        assert_eq!(
            oauth.message,
            "HTTP 401 Unauthorized from http://127.0.0.1:9/mcp without a JSON-RPC response: \
             {\"error\":\"invalid_token\"} (the server wants authorization: an Authorization \
             header, or OAuth)"
        );
    }
}
