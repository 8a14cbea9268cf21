//! The peer under test, raw: frames out, messages in. The checker sends malformed input on
//! purpose, so it does not use the typed client; it sees every byte the server writes.
//!
//! [`Target`] names the server (a stdio command, a URL, or the reference server in this
//! process) and opens a fresh [`Conn`] for each revision, so a revision's handshake never
//! meets another's state. A child is waited for while it starts (see [`Conn::request`]).

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferry::engine::{
    ChildCommand, ChildProcess, EngineHandle, ShutdownTimeouts, StderrMode, Transport,
    TransportEvent,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::http_peer::HttpPeer;
use crate::client::auth::Gate;
use crate::stderr::note;
use crate::target::starting::Starting;

/// Frames queued each way.
const QUEUE: usize = 256;

/// Largest frame read from a stdio server (larger ones are reported, not read).
const MAX_FRAME: usize = 16 * 1024 * 1024;

/// How long to wait for things.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timing {
    /// For the response to a request.
    pub(crate) request: Duration,
    /// For something that should (or should not) arrive after a barrier was answered.
    pub(crate) grace: Duration,
    /// For a child's first answer, while it runs (see [`Conn::request`]).
    pub(crate) connect: Duration,
}

/// The server to check.
pub(crate) enum Target {
    /// A command run as a child process, speaking newline-delimited JSON on stdio.
    Stdio {
        /// The program, then its arguments.
        words: Vec<String>,
        /// What to run (its environment and directory too), stderr aside.
        command: ChildCommand,
        /// Whether the child's stderr is shown (otherwise only its last lines are kept,
        /// for what is said while it starts).
        show_stderr: bool,
    },
    /// A Streamable HTTP endpoint, the headers sent with every request, and the
    /// authorization hook (shared by every connection: one authorization for the run).
    Http {
        url: String,
        headers: Vec<(String, String)>,
        gate: Arc<Gate>,
    },
    /// The reference server, in this process, over an in-memory transport.
    InProcess,
}

impl Target {
    /// What the report calls the target.
    pub(crate) fn describe(&self) -> String {
        match self {
            Target::Stdio { words, .. } => format!("stdio: {}", words.join(" ")),
            Target::Http { url, .. } => format!("http: {url}"),
            Target::InProcess => "in-process: the reference server (ferry serve)".into(),
        }
    }

    /// Why the HTTP server refused the run's requests for want of authorization, if it did
    /// and the authorization options could not overcome it.
    pub(crate) fn refusal(&self) -> Option<String> {
        match self {
            Target::Http { gate, .. } => gate.refusal(),
            _ => None,
        }
    }

    /// Start a fresh connection.
    pub(crate) fn open(&self, timing: Timing) -> Result<Conn, String> {
        match self {
            Target::Http { url, headers, gate } => {
                let (tx, rx) = mpsc::channel(QUEUE);
                let http = HttpPeer::new(url, headers, gate.clone(), tx, timing.request)?;
                Ok(Conn::new(None, None, Some(http), rx, None, timing))
            }
            Target::Stdio {
                words,
                command,
                show_stderr,
            } => {
                // Read either way: its last lines say why it did not start, if it does not.
                let stderr = if *show_stderr {
                    StderrMode::Relay
                } else {
                    StderrMode::Log(tracing::Level::DEBUG)
                };
                let command = command.clone().stderr(stderr);
                let (transport, child) = ChildProcess::spawn(&command, MAX_FRAME, QUEUE)
                    .map_err(|e| format!("cannot start {}: {e}", words[0]))?;
                let (outgoing, writer, rx) = received(transport);
                let mut conn = Conn::new(Some(outgoing), writer, None, rx, Some(child), timing);
                conn.shown = crate::target::shown(words);
                Ok(conn)
            }
            Target::InProcess => {
                let (ours, theirs) = Transport::pair(QUEUE);
                let server = crate::reference::server().serve(theirs);
                let (outgoing, writer, rx) = received(ours);
                let mut conn = Conn::new(Some(outgoing), writer, None, rx, None, timing);
                conn.server = Some(server);
                Ok(conn)
            }
        }
    }
}

/// The sending side of `transport`, and what it receives as [`Received`] items.
fn received(
    transport: Transport,
) -> (
    mpsc::Sender<Vec<u8>>,
    Option<ferry::engine::Writer>,
    mpsc::Receiver<Received>,
) {
    let (tx, rx) = mpsc::channel(QUEUE);
    let mut incoming = transport.incoming;
    tokio::spawn(async move {
        while let Some(event) = incoming.recv().await {
            let item = match event.into_frame() {
                Ok(frame) => Received::parse(&frame),
                Err(TransportEvent::Oversized { bytes, .. }) => Received::Garbage(format!(
                    "a line of at least {bytes} bytes (over the checker's limit)"
                )),
                // A child process's transport and a pair deliver nothing else.
                _ => continue,
            };
            if tx.send(item).await.is_err() {
                break;
            }
        }
    });
    (transport.outgoing, transport.writer, rx)
}

/// One thing the server wrote.
#[derive(Debug)]
pub(crate) enum Received {
    /// A JSON value (a message, or a batch).
    Message(Value),
    /// Something that is not JSON (shown shortened).
    Garbage(String),
}

impl Received {
    /// A frame as received.
    pub(crate) fn parse(frame: &[u8]) -> Received {
        match serde_json::from_slice(frame) {
            Ok(value) => Received::Message(value),
            Err(_) => Received::Garbage(shorten(&String::from_utf8_lossy(frame), 200)),
        }
    }
}

/// A connection to the server: raw sends, and receives sorted into responses,
/// notifications, the server's own requests (answered "method not found": the checker
/// declares no client capability), and non-JSON output.
pub(crate) struct Conn {
    outgoing: Option<mpsc::Sender<Vec<u8>>>,
    _writer: Option<ferry::engine::Writer>,
    /// The HTTP side, for a URL.
    pub(crate) http: Option<HttpPeer>,
    /// Transport failures (an HTTP request that could not be sent).
    pub(crate) transport_errors: Vec<String>,
    incoming: mpsc::Receiver<Received>,
    child: Option<ChildProcess>,
    /// The child's command as typed, for what is said while it starts.
    shown: String,
    /// The reference server in this process, for [`Target::InProcess`].
    server: Option<EngineHandle>,
    /// When the connection was opened (a child started).
    opened: Instant,
    /// Whether the server has written anything yet on this connection.
    pub(crate) heard: bool,
    /// Why a child never answered: it exited first, or not within the connect timeout.
    pub(crate) unstarted: Option<String>,
    backlog: VecDeque<Value>,
    /// Every notification received so far.
    pub(crate) notifications: Vec<Value>,
    /// Every request the server sent (method names).
    pub(crate) server_requests: Vec<String>,
    /// Everything received that is not JSON.
    pub(crate) garbage: Vec<String>,
    closed: bool,
    /// Requests whose response the checker stopped waiting for.
    abandoned: HashSet<String>,
    next_id: u64,
    pub(crate) timing: Timing,
}

/// What came back for a request.
#[derive(Debug)]
pub(crate) enum Reply {
    /// A `result`.
    Result(Value),
    /// An `error`: the whole error object.
    Error(Value),
    /// A message with the request's id that is neither (kept whole).
    Malformed(Value),
    /// Nothing within the timeout (or the connection ended).
    Nothing,
}

impl Reply {
    /// The error code, if this is an error with an integer code.
    pub(crate) fn code(&self) -> Option<i64> {
        match self {
            Reply::Error(error) => error.get("code").and_then(Value::as_i64),
            _ => None,
        }
    }

    /// A short description for evidence.
    pub(crate) fn describe(&self) -> String {
        match self {
            Reply::Result(result) => format!("result {}", shorten(&result.to_string(), 160)),
            Reply::Error(error) => format!("error {}", shorten(&error.to_string(), 160)),
            Reply::Malformed(message) => {
                format!("malformed response {}", shorten(&message.to_string(), 160))
            }
            Reply::Nothing => "no response".into(),
        }
    }
}

impl Conn {
    fn new(
        outgoing: Option<mpsc::Sender<Vec<u8>>>,
        writer: Option<ferry::engine::Writer>,
        http: Option<HttpPeer>,
        incoming: mpsc::Receiver<Received>,
        child: Option<ChildProcess>,
        timing: Timing,
    ) -> Conn {
        Conn {
            outgoing,
            _writer: writer,
            http,
            transport_errors: Vec::new(),
            incoming,
            child,
            shown: String::new(),
            server: None,
            opened: Instant::now(),
            heard: false,
            unstarted: None,
            backlog: VecDeque::new(),
            notifications: Vec::new(),
            server_requests: Vec::new(),
            garbage: Vec::new(),
            closed: false,
            abandoned: HashSet::new(),
            next_id: 0,
            timing,
        }
    }

    /// A fresh request id (integers; the checker's probes use strings of their own).
    pub(crate) fn fresh_id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id)
    }

    /// Whether the connection has ended (the server closed it or exited).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Send bytes as one frame, as they are.
    pub(crate) async fn send_raw(&mut self, frame: &[u8]) {
        count_requests(frame);
        if let Some(http) = &mut self.http {
            if let Err(e) = http.post(frame).await {
                self.transport_errors.push(e);
            }
            return;
        }
        let sent = match &self.outgoing {
            Some(outgoing) => outgoing.send(frame.to_vec()).await.is_ok(),
            None => false,
        };
        if !sent {
            self.closed = true;
        }
    }

    /// Send a JSON value as one frame.
    pub(crate) async fn send(&mut self, message: &Value) {
        self.send_raw(message.to_string().as_bytes()).await;
    }

    /// Send a request and wait for its response. A child that has written nothing on this
    /// connection within the request timeout may still be starting (`cargo run` building
    /// it): it is pinged (a server that is up but ignores the request answers that) and
    /// waited for while it runs, up to the connect timeout, with a note on stderr now and
    /// then. Its exit, or the connect timeout, sets [`Conn::unstarted`].
    pub(crate) async fn request(&mut self, method: &str, params: Option<Value>) -> Reply {
        let id = self.fresh_id();
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(&message).await;
        let reply = self.response(&id, self.timing.request).await;
        if !matches!(reply, Reply::Nothing) || self.heard || self.child.is_none() {
            return reply;
        }
        self.abandoned.remove(&id.to_string());
        self.wait_for_start(&id).await
    }

    /// The rest of [`Conn::request`]'s wait for a child not heard from yet.
    async fn wait_for_start(&mut self, id: &Value) -> Reply {
        const ALIVE: &str = "ferry-check-alive";
        /// How often the child is looked at.
        const TICK: Duration = Duration::from_millis(500);
        if !self.closed {
            let ping = json!({"jsonrpc": "2.0", "id": ALIVE, "method": "ping"});
            self.send(&ping).await;
            // Its answer tells the server is up; it is not a response the checks expect.
            self.abandoned.insert(json!(ALIVE).to_string());
        }
        let deadline = self.opened + self.timing.connect;
        let mut next_note = self.opened + Duration::from_secs(10);
        loop {
            if self.heard {
                // Up: the handshake's answer gets one more request timeout.
                return self.response(id, self.timing.request).await;
            }
            let exited = self
                .child
                .as_ref()
                .is_some_and(|child| child.try_wait().is_ok_and(|s| s.is_some()));
            let now = Instant::now();
            if self.closed || exited || now >= deadline {
                // What it wrote before its output ended is read first.
                let reply = self.response(id, Duration::from_millis(200)).await;
                if !matches!(reply, Reply::Nothing) || self.heard {
                    return reply;
                }
                let Some(starting) = self.starting() else {
                    return Reply::Nothing;
                };
                let why = if now >= deadline && !self.closed && !exited {
                    Some(starting.timed_out())
                } else {
                    starting.exit_report().await
                };
                self.unstarted = why;
                return Reply::Nothing;
            }
            if now >= next_note {
                if let Some(starting) = self.starting() {
                    note!("ferry check: {}", starting.still_waiting(now - self.opened));
                }
                next_note += if now - self.opened < Duration::from_secs(60) {
                    Duration::from_secs(10)
                } else {
                    Duration::from_secs(30)
                };
            }
            let within = TICK.min(deadline.saturating_duration_since(now));
            let reply = self.response(id, within).await;
            if !matches!(reply, Reply::Nothing) {
                return reply;
            }
            self.abandoned.remove(&id.to_string());
        }
    }

    /// The child, as waited for while it starts.
    fn starting(&self) -> Option<Starting<'_>> {
        Some(Starting {
            child: self.child.as_ref()?,
            shown: &self.shown,
            limit: self.timing.connect,
        })
    }

    /// Send a notification.
    pub(crate) async fn notify(&mut self, method: &str, params: Option<Value>) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(&message).await;
    }

    /// The next message, waiting until `deadline`: garbage is filed, the server's requests
    /// are answered and filed, late responses to abandoned requests dropped.
    async fn recv_one(&mut self, deadline: Instant) -> Option<Value> {
        loop {
            let item = match tokio::time::timeout_at(deadline, self.incoming.recv()).await {
                Ok(Some(item)) => {
                    self.heard = true;
                    item
                }
                Ok(None) => {
                    self.closed = true;
                    return None;
                }
                Err(_) => return None,
            };
            let message = match item {
                Received::Garbage(text) => {
                    self.garbage.push(text);
                    continue;
                }
                Received::Message(message) => message,
            };
            let id = message.get("id").filter(|id| !id.is_null());
            match (message.get("method").and_then(Value::as_str), id) {
                (Some(method), Some(id)) => {
                    self.server_requests.push(method.to_owned());
                    let reply = json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32601, "message": "Method not found (ferry check declares no client capability)"}});
                    self.send(&reply).await;
                }
                (None, Some(id)) if self.abandoned.remove(&id.to_string()) => {}
                _ => return Some(message),
            }
        }
    }

    /// The next message that is a response (or a batch), waiting at most `within` (longer
    /// while progress notifications keep coming, if `progress_extends`); notifications
    /// are filed on the way.
    async fn next_response_extending(
        &mut self,
        within: Duration,
        progress_extends: bool,
    ) -> Option<Value> {
        if let Some(message) = self.backlog.pop_front() {
            return Some(message);
        }
        let mut deadline = Instant::now() + within;
        loop {
            let message = self.recv_one(deadline).await?;
            if message.get("method").is_some() {
                if progress_extends
                    && message.get("method") == Some(&json!("notifications/progress"))
                {
                    deadline = Instant::now() + within;
                }
                self.notifications.push(message);
                continue;
            }
            return Some(message);
        }
    }

    /// The next message that is a response (or a batch), waiting at most `within`.
    pub(crate) async fn next_response(&mut self, within: Duration) -> Option<Value> {
        self.next_response_extending(within, false).await
    }

    /// Wait at most `within` for a notification that `matches`; responses meanwhile are
    /// kept for later.
    pub(crate) async fn notification(
        &mut self,
        within: Duration,
        matches: impl Fn(&Value) -> bool,
    ) -> bool {
        let deadline = Instant::now() + within;
        while let Some(message) = self.recv_one(deadline).await {
            if message.get("method").is_none() {
                self.backlog.push_back(message);
                continue;
            }
            let found = matches(&message);
            self.notifications.push(message);
            if found {
                return true;
            }
        }
        false
    }

    /// The response to `id`, waiting at most `within` (restarted by progress); other
    /// responses are kept for later. A request left unanswered is abandoned: its response,
    /// if it comes later, is dropped.
    pub(crate) async fn response(&mut self, id: &Value, within: Duration) -> Reply {
        let mut others = Vec::new();
        let mut found = None;
        // The backlog first, then new messages.
        let backlog: Vec<Value> = self.backlog.drain(..).collect();
        for message in backlog {
            if found.is_none() && message.get("id") == Some(id) {
                found = Some(message);
            } else {
                others.push(message);
            }
        }
        // Each wait is restarted by progress (and by another response: there are only as
        // many of those as requests the checker sent).
        while found.is_none() {
            match self.next_response_extending(within, true).await {
                Some(message) if message.get("id") == Some(id) => found = Some(message),
                Some(message) => others.push(message),
                None => break,
            }
        }
        self.backlog.extend(others);
        match found {
            None => {
                self.abandoned.insert(id.to_string());
                Reply::Nothing
            }
            Some(message) => classify(message),
        }
    }

    /// Every response that arrives within `within` (and the backlog).
    pub(crate) async fn drain(&mut self, within: Duration) -> Vec<Value> {
        let mut all: Vec<Value> = self.backlog.drain(..).collect();
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_response(left).await {
                Some(message) => all.push(message),
                None => return all,
            }
        }
    }

    /// For HTTP, the last POST's status (and any transport error), as evidence: ` (HTTP 400
    /// Bad Request, application/json)`; empty for stdio.
    pub(crate) fn http_status(&self) -> String {
        let Some(http) = &self.http else {
            return String::new();
        };
        if let Some(error) = self.transport_errors.last() {
            return format!(" ({error})");
        }
        match http.exchanges.last() {
            Some(e) => format!(" (HTTP {}, {:?})", e.status, e.content_type),
            None => String::new(),
        }
    }

    /// Whether the server is this process's reference server (no process, no stdio).
    pub(crate) fn in_process(&self) -> bool {
        self.server.is_some()
    }

    /// Whether the server process is still running (always true for a URL).
    pub(crate) fn exit_status(&self) -> Option<String> {
        let child = self.child.as_ref()?;
        match child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            _ => None,
        }
    }

    /// End the connection: the stdio shutdown sequence for a child; for HTTP, the session
    /// is ended with DELETE (what a client should do; a refusal does not matter here).
    pub(crate) async fn close(mut self) {
        if let Some(http) = &self.http
            && http.session.is_some()
        {
            let _ = http.raw(reqwest::Method::DELETE, &[], None, false).await;
        }
        if let Some(child) = self.child.take() {
            drop(self.outgoing.take());
            let timeouts = ShutdownTimeouts {
                after_stdin_close: Duration::from_millis(500),
                after_sigterm: Duration::from_millis(500),
                after_sigkill: Duration::from_millis(500),
            };
            let _ = child.shutdown(timeouts).await;
        }
    }
}

/// A response message as a [`Reply`].
fn classify(message: Value) -> Reply {
    let has_result = message.get("result").is_some();
    let error = message.get("error");
    let well_formed = message.get("jsonrpc") == Some(&json!("2.0"));
    match (has_result, error) {
        (true, None) if well_formed => Reply::Result(message["result"].clone()),
        (false, Some(error)) if well_formed && error.is_object() => Reply::Error(error.clone()),
        _ => Reply::Malformed(message),
    }
}

/// At most `max` characters of `text`, marked when cut.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}...")
}

/// How many JSON-RPC requests the checker has sent in this run (reported in `--json`).
static REQUESTS_SENT: AtomicUsize = AtomicUsize::new(0);

/// Count the requests in a frame about to be sent (a batch counts each one).
pub(crate) fn count_requests(frame: &[u8]) {
    let is_request = |m: &Value| m.get("method").is_some() && m.get("id").is_some();
    let n = match serde_json::from_slice::<Value>(frame) {
        Ok(Value::Array(entries)) => entries.iter().filter(|m| is_request(m)).count(),
        Ok(message) => usize::from(is_request(&message)),
        Err(_) => 0,
    };
    REQUESTS_SENT.fetch_add(n, Ordering::Relaxed);
}

/// How many requests have been sent so far.
pub(crate) fn requests_sent() -> usize {
    REQUESTS_SENT.load(Ordering::Relaxed)
}
