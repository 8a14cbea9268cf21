//! Many HTTP connections on one stdio child: the bookkeeping, without I/O.
//!
//! - **Request ids** are remapped: the child sees the bridge's own numbers (so two
//!   sessions' `id: 1` cannot collide) and each response goes back to the connection that
//!   asked, with its own id. `notifications/cancelled` is rewritten the same way.
//! - **Progress tokens** of client requests are replaced by bridge tokens and restored on
//!   the child's `notifications/progress`, which go to that request's connection only.
//! - **`initialize`** reaches the child once per child process: the first connection's
//!   goes through; later ones (shared mode) get the child's answer from the cache (so
//!   every session sees the revision the child negotiated first); after a restart the
//!   bridge replays the first `initialize` (and `notifications/initialized`) itself.
//! - **Server-to-client requests and log messages** go to the connection the child is
//!   working for: the only one with requests in flight, else the one that sent the latest
//!   request, else the only session (stdio carries no other hint; with one connection per
//!   child, as in the per-session mode, this is exact). Responses to the child's requests go back as they
//!   are. A request aimed at a 2026-07-28 HTTP request (which cannot be asked back) is
//!   refused to the child at once. A notification of a 2026-07-28 `subscriptions/listen`
//!   (its `_meta` names the subscription: the listen request's id) goes to the connection
//!   that opened it, with that connection's id. Other notifications (list changes,
//!   resource updates) go to every session.
//! - **A dead child**: every request in flight is answered with a JSON-RPC error.
//! - **Every request is answered**: an answer the bridge cannot read (not JSON, or larger
//!   than the frame limit) is an error for the request its first bytes name; a request the
//!   child leaves unanswered past the request timeout (restarted by its progress; none for
//!   `subscriptions/listen` and `tasks/result`, which wait by design) is answered with an
//!   error and cancelled at the child; at most [`MAX_IN_FLIGHT`] requests
//!   wait on one child, and the next ones are refused at once.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ferry::protocol::error_codes::INVALID_PARAMS;
use ferry::protocol::types::keys::SUBSCRIPTION_ID;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// A connection's number within the bridge.
pub(crate) type ClientId = u64;

/// A frame (one JSON text) for the child or for a connection.
pub(crate) type Frame = Vec<u8>;

/// The code of the error answering requests the child cannot answer.
const LOST: i64 = -32603;

/// Requests waiting for one child's answers; beyond, a request is refused at once (the
/// engine's own default bound on pending requests).
pub(crate) const MAX_IN_FLIGHT: usize = 1024;

struct Client {
    tx: mpsc::UnboundedSender<Frame>,
    /// A 2026-07-28 request's connection: it takes only its own request's messages.
    stateless: bool,
    /// When it last sent a request (a sequence number).
    last_request: u64,
}

enum Kind {
    Call,
    /// A client's `initialize`, with its params (for the cache and replays).
    Initialize(Value),
    /// The bridge's own `initialize` after a restart.
    Replay,
}

struct Pending {
    client: ClientId,
    id: Value,
    token: Option<String>,
    kind: Kind,
    /// When it is answered with an error if the child has not answered (restarted by its
    /// progress); `None` without a request timeout.
    deadline: Option<Instant>,
}

struct Init {
    params: Value,
    result: Value,
    /// Whether a client sent `notifications/initialized`.
    initialized: bool,
}

/// The routing state of one child (see the module docs).
#[derive(Default)]
pub(crate) struct Mux {
    clients: HashMap<ClientId, Client>,
    next: u64,
    seq: u64,
    pending: HashMap<u64, Pending>,
    /// (client, its request id as JSON text) -> the child's id.
    by_client: HashMap<(ClientId, String), u64>,
    /// Bridge progress token -> (client, its token).
    tokens: HashMap<String, (ClientId, Value)>,
    /// The child's requests in flight (its id as JSON text) -> the client asked.
    asked: HashMap<String, ClientId>,
    init: Option<Init>,
    /// The child's id of the `initialize` in flight, and the clients waiting for it.
    init_pending: Option<u64>,
    waiting: Vec<(ClientId, Value)>,
    /// Whether this child process got `notifications/initialized`.
    initialized_sent: bool,
    /// Whether a connection was ever attached.
    served: bool,
    /// How long a request may wait for the child's answer (progress restarts it).
    request_timeout: Option<Duration>,
}

/// A message whose members cannot all be read into a tree: its envelope read, `params`,
/// `result` and `error` kept as their JSON text (serde_json skims a raw value without
/// recursion and without decoding its strings).
#[derive(Clone, serde::Deserialize, serde::Serialize)]
struct RawMessage<'a> {
    /// Read by the HTTP layer already; always written `"2.0"`.
    #[serde(skip_deserializing)]
    jsonrpc: Version,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<Value>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    error: Option<&'a RawValue>,
}

/// `"2.0"`.
#[derive(Clone, Copy, Default)]
struct Version;

impl serde::Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("2.0")
    }
}

fn raw_frame(message: &RawMessage<'_>) -> Frame {
    serde_json::to_vec(message).unwrap_or_default()
}

fn frame(value: &Value) -> Frame {
    serde_json::to_vec(value).unwrap_or_default()
}

fn error(id: &Value, code: i64, message: &str) -> Frame {
    frame(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

impl Mux {
    /// A mux whose requests wait at most `request_timeout` for the child's answer (progress
    /// restarts it).
    pub(crate) fn new(request_timeout: Option<Duration>) -> Mux {
        Mux {
            request_timeout,
            ..Mux::default()
        }
    }

    fn deadline(&self) -> Option<Instant> {
        self.request_timeout.map(|t| Instant::now() + t)
    }

    /// The earliest deadline of a request in flight.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.pending.values().filter_map(|p| p.deadline).min()
    }

    /// Answer every request whose deadline has passed at `now` with an error: what to tell
    /// the child (each one cancelled).
    pub(crate) fn expire(&mut self, now: Instant) -> Vec<Frame> {
        let due: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
            .map(|(n, _)| *n)
            .collect();
        let mut out = Vec::new();
        let waited = self.request_timeout.unwrap_or_default();
        for n in due {
            let message = format!("the server did not answer within {waited:?}");
            if !self.fail(n, &message) {
                continue;
            }
            out.push(frame(&json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": n, "reason": message},
            })));
        }
        out
    }

    /// A message from the child that cannot be read into a tree, its envelope read (see
    /// [`RawMessage`]): an answer goes to its request's client with that client's id; a
    /// request or notification to the client the child works for, as it is.
    fn child_message_raw(&mut self, message: RawMessage<'_>, bytes: &[u8]) {
        match (message.method.is_some(), &message.id) {
            (false, Some(id)) => {
                let Some(pending) = id.as_u64().and_then(|n| self.pending.remove(&n)) else {
                    return;
                };
                self.by_client
                    .remove(&(pending.client, pending.id.to_string()));
                self.forget_token(pending.token.as_deref());
                let answer = raw_frame(&RawMessage {
                    id: Some(pending.id.clone()),
                    ..message.clone()
                });
                match pending.kind {
                    Kind::Call => self.send(pending.client, answer),
                    Kind::Initialize(_) => {
                        self.init_pending = None;
                        self.send(pending.client, answer);
                        for (client, id) in std::mem::take(&mut self.waiting) {
                            let answer = raw_frame(&RawMessage {
                                id: Some(id),
                                ..message.clone()
                            });
                            self.send(client, answer);
                        }
                    }
                    Kind::Replay => {}
                }
            }
            (true, id) => {
                let client = self.working_for().filter(|c| self.clients.contains_key(c));
                match (client, id) {
                    (Some(client), Some(id)) => {
                        self.asked.insert(id.to_string(), client);
                        self.send(client, bytes.to_vec());
                    }
                    (Some(client), None) => self.send(client, bytes.to_vec()),
                    (None, None) => self.broadcast(&bytes.to_vec()),
                    (None, Some(_)) => {}
                }
            }
            (false, None) => {}
        }
    }

    /// A frame from the child the bridge cannot read (`why`), of which `head` is the start:
    /// if it answers a request in flight, that request gets an error.
    pub(crate) fn child_unreadable(&mut self, head: &[u8], why: &str) {
        let head = ferry::protocol::jsonrpc::read_head(head);
        let Some(ferry::protocol::RequestId::Number(n)) = head.id.filter(|_| head.response) else {
            tracing::debug!("an unreadable frame from the child dropped: {why}");
            return;
        };
        if let Ok(n) = u64::try_from(n) {
            self.fail(n, &format!("the server's answer could not be read: {why}"));
        }
    }

    /// Answer request `n` in flight (and, for an `initialize`, the clients waiting on it)
    /// with an error saying `message`, and forget it. `false` if it was not in flight.
    fn fail(&mut self, n: u64, message: &str) -> bool {
        let Some(pending) = self.pending.remove(&n) else {
            return false;
        };
        self.by_client
            .remove(&(pending.client, pending.id.to_string()));
        self.forget_token(pending.token.as_deref());
        match pending.kind {
            Kind::Call => self.send(pending.client, error(&pending.id, LOST, message)),
            Kind::Initialize(_) => {
                self.init_pending = None;
                self.send(pending.client, error(&pending.id, LOST, message));
                for (client, id) in std::mem::take(&mut self.waiting) {
                    self.send(client, error(&id, LOST, message));
                }
            }
            Kind::Replay => tracing::warn!("the restarted server's initialize: {message}"),
        }
        true
    }

    /// Whether no connection is attached (any more: one was).
    pub(crate) fn deserted(&self) -> bool {
        self.served && self.clients.is_empty()
    }

    /// A connection starts.
    pub(crate) fn attach(
        &mut self,
        client: ClientId,
        tx: mpsc::UnboundedSender<Frame>,
        stateless: bool,
    ) {
        let last_request = 0;
        self.served = true;
        self.clients.insert(
            client,
            Client {
                tx,
                stateless,
                last_request,
            },
        );
    }

    fn send(&self, client: ClientId, frame: Frame) {
        if let Some(c) = self.clients.get(&client) {
            let _ = c.tx.send(frame);
        }
    }

    fn fresh(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    /// A frame from `client`: what to write to the child.
    pub(crate) fn client_frame(&mut self, client: ClientId, bytes: &[u8]) -> Vec<Frame> {
        let messages = match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Array(entries)) => entries,
            Ok(single) => vec![single],
            Err(e) => return self.client_frame_raw(client, bytes, &e),
        };
        let mut out = Vec::new();
        for message in messages {
            out.extend(self.client_message(client, message));
        }
        out
    }

    /// A frame the HTTP layer accepted (valid JSON-RPC) that cannot be read into a tree:
    /// members nested deeper than serde_json reads, or a lone surrogate in a string. Each
    /// message whose tree can be built goes the usual way; the others go with their ids
    /// remapped and the rest passed on raw (see [`RawMessage`]), so the child answers them
    /// as it would answer them directly.
    fn client_frame_raw(
        &mut self,
        client: ClientId,
        bytes: &[u8],
        why: &serde_json::Error,
    ) -> Vec<Frame> {
        let members = if bytes.trim_ascii_start().starts_with(b"[") {
            serde_json::from_slice::<Vec<&RawValue>>(bytes)
        } else {
            serde_json::from_slice::<&RawValue>(bytes).map(|one| vec![one])
        };
        let Ok(members) = members else {
            self.unreadable(client, bytes, why);
            return Vec::new();
        };
        let mut out = Vec::new();
        for member in members {
            match serde_json::from_str::<Value>(member.get()) {
                Ok(message) => out.extend(self.client_message(client, message)),
                Err(e) => out.extend(self.client_message_raw(client, member, &e)),
            }
        }
        out
    }

    /// One message of a client that cannot be read into a tree (see
    /// [`client_frame_raw`](Self::client_frame_raw)). A request's progress token stays as
    /// it is (its params cannot be read), so its progress reaches no one.
    fn client_message_raw(
        &mut self,
        client: ClientId,
        member: &RawValue,
        why: &serde_json::Error,
    ) -> Option<Frame> {
        let Ok(message) = serde_json::from_str::<RawMessage<'_>>(member.get()) else {
            self.unreadable(client, member.get().as_bytes(), why);
            return None;
        };
        match (message.method.clone(), message.id.clone()) {
            (Some(method), Some(id)) => {
                self.seq += 1;
                if let Some(c) = self.clients.get_mut(&client) {
                    c.last_request = self.seq;
                }
                let n = self.admit(client, &id)?;
                self.track(n, client, id, &method, None);
                Some(raw_frame(&RawMessage {
                    id: Some(json!(n)),
                    method: Some(method),
                    ..message.clone()
                }))
            }
            // A notification, or an answer to the child's request (its id is the child's).
            (Some(_), None) => Some(member.get().as_bytes().to_vec()),
            (None, Some(id)) => {
                let asked = self.asked.remove(&id.to_string());
                (asked == Some(client)).then(|| member.get().as_bytes().to_vec())
            }
            (None, None) => None,
        }
    }

    /// A frame that not even its envelope can be read from: each request in it gets the
    /// `-32602` a server gives such params (`ferry serve` does), at once; the child never
    /// sees it, so nothing of it stays in flight.
    fn unreadable(&self, client: ClientId, bytes: &[u8], why: &serde_json::Error) {
        for head in ferry::protocol::jsonrpc::read_heads(bytes) {
            if let (true, Some(id)) = (head.method, head.id) {
                let id = serde_json::to_value(id).unwrap_or(Value::Null);
                self.send(
                    client,
                    error(&id, INVALID_PARAMS, &format!("Invalid params: {why}")),
                );
            }
        }
        tracing::debug!(client, "unreadable frame from a connection answered: {why}");
    }

    /// A number for `client`'s request `id`, or (answered at once) `None` when
    /// [`MAX_IN_FLIGHT`] requests already wait on the child.
    fn admit(&mut self, client: ClientId, id: &Value) -> Option<u64> {
        if self.pending.len() >= MAX_IN_FLIGHT {
            let refusal = format!("too many requests in flight (limit {MAX_IN_FLIGHT})");
            self.send(client, error(id, LOST, &refusal));
            return None;
        }
        Some(self.fresh())
    }

    /// Request `n` (the client's `id`, `method`) waits for the child's answer.
    fn track(&mut self, n: u64, client: ClientId, id: Value, method: &str, token: Option<String>) {
        self.by_client.insert((client, id.to_string()), n);
        // A listen stream and `tasks/result` wait by design: no deadline.
        let deadline = self
            .deadline()
            .filter(|_| !matches!(method, "subscriptions/listen" | "tasks/result"));
        self.pending.insert(
            n,
            Pending {
                client,
                id,
                token,
                kind: Kind::Call,
                deadline,
            },
        );
    }

    fn client_message(&mut self, client: ClientId, mut message: Value) -> Option<Frame> {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let id = message.get("id").cloned();
        if method.is_some() && id.is_some() {
            self.seq += 1;
            if let Some(c) = self.clients.get_mut(&client) {
                c.last_request = self.seq;
            }
        }
        match (method.as_deref(), id) {
            (Some("initialize"), Some(id)) => self.initialize(client, id, message),
            (Some(method), Some(id)) => {
                let n = self.admit(client, &id)?;
                let token = message
                    .pointer_mut("/params/_meta/progressToken")
                    .map(|slot| {
                        let bridge = format!("bridge-{n}");
                        let theirs = std::mem::replace(slot, Value::String(bridge.clone()));
                        self.tokens.insert(bridge.clone(), (client, theirs));
                        bridge
                    });
                self.track(n, client, id, method, token);
                message["id"] = json!(n);
                Some(frame(&message))
            }
            (Some("notifications/initialized"), None) => {
                if let Some(init) = &mut self.init {
                    init.initialized = true;
                }
                if self.initialized_sent {
                    return None;
                }
                self.initialized_sent = true;
                Some(frame(&message))
            }
            (Some("notifications/cancelled"), None) => {
                let theirs = message.pointer("/params/requestId")?.to_string();
                let n = self.by_client.remove(&(client, theirs))?;
                if let Some(pending) = self.pending.remove(&n) {
                    self.forget_token(pending.token.as_deref());
                }
                message["params"]["requestId"] = json!(n);
                Some(frame(&message))
            }
            (Some(_), None) => Some(frame(&message)),
            (None, Some(id)) => {
                // A response to one of the child's requests: it goes back as it is.
                let asked = self.asked.remove(&id.to_string());
                (asked == Some(client)).then(|| frame(&message))
            }
            (None, None) => None,
        }
    }

    fn initialize(&mut self, client: ClientId, id: Value, mut message: Value) -> Option<Frame> {
        if let Some(init) = &self.init {
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": init.result});
            self.send(client, frame(&answer));
            return None;
        }
        if self.init_pending.is_some() {
            self.waiting.push((client, id));
            return None;
        }
        let n = self.fresh();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        self.init_pending = Some(n);
        self.pending.insert(
            n,
            Pending {
                client,
                id,
                token: None,
                kind: Kind::Initialize(params),
                deadline: self.deadline(),
            },
        );
        message["id"] = json!(n);
        Some(frame(&message))
    }

    fn forget_token(&mut self, token: Option<&str>) {
        if let Some(token) = token {
            self.tokens.remove(token);
        }
    }

    /// The connection the child is working for (see the module docs).
    fn working_for(&self) -> Option<ClientId> {
        let mut busy: Vec<ClientId> = self
            .pending
            .values()
            .filter(|p| !matches!(p.kind, Kind::Replay))
            .map(|p| p.client)
            .collect();
        busy.sort_unstable();
        busy.dedup();
        if let [only] = busy.as_slice() {
            return Some(*only);
        }
        let latest = self
            .clients
            .iter()
            .filter(|(_, c)| c.last_request > 0)
            .max_by_key(|(_, c)| c.last_request)
            .map(|(id, _)| *id);
        latest.or_else(|| {
            let mut sessions = self.clients.iter().filter(|(_, c)| !c.stateless);
            match (sessions.next(), sessions.next()) {
                (Some((id, _)), None) => Some(*id),
                _ => None,
            }
        })
    }

    /// A frame from the child: what to write back to the child (answers to its requests
    /// that no connection can take).
    pub(crate) fn child_frame(&mut self, bytes: &[u8]) -> Vec<Frame> {
        let mut message = match serde_json::from_slice::<Value>(bytes) {
            Ok(message) => message,
            Err(e) => {
                match serde_json::from_slice::<RawMessage<'_>>(bytes) {
                    Ok(raw) => self.child_message_raw(raw, bytes),
                    Err(_) => self.child_unreadable(bytes, &e.to_string()),
                }
                return Vec::new();
            }
        };
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let id = message.get("id").cloned();
        match (method.as_deref(), id) {
            (None, Some(id)) => self.response(id, message),
            (Some(_), Some(id)) => {
                let target = self.working_for().filter(|c| self.clients.contains_key(c));
                let Some(client) = target else {
                    return vec![error(
                        &id,
                        LOST,
                        "no client is connected to answer this request",
                    )];
                };
                if self.clients.get(&client).is_some_and(|c| c.stateless) {
                    // A 2026-07-28 HTTP request cannot be asked back (its server asks
                    // with an input-required result instead): refuse at once rather than
                    // leave the child waiting.
                    return vec![error(
                        &id,
                        LOST,
                        "the client is a 2026-07-28 HTTP request, which cannot be sent requests",
                    )];
                }
                self.asked.insert(id.to_string(), client);
                self.send(client, frame(&message));
                Vec::new()
            }
            (Some("notifications/progress"), None) => {
                let token = message
                    .pointer("/params/progressToken")
                    .and_then(Value::as_str);
                if let Some((client, theirs)) = token.and_then(|t| self.tokens.get(t)).cloned() {
                    // Progress restarts its request's timeout.
                    let deadline = self.deadline();
                    if let Some(pending) = token
                        .and_then(|t| t.strip_prefix("bridge-"))
                        .and_then(|n| n.parse().ok())
                        .and_then(|n: u64| self.pending.get_mut(&n))
                    {
                        pending.deadline = deadline;
                    }
                    message["params"]["progressToken"] = theirs;
                    self.send(client, frame(&message));
                }
                Vec::new()
            }
            (Some("notifications/cancelled"), None) => {
                let theirs = message.pointer("/params/requestId").map(Value::to_string);
                if let Some(client) = theirs.and_then(|id| self.asked.remove(&id)) {
                    self.send(client, frame(&message));
                }
                Vec::new()
            }
            (Some("notifications/message"), None) => {
                match self.working_for() {
                    Some(client) => self.send(client, frame(&message)),
                    None => self.broadcast(&frame(&message)),
                }
                Vec::new()
            }
            (Some(_), None) => {
                match self.subscription(&mut message) {
                    Some(client) => self.send(client, frame(&message)),
                    None => self.broadcast(&frame(&message)),
                }
                Vec::new()
            }
            (None, None) => Vec::new(),
        }
    }

    /// For a notification of a `subscriptions/listen` stream (its `_meta` names the
    /// subscription, which is the listen request's id): the connection that opened it,
    /// the subscription id put back to that connection's own.
    fn subscription(&self, message: &mut Value) -> Option<ClientId> {
        let slot = message
            .pointer_mut("/params/_meta")?
            .get_mut(SUBSCRIPTION_ID)?;
        let pending = self.pending.get(&slot.as_u64()?)?;
        *slot = pending.id.clone();
        Some(pending.client)
    }

    fn broadcast(&self, frame: &Frame) {
        for client in self.clients.values().filter(|c| !c.stateless) {
            let _ = client.tx.send(frame.clone());
        }
    }

    fn response(&mut self, id: Value, mut message: Value) -> Vec<Frame> {
        let Some(pending) = id.as_u64().and_then(|n| self.pending.remove(&n)) else {
            tracing::debug!(%id, "a response from the child for no request dropped");
            return Vec::new();
        };
        self.by_client
            .remove(&(pending.client, pending.id.to_string()));
        self.forget_token(pending.token.as_deref());
        match pending.kind {
            Kind::Call => {
                // A listen stream's end names its subscription (the request's id) too.
                if let Some(slot) = message
                    .pointer_mut("/result/_meta")
                    .and_then(|meta| meta.get_mut(SUBSCRIPTION_ID))
                {
                    *slot = pending.id.clone();
                }
                message["id"] = pending.id;
                self.send(pending.client, frame(&message));
            }
            Kind::Initialize(params) => {
                self.init_pending = None;
                if let Some(result) = message.get("result") {
                    self.init = Some(Init {
                        params,
                        result: result.clone(),
                        initialized: false,
                    });
                }
                message["id"] = pending.id;
                self.send(pending.client, frame(&message));
                for (client, id) in std::mem::take(&mut self.waiting) {
                    message["id"] = id;
                    self.send(client, frame(&message));
                }
            }
            Kind::Replay => {
                if message.get("error").is_some() {
                    tracing::warn!(
                        "the restarted server refused the replayed initialize: {message}"
                    );
                } else if self.init.as_ref().is_some_and(|i| i.initialized) {
                    self.initialized_sent = true;
                    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                    return vec![frame(&note)];
                }
            }
        }
        Vec::new()
    }

    /// A connection ended: what to tell the child (its requests cancelled, the child's
    /// requests to it refused).
    pub(crate) fn detach(&mut self, client: ClientId) -> Vec<Frame> {
        self.clients.remove(&client);
        self.waiting.retain(|(c, _)| *c != client);
        let mut out = Vec::new();
        let mine: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.client == client && matches!(p.kind, Kind::Call))
            .map(|(n, _)| *n)
            .collect();
        for n in mine {
            if let Some(pending) = self.pending.remove(&n) {
                self.by_client.remove(&(client, pending.id.to_string()));
                self.forget_token(pending.token.as_deref());
            }
            let cancel = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": n, "reason": "the HTTP client went away"},
            });
            out.push(frame(&cancel));
        }
        let asked: Vec<String> = self
            .asked
            .iter()
            .filter(|(_, c)| **c == client)
            .map(|(id, _)| id.clone())
            .collect();
        for id in asked {
            self.asked.remove(&id);
            if let Ok(id) = serde_json::from_str::<Value>(&id) {
                out.push(error(
                    &id,
                    LOST,
                    "the client this request went to has disconnected",
                ));
            }
        }
        out
    }

    /// The child died: every request in flight gets an error; the child's requests are
    /// forgotten.
    pub(crate) fn child_died(&mut self) {
        self.fail_all("the MCP server process exited before answering; it is being restarted");
    }

    /// Answer every request in flight with an error saying `message`; forget the child's
    /// requests.
    pub(crate) fn fail_all(&mut self, message: &str) {
        for (_, pending) in std::mem::take(&mut self.pending) {
            if matches!(pending.kind, Kind::Replay) {
                continue;
            }
            self.send(pending.client, error(&pending.id, LOST, message));
        }
        for (client, id) in std::mem::take(&mut self.waiting) {
            self.send(client, error(&id, LOST, message));
        }
        self.by_client.clear();
        self.tokens.clear();
        self.asked.clear();
        self.init_pending = None;
        self.initialized_sent = false;
    }

    /// A (new) child process started: what to write first (the replayed `initialize`).
    pub(crate) fn started(&mut self) -> Vec<Frame> {
        let Some(params) = self.init.as_ref().map(|i| i.params.clone()) else {
            return Vec::new();
        };
        let n = self.fresh();
        self.pending.insert(
            n,
            Pending {
                client: 0,
                id: Value::Null,
                token: None,
                kind: Kind::Replay,
                deadline: None,
            },
        );
        let request = json!({"jsonrpc": "2.0", "id": n, "method": "initialize", "params": params});
        vec![frame(&request)]
    }
}

#[cfg(test)]
#[path = "mux_tests.rs"]
mod tests;
