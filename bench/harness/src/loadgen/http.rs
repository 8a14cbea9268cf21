//! The Streamable HTTP figures of one server process, over hyper HTTP/1.1 connections (one
//! per session, `TCP_NODELAY`):
//!
//! - **session era** (2025-11-25): `sessions` clients each `initialize` (keeping the
//!   `MCP-Session-Id`), send `notifications/initialized`, then call `echo` one call at a
//!   time until `calls` calls are done in all; requests/s and p50/p99 latency;
//! - **stateless era** (2026-07-28): the same load without `initialize`, every request
//!   carrying `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the `_meta` the revision
//!   requires; a server that refuses it is reported as not supporting the era;
//! - **idle sessions**: the server's RSS growth over `idle` more sessions (initialized, then
//!   left alone), per session; with `idle_settle` (ms), also the growth over a second
//!   `idle` sessions opened once the first have been left alone that long (a server that
//!   lets go of what an idle session holds shows ~0 there).
//!
//! Answers may be JSON or SSE (`data:` lines); both are parsed and checked.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

use crate::measure::{self, Line, Phase};

/// Load sizes and which era to measure (`session`, `stateless` or `both`).
pub(crate) struct Options {
    pub(crate) sessions: usize,
    pub(crate) calls: usize,
    pub(crate) idle: usize,
    pub(crate) idle_settle: usize,
    pub(crate) era: String,
}

const SESSION_VERSION: &str = "2025-11-25";
const STATELESS_VERSION: &str = "2026-07-28";

pub(crate) fn run(command: &[String], options: &Options) -> io::Result<serde_json::Value> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let addr = format!("127.0.0.1:{port}");
    let args: Vec<String> = command
        .iter()
        .map(|a| {
            a.replace("{addr}", &addr)
                .replace("{port}", &port.to_string())
        })
        .collect();
    let mut child = std::process::Command::new(&args[0])
        .args(&args[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(measure_all(&addr, child.id(), options));
    let _ = child.kill();
    let _ = child.wait();
    outcome
}

async fn measure_all(addr: &str, pid: u32, options: &Options) -> io::Result<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        if Instant::now() > deadline {
            return Err(io::Error::other(format!(
                "nothing listens on {addr} after 30 s"
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut figures = serde_json::Map::new();
    if options.era != "stateless" {
        let (phase, sse) = load(addr, options.sessions, options.calls, false).await?;
        let mut session = phase.figures();
        session["sse_answers"] = sse.into();
        figures.insert("session".into(), session);
        let (before, after) = idle_sessions(addr, pid, options.idle).await?;
        let mut idle = serde_json::json!({
            "sessions": options.idle,
            "rss_before_kib": before,
            "rss_after_kib": after,
            "kib_per_session": (after as f64 - before as f64) / options.idle.max(1) as f64,
        });
        if options.idle_settle > 0 {
            let settle = Duration::from_millis(options.idle_settle as u64);
            tokio::time::sleep(settle).await;
            let (before, after) = idle_sessions(addr, pid, options.idle).await?;
            idle["settled_kib_per_session"] =
                ((after as f64 - before as f64) / options.idle.max(1) as f64).into();
        }
        figures.insert("idle".into(), idle);
    }
    if options.era != "session" {
        let value = match load(addr, options.sessions, options.calls, true).await {
            Ok((phase, sse)) => {
                let mut stateless = phase.figures();
                stateless["sse_answers"] = sse.into();
                stateless
            }
            Err(e) => serde_json::json!({ "unsupported": e.to_string() }),
        };
        figures.insert("stateless".into(), value);
    }
    figures.insert("rss_kib".into(), measure::rss_kib(pid)?.into());
    Ok(figures.into())
}

/// One client connection (HTTP/1.1 keep-alive).
struct Connection {
    sender: SendRequest<Full<Bytes>>,
    authority: String,
}

async fn connect(addr: &str) -> io::Result<Connection> {
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(io::Error::other)?;
    tokio::spawn(connection);
    Ok(Connection {
        sender,
        authority: addr.to_owned(),
    })
}

/// What one POST answered.
struct Answer {
    session: Option<String>,
    body: Bytes,
    sse: bool,
}

impl Connection {
    async fn post(&mut self, body: Vec<u8>, headers: &[(&str, &str)]) -> io::Result<Answer> {
        let mut request = hyper::Request::post("/mcp")
            .header("host", &self.authority)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(io::Error::other)?;
        self.sender.ready().await.map_err(io::Error::other)?;
        let response = self
            .sender
            .send_request(request)
            .await
            .map_err(io::Error::other)?;
        let status = response.status();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let sse = response
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(io::Error::other)?
            .to_bytes();
        if !status.is_success() {
            return Err(io::Error::other(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(&body)
            )));
        }
        Ok(Answer { session, body, sse })
    }
}

/// The JSON-RPC messages in an answer: the body, or each SSE event's `data`.
fn messages(answer: &Answer) -> Vec<Vec<u8>> {
    if !answer.sse {
        return vec![answer.body.to_vec()];
    }
    let mut out = Vec::new();
    let mut data = Vec::new();
    for line in answer.body.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(rest) = line.strip_prefix(b"data:") {
            if !data.is_empty() {
                data.push(b'\n');
            }
            data.extend_from_slice(rest.strip_prefix(b" ").unwrap_or(rest));
        } else if line.is_empty() && !data.is_empty() {
            out.push(std::mem::take(&mut data));
        }
    }
    if !data.is_empty() {
        out.push(data);
    }
    out
}

/// Start a session-era session on `connection`; returns its id (if the server gave one).
async fn open_session(connection: &mut Connection) -> io::Result<Option<String>> {
    let initialize = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{SESSION_VERSION}","capabilities":{{}},"clientInfo":{{"name":"loadgen","version":"0.1.0"}}}}}}"#
    );
    let answer = connection.post(initialize.into_bytes(), &[]).await?;
    let session = answer.session.clone();
    let mut headers = vec![("mcp-protocol-version", SESSION_VERSION)];
    if let Some(id) = &session {
        headers.push(("mcp-session-id", id));
    }
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec();
    connection.post(initialized, &headers).await?;
    Ok(session)
}

/// `sessions` clients calling `echo` one call at a time until `calls` are done in all;
/// also how many of the calls were answered with SSE (the rest with one JSON object).
async fn load(
    addr: &str,
    sessions: usize,
    calls: usize,
    stateless: bool,
) -> io::Result<(Phase, usize)> {
    let counter = Arc::new(AtomicUsize::new(0));
    let sse_answers = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(tokio::sync::Barrier::new(sessions + 1));
    let mut clients = Vec::new();
    for _ in 0..sessions {
        let (addr, counter, barrier, sse_answers) = (
            addr.to_owned(),
            Arc::clone(&counter),
            Arc::clone(&barrier),
            Arc::clone(&sse_answers),
        );
        clients.push(tokio::spawn(async move {
            let prepared = async {
                let mut connection = connect(&addr).await?;
                let session = if stateless {
                    None
                } else {
                    open_session(&mut connection).await?
                };
                io::Result::Ok((connection, session))
            }
            .await;
            barrier.wait().await;
            let (mut connection, session) = prepared?;
            let mut latencies = Vec::new();
            loop {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                if n >= calls {
                    return io::Result::Ok(latencies);
                }
                let sent = Instant::now();
                let sse =
                    call(&mut connection, session.as_deref(), n as u64 + 1, stateless).await?;
                latencies.push(sent.elapsed().as_secs_f64() * 1e6);
                if sse {
                    sse_answers.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    barrier.wait().await;
    let started = Instant::now();
    let mut phase = Phase::default();
    for client in clients {
        let latencies = client.await.map_err(io::Error::other)??;
        phase.latencies_us.extend(latencies);
    }
    phase.elapsed = started.elapsed();
    Ok((phase, sse_answers.load(Ordering::Relaxed)))
}

/// One `echo` call, its answer checked; whether it came as SSE.
async fn call(
    connection: &mut Connection,
    session: Option<&str>,
    id: u64,
    stateless: bool,
) -> io::Result<bool> {
    let mut body = Vec::with_capacity(320);
    measure::echo_request(id, &mut body);
    let headers: Vec<(&str, &str)> = if stateless {
        // Add the `_meta` 2026-07-28 requires inside `params`.
        let meta = format!(
            r#"{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"{STATELESS_VERSION}","io.modelcontextprotocol/clientInfo":{{"name":"loadgen","version":"0.1.0"}},"io.modelcontextprotocol/clientCapabilities":{{}}}},"#
        );
        let at = body
            .windows(10)
            .position(|w| w == br#""params":{"#)
            .expect("params")
            + 10;
        body.splice(at - 1..at, meta.into_bytes());
        vec![
            ("mcp-protocol-version", STATELESS_VERSION),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ]
    } else {
        let mut headers = vec![("mcp-protocol-version", SESSION_VERSION)];
        if let Some(id) = session {
            headers.push(("mcp-session-id", id));
        }
        headers
    };
    let answer = connection.post(body, &headers).await?;
    for message in messages(&answer) {
        match measure::check(&message)? {
            Line::Echo(got) if got == id => return Ok(answer.sse),
            Line::Echo(got) => {
                return Err(io::Error::other(format!("expected id {id}, got {got}")));
            }
            Line::Other => {}
        }
    }
    Err(io::Error::other(format!(
        "no response to call {id} in: {}",
        String::from_utf8_lossy(&answer.body)
    )))
}

/// Server RSS before and after opening `count` more sessions (8 connections at a time).
async fn idle_sessions(addr: &str, pid: u32, count: usize) -> io::Result<(u64, u64)> {
    let mut first = connect(addr).await?;
    open_session(&mut first).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = measure::rss_kib(pid)?;
    let counter = Arc::new(AtomicUsize::new(0));
    let mut openers = Vec::new();
    for _ in 0..8 {
        let (addr, counter) = (addr.to_owned(), Arc::clone(&counter));
        openers.push(tokio::spawn(async move {
            let mut connection = connect(&addr).await?;
            while counter.fetch_add(1, Ordering::Relaxed) < count {
                open_session(&mut connection).await?;
            }
            io::Result::Ok(())
        }));
    }
    for opener in openers {
        opener.await.map_err(io::Error::other)??;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    Ok((before, measure::rss_kib(pid)?))
}
