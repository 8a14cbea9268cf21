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
//! | `GET /sse` beyond [`super::HttpConfig::max_sessions_per_client`] (shared with the session era) | 429 |
//! | `POST /messages?sessionId=ID`, a JSON-RPC message (or batch) | 202 `Accepted`; the engine's answer goes out on the SSE stream |
//! | `POST` without `sessionId` | 400 |
//! | `POST` with an unknown `sessionId` (never issued, its SSE stream closed, or idle past [`super::HttpConfig::session_idle_timeout`]) | 404 |
//! | `POST` while more than [`super::HttpConfig::legacy_max_unread_bytes`] of the session's output wait for its client to read them | 503 |
//! | `POST` body not `application/json` / over the body limit / not JSON | 415 / 413 / 400 |
//! | foreign `Origin` / `Host` | 403 / 421 (as on the Streamable HTTP endpoint) |
//!
//! **Sessions.** Each SSE connection is one session with one long-lived engine
//! (`Server::serve` on a channel transport, as in the session era): a POST writes its
//! message into the engine; everything the engine sends (responses, notifications, server
//! requests) is one `message` event on the SSE stream. The id is 128 bits from the OS
//! CSPRNG. Closing the SSE stream ends the session (the engine's input closes; in-flight
//! handlers get the engine's shutdown grace) and its id then gets 404. Keep-alive comments
//! ([`super::HttpConfig::sse_keep_alive`]) reveal a client that vanished with a reset, but
//! not one whose connection lingers (a peer gone without a word, a client that no longer
//! reads): so, as in the session era, a session idle for
//! [`super::HttpConfig::session_idle_timeout`] — no POST, no message sent on its stream, no
//! request awaiting its response — is ended: its stream closes and its id gets 404. Its
//! sessions count towards [`super::HttpConfig::max_sessions`] with the session era's. The
//! per-session stream limit does not apply (one stream; POSTs are answered at once).
//!
//! **A client that does not read.** A task takes every frame from the engine as it comes
//! and queues it for the stream, counting its bytes: the engine never waits for the client
//! (a waiting engine would hold every finished answer, each with its bytes, however many
//! the client posts). While more than [`super::HttpConfig::legacy_max_unread_bytes`] wait
//! unread, the session's POSTs get 503 and a JSON-RPC error saying why: the client is
//! slowed down and loses nothing. Answers to requests accepted before still queue, up to
//! twice the limit; past that the stream is cut as the session era cuts a stream whose
//! queue is full: the session ends, its queue is dropped and its id gets 404. (The
//! session era's streams can be resumed from the event store; this transport has no
//! resumption, so it refuses new work first.) With a session store, a POST that reaches
//! the session through another instance is passed on without that check; the cut still
//! bounds what it adds.
//!
//! **Shutdown.** `serve_with_shutdown` closes every engine's input: in-flight requests still
//! answer on their stream (within the engine's shutdown grace), then the stream ends.
//!
//! The `endpoint` URI is the messages path as the client reaches it: the configured path,
//! after the prefix the router is nested under (`Router::nest("/api", ..)`: `/api/messages`)
//! and after `X-Forwarded-Prefix` when a proxy strips a prefix of its own and says so.

use std::collections::{HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use ferry_protocol::RequestId;
use ferry_protocol::jsonrpc::ErrorObject;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::clients::{ClientKey, ClientSlot};
use super::owner::{RequestData, SessionOwner};
use super::stateless::error_response;
use super::store::{BusMessage, SessionRecord};
use super::{Shared, guard, sse};
use crate::engine::{Frame, Transport, TransportEvent};

/// Messages queued from POSTs into one session's engine.
const ENGINE_QUEUE: usize = 32;

/// Every HTTP+SSE session of a router.
#[derive(Default)]
pub(crate) struct LegacySessions {
    map: Mutex<HashMap<String, Held>>,
    shutdown: CancellationToken,
    /// Set once the sweeper task runs.
    sweeper: std::sync::OnceLock<()>,
}

/// A session in the table, with its client's slot (given back when it leaves).
struct Held {
    entry: Entry,
    _client: Option<ClientSlot>,
}

/// One session: its engine's input, its activity, its output waiting for the stream, and
/// the principal that opened it (if an authentication layer named one: see
/// [`SessionOwner`]).
#[derive(Clone)]
struct Entry {
    to_engine: mpsc::Sender<TransportEvent>,
    activity: Arc<Activity>,
    outbox: Arc<Outbox>,
    owner: Option<SessionOwner>,
}

/// A session's output between its engine and its SSE response, counted in bytes (see
/// "A client that does not read" in the module docs).
#[derive(Default)]
struct Outbox {
    queue: Mutex<Queue>,
    /// Woken when an event is queued or the queue ends (one reader: the response).
    ready: tokio::sync::Notify,
}

#[derive(Default)]
struct Queue {
    events: VecDeque<Bytes>,
    /// The bytes of `events`.
    bytes: usize,
    /// No more events will come (what is queued is still sent).
    ended: bool,
    /// The stream is gone or cut: nothing is queued any more.
    closed: bool,
}

impl Outbox {
    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The bytes queued and not yet taken by the response.
    fn unread(&self) -> usize {
        self.queue().bytes
    }

    /// Queue `event`, unless more than `cut_at` bytes wait already (`Err`: the stream is
    /// to be cut) or the stream is gone (dropped). One event is always taken by a queue
    /// the client keeps up with, whatever its size.
    fn push(&self, event: Bytes, cut_at: usize) -> Result<(), ()> {
        let mut queue = self.queue();
        if queue.closed {
            return Ok(());
        }
        if queue.bytes > cut_at {
            return Err(());
        }
        queue.bytes += event.len();
        queue.events.push_back(event);
        drop(queue);
        self.ready.notify_one();
        Ok(())
    }

    /// No more events: the response ends once it has sent what is queued.
    fn end(&self) {
        self.queue().ended = true;
        self.ready.notify_one();
    }

    /// The stream is gone or cut: drop what is queued, take nothing more.
    fn close(&self) {
        let mut queue = self.queue();
        queue.closed = true;
        queue.ended = true;
        queue.bytes = 0;
        queue.events = VecDeque::new();
        drop(queue);
        self.ready.notify_one();
    }

    /// The next event for the response; `None` once the queue has ended. Cancel-safe.
    async fn next(&self) -> Option<Bytes> {
        loop {
            {
                let mut queue = self.queue();
                if let Some(event) = queue.events.pop_front() {
                    queue.bytes -= event.len();
                    return Some(event);
                }
                if queue.ended {
                    return None;
                }
            }
            self.ready.notified().await;
        }
    }
}

/// What keeps a session from being idle: POSTs, messages sent on its stream, requests
/// awaiting their responses.
struct Activity {
    last: Mutex<Instant>,
    /// Requests posted and not yet answered (nor cancelled).
    pending: Mutex<HashSet<RequestId>>,
    /// Cancelled when the session expires: its stream ends.
    expired: CancellationToken,
}

#[derive(Deserialize)]
struct IdProbe {
    id: Option<RequestId>,
    method: Option<serde::de::IgnoredAny>,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            last: Mutex::new(Instant::now()),
            pending: Mutex::default(),
            expired: CancellationToken::new(),
        }
    }

    fn touch(&self) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn idle(&self, idle: Duration) -> bool {
        self.pending().is_empty()
            && self
                .last
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .elapsed()
                > idle
    }

    /// The client posted `message` (one message or a batch): note its requests, and
    /// forget those it cancels.
    fn posted(&self, message: &Value) {
        let entries = match message {
            Value::Array(entries) => entries.iter().collect(),
            other => vec![other],
        };
        let mut pending = self.pending();
        for entry in entries {
            let method = entry.get("method").and_then(Value::as_str);
            let id = |value: Option<&Value>| {
                value.and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
            };
            match (method, id(entry.get("id"))) {
                (Some(_), Some(id)) => {
                    pending.insert(id);
                }
                (Some("notifications/cancelled"), None) => {
                    if let Some(id) = id(entry.pointer("/params/requestId")) {
                        pending.remove(&id);
                    }
                }
                _ => {}
            }
        }
        drop(pending);
        self.touch();
    }

    /// The engine sent `frame` on the stream: the requests it answers are done.
    fn sent(&self, frame: &[u8]) {
        let probes = if frame.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            serde_json::from_slice::<Vec<IdProbe>>(frame).unwrap_or_default()
        } else {
            serde_json::from_slice::<IdProbe>(frame)
                .map(|p| vec![p])
                .unwrap_or_default()
        };
        let mut pending = self.pending();
        for probe in probes {
            if let (Some(id), None) = (probe.id, probe.method) {
                pending.remove(&id);
            }
        }
        drop(pending);
        self.touch();
    }
}

impl LegacySessions {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Held>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many sessions are live.
    pub(crate) fn len(&self) -> usize {
        self.map().len()
    }

    /// Refuse new sessions and close every engine's input: in-flight requests answer on
    /// their streams, then the streams end.
    pub(crate) fn shutdown(&self) {
        self.shutdown.cancel();
        self.map().clear();
    }

    /// The live session `id`; an idle-expired one is ended here.
    fn find(&self, id: &str, idle: Duration) -> Option<Entry> {
        let mut map = self.map();
        let held = map.get(id)?;
        if held.entry.activity.idle(idle) {
            let held = map.remove(id)?;
            drop(map);
            held.entry.end();
            return None;
        }
        Some(held.entry.clone())
    }

    /// End every idle-expired session: its stream closes, its engine's input too.
    pub(crate) fn sweep(&self, idle: Duration) {
        let expired: Vec<Held> = self
            .map()
            .extract_if(|_, held| held.entry.activity.idle(idle))
            .map(|(id, held)| {
                tracing::debug!(session = %id, "HTTP+SSE session expired");
                held
            })
            .collect();
        for held in expired {
            held.entry.end();
        }
    }

    /// End session `id` now, its client too far behind (see [`Outbox`]).
    fn cut(&self, id: &str, activity: &Activity, outbox: &Outbox) {
        let held = self.map().remove(id);
        tracing::debug!(session = %id, "HTTP+SSE session cut: its client does not read");
        activity.expired.cancel();
        outbox.close();
        drop(held);
    }
}

impl Entry {
    /// End the session: its stream ends and what waits for it is dropped. Its engine's
    /// input closes once the table's entry and those of POSTs in flight are gone (the
    /// stream and its pump hold none).
    fn end(&self) {
        self.activity.expired.cancel();
        self.outbox.close();
    }
}

/// Every `every`, until the router shuts down or is dropped (`stop`).
async fn sweep(shared: Weak<Shared>, every: Duration, stop: CancellationToken) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = stop.cancelled() => return,
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if shared.legacy.shutdown.is_cancelled() {
            return;
        }
        shared.legacy.sweep(shared.config.session_idle_timeout);
        refresh(&shared).await;
    }
}

/// A dropped router stops its sweeper at once (sessions end with their streams).
impl Drop for LegacySessions {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Ends the session when the SSE response is dropped (the client hung up, or the stream
/// ended).
struct Registration {
    shared: Arc<Shared>,
    id: String,
    outbox: Arc<Outbox>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.outbox.close();
        let held = self.shared.legacy.map().remove(&self.id);
        drop(held);
        tracing::debug!(session = %self.id, "HTTP+SSE session ended");
        // Shared: its record goes with it (the other instances then answer 404).
        if let Some(store) = self.shared.config.session_store.clone() {
            let id = std::mem::take(&mut self.id);
            tokio::spawn(async move {
                if let Err(e) = store.remove(&id).await {
                    tracing::warn!("cannot forget HTTP+SSE session {id}: {e}");
                }
            });
        }
    }
}

/// Record a new session for the other instances: they pass its POSTs on to this one.
async fn record(shared: &Shared, id: &str, owner: Option<&SessionOwner>) -> Result<(), Response> {
    let Some(store) = &shared.config.session_store else {
        return Ok(());
    };
    let record = SessionRecord {
        id: id.to_owned(),
        revision: "2024-11-05".to_owned(),
        initialize: String::new(),
        owner: owner.map(|o| o.0.to_string()),
        log_level: None,
        subscriptions: Vec::new(),
        version: 0,
        instance: Some(shared.instance.to_string()),
    };
    store
        .create(&record, shared.config.session_idle_timeout)
        .await
        .map_err(|e| unavailable(format!("{e}; try again shortly")))
}

/// Keep the records of this instance's live sessions from expiring (the sweeper's pass).
async fn refresh(shared: &Shared) {
    let Some(store) = &shared.config.session_store else {
        return;
    };
    let ids: Vec<String> = shared.legacy.map().keys().cloned().collect();
    for id in ids {
        if let Err(e) = store.touch(&id, shared.config.session_idle_timeout).await {
            tracing::warn!("cannot refresh HTTP+SSE session {id}: {e}");
            return;
        }
    }
}

/// A message the client posted on another instance for a session of this one.
pub(crate) async fn deliver(shared: &Shared, message: BusMessage) {
    let Some(entry) = shared
        .legacy
        .find(&message.session, shared.config.session_idle_timeout)
    else {
        return;
    };
    if let Ok(value) = serde_json::from_str::<Value>(&message.frame) {
        entry.activity.posted(&value);
    }
    let _ = entry
        .to_engine
        .send(TransportEvent::Frame(message.frame.into_bytes()))
        .await;
}

/// A POST for a session this instance does not hold: passed on to the instance holding
/// its stream, if the shared record names one the poster may use.
async fn forward(shared: &Shared, id: &str, data: &RequestData, bytes: &Bytes) -> Response {
    let Some(store) = &shared.config.session_store else {
        return unknown_session();
    };
    let record = match store.load(id).await {
        Ok(Some(record)) => record,
        Ok(None) => return unknown_session(),
        Err(e) => return unavailable(format!("{e}; try again shortly")),
    };
    let owner = data.owner.as_ref().map(|o| &*o.0);
    let Some(instance) = record.instance else {
        return unknown_session();
    };
    if (record.owner.is_some() && record.owner.as_deref() != owner) || *instance == *shared.instance
    {
        return unknown_session();
    }
    let message = BusMessage {
        to: Some(instance),
        session: id.to_owned(),
        frame: String::from_utf8_lossy(bytes).into_owned(),
        legacy: true,
        change: None,
        from: shared.instance.to_string(),
        task: None,
        record: false,
    };
    match store.publish(&message).await {
        Ok(()) => accepted(),
        Err(e) => unavailable(format!("{e}; try again shortly")),
    }
}

fn accepted() -> Response {
    let mut response = (StatusCode::ACCEPTED, "Accepted").into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain"),
    );
    response
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
    let data = RequestData::of(&shared.config, request.extensions(), request.headers());
    let client = match super::clients::admit(
        &shared,
        ClientKey::of(&shared.config, &data, request.headers()),
    ) {
        Ok(client) => client,
        Err(response) => return response,
    };
    super::session::make_room(&shared);
    let id = super::session::new_session_id();
    // Read before taking the legacy lock: the session era takes its lock, then this one.
    let session_era = shared.sessions.len();
    let (incoming, outgoing, from_engine, entry) = {
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
        let (outgoing, from_engine) = mpsc::channel(shared.backend.write_queue().max(1));
        let entry = Entry {
            to_engine,
            activity: Arc::new(Activity::new()),
            outbox: Arc::default(),
            owner: data.owner,
        };
        let held = Held {
            entry: entry.clone(),
            _client: client,
        };
        map.insert(id.clone(), held);
        (incoming, outgoing, from_engine, entry)
    };
    let idle = shared.config.session_idle_timeout;
    let weak = Arc::downgrade(&shared);
    let stop = shared.legacy.shutdown.clone();
    shared.legacy.sweeper.get_or_init(|| {
        let every = (idle / 2).clamp(Duration::from_millis(10), Duration::from_secs(30));
        drop(tokio::spawn(sweep(weak, every, stop)));
    });
    if let Err(response) = record(&shared, &id, request.extensions().get::<SessionOwner>()).await {
        shared.legacy.map().remove(&id);
        return response;
    }
    super::session::listen(&shared).await;
    // The engine ends once its input closes (the session leaves the map).
    shared.backend.connect(
        super::Connection::Legacy,
        Transport::new(incoming, outgoing).with_session_id(id.as_str()),
    );
    let endpoint = format!(
        "{}{}?sessionId={id}",
        client_prefix(&request),
        shared.config.legacy_messages
    );
    tracing::debug!(session = %id, "HTTP+SSE session started");
    let Entry {
        activity, outbox, ..
    } = entry;
    tokio::spawn(pump(
        Arc::clone(&shared),
        id.clone(),
        from_engine,
        Arc::clone(&activity),
        Arc::clone(&outbox),
    ));
    stream(&shared, id, endpoint, activity, outbox)
}

/// Take every frame of the session's engine as it comes into its [`Outbox`], until the
/// engine ends (then the stream ends once it has sent the rest), the session ends, or its
/// client falls more than twice [`super::HttpConfig::legacy_max_unread_bytes`] behind
/// (then the stream is cut).
async fn pump(
    shared: Arc<Shared>,
    id: String,
    mut from_engine: mpsc::Receiver<Frame>,
    activity: Arc<Activity>,
    outbox: Arc<Outbox>,
) {
    let cut_at = shared.config.legacy_max_unread_bytes.saturating_mul(2);
    loop {
        let frame = tokio::select! {
            frame = from_engine.recv() => frame,
            () = activity.expired.cancelled() => return,
        };
        let Some(frame) = frame else {
            outbox.end();
            return;
        };
        activity.sent(&frame);
        if outbox.push(sse::event(&frame), cut_at).is_err() {
            shared.legacy.cut(&id, &activity, &outbox);
            return;
        }
    }
}

/// The path the client's URL has before the router's own paths: a proxy's
/// `X-Forwarded-Prefix` (a path: `/` and visible characters, no query), then the prefix
/// the router is nested under.
fn client_prefix(request: &Request) -> String {
    let forwarded = request
        .headers()
        .get("x-forwarded-prefix")
        .and_then(|v| v.to_str().ok())
        .filter(|p| {
            p.starts_with('/')
                && p.bytes()
                    .all(|b| b.is_ascii_graphic() && !matches!(b, b'?' | b'#' | b'\\'))
        })
        .unwrap_or("")
        .trim_end_matches('/');
    let nested = request
        .extensions()
        .get::<axum::extract::NestedPath>()
        .map_or("", |n| n.as_str())
        .trim_end_matches('/');
    format!("{forwarded}{nested}")
}

/// The SSE response: the `endpoint` event, then every event of the session's [`Outbox`],
/// with keep-alives, until the engine ends or the session does.
fn stream(
    shared: &Arc<Shared>,
    id: String,
    endpoint: String,
    activity: Arc<Activity>,
    outbox: Arc<Outbox>,
) -> Response {
    struct Sse {
        first: Option<Bytes>,
        ticks: tokio::time::Interval,
        activity: Arc<Activity>,
        outbox: Arc<Outbox>,
        _registration: Registration,
    }
    let keep_alive = shared.config.sse_keep_alive;
    let state = Sse {
        first: Some(Bytes::from(format!(
            "event: endpoint\ndata: {endpoint}\n\n"
        ))),
        ticks: tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive),
        _registration: Registration {
            shared: Arc::clone(shared),
            id,
            outbox: Arc::clone(&outbox),
        },
        activity,
        outbox,
    };
    let body = futures_util::stream::unfold(state, |mut s| async move {
        if let Some(first) = s.first.take() {
            return Some((Ok::<_, Infallible>(first), s));
        }
        let bytes = tokio::select! {
            event = s.outbox.next() => {
                s.activity.touch();
                event?
            }
            _ = s.ticks.tick() => sse::keep_alive(),
            () = s.activity.expired.cancelled() => return None,
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
    let data = RequestData::of(&shared.config, &parts.extensions, &parts.headers);
    let entry = shared.legacy.find(id, shared.config.session_idle_timeout);
    if entry.is_none() && shared.config.session_store.is_none() {
        return unknown_session();
    }
    // A session opened by an owner is unknown to anyone else.
    if let Some(entry) = &entry
        && entry.owner.is_some()
        && entry.owner != data.owner
    {
        return unknown_session();
    }
    // A client that does not read its stream is given no more work (see `Outbox`).
    let limit = shared.config.legacy_max_unread_bytes;
    let unread = entry.as_ref().map_or(0, |entry| entry.outbox.unread());
    if unread > limit {
        return unavailable(format!(
            "this session's SSE stream is not being read: {unread} bytes of its output wait \
             (limit {limit}: legacy_max_unread_bytes); read the stream, then post again"
        ));
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
    let message = match serde_json::from_slice::<Value>(&bytes) {
        Ok(message) => message,
        Err(e) => {
            return error_response(StatusCode::BAD_REQUEST, None, ErrorObject::parse_error(e));
        }
    };
    let Some(entry) = entry else {
        // Shared: the session's stream may be held by another instance.
        return forward(&shared, id, &data, &bytes).await;
    };
    entry.activity.posted(&message);
    let event = match data.attachment {
        Some(attachment) => TransportEvent::attached(bytes.to_vec(), attachment),
        None => TransportEvent::Frame(bytes.to_vec()),
    };
    if entry.to_engine.send(event).await.is_err() {
        return unknown_session();
    }
    accepted()
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
            "Session not found: its SSE stream closed or it expired; GET the SSE endpoint again",
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
