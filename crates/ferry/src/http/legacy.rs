//! The 2024-11-05 HTTP+SSE transport (deprecated since 2025-03-26, still spoken by many
//! clients), served next to the Streamable HTTP endpoint.
//!
//! **Paths** (see [`super::HttpConfig::legacy_sse`] and
//! [`super::HttpConfig::legacy_messages`]; defaults `/sse` and `/messages`):
//!
//! | request | answer |
//! |---|---|
//! | `GET /sse` | 200 `text/event-stream`: first an `endpoint` event whose data is `/messages?sessionId=<32 hex digits>`, then every message of the session as a `message` event |
//! | `GET /sse` with an `Accept` that excludes `text/event-stream` | 406 |
//! | `GET /sse` beyond [`super::HttpConfig::max_sessions`] (shared with the session era) or during shutdown | 503 |
//! | `POST /messages?sessionId=ID`, a JSON-RPC message (or batch) | 202 `Accepted`; the engine's answer goes out on the SSE stream |
//! | `POST` without `sessionId` | 400 |
//! | `POST` with an unknown `sessionId` (never issued, or its SSE stream closed) | 404 |
//! | `POST` body not `application/json` / over the body limit / not JSON | 415 / 413 / 400 |
//! | foreign `Origin` / `Host` | 403 / 421 (as on the Streamable HTTP endpoint) |
//!
//! **Sessions.** Each SSE connection is one session with one long-lived engine
//! (`Server::serve` on a channel transport, as in the session era): a POST writes its
//! message into the engine; everything the engine sends (responses, notifications, server
//! requests) is one `message` event on the SSE stream. The id is 128 bits from the OS
//! CSPRNG. Closing the SSE stream ends the session (the engine's input closes; in-flight
//! handlers get the engine's shutdown grace) and its id then gets 404. There is no idle
//! timeout beyond that: the session lives exactly as long as its stream, whose keep-alive
//! comments ([`super::HttpConfig::sse_keep_alive`]) reveal a vanished client. The per-session
//! stream limit does not apply (one stream; POSTs are answered at once).
//!
//! **Shutdown.** `serve_with_shutdown` closes every engine's input: in-flight requests still
//! answer on their stream (within the engine's shutdown grace), then the stream ends.
//!
//! The `endpoint` URI is the configured messages path as given: when the router is nested
//! under a prefix, configure the full path (`/prefix/messages`).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use ferry_protocol::jsonrpc::ErrorObject;
use serde::de::IgnoredAny;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::owner::{RequestData, SessionOwner};
use super::stateless::error_response;
use super::{Shared, guard, sse};
use crate::engine::{Frame, Transport, TransportEvent};

/// Messages queued from POSTs into one session's engine.
const ENGINE_QUEUE: usize = 32;

/// Every HTTP+SSE session of a router.
#[derive(Default)]
pub(crate) struct LegacySessions {
    map: Mutex<HashMap<String, Entry>>,
    shutdown: CancellationToken,
}

/// One session: its engine's input, and the principal that opened it (if an
/// authentication layer named one: see [`SessionOwner`]).
#[derive(Clone)]
struct Entry {
    to_engine: mpsc::Sender<TransportEvent>,
    owner: Option<SessionOwner>,
}

impl LegacySessions {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many SSE connections are open.
    pub(crate) fn len(&self) -> usize {
        self.map().len()
    }

    /// Refuse new sessions and close every engine's input: in-flight requests answer on
    /// their streams, then the streams end.
    pub(crate) fn shutdown(&self) {
        self.shutdown.cancel();
        self.map().clear();
    }
}

/// Ends the session when the SSE response is dropped (the client hung up, or the stream
/// ended).
struct Registration {
    shared: Arc<Shared>,
    id: String,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.shared.legacy.map().remove(&self.id);
        tracing::debug!(session = %self.id, "HTTP+SSE session ended");
    }
}

/// `GET` on the SSE path: a new session and its stream.
pub(crate) async fn get(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    if !guard::accepts_sse(request.headers()) {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorObject::invalid_request("the Accept header must allow text/event-stream"),
        );
    }
    let id = super::session::new_session_id();
    // Read before taking the legacy lock: the session era takes its lock, then this one.
    let session_era = shared.sessions.len();
    let (incoming, outgoing, from_engine) = {
        let mut map = shared.legacy.map();
        if shared.legacy.shutdown.is_cancelled() {
            return unavailable("the server is shutting down".to_owned());
        }
        let limit = shared.config.max_sessions;
        if map.len() + session_era >= limit {
            return unavailable(format!(
                "too many sessions (limit {limit}); try again later"
            ));
        }
        let (to_engine, incoming) = mpsc::channel(ENGINE_QUEUE);
        let (outgoing, from_engine) = mpsc::channel(shared.server.inner.engine.write_queue.max(1));
        let owner = request.extensions().get::<SessionOwner>().cloned();
        map.insert(id.clone(), Entry { to_engine, owner });
        (incoming, outgoing, from_engine)
    };
    // The engine ends once its input closes (the session leaves the map).
    shared.backend.connect(
        super::Connection::Legacy,
        Transport::new(incoming, outgoing),
    );
    let endpoint = format!("{}?sessionId={id}", shared.config.legacy_messages);
    tracing::debug!(session = %id, "HTTP+SSE session started");
    stream(&shared, id, endpoint, from_engine)
}

/// The SSE response: the `endpoint` event, then every frame of the engine, with keep-alives,
/// until the engine ends.
fn stream(
    shared: &Arc<Shared>,
    id: String,
    endpoint: String,
    from_engine: mpsc::Receiver<Frame>,
) -> Response {
    struct Sse {
        first: Option<Bytes>,
        from_engine: mpsc::Receiver<Frame>,
        ticks: tokio::time::Interval,
        _registration: Registration,
    }
    let keep_alive = shared.config.sse_keep_alive;
    let state = Sse {
        first: Some(Bytes::from(format!(
            "event: endpoint\ndata: {endpoint}\n\n"
        ))),
        from_engine,
        ticks: tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive),
        _registration: Registration {
            shared: Arc::clone(shared),
            id,
        },
    };
    let body = futures_util::stream::unfold(state, |mut s| async move {
        if let Some(first) = s.first.take() {
            return Some((Ok::<_, Infallible>(first), s));
        }
        let bytes = tokio::select! {
            frame = s.from_engine.recv() => sse::event(&frame?),
            _ = s.ticks.tick() => sse::keep_alive(),
        };
        s.ticks.reset();
        Some((Ok(bytes), s))
    });
    let mut response = Response::new(axum::body::Body::from_stream(body));
    sse::headers(&mut response);
    response
}

/// `POST` on the messages path: one message (or batch) into the session's engine.
pub(crate) async fn post(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Some(id) = session_id(parts.uri.query().unwrap_or("")) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorObject::invalid_request("the sessionId query parameter is required"),
        );
    };
    let data = RequestData::of(&parts.extensions);
    let Some(entry) = shared.legacy.map().get(id).cloned() else {
        return unknown_session();
    };
    // A session opened by an owner is unknown to anyone else.
    if entry.owner.is_some() && entry.owner != data.owner {
        return unknown_session();
    }
    if !guard::is_json(&parts.headers) {
        return error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            ErrorObject::invalid_request("the body must be application/json"),
        );
    }
    let bytes = match guard::read_body(body, shared.config.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    if let Err(e) = serde_json::from_slice::<IgnoredAny>(&bytes) {
        return error_response(StatusCode::BAD_REQUEST, None, ErrorObject::parse_error(e));
    }
    let event = match data.attachment {
        Some(attachment) => TransportEvent::Attached(bytes.to_vec(), attachment),
        None => TransportEvent::Frame(bytes.to_vec()),
    };
    if entry.to_engine.send(event).await.is_err() {
        return unknown_session();
    }
    let mut response = (StatusCode::ACCEPTED, "Accepted").into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain"),
    );
    response
}

/// The `sessionId` of a query string (hex ids need no percent-decoding).
fn session_id(query: &str) -> Option<&str> {
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("sessionId="))
        .filter(|id| !id.is_empty())
}

fn unknown_session() -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        None,
        ErrorObject::invalid_request(
            "Session not found: its SSE stream is closed; GET the SSE endpoint again",
        ),
    )
}

fn unavailable(message: String) -> Response {
    error_response(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        ErrorObject::internal_error(message),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn session_ids_from_queries() {
        assert_eq!(super::session_id("sessionId=ab12"), Some("ab12"));
        assert_eq!(super::session_id("x=1&sessionId=ab12"), Some("ab12"));
        assert_eq!(super::session_id("sessionId="), None);
        assert_eq!(super::session_id(""), None);
    }
}
