//! Sessions shared with other instances through a [`SessionStore`] (see `http::store`):
//! starting a session's local engine, finding the session a request names (here, or
//! adopted from its record), recording what the client changes, and keeping records of
//! busy sessions alive.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::{ProtocolVersion, RequestId};
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::SESSION_ID;
use super::answer::{Ends, sse_response};
use super::checks::{bad_request, missing_session, standalone_conflict, unknown_session};
use super::data_store::StoreData;
use super::router::{Delivery, Routing, run_router};
use super::state::{Applied, Busy, Replica, Session};
use super::task_store::StoreTasks;
use crate::engine::{Attachment, BackendChange, RelatedSink, SessionShare, Transport};
use crate::http::events;
use crate::http::owner::SessionOwner;
use crate::http::stateless::error_response;
use crate::http::store::{
    BusMessage, RecordChange, SHARED_STREAM_TTL, SessionRecord, SessionStore, StoreError,
    StreamEntry,
};
use crate::http::{Connection, Shared};

/// The answer when the session store cannot be reached: 503 with a JSON-RPC error.
pub(super) fn unavailable(error: &StoreError) -> Response {
    tracing::warn!("{error}");
    error_response(StatusCode::SERVICE_UNAVAILABLE, None, store_error(error))
}

/// The JSON-RPC error of a request the session store could not serve.
pub(super) fn store_error(error: &StoreError) -> ErrorObject {
    ErrorObject::internal_error(format!("{error}; try again shortly"))
}

/// A new session's local state with its engine and router running, or the refusal (the
/// router is shutting down, or the session table is full). Not yet in the table.
pub(super) fn start(
    shared: &Arc<Shared>,
    id: String,
    owner: Option<SessionOwner>,
) -> Result<Arc<Session>, Response> {
    super::make_room(shared);
    if shared.sessions.shutdown.is_cancelled() {
        return Err(error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            ErrorObject::internal_error("the server is shutting down"),
        ));
    }
    if shared.sessions.len() + shared.legacy.len() >= shared.config.max_sessions {
        return Err(error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            ErrorObject::internal_error(format!(
                "too many sessions (limit {}); try again later",
                shared.config.max_sessions
            )),
        ));
    }
    let (to_engine, incoming) = mpsc::channel(32);
    let (outgoing, from_engine) = mpsc::channel(shared.backend.write_queue().max(1));
    let get_stream = if shared.config.session_store.is_some() {
        stream_base()
    } else {
        0
    };
    let session = Arc::new(Session {
        id,
        to_engine: Mutex::new(Some(to_engine)),
        version: OnceLock::new(),
        routing: Mutex::new(Routing {
            get_stream,
            next_stream: get_stream,
            ..Routing::default()
        }),
        store: Arc::clone(&shared.sessions.store),
        closed: CancellationToken::new(),
        busy: AtomicUsize::new(0),
        used: std::sync::atomic::AtomicBool::new(false),
        last_active: Mutex::new(Instant::now()),
        owner,
        replica: Replica::default(),
        instance: shared
            .config
            .session_store
            .is_some()
            .then(|| Arc::clone(&shared.instance)),
        outbox: shared.sessions.outbox.get().cloned(),
        client: Mutex::new(None),
        max_unread: shared.config.stream_max_unread_bytes,
    });
    let weak = Arc::downgrade(&session);
    let related = RelatedSink::new(move |request, frame| {
        if let Some(session) = weak.upgrade() {
            session.note_related(request, frame);
        }
    });
    // The engine ends once its input closes (`Session::close`); the router after it.
    let transport = Transport::new(incoming, outgoing)
        .with_related(related)
        .with_session_id(&*session.id);
    match &shared.config.session_store {
        Some(store) => shared.backend.connect_shared(
            Connection::Session,
            transport,
            SessionShare {
                tasks: Arc::new(StoreTasks {
                    store: Arc::clone(store),
                    session: session.id.clone(),
                    instance: Arc::clone(&shared.instance),
                    running: Arc::clone(&shared.sessions.running_tasks),
                }),
                data: Arc::new(StoreData {
                    store: Arc::clone(store),
                    session: session.id.clone(),
                }),
            },
        ),
        None => shared.backend.connect(Connection::Session, transport),
    }
    tokio::spawn(run_router(Arc::clone(&session), from_engine));
    Ok(session)
}

/// Start taking this instance's bus messages, once per router (before its first
/// session is served: an answer for it may come through another instance at once).
pub(crate) async fn listen(shared: &Arc<Shared>) {
    let Some(store) = shared.config.session_store.clone() else {
        return;
    };
    let weak = Arc::downgrade(shared);
    let instance = Arc::clone(&shared.instance);
    shared
        .sessions
        .listening
        .get_or_init(|| async move {
            let mut messages = match store.subscribe(&instance).await {
                Ok(messages) => messages,
                Err(e) => {
                    tracing::error!("cannot listen to the other instances: {e}");
                    return;
                }
            };
            let (outbox, pending) = mpsc::channel(OUTBOX);
            if let Some(shared) = weak.upgrade() {
                let _ = shared.sessions.outbox.set(Outbox(outbox));
            }
            tokio::spawn(write_behind(Arc::clone(&store), pending));
            tokio::spawn(heartbeat(Arc::clone(&store), instance.to_string()));
            let changes = weak.upgrade().and_then(|shared| shared.backend.changes());
            if let Some(changes) = changes {
                tokio::spawn(tell_changes(
                    Arc::clone(&store),
                    instance.to_string(),
                    changes,
                ));
            }
            tokio::spawn(async move {
                while let Some(message) = messages.recv().await {
                    let Some(shared) = weak.upgrade() else { return };
                    deliver(&shared, message).await;
                }
            });
        })
        .await;
}

/// Stream events waiting to be written for other instances; more are dropped (with a
/// warning: a resumption elsewhere would then miss them).
const OUTBOX: usize = 4096;

/// How often an instance says it is alive, and how long that holds.
const HEARTBEAT: Duration = Duration::from_secs(1);
const HEARTBEAT_TTL: Duration = Duration::from_secs(5);

/// Where a shared session's stream events go, to be written behind (see [`write_behind`]).
#[derive(Clone)]
pub(super) struct Outbox(mpsc::Sender<(String, u64, StreamEntry)>);

impl Outbox {
    /// Queue `entry` of stream `stream` of `session`; never waits.
    pub(super) fn send(&self, session: &str, stream: u64, entry: StreamEntry) {
        if self
            .0
            .try_send((session.to_owned(), stream, entry))
            .is_err()
        {
            tracing::warn!(
                session,
                stream,
                "a stream event was not kept for other instances (queue full)"
            );
        }
    }
}

/// Write queued stream events to the store, in order per stream, batching what queued up.
async fn write_behind(
    store: Arc<dyn SessionStore>,
    mut pending: mpsc::Receiver<(String, u64, StreamEntry)>,
) {
    while let Some(first) = pending.recv().await {
        let mut batch = vec![first];
        while batch.len() < 256 {
            match pending.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let mut start = 0;
        while start < batch.len() {
            let (session, stream) = (&batch[start].0, batch[start].1);
            let end = start
                + batch[start..]
                    .iter()
                    .take_while(|(s, n, _)| s == session && *n == stream)
                    .count();
            let entries: Vec<StreamEntry> = batch[start..end]
                .iter()
                .map(|(_, _, e)| e.clone())
                .collect();
            if let Err(e) = store
                .append_stream(session, stream, &entries, SHARED_STREAM_TTL)
                .await
            {
                tracing::warn!("stream events not kept for other instances: {e}");
            }
            start = end;
        }
    }
}

/// Say this instance is alive, every [`HEARTBEAT`], for as long as the process runs.
async fn heartbeat(store: Arc<dyn SessionStore>, instance: String) {
    loop {
        if let Err(e) = store.heartbeat(&instance, HEARTBEAT_TTL).await {
            tracing::warn!("cannot renew this instance's heartbeat: {e}");
        }
        tokio::time::sleep(HEARTBEAT).await;
    }
}

/// How long a resumption waits for the log of a stream another instance is writing: at
/// most [`LOG_WAITS`] pauses of [`LOG_WAIT`].
const LOG_WAIT: Duration = Duration::from_millis(100);
const LOG_WAITS: u32 = 10;

/// A GET with a `Last-Event-ID` of a stream another instance sent: the events it kept
/// after the cursor, then (a POST stream still running there) its next events until its
/// response, or an error response for each request if that instance dies first; (a GET
/// stream) this instance's own stream goes on after the replay.
pub(super) async fn resume_elsewhere(
    shared: &Arc<Shared>,
    session: Arc<Session>,
    stream: u64,
    after: u64,
    busy: Busy,
) -> Response {
    let Some(store) = shared.config.session_store.clone() else {
        return bad_request("Bad Request: Last-Event-ID names no stream of this session");
    };
    // The instance sending the stream writes its log after it sent the event: a client
    // that resumes at once, elsewhere, may come before the write (seen under load).
    let mut tries = 0;
    let log = loop {
        match store.stream_log(&session.id, stream).await {
            Ok(Some(log)) => break log,
            Ok(None) if tries < LOG_WAITS => {
                tries += 1;
                tokio::time::sleep(LOG_WAIT).await;
            }
            Ok(None) => {
                return bad_request("Bad Request: Last-Event-ID names no stream of this session");
            }
            Err(e) => return unavailable(&e),
        }
    };
    let last_kept = log.events.last().map_or(0, |e| e.0);
    if log.events.first().is_some_and(|e| e.0 > after + 1) && after < last_kept {
        return error_response(
            StatusCode::GONE,
            None,
            ErrorObject::invalid_request(
                "events after Last-Event-ID are no longer kept; they cannot be replayed",
            ),
        );
    }
    let replay: Vec<&(u64, String, bool)> = log.events.iter().filter(|e| e.0 > after).collect();
    let finished = log.events.iter().any(|e| e.2);
    let mut seen = after;
    let mut pending = std::collections::VecDeque::new();
    for (seq, frame, _) in &replay {
        pending.push_back(events::event(stream, *seq, frame.as_bytes()));
        seen = *seq;
    }
    let (mut tx, rx) = super::stream::many(shared.config.stream_max_unread_bytes);
    let Some(instance) = log.instance else {
        // Another instance's GET stream: replayed, then this instance's goes on.
        let mut routing = session.routing();
        if super::router::live(&routing.standalone) {
            drop(routing);
            return standalone_conflict();
        }
        routing.standalone = Some(tx);
        let own = routing.get_stream;
        drop(routing);
        return sse_response(shared, session, own, rx, pending, Ends::AtResponse, busy);
    };
    if finished {
        return sse_response(
            shared,
            session,
            stream,
            rx,
            pending,
            Ends::AfterPending,
            busy,
        );
    }
    let ids = log.ids;
    let id = session.id.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if tx.is_closed() {
                return;
            }
            let Ok(Some(log)) = store.stream_log(&id, stream).await else {
                continue;
            };
            let from = seen;
            for (seq, frame, last) in log.events.into_iter().filter(|e| e.0 > from) {
                seen = seq;
                let _ = tx.try_send(Delivery::Event {
                    seq,
                    frame: Bytes::from(frame),
                    last,
                });
                if last {
                    return;
                }
            }
            if matches!(store.alive(&instance).await, Ok(false)) {
                // Its instance died before answering: each request gets an error, once.
                for (n, id) in ids.iter().enumerate() {
                    seen += 1;
                    let frame = format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"the server instance running this request stopped before answering; it may or may not have run"}}}}"#
                    );
                    let _ = tx.try_send(Delivery::Event {
                        seq: seen,
                        frame: Bytes::from(frame),
                        last: n + 1 == ids.len(),
                    });
                }
                return;
            }
        }
    });
    sse_response(shared, session, stream, rx, pending, Ends::AtResponse, busy)
}

/// Tell the other instances every change of this instance's backend.
async fn tell_changes(
    store: Arc<dyn SessionStore>,
    instance: String,
    mut changes: tokio::sync::broadcast::Receiver<BackendChange>,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let change = match changes.recv().await {
            Ok(change) => change,
            // Fell behind: the lists may have changed, which is always safe to hear.
            Err(RecvError::Lagged(_)) => BackendChange::Tools,
            Err(RecvError::Closed) => return,
        };
        let message = BusMessage {
            to: None,
            session: String::new(),
            frame: String::new(),
            legacy: false,
            change: Some(change),
            from: instance.clone(),
            task: None,
            record: false,
        };
        if let Err(e) = store.publish(&message).await {
            tracing::warn!("cannot tell the other instances of a change: {e}");
        }
    }
}

/// A message from another instance: the client's answer to a request this instance's
/// engine sent, or a cancellation, for the session's engine here (if it has one); or a
/// task to stop, if it runs here.
async fn deliver(shared: &Shared, message: BusMessage) {
    if let Some(task) = &message.task {
        shared.sessions.running_tasks.stop(&message.session, task);
        return;
    }
    if let Some(change) = message.change {
        if message.from != *shared.instance {
            shared.backend.changed_elsewhere(change);
        }
        return;
    }
    if message.record {
        let here = shared
            .sessions
            .find(&message.session, shared.config.session_idle_timeout);
        if let (Some(session), Some(store), true) = (
            here,
            shared.config.session_store.as_deref(),
            message.from != *shared.instance,
        ) && let Err(e) = catch_up(store, &session).await
        {
            tracing::debug!(session = %session.id, "cannot catch up with the record: {e}");
        }
        return;
    }
    if message.legacy {
        crate::http::legacy::deliver(shared, message).await;
        return;
    }
    let Some(session) = shared
        .sessions
        .find(&message.session, shared.config.session_idle_timeout)
    else {
        return;
    };
    let frame = match untag(&shared.instance, message.frame.as_bytes()) {
        Tagged::Ours(frame) => frame,
        Tagged::Theirs(_) => return,
        Tagged::Untagged => {
            if let Some(id) = cancelled_id(message.frame.as_bytes()) {
                session.cancelled(&id);
            }
            message.frame.into_bytes()
        }
    };
    let _ = session.write(frame, None, None, None).await;
}

/// Tag the id of a request the engine sends the client with this instance's id
/// (`"{instance}:{id as JSON}"`), so the client's answer, wherever it lands, can be
/// brought back here. Other frames are left as they are.
pub(super) fn tag(instance: &str, frame: Bytes) -> Bytes {
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&frame) else {
        return frame;
    };
    let Some(object) = value.as_object_mut() else {
        return frame;
    };
    if !object.contains_key("method") {
        return frame;
    }
    let Some(id) = object.get("id") else {
        return frame;
    };
    let tagged = format!("{instance}:{id}");
    object.insert("id".into(), serde_json::Value::String(tagged));
    serde_json::to_vec(&value).map_or(frame, Bytes::from)
}

/// Whose request a response answers, by the tag of its id.
pub(super) enum Tagged {
    /// This instance's: the frame with the id the engine gave it.
    Ours(Vec<u8>),
    /// Another instance's (its id).
    Theirs(String),
    /// Not a response with a tagged id (a notification, say).
    Untagged,
}

/// Read the tag of a response's id (see [`tag`]).
pub(super) fn untag(instance: &str, frame: &[u8]) -> Tagged {
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(frame) else {
        return Tagged::Untagged;
    };
    let Some(object) = value.as_object_mut() else {
        return Tagged::Untagged;
    };
    if object.contains_key("method") {
        return Tagged::Untagged;
    }
    let Some((owner, original)) = object
        .get("id")
        .and_then(serde_json::Value::as_str)
        .and_then(|id| id.split_once(':'))
    else {
        return Tagged::Untagged;
    };
    if owner != instance {
        return Tagged::Theirs(owner.to_owned());
    }
    let Ok(original) = serde_json::from_str::<serde_json::Value>(original) else {
        return Tagged::Untagged;
    };
    object.insert("id".into(), original);
    match serde_json::to_vec(&value) {
        Ok(frame) => Tagged::Ours(frame),
        Err(_) => Tagged::Untagged,
    }
}

/// The request id a `notifications/cancelled` names.
pub(super) fn cancelled_id(frame: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "requestId")]
        request_id: RequestId,
    }
    #[derive(Deserialize)]
    struct Notification {
        method: String,
        params: Params,
    }
    let notification: Notification = serde_json::from_slice(frame).ok()?;
    (notification.method == "notifications/cancelled").then_some(notification.params.request_id)
}

/// Tell every instance that `session`'s record changed, so that one serving it catches
/// up at once (a subscription taken here reaches the instance holding the GET stream
/// before that one's next request). Best effort: a missed one is caught up at the next
/// request.
pub(super) async fn tell_record_changed(shared: &Shared, store: &dyn SessionStore, session: &str) {
    let mut message = bus_message(shared, None, session, b"");
    message.record = true;
    if let Err(e) = store.publish(&message).await {
        tracing::debug!("cannot tell the other instances of a record change: {e}");
    }
}

/// A client's message for instance `to` (or all), about `session`.
fn bus_message(shared: &Shared, to: Option<String>, session: &str, frame: &[u8]) -> BusMessage {
    BusMessage {
        to,
        session: session.to_owned(),
        frame: String::from_utf8_lossy(frame).into_owned(),
        legacy: false,
        change: None,
        from: shared.instance.to_string(),
        task: None,
        record: false,
    }
}

/// A POST of the client's answers or notifications on a shared session: an answer to a
/// request another instance sent goes to that instance; a cancellation goes to every
/// instance too (the request may run elsewhere). `None`: done (202); otherwise the frame
/// to write into this instance's engine.
pub(super) async fn route_posted(
    shared: &Shared,
    store: &dyn SessionStore,
    session: &Session,
    frame: &[u8],
) -> Result<Option<Vec<u8>>, StoreError> {
    match untag(&shared.instance, frame) {
        Tagged::Ours(frame) => Ok(Some(frame)),
        Tagged::Theirs(owner) => {
            store
                .publish(&bus_message(shared, Some(owner), &session.id, frame))
                .await?;
            Ok(None)
        }
        Tagged::Untagged => {
            if cancelled_id(frame).is_some() {
                store
                    .publish(&bus_message(shared, None, &session.id, frame))
                    .await?;
            }
            Ok(Some(frame.to_vec()))
        }
    }
}

/// A random first stream number for a shared session's local state: 2^24 apart at least,
/// so the event ids of two instances' streams of one session never collide.
fn stream_base() -> u64 {
    use chacha20poly1305::aead::OsRng;
    use chacha20poly1305::aead::rand_core::RngCore;
    u64::from(OsRng.next_u32() | 1) << 24
}

/// The session a request names (its `MCP-Session-Id`), or the answer refusing it: 400
/// without the header, 404 when no such session is live (here or, with a store, in its
/// record) or it belongs to another owner, 503 when the store cannot be reached.
pub(super) async fn session_of(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    owner: Option<&SessionOwner>,
) -> Result<Arc<Session>, Response> {
    let Some(id) = headers.get(SESSION_ID) else {
        return Err(missing_session());
    };
    let id = id.to_str().unwrap_or("");
    let idle = shared.config.session_idle_timeout;
    let local = shared.sessions.find(id, idle);
    let Some(store) = &shared.config.session_store else {
        return local
            .filter(|session| session.owner.is_none() || session.owner.as_ref() == owner)
            .ok_or_else(unknown_session);
    };
    if let Some(session) = local {
        if session.owner.is_some() && session.owner.as_ref() != owner {
            return Err(unknown_session());
        }
        // One round trip: the session's expiry pushed back, and whether it still exists
        // (a DELETE on another instance removes its record).
        return match store.touch(id, idle).await {
            Ok(Some(version)) if version <= session.replica.synced.load(Ordering::SeqCst) => {
                Ok(session)
            }
            // Another instance changed the record (a log level, a subscription): the
            // engine here is given the changes before it serves the request.
            Ok(Some(_)) => match catch_up(store.as_ref(), &session).await {
                Ok(true) => Ok(session),
                Ok(false) => {
                    forget(shared, id);
                    Err(unknown_session())
                }
                Err(e) => Err(unavailable(&e)),
            },
            Ok(None) => {
                forget(shared, id);
                Err(unknown_session())
            }
            Err(e) => Err(unavailable(&e)),
        };
    }
    if id.is_empty() || id.len() > 128 {
        return Err(unknown_session());
    }
    let record = match store.load(id).await {
        Ok(Some(record)) => record,
        Ok(None) => return Err(unknown_session()),
        Err(e) => return Err(unavailable(&e)),
    };
    // Another owner's, or a 2024-11-05 session (which lives on the instance holding its
    // stream): not one this endpoint serves.
    if (record.owner.is_some() && record.owner.as_deref() != owner.map(|o| &*o.0))
        || record.instance.is_some()
    {
        return Err(unknown_session());
    }
    adopt(shared, store.as_ref(), record).await
}

/// End this instance's engine of session `id` (the session ended elsewhere).
fn forget(shared: &Shared, id: &str) {
    if let Some(session) = shared.sessions.remove(id) {
        session.close();
    }
}

/// Give the session's engine the record's changes it has not had; `false` when the
/// record is gone.
async fn catch_up(store: &dyn SessionStore, session: &Arc<Session>) -> Result<bool, StoreError> {
    let mut applied = session.replica.applied.lock().await;
    let Some(record) = store.load(&session.id).await? else {
        return Ok(false);
    };
    if record.version <= session.replica.synced.load(Ordering::SeqCst) {
        // Another request of the session caught up while this one waited.
        return Ok(true);
    }
    if let Err(why) = apply_record(session, &mut applied, &record).await {
        tracing::warn!(session = %session.id, "cannot catch up with the session's record: {why}");
    }
    session
        .replica
        .synced
        .fetch_max(record.version, Ordering::SeqCst);
    Ok(true)
}

/// Replay to the engine what `record` has and `applied` lacks: its log level, the
/// subscriptions it gained and lost.
async fn apply_record(
    session: &Arc<Session>,
    applied: &mut Applied,
    record: &SessionRecord,
) -> Result<(), String> {
    if let Some(level) = &record.log_level
        && applied.level.as_ref() != Some(level)
    {
        replay(
            session,
            request("logging/setLevel", serde_json::json!({"level": level})),
        )
        .await?;
        applied.level = Some(level.clone());
    }
    for uri in &record.subscriptions {
        if !applied.subscriptions.contains(uri) {
            replay(
                session,
                request("resources/subscribe", serde_json::json!({"uri": uri})),
            )
            .await?;
            applied.subscriptions.push(uri.clone());
        }
    }
    let dropped: Vec<String> = applied
        .subscriptions
        .iter()
        .filter(|uri| !record.subscriptions.contains(uri))
        .cloned()
        .collect();
    for uri in dropped {
        replay(
            session,
            request("resources/unsubscribe", serde_json::json!({"uri": uri})),
        )
        .await?;
        applied.subscriptions.retain(|u| *u != uri);
    }
    Ok(())
}

/// A request of the replay, with an id of its own (never one of the client's).
fn request(method: &str, params: serde_json::Value) -> serde_json::Value {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    serde_json::json!({"jsonrpc": "2.0", "id": format!("ferry-replay-{n}"),
                       "method": method, "params": params})
}

/// Note a change this instance made to the record (`version` is the record's after it):
/// its engine is given the change by the request itself.
pub(super) async fn changed(session: &Session, change: &RecordChange, version: u64) {
    let mut applied = session.replica.applied.lock().await;
    match change {
        RecordChange::LogLevel(level) => applied.level = Some(level.clone()),
        RecordChange::Subscribe(uri) => {
            if !applied.subscriptions.contains(uri) {
                applied.subscriptions.push(uri.clone());
            }
        }
        RecordChange::Unsubscribe(uri) => applied.subscriptions.retain(|u| u != uri),
    }
    // Only the next version in turn: a change made elsewhere in between is caught up
    // with at the next request.
    let _ = session.replica.synced.compare_exchange(
        version.saturating_sub(1),
        version,
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
}

/// Serve a session started on another instance: a local engine that is given the
/// client's recorded `initialize`, `notifications/initialized`, log level and
/// subscriptions (their answers go nowhere), then joins the session table.
async fn adopt(
    shared: &Arc<Shared>,
    store: &dyn SessionStore,
    record: SessionRecord,
) -> Result<Arc<Session>, Response> {
    // One adoption at a time per router: two requests of one session arriving together
    // make one local engine, not two.
    let _adopting = shared.sessions.adopting.lock().await;
    let idle = shared.config.session_idle_timeout;
    if let Some(session) = shared.sessions.find(&record.id, idle) {
        return Ok(session);
    }
    let Ok(version) = record.revision.parse::<ProtocolVersion>() else {
        return Err(unknown_session());
    };
    listen(shared).await;
    let owner = record.owner.as_deref().map(|o| SessionOwner(o.into()));
    let session = start(shared, record.id.clone(), owner)?;
    let _ = session.version.set(version);
    let failed = |why: &str| {
        tracing::warn!(session = %record.id, "cannot adopt the session: {why}");
        session.close();
        error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            ErrorObject::internal_error(format!(
                "the session could not be resumed on this instance: {why}"
            )),
        )
    };
    let Ok(mut initialize) = serde_json::from_str::<serde_json::Value>(&record.initialize) else {
        return Err(failed("its recorded initialize is not JSON"));
    };
    initialize["id"] = request("initialize", serde_json::Value::Null)["id"].take();
    if let Err(why) = replay(&session, initialize).await {
        return Err(failed(&why));
    }
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    if session
        .write(to_frame(&initialized), None, None, None)
        .await
        .is_err()
    {
        return Err(failed("its engine ended"));
    }
    {
        let mut applied = session.replica.applied.lock().await;
        if let Err(why) = apply_record(&session, &mut applied, &record).await {
            return Err(failed(&why));
        }
    }
    session
        .replica
        .synced
        .store(record.version, Ordering::SeqCst);
    session.routing().release_idle();
    // The record may have gone while this instance replayed it (deleted elsewhere).
    match store.touch(&record.id, idle).await {
        Ok(Some(_)) => {}
        Ok(None) => {
            session.close();
            return Err(unknown_session());
        }
        Err(e) => {
            session.close();
            return Err(unavailable(&e));
        }
    }
    session.used.store(true, Ordering::Relaxed);
    tracing::debug!(session = %record.id, "adopted a session started elsewhere");
    shared
        .sessions
        .map()
        .insert(record.id.clone(), Arc::clone(&session));
    super::registry::start_sweeper(shared);
    Ok(session)
}

fn to_frame(value: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

/// Write one request of the replay into the session's engine and wait for its answer,
/// which goes nowhere (the client had it from the instance that first served it).
async fn replay(session: &Arc<Session>, request: serde_json::Value) -> Result<(), String> {
    let id: RequestId = serde_json::from_value(request["id"].clone())
        .map_err(|e| format!("a replayed request has no id: {e}"))?;
    let (stream, mut rx) = session
        .open_post_stream(std::slice::from_ref(&id), Vec::new(), usize::MAX)
        .map_err(|_| "a replayed request could not be tracked".to_owned())?;
    let replayed = Some(Attachment::new(crate::engine::Replayed));
    if session
        .write(to_frame(&request), None, replayed, None)
        .await
        .is_err()
    {
        session.abandon(stream);
        return Err("its engine ended".into());
    }
    loop {
        match rx.recv().await {
            Some(Delivery::Event { last: true, .. }) => return Ok(()),
            Some(Delivery::Event { .. }) => {}
            Some(Delivery::End) | None => return Err("its engine ended during the replay".into()),
        }
    }
}

/// Record a new session for the other instances (after its `initialize` succeeded).
pub(super) async fn record(
    shared: &Shared,
    store: &dyn SessionStore,
    session: &Session,
    version: ProtocolVersion,
    initialize: &Bytes,
) -> Result<(), StoreError> {
    let record = SessionRecord {
        id: session.id.clone(),
        revision: version.as_str().to_owned(),
        initialize: String::from_utf8_lossy(initialize).into_owned(),
        owner: session.owner.as_ref().map(|o| o.0.to_string()),
        log_level: None,
        subscriptions: Vec::new(),
        version: 0,
        instance: None,
    };
    store
        .create(&record, shared.config.session_idle_timeout)
        .await
}

/// What a POSTed message changes in its session's record: a log level, a subscription.
/// Only single messages whose text names one of those methods are read again.
pub(super) fn change_of(body: &[u8]) -> Option<RecordChange> {
    const METHODS: [&[u8]; 3] = [
        b"logging/setLevel",
        b"resources/subscribe",
        b"resources/unsubscribe",
    ];
    if !METHODS
        .iter()
        .any(|m| memchr::memmem::find(body, m).is_some())
    {
        return None;
    }
    #[derive(Deserialize)]
    struct Params {
        level: Option<String>,
        uri: Option<String>,
    }
    #[derive(Deserialize)]
    struct Request {
        method: String,
        params: Option<Params>,
    }
    let request: Request = serde_json::from_slice(body).ok()?;
    let params = request.params?;
    match request.method.as_str() {
        "logging/setLevel" => params.level.map(RecordChange::LogLevel),
        "resources/subscribe" => params.uri.map(RecordChange::Subscribe),
        "resources/unsubscribe" => params.uri.map(RecordChange::Unsubscribe),
        _ => None,
    }
}

/// Keep the records of sessions with open streams alive: a client holding only a GET
/// stream makes no request that would refresh its record. Called by the sweeper.
pub(super) async fn refresh_busy(shared: &Shared) {
    let Some(store) = &shared.config.session_store else {
        return;
    };
    let busy: Vec<String> = shared
        .sessions
        .map()
        .iter()
        .filter(|(_, s)| s.busy.load(std::sync::atomic::Ordering::SeqCst) > 0)
        .map(|(id, _)| id.clone())
        .collect();
    for id in busy {
        if let Err(e) = store.touch(&id, shared.config.session_idle_timeout).await {
            tracing::warn!("cannot refresh session {id}: {e}");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_read_from_the_methods_that_make_them() {
        let change = |body: &str| change_of(body.as_bytes());
        assert_eq!(
            change(
                r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}"#
            ),
            Some(RecordChange::LogLevel("debug".into()))
        );
        assert_eq!(
            change(
                r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"a://b"}}"#
            ),
            Some(RecordChange::Subscribe("a://b".into()))
        );
        assert_eq!(
            change(
                r#"{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":"a://b"}}"#
            ),
            Some(RecordChange::Unsubscribe("a://b".into()))
        );
        assert_eq!(
            change(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"logging/setLevel"}}"#
            ),
            None
        );
        assert_eq!(change(r#"[{"method":"logging/setLevel"}]"#), None);
    }
}
