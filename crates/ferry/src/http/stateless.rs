//! The POST path of 2026-07-28: one JSON-RPC request per POST, answered with one JSON
//! object or an SSE stream scoped to that request.
//!
//! Each request runs on its own in-memory connection to the [`Backend`](super::Backend) (a
//! per-request engine: a server's `serve` on a channel transport). The request frame goes in; frames come
//! out until the response with its id. Dropping the HTTP response (the client hung up)
//! drops the [`Exchange`], which tells the engine `notifications/cancelled` for the request
//! and closes the connection: the handler is cancelled at once.
//!
//! **Shutdown** (`serve_with_shutdown`'s signal): each exchange closes its engine's input,
//! so a request in flight still answers within the engine's shutdown grace (then it is
//! cancelled), and a `subscriptions/listen` stream, which has nothing to finish, ends at
//! once: none holds the server's graceful shutdown open.

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ferry_protocol::jsonrpc::{self, ErrorObject, ErrorResponse, Inbound, Message};
use ferry_protocol::types::keys;
use ferry_protocol::{Era, ProtocolVersion, RequestId, VersionSet, error_codes};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::headers::Checked;
use super::owner::RequestData;
use super::probe::Probe;
use super::{Shared, guard, headers, sse};
use crate::engine::{Frame, Transport, TransportEvent};
use ferry_protocol::read::{FrameKind, Landmarks, frame_kind};

/// A JSON-RPC error as an HTTP response.
pub(crate) fn error_response(
    status: StatusCode,
    id: Option<RequestId>,
    error: ErrorObject,
) -> Response {
    let body = serde_json::to_vec(&ErrorResponse::new(id, error)).unwrap_or_default();
    json_response(status, body)
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The HTTP status of a JSON-RPC error answered as a whole response.
fn status_of(code: i64) -> StatusCode {
    match code {
        error_codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        error_codes::HEADER_MISMATCH
        | error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY
        | error_codes::UNSUPPORTED_PROTOCOL_VERSION
        | error_codes::INVALID_PARAMS
        | error_codes::INVALID_REQUEST
        | error_codes::PARSE_ERROR => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// `POST` on the MCP endpoint.
pub(crate) async fn post(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if !guard::accepts_both(&parts.headers) {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorObject::invalid_request(
                "the Accept header must list both application/json and text/event-stream",
            ),
        );
    }
    if !guard::is_json(&parts.headers) {
        return error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            ErrorObject::invalid_request("the body must be application/json"),
        );
    }
    let bytes = match guard::read_body(body, &shared.config).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    // One valid message is classified once, for either era, and handed to the engine
    // classified.
    let inbound = jsonrpc::classify(&bytes);
    if let Inbound::Rejected(rejected) = &inbound
        && rejected.reply
        && !parts.headers.contains_key(super::session::SESSION_ID)
    {
        // Refused outside any session (a repeated member, a bad `jsonrpc`...): answered
        // here with the engine's words, as stdio would be. No engine could carry the
        // refusal back: the id it is answered with is not one this POST waits for.
        let response = &rejected.response;
        return error_response(
            StatusCode::BAD_REQUEST,
            response.id.clone(),
            response.error.clone(),
        );
    }
    if let Inbound::Single(message) = inbound {
        // Its params read once: what the session layer, the checks below, the engine and
        // the server read of them.
        let landmarks = super::session::landmarks_of(&message);
        let message = match super::session::Posted::classified(&parts.headers, message, landmarks) {
            Ok(posted) => {
                let data = RequestData::of(&shared.config, &parts.extensions, &parts.headers);
                return super::session::post(&shared, &parts.headers, data, bytes, posted).await;
            }
            Err(message) => message,
        };
        // The usual stateless-era request: its params read in one borrowed pass (`probe`).
        if let Message::Request(request) = &message
            && let Some(found) = &landmarks
            && let Some(probe) = Probe::params(request.params.as_deref(), found)
            && super::session::stateless_request(
                &parts.headers,
                &request.method,
                probe.meta_version.is_some(),
            )
        {
            let read = Stateless {
                meta_version: probe.meta_version(),
                method: &request.method,
                id: &request.id,
                streams: probe.streams,
                checked: probe.checked,
            };
            return match check(&shared, &parts, read) {
                Ok(plan) => run(&shared, &parts, bytes, Some((message, *found)), plan).await,
                Err(error) => {
                    error_response(StatusCode::BAD_REQUEST, Some(request.id.clone()), error)
                }
            };
        }
    }
    let message: Value = match serde_json::from_slice(&bytes) {
        Ok(value) => value,
        Err(e) => {
            return error_response(StatusCode::BAD_REQUEST, None, ErrorObject::parse_error(e));
        }
    };
    if super::session::claims(&parts.headers, &message) {
        let data = RequestData::of(&shared.config, &parts.extensions, &parts.headers);
        let posted = super::session::Posted::from_value(&message, &bytes);
        return super::session::post(&shared, &parts.headers, data, bytes, posted).await;
    }
    let Value::Object(object) = &message else {
        return error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorObject::invalid_request("the body must be one JSON-RPC request or notification"),
        );
    };
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorObject::invalid_request("clients post requests and notifications only"),
        );
    };
    let Some(id) = object.get("id") else {
        // No client notification is defined over 2026-07-28 HTTP (closing the stream
        // cancels); accept and drop.
        tracing::debug!(%method, "notification posted; accepted");
        return StatusCode::ACCEPTED.into_response();
    };
    let id = match serde_json::from_value::<RequestId>(id.clone()) {
        Ok(id) => id,
        Err(e) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                None,
                ErrorObject::invalid_request(format!("invalid request id: {e}")),
            );
        }
    };
    let params = object.get("params");
    let meta = params.and_then(|p| p.get("_meta"));
    let read = Stateless {
        meta_version: meta
            .and_then(|m| m.get(keys::PROTOCOL_VERSION))
            .map(|v| v.as_str().map(Cow::Borrowed)),
        method,
        id: &id,
        streams: meta
            .is_some_and(|m| m.get("progressToken").is_some() || m.get(keys::LOG_LEVEL).is_some()),
        checked: Checked::Value(params),
    };
    match check(&shared, &parts, read) {
        Ok(plan) => run(&shared, &parts, bytes, None, plan).await,
        Err(error) => error_response(StatusCode::BAD_REQUEST, Some(id), error),
    }
}

/// What the stateless path reads of one request, however it was read.
struct Stateless<'a> {
    /// `_meta`'s protocol version: `Some(None)` when it is there but not a string.
    meta_version: Option<Option<Cow<'a, str>>>,
    method: &'a str,
    id: &'a RequestId,
    /// `_meta` asks for progress or log messages: the answer may be a stream.
    streams: bool,
    /// The members of `params` the headers are checked against.
    checked: Checked<'a>,
}

/// How a request that passed [`check`] is answered.
struct Plan {
    id: RequestId,
    /// With an SSE stream when the first thing to send is not the response.
    streams: bool,
    /// A `subscriptions/listen` stream (it ends at once on shutdown).
    listen: bool,
}

/// Check a stateless-era request against its headers: how to answer it, or the error it
/// is refused with (HTTP 400).
fn check(
    shared: &Shared,
    parts: &axum::http::request::Parts,
    request: Stateless<'_>,
) -> Result<Plan, ErrorObject> {
    let Stateless {
        meta_version,
        method,
        id,
        streams,
        checked,
    } = request;
    let header_version = headers::protocol_version(&parts.headers)?;
    let stateless_header = header_version
        .as_deref()
        .and_then(|v| v.parse::<ProtocolVersion>().ok())
        .is_some_and(|v| v.era() == Era::Stateless);
    if meta_version.is_none() && method != "server/discover" && !stateless_header {
        return Err(session_era(shared.backend.versions()));
    }
    let Some(header_version) = header_version else {
        return Err(headers::mismatch(
            "the MCP-Protocol-Version header is required",
        ));
    };
    if let Some(body_version) = meta_version
        && body_version.as_deref() != Some(&*header_version)
    {
        let shown = body_version.map_or_else(|| "(not a string)".to_owned(), |v| format!("{v:?}"));
        return Err(headers::mismatch(format!(
            "MCP-Protocol-Version header value {header_version:?} does not match body value {shown}"
        )));
    }
    // The tool's input schema is looked at where the backend keeps it (not cloned: it can
    // be large).
    let name = (method == "tools/call")
        .then(|| checked.string("name"))
        .flatten();
    match name.as_deref() {
        Some(name) => {
            let mut verdict = Ok(());
            shared.backend.with_input_schema(name, &mut |schema| {
                verdict = headers::validate(&parts.headers, method, checked, schema);
            });
            verdict?;
        }
        None => headers::validate(&parts.headers, method, checked, None)?,
    }
    let listen = method == "subscriptions/listen";
    Ok(Plan {
        id: id.clone(),
        streams: listen || streams,
        listen,
    })
}

/// Run a request that passed [`check`] on its own engine and answer it. `message` is the
/// body's classification and its params' landmarks, when it was read that way (the engine
/// and the server then do not read the body again).
async fn run(
    shared: &Arc<Shared>,
    parts: &axum::http::request::Parts,
    bytes: Bytes,
    message: Option<(Message, Landmarks)>,
    plan: Plan,
) -> Response {
    let attachment = RequestData::of(&shared.config, &parts.extensions, &parts.headers).attachment;
    let event = match (message, attachment) {
        (Some((message, found)), attachment) => {
            TransportEvent::classified_with_landmarks(Vec::from(bytes), message, attachment, found)
        }
        (None, Some(attachment)) => TransportEvent::attached(Vec::from(bytes), attachment),
        (None, None) => TransportEvent::Frame(Vec::from(bytes)),
    };
    // Shared: this instance hears the others' changes (`subscriptions/listen` streams).
    if shared.config.session_store.is_some() {
        super::session::listen(shared).await;
    }
    let exchange = Exchange::start(shared, event, plan.id).await;
    if plan.streams {
        respond_sse(exchange, shared.config.sse_keep_alive, plan.listen).await
    } else {
        respond_json(exchange).await
    }
}

/// The refusal of a request of the session era (no stateless version in `_meta` nor in
/// the header). `session::claims` takes these first; kept should one slip through.
fn session_era(versions: &VersionSet) -> ErrorObject {
    let supported: Vec<&str> = versions
        .versions()
        .iter()
        .filter(|v| v.era() == Era::Stateless)
        .map(|v| v.as_str())
        .collect();
    ErrorObject::new(
        error_codes::UNSUPPORTED_PROTOCOL_VERSION,
        "this HTTP endpoint serves stateless-era requests only (carry io.modelcontextprotocol/protocolVersion in _meta)",
    )
    .with_data(serde_json::json!({ "supported": supported }))
}

/// Answer with one JSON object: drop the notifications, send the response.
async fn respond_json(mut exchange: Exchange) -> Response {
    loop {
        match exchange.next().await {
            Out::Notification(_) => {}
            Out::Response(frame, status) => return json_response(status, frame),
            Out::Closed => return closed(),
        }
    }
}

/// Answer with an SSE stream, unless the response comes before any notification: then a
/// JSON object (with its proper status) is simpler for the client and just as valid.
/// A `listen` stream ends at once on shutdown.
async fn respond_sse(mut exchange: Exchange, keep_alive: Duration, listen: bool) -> Response {
    let first = match exchange.next().await {
        Out::Notification(frame) => sse::event(&frame),
        Out::Response(frame, status) => return json_response(status, frame),
        Out::Closed => return closed(),
    };
    struct Stream {
        pending: Option<Bytes>,
        ticks: tokio::time::Interval,
        done: bool,
        /// Cancelled on shutdown for a `listen` stream; never otherwise.
        stop: CancellationToken,
        exchange: Exchange,
    }
    let start = tokio::time::Instant::now() + keep_alive;
    let state = Stream {
        pending: Some(first),
        ticks: tokio::time::interval_at(start, keep_alive),
        done: false,
        stop: if listen {
            exchange.stopping.clone()
        } else {
            CancellationToken::new()
        },
        exchange,
    };
    let stream = futures_util::stream::unfold(state, |mut s| async move {
        if let Some(bytes) = s.pending.take() {
            return Some((Ok::<_, Infallible>(bytes), s));
        }
        if s.done {
            return None;
        }
        let bytes = tokio::select! {
            out = s.exchange.next() => match out {
                Out::Notification(frame) => sse::event(&frame),
                Out::Response(frame, _) => {
                    s.done = true;
                    sse::event(&frame)
                }
                Out::Closed => return None,
            },
            _ = s.ticks.tick() => sse::keep_alive(),
            () = s.stop.cancelled() => return None,
        };
        Some((Ok(bytes), s))
    });
    let mut response = Response::new(Body::from_stream(stream));
    sse::headers(&mut response);
    response
}

fn closed() -> Response {
    error_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        None,
        ErrorObject::internal_error("the request ended without a response"),
    )
}

/// What the engine sent for the request.
enum Out {
    Notification(Frame),
    Response(Frame, StatusCode),
    Closed,
}

/// One request on its own connection to the server. Dropped before the response, it
/// cancels the request.
struct Exchange {
    /// The engine's input; closed (`None`) on shutdown.
    to_engine: Option<mpsc::Sender<TransportEvent>>,
    from_engine: mpsc::Receiver<Frame>,
    id: RequestId,
    answered: bool,
    /// The router's shutdown.
    stopping: CancellationToken,
}

impl Exchange {
    async fn start(shared: &Shared, event: TransportEvent, id: RequestId) -> Exchange {
        let (to_engine, incoming) = mpsc::channel(4);
        let (outgoing, from_engine) = mpsc::channel(shared.backend.write_queue().max(1));
        // The engine's task ends by itself once `to_engine` is dropped.
        shared.backend.connect(
            super::Connection::Stateless,
            Transport::new(incoming, outgoing),
        );
        let _ = to_engine.send(event).await;
        Exchange {
            to_engine: Some(to_engine),
            from_engine,
            id,
            answered: false,
            stopping: shared.sessions.stopping(),
        }
    }

    async fn next(&mut self) -> Out {
        loop {
            let frame = tokio::select! {
                frame = self.from_engine.recv() => frame,
                // Shutdown: the engine's input closes; the request answers within the
                // engine's shutdown grace, then the engine ends.
                () = self.stopping.cancelled(), if self.to_engine.is_some() => {
                    self.to_engine = None;
                    continue;
                }
            };
            let Some(frame) = frame else {
                return Out::Closed;
            };
            match frame_kind(&frame) {
                FrameKind::Notification => return Out::Notification(frame),
                FrameKind::Response(id, code) if id == self.id => {
                    self.answered = true;
                    return Out::Response(frame, code.map_or(StatusCode::OK, status_of));
                }
                // Stateless-era handlers ask the client through input_required results,
                // never with requests.
                FrameKind::Request(id) => {
                    tracing::debug!(%id, "server request on a stateless HTTP request dropped");
                }
                FrameKind::Response(..) | FrameKind::Other => {
                    tracing::debug!("stray frame on a stateless HTTP request");
                }
            }
        }
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let cancel = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": { "requestId": self.id, "reason": "the HTTP response stream was closed" },
        });
        if let Ok(frame) = serde_json::to_vec(&cancel)
            && let Some(to_engine) = &self.to_engine
        {
            let _ = to_engine.try_send(TransportEvent::Frame(frame));
        }
    }
}
