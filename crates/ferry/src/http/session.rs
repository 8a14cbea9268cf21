//! The session era of Streamable HTTP (2025-03-26, 2025-06-18, 2025-11-25) on the same
//! endpoint as the stateless era.
//!
//! **Sessions.** A POSTed `initialize` starts a session: one long-lived engine
//! (`Server::serve` on a channel transport) and a router task that takes every frame the
//! engine sends and delivers it to exactly one HTTP stream. The `initialize` response
//! carries `MCP-Session-Id` (128 bits from the OS CSPRNG, as 32 hex digits). Every later
//! request must carry it: without it 400, with an unknown or expired one 404. `DELETE` with
//! the header ends the session (its engine's input is closed; in-flight handlers get the
//! engine's shutdown grace). `GET`/`DELETE` without the header are 405 (there is no
//! standalone stream without a session).
//!
//! **POST.** Notifications and responses (to the server's requests) are written into the
//! engine and answered 202. A body with requests opens a POST stream: if the first thing
//! the engine sends for it is the response (the usual case), the answer is one JSON object;
//! otherwise the answer is SSE (a priming event for 2025-11-25 sessions, then the related
//! messages, then the response, then the end). Batches are accepted on 2025-03-26 sessions
//! only (their responses come back as one JSON array). A client closing a POST does not
//! cancel its request (session era); `notifications/cancelled` does, and ends its stream.
//!
//! **Which stream a message takes** (each message goes to exactly one):
//!
//! 1. a response: the POST stream that carried its request;
//! 2. `notifications/progress`: the POST stream whose request carried that
//!    `progressToken`;
//! 3. anything a request handler sends while it runs (a server request — sampling,
//!    elicitation, roots —, a log message, any notification): the POST stream of the
//!    request it serves, however many are in flight. The engine runs each handler in a
//!    scope naming its request and shows every frame the handler queues to the session
//!    (`engine::RelatedSink`), which notes the frame's stream under a hash of its bytes.
//!    Frames sent from tasks a handler spawns itself are outside that scope: a server
//!    request or log message among those goes to the one POST stream with requests in
//!    flight if there is exactly one, otherwise as 4;
//! 4. anything else (list changes, resource updates, …): the standalone GET stream if one
//!    is connected; else the most recently opened POST stream still connected; else the
//!    GET stream's event log, for a client resuming it with `Last-Event-ID`.
//!
//! **GET.** Opens the standalone stream (one per session at a time; a second is 409). It
//! never carries responses, except when a GET resumes a POST stream.
//!
//! **Resumability.** Every SSE event has the id `{stream}-{seq}` (see [`super::events`])
//! and is kept in the [`EventStore`] before it is sent. A GET with `Last-Event-ID` replays
//! exactly the events of that stream after the cursor, then continues it live (the GET
//! stream, or a POST stream still waiting for its response) or ends (a finished POST
//! stream). Events the store has evicted make the replay inexact: 410 instead.
//!
//! **Polling** (SEP-1699, off by default: [`super::HttpConfig::sse_poll_after`]). On a
//! 2025-11-25 session a POST stream quiet for that long before its response is closed (a
//! request with nothing to send yet gets an SSE answer with only its priming event); the
//! client resumes it with `GET` and `Last-Event-ID` as above, and the resumed stream stays
//! open until the response.
//!
//! **`MCP-Protocol-Version`.** Missing: assumed to be 2025-03-26. Not a session-era
//! revision this server supports: 400. Newer than the session's: 400. The negotiated
//! revision or an older supported one: accepted (real clients send older ones).
//!
//! **Limits** (see [`super::HttpConfig`]): sessions (default 10,000; 503 beyond), open
//! streams per session (default 32: POSTs awaiting their answer and GET streams; 429
//! beyond), idle time (default 30 minutes without any open request or stream; the session
//! then ends and its id gets 404). Every SSE stream gets a keep-alive comment after
//! [`super::HttpConfig::sse_keep_alive`] of silence. When `serve_with_shutdown`'s signal
//! fires, every session is drained: its engine's input closes, requests in flight still get
//! their responses (within the engine's shutdown grace), then its streams end.

// Refusals are whole HTTP responses, returned once per request: their size does not matter.
#![allow(clippy::result_large_err)]

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ferry_protocol::jsonrpc::{self, ErrorObject, Inbound};
use ferry_protocol::types::keys;
use ferry_protocol::{Era, Feature, ProtocolVersion, RequestId};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::{self, EventStore, ReplayError, StreamKey};
use super::owner::{RequestData, SessionOwner};
use super::stateless::error_response;
use super::{Shared, headers, sse};
use crate::engine::{Attachment, Frame, RelatedSink, Transport, TransportEvent};

/// `MCP-Session-Id`.
pub(crate) const SESSION_ID: &str = "mcp-session-id";
const LAST_EVENT_ID: &str = "last-event-id";
/// Events queued for one HTTP stream; a client this far behind is disconnected (it may
/// resume from the event store).
const STREAM_QUEUE: usize = 1024;
/// The standalone (GET) stream's number.
const STANDALONE: u64 = 0;

/// Whether a POST belongs to the session era: batches, responses, `initialize`, requests
/// without a stateless revision (in `_meta` or the header), and notifications carrying a
/// session id.
pub(crate) fn claims(headers: &HeaderMap, message: &Value) -> bool {
    let Value::Object(object) = message else {
        return true;
    };
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return true;
    };
    let stateless_meta = object
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(keys::PROTOCOL_VERSION))
        .is_some();
    let stateless_header = headers
        .get(headers::PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<ProtocolVersion>().ok())
        .is_some_and(|v| v.era() == Era::Stateless);
    if method == "server/discover" || stateless_meta || stateless_header {
        return false;
    }
    object.contains_key("id") || headers.contains_key(SESSION_ID)
}

/// Every session of a router.
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
    store: Arc<dyn EventStore>,
    shutdown: CancellationToken,
    sweeper: std::sync::Once,
}

impl Sessions {
    pub(crate) fn new(store: Arc<dyn EventStore>) -> Self {
        Sessions {
            map: Mutex::default(),
            store,
            shutdown: CancellationToken::new(),
            sweeper: std::sync::Once::new(),
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many sessions are live.
    pub(crate) fn len(&self) -> usize {
        self.map().len()
    }

    /// Refuse new sessions and drain every one (graceful shutdown): each engine's input
    /// closes, requests in flight still answer on their streams (within the engine's
    /// shutdown grace), then the engine ends and with it every stream of the session.
    pub(crate) fn shutdown(&self) {
        self.shutdown.cancel();
        let all: Vec<_> = self.map().drain().map(|(_, s)| s).collect();
        for session in all {
            session.drain();
        }
    }

    /// The live session `id`; an idle-expired one is ended here.
    fn find(&self, id: &str, idle: Duration) -> Option<Arc<Session>> {
        let mut map = self.map();
        let session = map.get(id)?;
        if session.expired(idle) {
            let session = map.remove(id)?;
            drop(map);
            session.close();
            return None;
        }
        Some(Arc::clone(session))
    }

    fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.map().remove(id)
    }

    /// End every idle-expired session.
    fn sweep(&self, idle: Duration) {
        let expired: Vec<_> = {
            let mut map = self.map();
            let ids: Vec<String> = map
                .iter()
                .filter(|(_, s)| s.expired(idle))
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter().filter_map(|id| map.remove(&id)).collect()
        };
        for session in expired {
            tracing::debug!(session = %session.id, "session expired");
            session.close();
        }
    }
}

async fn sweep(shared: Weak<Shared>, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if shared.sessions.shutdown.is_cancelled() {
            return;
        }
        shared.sessions.sweep(shared.config.session_idle_timeout);
    }
}

/// One session: its engine's input, its routing and its activity.
struct Session {
    id: String,
    to_engine: Mutex<Option<mpsc::Sender<TransportEvent>>>,
    version: OnceLock<ProtocolVersion>,
    routing: Mutex<Routing>,
    store: Arc<dyn EventStore>,
    /// Cancelled when the session ends: every stream of it ends.
    closed: CancellationToken,
    /// Open HTTP exchanges (POSTs awaiting their answer, SSE streams).
    busy: AtomicUsize,
    last_active: Mutex<Instant>,
    /// The principal that started the session, if an authentication layer named one.
    owner: Option<SessionOwner>,
}

/// Where the session's messages go.
#[derive(Default)]
struct Routing {
    next_stream: u64,
    /// Requests in flight, by id: their POST stream.
    requests: HashMap<RequestId, u64>,
    /// Progress tokens (as JSON text) of requests in flight: their POST stream.
    tokens: HashMap<String, u64>,
    /// POST streams whose requests are not all answered.
    streams: HashMap<u64, PostStream>,
    /// The standalone stream's connection.
    standalone: Option<mpsc::Sender<Delivery>>,
    /// Frames request handlers queued and the engine has not yet sent, by a hash of their
    /// bytes: the POST streams of the requests they belong to, in order (see
    /// `Session::note_related`).
    related: HashMap<u64, VecDeque<u64>>,
}

struct PostStream {
    outstanding: usize,
    tokens: Vec<String>,
    live: Option<mpsc::Sender<Delivery>>,
    /// Whether an event was sent before the response: then the answer is SSE (resumable,
    /// so the response is stored too); else it is one JSON object, never stored.
    streaming: bool,
}

/// What an HTTP stream gets from the router.
enum Delivery {
    /// An event of the stream; `last` after its final response.
    Event { seq: u64, frame: Bytes, last: bool },
    /// The stream ends without a response (its requests were cancelled).
    End,
}

fn live(sender: &Option<mpsc::Sender<Delivery>>) -> bool {
    sender.as_ref().is_some_and(|s| !s.is_closed())
}

fn frame_key(frame: &[u8]) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(frame)
}

impl Routing {
    /// The stream of the request whose handler queued `frame`, if one did.
    fn take_related(&mut self, frame: &[u8]) -> Option<u64> {
        if self.related.is_empty() {
            return None;
        }
        let key = frame_key(frame);
        let queue = self.related.get_mut(&key)?;
        let stream = queue.pop_front();
        if queue.is_empty() {
            self.related.remove(&key);
        }
        stream.filter(|s| self.streams.contains_key(s))
    }

    /// Remove a POST stream (its requests are answered or cancelled).
    fn remove_stream(&mut self, stream: u64) -> Option<PostStream> {
        let removed = self.streams.remove(&stream)?;
        for token in &removed.tokens {
            self.tokens.remove(token);
        }
        if !self.related.is_empty() {
            self.related.retain(|_, queue| {
                queue.retain(|s| *s != stream);
                !queue.is_empty()
            });
        }
        Some(removed)
    }

    fn open_streams(&self) -> usize {
        self.streams.values().filter(|s| live(&s.live)).count()
            + usize::from(live(&self.standalone))
    }
}

/// What a frame from the engine is, for routing.
enum Kind {
    Responses(Vec<RequestId>),
    Progress(String),
    FromHandler,
    Other,
}

fn classify(frame: &[u8]) -> Kind {
    #[derive(Deserialize)]
    struct IdProbe {
        id: Option<RequestId>,
    }
    #[derive(Deserialize)]
    struct Probe {
        id: Option<RequestId>,
        method: Option<String>,
        params: Option<ParamsProbe>,
    }
    #[derive(Deserialize)]
    struct ParamsProbe {
        #[serde(rename = "progressToken")]
        progress_token: Option<Value>,
    }
    if frame.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        let ids = serde_json::from_slice::<Vec<IdProbe>>(frame)
            .map(|entries| entries.into_iter().filter_map(|e| e.id).collect())
            .unwrap_or_default();
        return Kind::Responses(ids);
    }
    let Ok(probe) = serde_json::from_slice::<Probe>(frame) else {
        return Kind::Other;
    };
    match (probe.method.as_deref(), probe.id) {
        (None, Some(id)) => Kind::Responses(vec![id]),
        (Some("notifications/progress"), None) => {
            match probe.params.and_then(|p| p.progress_token) {
                Some(token) => Kind::Progress(token.to_string()),
                None => Kind::Other,
            }
        }
        (Some("notifications/message"), None) | (Some(_), Some(_)) => Kind::FromHandler,
        _ => Kind::Other,
    }
}

/// Counts an open HTTP exchange of a session; its end is activity.
struct Busy(Arc<Session>);

impl Busy {
    fn new(session: &Arc<Session>) -> Busy {
        session.busy.fetch_add(1, Ordering::SeqCst);
        session.touch();
        Busy(Arc::clone(session))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.touch();
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Session {
    fn routing(&self) -> std::sync::MutexGuard<'_, Routing> {
        self.routing.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn touch(&self) {
        *self.last_active.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn expired(&self, idle: Duration) -> bool {
        self.busy.load(Ordering::SeqCst) == 0
            && self
                .last_active
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .elapsed()
                > idle
    }

    fn version(&self) -> ProtocolVersion {
        self.version
            .get()
            .copied()
            .unwrap_or(ProtocolVersion::V2025_03_26)
    }

    fn key(&self, stream: u64) -> StreamKey {
        StreamKey {
            session: self.id.clone(),
            stream,
        }
    }

    /// End the session: its engine's input closes, its streams end, its events go.
    fn close(&self) {
        self.closed.cancel();
        self.to_engine
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        self.store.forget_session(&self.id);
    }

    /// Close the engine's input only: its streams end when the engine does (`run_router`).
    fn drain(&self) {
        self.to_engine
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }

    /// Write a frame into the engine.
    async fn write(&self, frame: Frame, attachment: Option<Attachment>) -> Result<(), ()> {
        let sender = self
            .to_engine
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match sender {
            Some(sender) => sender
                .send(match attachment {
                    Some(attachment) => TransportEvent::Attached(frame, attachment),
                    None => TransportEvent::Frame(frame),
                })
                .await
                .map_err(|_| ()),
            None => Err(()),
        }
    }

    /// Open a POST stream for `ids`.
    fn open_post_stream(
        &self,
        ids: &[RequestId],
        tokens: Vec<String>,
        limit: usize,
    ) -> Result<(u64, mpsc::Receiver<Delivery>), Response> {
        let mut routing = self.routing();
        if let Some(id) = ids.iter().find(|id| routing.requests.contains_key(id)) {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                Some(id.clone()),
                ErrorObject::invalid_request(format!("request id {id} is already in flight")),
            ));
        }
        if routing.open_streams() >= limit {
            return Err(too_many_streams(limit));
        }
        routing.next_stream += 1;
        let stream = routing.next_stream;
        let (tx, rx) = mpsc::channel(STREAM_QUEUE);
        for id in ids {
            routing.requests.insert(id.clone(), stream);
        }
        for token in &tokens {
            routing.tokens.insert(token.clone(), stream);
        }
        routing.streams.insert(
            stream,
            PostStream {
                outstanding: ids.len(),
                tokens,
                live: Some(tx),
                streaming: false,
            },
        );
        Ok((stream, rx))
    }

    /// Forget a POST stream whose body never reached the engine.
    fn abandon(&self, stream: u64) {
        let mut routing = self.routing();
        routing.requests.retain(|_, s| *s != stream);
        routing.remove_stream(stream);
    }

    /// The client cancelled `id`: no response will come, so its stream may end.
    fn cancelled(&self, id: &RequestId) {
        let mut routing = self.routing();
        let Some(stream) = routing.requests.remove(id) else {
            return;
        };
        let done = routing.streams.get_mut(&stream).is_some_and(|s| {
            s.outstanding = s.outstanding.saturating_sub(1);
            s.outstanding == 0
        });
        if done
            && let Some(s) = routing.remove_stream(stream)
            && let Some(live) = s.live
        {
            let _ = live.try_send(Delivery::End);
        }
    }

    /// A request handler is about to queue `frame` while serving the client's `request`:
    /// remember the request's stream for the frame (called on the handler's task, through
    /// the engine's [`RelatedSink`]).
    fn note_related(&self, request: &RequestId, frame: &[u8]) {
        let mut routing = self.routing();
        if let Some(&stream) = routing.requests.get(request) {
            routing
                .related
                .entry(frame_key(frame))
                .or_default()
                .push_back(stream);
        }
    }

    /// Deliver one frame from the engine to exactly one stream.
    fn route(&self, frame: Frame) {
        let kind = classify(&frame);
        let frame = Bytes::from(frame);
        let mut routing = self.routing();
        let related = match kind {
            Kind::Responses(_) => None,
            _ => routing.take_related(&frame),
        };
        let target = match kind {
            Kind::Responses(ids) => {
                let mut stream = None;
                let mut answered = 0;
                for id in &ids {
                    if let Some(s) = routing.requests.remove(id) {
                        stream = Some(s);
                        answered += 1;
                    }
                }
                let Some(stream) = stream else {
                    tracing::debug!(session = %self.id, "a response for no request in flight dropped");
                    return;
                };
                let done = routing.streams.get_mut(&stream).is_none_or(|s| {
                    s.outstanding = s.outstanding.saturating_sub(answered);
                    s.outstanding == 0
                });
                if done {
                    let Some(s) = routing.remove_stream(stream) else {
                        return;
                    };
                    // A response that is the stream's only message is answered as JSON,
                    // which has no event id to resume from: keep it out of the store.
                    let seq = if s.streaming {
                        self.store.append(&self.key(stream), frame.clone())
                    } else {
                        0
                    };
                    if let Some(live) = s.live {
                        let _ = live.try_send(Delivery::Event {
                            seq,
                            frame,
                            last: true,
                        });
                    }
                    return;
                }
                stream
            }
            Kind::Progress(token) => match routing.tokens.get(&token) {
                Some(stream) => *stream,
                None => related.unwrap_or_else(|| fallback(&routing)),
            },
            Kind::FromHandler => related.unwrap_or_else(|| {
                let mut busy = routing.streams.iter().filter(|(_, s)| s.outstanding > 0);
                match (busy.next(), busy.next()) {
                    (Some((stream, _)), None) => *stream,
                    _ => fallback(&routing),
                }
            }),
            Kind::Other => related.unwrap_or_else(|| fallback(&routing)),
        };
        let seq = self.store.append(&self.key(target), frame.clone());
        let delivery = Delivery::Event {
            seq,
            frame,
            last: false,
        };
        let slot = if target == STANDALONE {
            &mut routing.standalone
        } else {
            match routing.streams.get_mut(&target) {
                Some(s) => {
                    s.streaming = true;
                    &mut s.live
                }
                None => return,
            }
        };
        if let Some(live) = slot
            && live.try_send(delivery).is_err()
        {
            // Gone or too far behind: the client may resume from the store.
            *slot = None;
        }
    }
}

/// Rule 4: the GET stream if connected, else the newest connected POST stream, else the
/// GET stream's log.
fn fallback(routing: &Routing) -> u64 {
    if live(&routing.standalone) {
        return STANDALONE;
    }
    routing
        .streams
        .iter()
        .filter(|(_, s)| live(&s.live))
        .map(|(n, _)| *n)
        .max()
        .unwrap_or(STANDALONE)
}

/// The router task: every frame the engine sends, to its stream; when the engine ends, the
/// session's streams end.
async fn run_router(session: Arc<Session>, mut from_engine: mpsc::Receiver<Frame>) {
    while let Some(frame) = from_engine.recv().await {
        session.route(frame);
    }
    session.closed.cancel();
    let mut routing = session.routing();
    routing.streams.clear();
    routing.related.clear();
    routing.standalone = None;
}

/// A session id: 128 bits from the OS CSPRNG, as 32 hex digits.
pub(crate) fn new_session_id() -> String {
    use chacha20poly1305::aead::OsRng;
    use chacha20poly1305::aead::rand_core::RngCore;
    let mut bytes = [0u8; 16];
    OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn too_many_streams(limit: usize) -> Response {
    error_response(
        StatusCode::TOO_MANY_REQUESTS,
        None,
        ErrorObject::invalid_request(format!(
            "too many open streams on this session (limit {limit}); close one first"
        )),
    )
}

fn missing_session() -> Response {
    error_response(
        StatusCode::BAD_REQUEST,
        None,
        ErrorObject::invalid_request(
            "Bad Request: the Mcp-Session-Id header is required (send initialize first)",
        ),
    )
}

fn unknown_session() -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        None,
        ErrorObject::new(
            -32001,
            "Session not found: it ended or expired; send initialize to start a new one",
        ),
    )
}

fn bad_request(message: impl std::fmt::Display) -> Response {
    error_response(
        StatusCode::BAD_REQUEST,
        None,
        ErrorObject::invalid_request(message),
    )
}

/// The session named by the request, or the answer refusing it.
/// A session started by an owner (see [`SessionOwner`]) is unknown to anyone else.
fn session_of(
    shared: &Shared,
    headers: &HeaderMap,
    owner: Option<&SessionOwner>,
) -> Result<Arc<Session>, Response> {
    let Some(id) = headers.get(SESSION_ID) else {
        return Err(missing_session());
    };
    let id = id.to_str().unwrap_or("");
    shared
        .sessions
        .find(id, shared.config.session_idle_timeout)
        .filter(|session| session.owner.is_none() || session.owner.as_ref() == owner)
        .ok_or_else(unknown_session)
}

/// The `MCP-Protocol-Version` rules of a session (see the module docs).
fn check_version(shared: &Shared, headers: &HeaderMap, session: &Session) -> Result<(), Response> {
    let header = headers::protocol_version(headers)
        .map_err(|e| error_response(StatusCode::BAD_REQUEST, None, e))?;
    let Some(header) = header else {
        return Ok(());
    };
    let versions = &shared.server.inner.versions;
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

/// A session-era POST (`claims` said so).
pub(crate) async fn post(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    data: RequestData,
    bytes: Bytes,
    message: Value,
) -> Response {
    if let Value::Object(object) = &message
        && object.get("method").and_then(Value::as_str) == Some("initialize")
    {
        let id = object
            .get("id")
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
        return match id {
            Some(id) => initialize(shared, bytes, id, data).await,
            None => bad_request("initialize must be a request with an id"),
        };
    }
    let session = match session_of(shared, headers, data.owner.as_ref()) {
        Ok(session) => session,
        Err(response) => return response,
    };
    if let Err(response) = check_version(shared, headers, &session) {
        return response;
    }
    // A single message the server cannot accept (not a valid request, notification or
    // response) gets an HTTP error status with its JSON-RPC error, never a silent 202.
    if !message.is_array()
        && let Inbound::Rejected(rejected) = jsonrpc::classify(&bytes)
    {
        let response = rejected.response;
        return error_response(StatusCode::BAD_REQUEST, response.id, response.error);
    }
    let busy = Busy::new(&session);
    let entries: Vec<&Value> = match &message {
        Value::Array(entries) => {
            if !session.version().has(Feature::Batches) {
                return bad_request(format!(
                    "JSON-RPC batches are accepted in 2025-03-26 sessions only (this one is {})",
                    session.version()
                ));
            }
            if entries.is_empty() {
                return bad_request("an empty batch");
            }
            entries.iter().collect()
        }
        other => vec![other],
    };
    let mut ids = Vec::new();
    let mut tokens = Vec::new();
    let mut cancelled = Vec::new();
    for entry in entries {
        let method = entry.get("method").and_then(Value::as_str);
        if method == Some("initialize") {
            return bad_request("initialize cannot be part of a batch");
        }
        if method == Some("notifications/cancelled")
            && let Some(id) = entry
                .pointer("/params/requestId")
                .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
        {
            cancelled.push(id);
        }
        let (Some(_), Some(id)) = (method, entry.get("id")) else {
            continue;
        };
        match serde_json::from_value::<RequestId>(id.clone()) {
            Ok(id) => ids.push(id),
            Err(e) => return bad_request(format!("invalid request id: {e}")),
        }
        if let Some(token) = entry.pointer("/params/_meta/progressToken") {
            tokens.push(token.to_string());
        }
    }
    if ids.is_empty() {
        if session
            .write(bytes.to_vec(), data.attachment)
            .await
            .is_err()
        {
            return unknown_session();
        }
        for id in &cancelled {
            session.cancelled(id);
        }
        return StatusCode::ACCEPTED.into_response();
    }
    let (stream, rx) =
        match session.open_post_stream(&ids, tokens, shared.config.max_streams_per_session) {
            Ok(opened) => opened,
            Err(response) => return response,
        };
    if session
        .write(bytes.to_vec(), data.attachment)
        .await
        .is_err()
    {
        session.abandon(stream);
        return unknown_session();
    }
    for id in &cancelled {
        session.cancelled(id);
    }
    answer(shared, session, stream, rx, busy).await
}

/// Answer a POST stream: one JSON object if the response comes first, else SSE.
async fn answer(
    shared: &Shared,
    session: Arc<Session>,
    stream: u64,
    mut rx: mpsc::Receiver<Delivery>,
    busy: Busy,
) -> Response {
    let poll = poll_after(shared, &session);
    let first = tokio::select! {
        first = rx.recv() => first,
        () = session.closed.cancelled() => None,
        () = quiet_for(poll) => {
            // Nothing to send yet: the priming event, then the client polls.
            let priming = events::priming(stream, 0, shared.config.sse_retry);
            let pending = VecDeque::from([priming]);
            return sse_response(shared, session, stream, rx, pending, Ends::AfterPending, busy);
        }
    };
    let (seq, frame) = match first {
        Some(Delivery::Event {
            frame, last: true, ..
        }) => return json(frame),
        Some(Delivery::Event { seq, frame, .. }) => (seq, frame),
        Some(Delivery::End) => return StatusCode::ACCEPTED.into_response(),
        None => {
            return error_response(
                StatusCode::NOT_FOUND,
                None,
                ErrorObject::new(-32001, "the session ended before the response"),
            );
        }
    };
    let mut pending = VecDeque::new();
    if session.version() >= ProtocolVersion::V2025_11_25 {
        pending.push_back(events::priming(stream, 0, shared.config.sse_retry));
    }
    pending.push_back(events::event(stream, seq, &frame));
    let ends = poll.map_or(Ends::AtResponse, Ends::AtResponseOrQuiet);
    sse_response(shared, session, stream, rx, pending, ends, busy)
}

/// How long a POST stream of `session` may stay quiet before it is closed for the client
/// to poll: [`super::HttpConfig::sse_poll_after`], for 2025-11-25 sessions (their clients
/// reconnect to a stream closed after its priming event).
fn poll_after(shared: &Shared, session: &Session) -> Option<Duration> {
    shared
        .config
        .sse_poll_after
        .filter(|_| session.version() >= ProtocolVersion::V2025_11_25)
}

/// Completes after `quiet` (never without one).
async fn quiet_for(quiet: Option<Duration>) {
    match quiet {
        Some(quiet) => tokio::time::sleep(quiet).await,
        None => std::future::pending().await,
    }
}

fn json(frame: Bytes) -> Response {
    let mut response = (StatusCode::OK, frame).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// When an SSE response ends (besides at the session's end).
enum Ends {
    /// Right after its pending events.
    AfterPending,
    /// After the stream's last event (its final response).
    AtResponse,
    /// After the last event, or after this long without an event (a POST's own stream,
    /// polling: see [`poll_after`]).
    AtResponseOrQuiet(Duration),
}

/// An SSE response: `pending` first, then what the router delivers, with keep-alives,
/// until it [`Ends`].
fn sse_response(
    shared: &Shared,
    session: Arc<Session>,
    stream: u64,
    rx: mpsc::Receiver<Delivery>,
    pending: VecDeque<Bytes>,
    ends: Ends,
    busy: Busy,
) -> Response {
    struct Sse {
        rx: mpsc::Receiver<Delivery>,
        stream: u64,
        pending: VecDeque<Bytes>,
        ticks: tokio::time::Interval,
        closed: CancellationToken,
        done: bool,
        poll: Option<Duration>,
        quiet: std::pin::Pin<Box<tokio::time::Sleep>>,
        _busy: Busy,
    }
    let keep_alive = shared.config.sse_keep_alive;
    let (done, poll) = match ends {
        Ends::AfterPending => (true, None),
        Ends::AtResponse => (false, None),
        Ends::AtResponseOrQuiet(quiet) => (false, Some(quiet)),
    };
    let quiet_until = tokio::time::Instant::now() + poll.unwrap_or(Duration::ZERO);
    let state = Sse {
        rx,
        stream,
        pending,
        ticks: tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive),
        closed: session.closed.clone(),
        done,
        poll,
        quiet: Box::pin(tokio::time::sleep_until(quiet_until)),
        _busy: busy,
    };
    let body = futures_util::stream::unfold(state, |mut s| async move {
        if let Some(bytes) = s.pending.pop_front() {
            return Some((Ok::<_, Infallible>(bytes), s));
        }
        if s.done {
            return None;
        }
        let bytes = tokio::select! {
            delivery = s.rx.recv() => match delivery {
                Some(Delivery::Event { seq, frame, last }) => {
                    s.done = last;
                    if let Some(poll) = s.poll {
                        s.quiet.as_mut().reset(tokio::time::Instant::now() + poll);
                    }
                    events::event(s.stream, seq, &frame)
                }
                Some(Delivery::End) | None => return None,
            },
            _ = s.ticks.tick() => sse::keep_alive(),
            () = s.closed.cancelled() => return None,
            () = s.quiet.as_mut(), if s.poll.is_some() => return None,
        };
        Some((Ok(bytes), s))
    });
    let mut response = Response::new(Body::from_stream(body));
    sse::headers(&mut response);
    response
}

/// `initialize`: a new session, answered with its id.
async fn initialize(
    shared: &Arc<Shared>,
    bytes: Bytes,
    id: RequestId,
    data: RequestData,
) -> Response {
    let session = {
        let mut map = shared.sessions.map();
        if shared.sessions.shutdown.is_cancelled() {
            return error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                ErrorObject::internal_error("the server is shutting down"),
            );
        }
        if map.len() + shared.legacy.len() >= shared.config.max_sessions {
            return error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                ErrorObject::internal_error(format!(
                    "too many sessions (limit {}); try again later",
                    shared.config.max_sessions
                )),
            );
        }
        let (to_engine, incoming) = mpsc::channel(32);
        let (outgoing, from_engine) = mpsc::channel(shared.server.inner.engine.write_queue.max(1));
        let session = Arc::new(Session {
            id: new_session_id(),
            to_engine: Mutex::new(Some(to_engine)),
            version: OnceLock::new(),
            routing: Mutex::default(),
            store: Arc::clone(&shared.sessions.store),
            closed: CancellationToken::new(),
            busy: AtomicUsize::new(0),
            last_active: Mutex::new(Instant::now()),
            owner: data.owner,
        });
        let weak = Arc::downgrade(&session);
        let related = RelatedSink::new(move |request, frame| {
            if let Some(session) = weak.upgrade() {
                session.note_related(request, frame);
            }
        });
        // The engine ends once its input closes (`Session::close`); the router after it.
        drop(
            shared
                .server
                .serve(Transport::new(incoming, outgoing).with_related(related)),
        );
        tokio::spawn(run_router(Arc::clone(&session), from_engine));
        map.insert(session.id.clone(), Arc::clone(&session));
        session
    };
    let idle = shared.config.session_idle_timeout;
    let weak = Arc::downgrade(shared);
    shared.sessions.sweeper.call_once(|| {
        let every = (idle / 2).clamp(Duration::from_millis(10), Duration::from_secs(30));
        tokio::spawn(sweep(weak, every));
    });
    let busy = Busy::new(&session);
    let end = |response: Response| {
        if let Some(session) = shared.sessions.remove(&session.id) {
            session.close();
        }
        response
    };
    let (_stream, mut rx) = match session.open_post_stream(std::slice::from_ref(&id), Vec::new(), 1)
    {
        Ok(opened) => opened,
        Err(response) => return end(response),
    };
    if session
        .write(bytes.to_vec(), data.attachment)
        .await
        .is_err()
    {
        return end(unknown_session());
    }
    let frame = loop {
        match rx.recv().await {
            Some(Delivery::Event {
                frame, last: true, ..
            }) => break frame,
            Some(Delivery::Event { .. }) => {}
            Some(Delivery::End) | None => {
                return end(error_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Some(id),
                    ErrorObject::internal_error("initialize ended without a response"),
                ));
            }
        }
    };
    drop(busy);
    #[derive(Deserialize)]
    struct Answer {
        result: Option<Negotiated>,
    }
    #[derive(Deserialize)]
    struct Negotiated {
        #[serde(rename = "protocolVersion")]
        protocol_version: String,
    }
    let version = serde_json::from_slice::<Answer>(&frame)
        .ok()
        .and_then(|a| a.result)
        .and_then(|r| r.protocol_version.parse::<ProtocolVersion>().ok());
    let Some(version) = version else {
        // A refused initialize starts no session.
        return end(json(frame));
    };
    let _ = session.version.set(version);
    let mut response = json(frame);
    if let Ok(value) = HeaderValue::from_str(&session.id) {
        response.headers_mut().insert(SESSION_ID, value);
    }
    response
}

/// `GET` on the endpoint: the standalone stream, or the resumption of any stream.
pub(crate) async fn get(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let headers = request.headers();
    if !headers.contains_key(SESSION_ID) {
        return method_not_allowed();
    }
    let accepts_sse = headers.get_all(header::ACCEPT).iter().any(|v| {
        v.to_str().unwrap_or("").split(',').any(|r| {
            matches!(
                r.split(';').next().unwrap_or("").trim(),
                "text/event-stream" | "text/*" | "*/*"
            )
        })
    });
    if !accepts_sse {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorObject::invalid_request("the Accept header must list text/event-stream"),
        );
    }
    let owner = request.extensions().get::<SessionOwner>();
    let session = match session_of(&shared, headers, owner) {
        Ok(session) => session,
        Err(response) => return response,
    };
    if let Err(response) = check_version(&shared, headers, &session) {
        return response;
    }
    let busy = Busy::new(&session);
    let limit = shared.config.max_streams_per_session;
    let (tx, rx) = mpsc::channel(STREAM_QUEUE);
    let mut pending = VecDeque::new();
    let resume = headers
        .get(LAST_EVENT_ID)
        .map(|v| v.to_str().ok().and_then(events::parse_event_id));
    let (stream, done) = match resume {
        Some(None) => return bad_request("Bad Request: malformed Last-Event-ID"),
        Some(Some((stream, after))) => {
            let mut routing = session.routing();
            if stream > routing.next_stream {
                drop(routing);
                return bad_request("Bad Request: Last-Event-ID names no stream of this session");
            }
            let replay = match session.store.replay(&session.key(stream), after) {
                Ok(replay) => replay,
                Err(ReplayError::UnknownStream) => {
                    drop(routing);
                    return bad_request(
                        "Bad Request: Last-Event-ID names no event of this session",
                    );
                }
                Err(ReplayError::Evicted) => {
                    drop(routing);
                    return error_response(
                        StatusCode::GONE,
                        None,
                        ErrorObject::invalid_request(
                            "events after Last-Event-ID are no longer kept; they cannot be replayed",
                        ),
                    );
                }
            };
            let open = if stream == STANDALONE {
                Some(&mut routing.standalone)
            } else {
                routing.streams.get_mut(&stream).map(|s| &mut s.live)
            };
            // Reattach the stream (replacing a connection the client has given up on), or
            // end after the replay when the stream is finished.
            let done = match open {
                Some(slot) => {
                    *slot = Some(tx);
                    false
                }
                None => true,
            };
            pending.extend(
                replay
                    .iter()
                    .map(|(seq, frame)| events::event(stream, *seq, frame)),
            );
            (stream, done)
        }
        None => {
            let mut routing = session.routing();
            if live(&routing.standalone) {
                drop(routing);
                return error_response(
                    StatusCode::CONFLICT,
                    None,
                    ErrorObject::invalid_request(
                        "Conflict: this session already has a standalone SSE stream",
                    ),
                );
            }
            if routing.open_streams() >= limit {
                drop(routing);
                return too_many_streams(limit);
            }
            routing.standalone = Some(tx);
            if session.version() >= ProtocolVersion::V2025_11_25 {
                let last = session.store.last(&session.key(STANDALONE));
                pending.push_back(events::priming(STANDALONE, last, shared.config.sse_retry));
            }
            (STANDALONE, false)
        }
    };
    let ends = if done {
        Ends::AfterPending
    } else {
        Ends::AtResponse
    };
    sse_response(&shared, session, stream, rx, pending, ends, busy)
}

/// `DELETE` on the endpoint: end the session.
pub(crate) async fn delete(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let Some(id) = request.headers().get(SESSION_ID) else {
        return method_not_allowed();
    };
    let owner = request.extensions().get::<SessionOwner>();
    if let Err(response) = session_of(&shared, request.headers(), owner) {
        return response;
    }
    match shared.sessions.remove(id.to_str().unwrap_or("")) {
        Some(session) => {
            session.close();
            StatusCode::OK.into_response()
        }
        None => unknown_session(),
    }
}

fn method_not_allowed() -> Response {
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
