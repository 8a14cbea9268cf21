//! The Streamable HTTP side of the soak: `ferry serve --http` and the clients that take
//! turns through every kind of traffic ([`Op`]), over raw hyper HTTP/1.1.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

use crate::Tally;

const SESSION: &str = "2025-11-25";
const STATELESS: &str = "2026-07-28";
/// The longest any one step may take before the operation counts as failed.
const STEP: Duration = Duration::from_secs(15);

/// `ferry serve --http` on a free port of 127.0.0.1.
pub(crate) struct Server {
    child: Child,
    pub(crate) pid: u32,
    pub(crate) addr: String,
}

impl Server {
    pub(crate) async fn start(ferry: &str, session_idle: u64) -> Result<Server, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let addr = format!("127.0.0.1:{port}");
        let child = Command::new(ferry)
            .args(["serve", "--http", &addr, "--session-idle"])
            .arg(session_idle.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{ferry}: {e}"))?;
        let server = Server {
            pid: child.id(),
            child,
            addr,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(&server.addr).await.is_err() {
            if Instant::now() > deadline {
                return Err(format!("nothing listens on {} after 30 s", server.addr));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(server)
    }

    pub(crate) fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One kind of traffic.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    /// A session-era session: calls, a list, a read; then DELETE, or (every third time)
    /// abandoned to expire.
    Session,
    /// A countdown answered on an SSE stream, cancelled after its first progress.
    CancelMidStream,
    /// A countdown whose connection is dropped after its first event.
    DropMidStream,
    /// A countdown whose stream is cut after its first event, then resumed on a new
    /// connection with `Last-Event-ID` until its result.
    Resume,
    /// A session's GET stream, opened and dropped.
    GetStream,
    /// Stateless calls, `server/discover`, and an `elicit` call with its `input_required`
    /// round.
    Stateless,
    /// A stateless `subscriptions/listen`, acknowledged, then dropped.
    Listen,
}

impl Op {
    const ALL: [Op; 7] = [
        Op::Session,
        Op::CancelMidStream,
        Op::DropMidStream,
        Op::Resume,
        Op::GetStream,
        Op::Stateless,
        Op::Listen,
    ];

    fn name(self) -> &'static str {
        match self {
            Op::Session => "http.session",
            Op::CancelMidStream => "http.cancel_mid_stream",
            Op::DropMidStream => "http.drop_mid_stream",
            Op::Resume => "http.resume",
            Op::GetStream => "http.get_stream",
            Op::Stateless => "http.stateless",
            Op::Listen => "http.listen",
        }
    }
}

/// One client: every kind of traffic in turn (each worker starting at another) until the
/// deadline.
pub(crate) async fn worker(
    addr: String,
    worker: usize,
    deadline: Instant,
    pause: Duration,
    tally: Arc<Tally>,
) {
    let mut turn = worker;
    // SOAK_ONLY=listen (say): only the kinds whose name holds it, to find which one leaks.
    let only = std::env::var("SOAK_ONLY").unwrap_or_default();
    let ops: Vec<Op> = Op::ALL
        .into_iter()
        .filter(|op| op.name().contains(&only))
        .collect();
    if ops.is_empty() {
        return;
    }
    while Instant::now() < deadline {
        let op = ops[turn % ops.len()];
        let outcome = match tokio::time::timeout(STEP * 2, run(&addr, op, turn)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("{op:?}: no end after {:?}", STEP * 2)),
        };
        tally.record(op.name(), outcome);
        turn += 1;
        tokio::time::sleep(pause).await;
    }
}

async fn run(addr: &str, op: Op, turn: usize) -> Result<(), String> {
    match op {
        Op::Session => {
            let (mut c, session) = Connection::session(addr).await?;
            let h = c.session_headers(&session);
            let tools = c.call(2, "tools/list", json!({}), &h).await?;
            if tools["tools"].as_array().is_none_or(|t| t.is_empty()) {
                return Err(format!("tools/list: {tools}"));
            }
            for id in 3..8 {
                let text = format!("soak {turn} {id}");
                let r = c.call(id, "tools/call", echo(&text), &h).await?;
                if r["content"][0]["text"] != text.as_str() {
                    return Err(format!("echo: {r}"));
                }
            }
            let read = c.call(8, "resources/read", json!({"uri": "server://info"}), &h);
            read.await?;
            if !turn.is_multiple_of(3) {
                c.delete(&session).await?;
            }
            Ok(())
        }
        Op::CancelMidStream => {
            let (mut c, session) = Connection::session(addr).await?;
            let h = c.session_headers(&session);
            let mut events = c.start(countdown(7, 40, 50), &h).await?;
            events.until_progress().await?;
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 7, "reason": "soak"}});
            let mut other = Connection::open(addr).await?;
            other.send(&cancel, &h).await?;
            // Cancelled: the stream ends without the countdown's result.
            while let Some((_, message)) = events.next().await? {
                if message["id"] == 7 && message.get("result").is_some() {
                    return Err("the cancelled countdown finished".into());
                }
            }
            other.delete(&session).await
        }
        Op::DropMidStream => {
            let (mut c, session) = Connection::session(addr).await?;
            let h = c.session_headers(&session);
            let mut events = c.start(countdown(7, 10, 50), &h).await?;
            events.until_progress().await?;
            drop(events);
            drop(c);
            if turn.is_multiple_of(2) {
                Connection::open(addr).await?.delete(&session).await?;
            }
            Ok(())
        }
        Op::Resume => {
            let (mut c, session) = Connection::session(addr).await?;
            let h = c.session_headers(&session);
            let mut events = c.start(countdown(7, 6, 50), &h).await?;
            let last = events.until_progress().await?;
            drop(events);
            drop(c);
            let Some(last) = last else {
                return Err("the stream's first event had no id".into());
            };
            let mut c = Connection::open(addr).await?;
            let mut headers = h.clone();
            headers.push(("last-event-id".into(), last));
            let mut events = c.get(&headers).await?;
            while let Some((_, message)) = events.next().await? {
                if message["id"] == 7 {
                    if message["result"]["content"].is_array() {
                        drop(events);
                        return Connection::open(addr).await?.delete(&session).await;
                    }
                    return Err(format!("resumed: {message}"));
                }
            }
            Err("the resumed stream ended without the countdown's result".into())
        }
        Op::GetStream => {
            let (mut c, session) = Connection::session(addr).await?;
            let h = c.session_headers(&session);
            let events = c.get(&h).await?;
            tokio::time::sleep(Duration::from_millis(100)).await;
            drop(events);
            Connection::open(addr).await?.delete(&session).await
        }
        Op::Stateless => {
            let mut c = Connection::open(addr).await?;
            for id in 1..4 {
                let text = format!("stateless {turn} {id}");
                let r = c.stateless(id, "tools/call", echo(&text)).await?;
                if r["content"][0]["text"] != text.as_str() {
                    return Err(format!("echo: {r}"));
                }
            }
            c.stateless(4, "server/discover", json!({})).await?;
            let elicit = json!({"name": "elicit", "arguments": {"message": "Who are you?"}});
            let first = c.stateless(5, "tools/call", elicit.clone()).await?;
            let retry = super::answer_elicitation(elicit, &first)?;
            let done = c.stateless(6, "tools/call", retry).await?;
            if done["resultType"] != "complete" || done["isError"] == true {
                return Err(format!("elicit retried: {done}"));
            }
            Ok(())
        }
        Op::Listen => {
            let mut c = Connection::open(addr).await?;
            let params = stateless_params(json!({"notifications": {"toolsListChanged": true}}));
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                "params": params});
            let mut events = c
                .start(body, &stateless_headers("subscriptions/listen", None))
                .await?;
            match events.next().await? {
                Some((_, m)) if m["method"] == "notifications/subscriptions/acknowledged" => Ok(()),
                other => Err(format!("listen: {other:?}")),
            }
        }
    }
}

fn echo(text: &str) -> Value {
    json!({"name": "echo", "arguments": {"text": text}})
}

/// A `tools/call` of `countdown` with id `id` and a progress token.
fn countdown(id: u64, steps: u64, interval_ms: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "countdown", "arguments": {"steps": steps, "interval_ms": interval_ms},
        "_meta": {"progressToken": format!("p{id}")}}})
}

fn stateless_params(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1"},
    });
    params
}

type Headers = Vec<(String, String)>;

fn stateless_headers(method: &str, name: Option<&str>) -> Headers {
    let mut headers = vec![
        ("mcp-protocol-version".into(), STATELESS.into()),
        ("mcp-method".into(), method.into()),
    ];
    if let Some(name) = name {
        headers.push(("mcp-name".into(), name.into()));
    }
    headers
}

/// The JSON `server://info` of the server (a stateless read on a connection of its own).
pub(crate) async fn info(addr: &str) -> Result<Value, String> {
    let mut c = Connection::open(addr).await?;
    let read = c
        .stateless(1, "resources/read", json!({"uri": "server://info"}))
        .await?;
    let text = read["contents"][0]["text"].as_str().unwrap_or_default();
    serde_json::from_str(text).map_err(|e| format!("server://info: {e}"))
}

/// One HTTP/1.1 connection.
struct Connection {
    sender: SendRequest<Full<Bytes>>,
    authority: String,
}

impl Connection {
    async fn open(addr: &str) -> Result<Connection, String> {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(connection);
        Ok(Connection {
            sender,
            authority: addr.to_owned(),
        })
    }

    /// A new connection with an initialized session-era session on it.
    async fn session(addr: &str) -> Result<(Connection, String), String> {
        let mut c = Connection::open(addr).await?;
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": SESSION, "capabilities": {},
            "clientInfo": {"name": "soak", "version": "1"}}});
        let response = c.request("POST", Some(&initialize), &[]).await?;
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or("initialize: no session id")?;
        let mut events = Events::new(response);
        events.next().await?.ok_or("initialize: no answer")?;
        let h = c.session_headers(&session);
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        c.send(&initialized, &h).await?;
        Ok((c, session))
    }

    fn session_headers(&self, session: &str) -> Headers {
        vec![
            ("mcp-session-id".into(), session.into()),
            ("mcp-protocol-version".into(), SESSION.into()),
        ]
    }

    async fn request(
        &mut self,
        method: &str,
        body: Option<&Value>,
        headers: &[(String, String)],
    ) -> Result<hyper::Response<Incoming>, String> {
        let mut request = hyper::Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", &self.authority)
            .header("accept", "application/json, text/event-stream");
        if body.is_some() {
            request = request.header("content-type", "application/json");
        }
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let bytes = body.map(|b| b.to_string()).unwrap_or_default();
        let request = request
            .body(Full::new(Bytes::from(bytes)))
            .map_err(|e| e.to_string())?;
        let response = tokio::time::timeout(STEP, async {
            self.sender.ready().await?;
            self.sender.send_request(request).await
        })
        .await
        .map_err(|_| format!("{method}: no answer in {STEP:?}"))?
        .map_err(|e| format!("{method}: {e}"))?;
        if !response.status().is_success() {
            let status = response.status();
            let body = response.into_body().collect().await.map(|b| b.to_bytes());
            let body = body.unwrap_or_default();
            return Err(format!(
                "{method} {}: HTTP {status}: {}",
                body.len(),
                String::from_utf8_lossy(&body)
            ));
        }
        Ok(response)
    }

    /// POST a message whose answer is a stream (or one JSON object): its events.
    async fn start(
        &mut self,
        message: Value,
        headers: &[(String, String)],
    ) -> Result<Events, String> {
        Ok(Events::new(
            self.request("POST", Some(&message), headers).await?,
        ))
    }

    /// POST a notification (202, nothing to read).
    async fn send(&mut self, message: &Value, headers: &[(String, String)]) -> Result<(), String> {
        let response = self.request("POST", Some(message), headers).await?;
        let _ = response.into_body().collect().await;
        Ok(())
    }

    async fn get(&mut self, headers: &[(String, String)]) -> Result<Events, String> {
        Ok(Events::new(self.request("GET", None, headers).await?))
    }

    async fn delete(&mut self, session: &str) -> Result<(), String> {
        let headers = self.session_headers(session);
        let response = self.request("DELETE", None, &headers).await?;
        let _ = response.into_body().collect().await;
        Ok(())
    }

    /// A request in a session (`headers`), waited for: its result.
    async fn call(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
        headers: &[(String, String)],
    ) -> Result<Value, String> {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut events = self.start(message, headers).await?;
        events.answer(id).await
    }

    /// A stateless-era request: its result.
    async fn stateless(&mut self, id: u64, method: &str, params: Value) -> Result<Value, String> {
        let name = params["name"].as_str().or(params["uri"].as_str());
        let headers = stateless_headers(method, name);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method,
            "params": stateless_params(params)});
        let mut events = self.start(message, &headers).await?;
        events.answer(id).await
    }
}

/// The messages of a response: one JSON body, or the events of an SSE stream as they come.
struct Events {
    body: Incoming,
    sse: bool,
    buffer: Vec<u8>,
    done: bool,
}

impl Events {
    fn new(response: hyper::Response<Incoming>) -> Events {
        let sse = response
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        Events {
            body: response.into_body(),
            sse,
            buffer: Vec::new(),
            done: false,
        }
    }

    /// The next message and its event id; `None` at the end of the body.
    async fn next(&mut self) -> Result<Option<(Option<String>, Value)>, String> {
        loop {
            if let Some(event) = self.take_event()? {
                return Ok(Some(event));
            }
            if self.done {
                return Ok(None);
            }
            match tokio::time::timeout(STEP, self.body.frame()).await {
                Err(_) => return Err(format!("no event in {STEP:?}")),
                Ok(None) => self.done = true,
                Ok(Some(Err(e))) => return Err(format!("body: {e}")),
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.extend_from_slice(&data);
                    }
                }
            }
        }
    }

    /// One whole message out of the buffer, if one is there.
    fn take_event(&mut self) -> Result<Option<(Option<String>, Value)>, String> {
        if !self.sse {
            if !self.done || self.buffer.is_empty() {
                return Ok(None);
            }
            let body = std::mem::take(&mut self.buffer);
            let message = serde_json::from_slice(&body).map_err(|e| format!("body: {e}"))?;
            return Ok(Some((None, message)));
        }
        loop {
            let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") else {
                return Ok(None);
            };
            let event: Vec<u8> = self.buffer.drain(..end + 2).collect();
            let (mut id, mut data) = (None, String::new());
            for line in String::from_utf8_lossy(&event).lines() {
                if let Some(rest) = line.strip_prefix("id:") {
                    id = Some(rest.trim_start().to_owned());
                } else if let Some(rest) = line.strip_prefix("data:") {
                    data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
                }
            }
            // An event without data (a priming event) carries no message.
            if data.is_empty() {
                continue;
            }
            let message = serde_json::from_str(&data).map_err(|e| format!("event: {e}"))?;
            return Ok(Some((id, message)));
        }
    }

    /// Read until the answer to `id`: its result, or its error as a failure.
    async fn answer(&mut self, id: u64) -> Result<Value, String> {
        while let Some((_, message)) = self.next().await? {
            if message["id"] == id {
                return match message.get("result") {
                    Some(result) => Ok(result.clone()),
                    None => Err(format!("answer to {id}: {message}")),
                };
            }
        }
        Err(format!("no answer to {id}"))
    }

    /// Read until the first progress notification: the last event id seen by then.
    async fn until_progress(&mut self) -> Result<Option<String>, String> {
        let mut last = None;
        while let Some((id, message)) = self.next().await? {
            last = id.or(last);
            if message["method"] == "notifications/progress" {
                return Ok(last);
            }
        }
        Err("the stream ended before any progress".into())
    }
}
