//! The page's API: `GET /api/state`, the event stream `GET /api/events`, and one POST per
//! operation (`/api/list`, `/api/call`, ...), each taking and answering a JSON object. A
//! failure is `{"error": {"message": ...}}` with its status: 400 a request the page got
//! wrong, 403 refused, 404 no such connection or call, 502 the MCP server failed the
//! request (its JSON-RPC error under `error.rpc`).

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::Response;
use ferry::client::{CallOptions, ClientError};
use ferry::protocol::Era;
use ferry::protocol::types::{CreateMessageResult, ElicitResult, LoggingLevel, Reference, Root};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use super::conn::Conn;
use super::hub::{Event, lock, now_ms};
use super::{App, Failure, event_stream};
use crate::client::args;

/// A comment sent on an idle event stream, so that proxies and the browser keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How long a finished call waits for its last progress updates to be passed on.
const PROGRESS_GRACE: Duration = Duration::from_secs(1);

/// The longest call id the page may choose.
const CALL_ID_MAX: usize = 128;

/// The inspector's state: its connections and the requests waiting for the person.
pub(super) async fn state(app: &Arc<App>) -> Value {
    let conns: Vec<Value> = app.conns.lock().await.values().map(|c| c.info()).collect();
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "allowSpawn": app.allow_spawn,
        "answerTimeoutMs": app.shared.asks.timeout.as_millis() as u64,
        "connections": conns,
        "pending": app.shared.asks.pending(),
    })
}

/// The event stream: the kept events after `after`, then the live ones. A page that falls
/// too far behind is sent a `lagged` event and reopens the stream from its last event.
pub(super) fn events(app: &Arc<App>, after: u64) -> Response {
    let (kept, live) = app.shared.hub.subscribe(after);
    let start = Bytes::from_static(b"retry: 1000\n\n");
    let state = (Some(start), VecDeque::from(kept), live);
    let stream = futures_util::stream::unfold(state, |(start, mut kept, mut live)| async move {
        if let Some(start) = start {
            return Some((Ok::<_, Infallible>(start), (None, kept, live)));
        }
        let chunk = match kept.pop_front() {
            Some(event) => frame(&event),
            None => match tokio::time::timeout(KEEP_ALIVE, live.recv()).await {
                Ok(Ok(event)) => frame(&event),
                Ok(Err(broadcast::error::RecvError::Lagged(missed))) => Bytes::from(format!(
                    "data: {}\n\n",
                    json!({"type": "lagged", "missed": missed})
                )),
                Ok(Err(broadcast::error::RecvError::Closed)) => return None,
                Err(_) => Bytes::from_static(b": keep-alive\n\n"),
            },
        };
        Some((Ok(chunk), (None, kept, live)))
    });
    event_stream(Body::from_stream(stream))
}

/// One SSE event; the JSON text is one line (serde_json escapes newlines).
fn frame((seq, text): &Event) -> Bytes {
    Bytes::from(format!("id: {seq}\ndata: {text}\n\n"))
}

/// Run the POST operation `op` with its JSON `body`.
pub(super) async fn post(app: &Arc<App>, op: &str, body: &[u8]) -> Result<Value, Failure> {
    match op {
        "list" => list(app, parse(body)?).await,
        "call" => call(app, parse(body)?).await,
        "cancel" => cancel(app, parse(body)?).await,
        "tasks" => tasks(app, parse(body)?).await,
        "task-cancel" => task_cancel(app, parse(body)?).await,
        "task-result" => task_result(app, parse(body)?).await,
        "read" => read(app, parse(body)?).await,
        "subscribe" => subscribe(app, parse(body)?).await,
        "prompt" => prompt(app, parse(body)?).await,
        "complete" => complete(app, parse(body)?).await,
        "log-level" => log_level(app, parse(body)?).await,
        "roots" => roots(app, parse(body)?).await,
        "answer" => answer(app, parse(body)?),
        "ping" => ping(app, parse(body)?).await,
        "stderr" => stderr(app, parse(body)?).await,
        "resend" => resend(app, parse(body)?).await,
        "check" => check(app, parse(body)?).await,
        "connect" => connect(app, parse(body)?).await,
        "reconnect" => reconnect(app, parse(body)?).await,
        "disconnect" => disconnect(app, parse(body)?).await,
        _ => Err(Failure::new(
            StatusCode::NOT_FOUND,
            format!("no operation /api/{op}"),
        )),
    }
}

fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, Failure> {
    serde_json::from_slice(body)
        .map_err(|e| Failure::new(StatusCode::BAD_REQUEST, format!("invalid request: {e}")))
}

/// Six random digits.
fn confirmation_code() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 4];
    getrandom::getrandom(&mut bytes)?;
    Ok(format!("{:06}", u32::from_le_bytes(bytes) % 1_000_000))
}

fn bad(message: impl Into<String>) -> Failure {
    Failure::new(StatusCode::BAD_REQUEST, message)
}

/// The server (or the connection to it) failed `what`.
fn upstream(what: &str, error: &ClientError) -> Failure {
    let mut body = json!({"error": {"message": format!("{what}: {error}")}});
    if let Some(rpc) = error.rpc() {
        body["error"]["rpc"] = serde_json::to_value(rpc).unwrap_or_default();
    }
    Failure {
        status: StatusCode::BAD_GATEWAY,
        body,
    }
}

fn to_json(value: &impl serde::Serialize) -> Result<Value, Failure> {
    serde_json::to_value(value)
        .map_err(|e| Failure::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

async fn conn(app: &Arc<App>, id: u64) -> Result<Arc<Conn>, Failure> {
    app.conn(id)
        .await
        .ok_or_else(|| Failure::new(StatusCode::NOT_FOUND, format!("no connection {id}")))
}

/// A request naming only a connection.
#[derive(Deserialize)]
struct OnConn {
    conn: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum ListKind {
    Tools,
    Resources,
    Templates,
    Prompts,
}

#[derive(Deserialize)]
struct ListRequest {
    conn: u64,
    kind: ListKind,
    cursor: Option<String>,
}

/// One page of a list.
async fn list(app: &Arc<App>, request: ListRequest) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    let client = &conn.client;
    let cursor = request.cursor;
    match request.kind {
        ListKind::Tools => to_json(
            &client
                .list_tools(cursor)
                .await
                .map_err(|e| upstream("tools/list", &e))?,
        ),
        ListKind::Resources => to_json(
            &client
                .list_resources(cursor)
                .await
                .map_err(|e| upstream("resources/list", &e))?,
        ),
        ListKind::Templates => to_json(
            &client
                .list_resource_templates(cursor)
                .await
                .map_err(|e| upstream("resources/templates/list", &e))?,
        ),
        ListKind::Prompts => to_json(
            &client
                .list_prompts(cursor)
                .await
                .map_err(|e| upstream("prompts/list", &e))?,
        ),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallRequest {
    conn: u64,
    /// The page's name for the call: its progress events carry it, Cancel names it.
    call_id: String,
    name: String,
    #[serde(default)]
    arguments: Value,
    /// Run it as a task (2025-11-25): its state is sent as `task` events.
    #[serde(default)]
    task: bool,
}

/// `tools/call`, its progress sent as events; answers when the call ends, or
/// `{"cancelled": true}` when Cancel stopped it.
async fn call(app: &Arc<App>, request: CallRequest) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    if request.call_id.is_empty() || request.call_id.len() > CALL_ID_MAX {
        return Err(bad(format!(
            "callId must have 1 to {CALL_ID_MAX} characters"
        )));
    }
    if !matches!(request.arguments, Value::Object(_) | Value::Null) {
        return Err(bad("arguments must be a JSON object"));
    }
    let call_id = request.call_id;
    let (updates, mut progress) =
        mpsc::channel::<ferry::protocol::types::ProgressNotificationParams>(64);
    let shared = app.shared.clone();
    let (conn_id, event_call) = (conn.id, call_id.clone());
    let forward = tokio::spawn(async move {
        while let Some(update) = progress.recv().await {
            shared.hub.emit(json!({
                "type": "progress", "conn": conn_id, "callId": event_call,
                "progress": update.progress, "total": update.total, "message": update.message,
                "time": now_ms(),
            }));
        }
    });
    let options = CallOptions {
        progress: Some(updates),
        reset_timeout_on_progress: true,
        ..CallOptions::default()
    };
    let client = conn.client.clone();
    let (name, arguments) = (request.name, request.arguments);
    let task = {
        let mut calls = lock(&app.calls);
        if calls.contains_key(&call_id) {
            return Err(Failure::new(
                StatusCode::CONFLICT,
                format!("a call {call_id} is in flight already"),
            ));
        }
        let task = if request.task {
            let (shared, event_call) = (app.shared.clone(), call_id.clone());
            let app = Arc::clone(app);
            tokio::spawn(async move {
                run_as_task(
                    &app,
                    &shared,
                    conn_id,
                    &event_call,
                    client,
                    &name,
                    arguments,
                    options,
                )
                .await
            })
        } else {
            tokio::spawn(async move { client.call_tool_with(&name, arguments, options).await })
        };
        calls.insert(call_id.clone(), task.abort_handle());
        task
    };
    let outcome = task.await;
    lock(&app.calls).remove(&call_id);
    lock(&app.task_calls).remove(&call_id);
    let _ = tokio::time::timeout(PROGRESS_GRACE, forward).await;
    match outcome {
        Ok(Ok(result)) => Ok(json!({"result": result})),
        Ok(Err(e)) => Err(upstream("tools/call", &e)),
        Err(e) if e.is_cancelled() => Ok(json!({"cancelled": true})),
        Err(_) => Err(Failure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the call stopped unexpectedly",
        )),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CancelRequest {
    call_id: String,
}

/// A call run as a task: the task followed to its end, its state and progress sent as
/// events (progress through `options.progress`, whose forwarding the caller runs).
#[allow(clippy::too_many_arguments)]
async fn run_as_task(
    app: &Arc<App>,
    shared: &Arc<super::Shared>,
    conn_id: u64,
    call_id: &str,
    client: ferry::client::Client,
    name: &str,
    arguments: Value,
    options: CallOptions,
) -> Result<ferry::protocol::types::CallToolResult, ferry::client::ClientError> {
    let mut task = client.call_tool_as_task(name, arguments, None).await?;
    let emit = |task: &ferry::protocol::types::Task| {
        shared.hub.emit(json!({
            "type": "task", "conn": conn_id, "callId": call_id, "task": task, "time": now_ms(),
        }));
    };
    emit(task.task());
    lock(&app.task_calls).insert(call_id.to_owned(), (client.clone(), task.id().to_owned()));
    let progress = options.progress;
    task.wait_with(|event| match event {
        ferry::client::TaskEvent::Progress(update) => {
            if let Some(progress) = &progress {
                let _ = progress.try_send(update);
            }
        }
        ferry::client::TaskEvent::Status(state) => emit(&state),
        _ => {}
    })
    .await
}

/// Stop a call in flight: the client sends `notifications/cancelled`; a call run as a
/// task has its task cancelled (`tasks/cancel`).
async fn cancel(app: &Arc<App>, request: CancelRequest) -> Result<Value, Failure> {
    let task = lock(&app.task_calls).remove(&request.call_id);
    if let Some((client, id)) = task {
        let cancelled = client
            .cancel_task(&id)
            .await
            .map_err(|e| upstream("tasks/cancel", &e))?;
        if let Some(call) = lock(&app.calls).remove(&request.call_id) {
            call.abort();
        }
        return Ok(json!({"cancelled": true, "task": cancelled}));
    }
    match lock(&app.calls).remove(&request.call_id) {
        Some(call) => {
            call.abort();
            Ok(json!({"cancelled": true}))
        }
        None => Err(Failure::new(
            StatusCode::NOT_FOUND,
            format!("no call {} in flight", request.call_id),
        )),
    }
}

/// `tasks/list` of the connection (2025-11-25).
async fn tasks(app: &Arc<App>, request: OnConn) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    let tasks = conn
        .client
        .list_all_tasks()
        .await
        .map_err(|e| upstream("tasks/list", &e))?;
    Ok(json!({ "tasks": tasks }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskRequest {
    conn: u64,
    task_id: String,
}

/// `tasks/cancel` of one task of the connection, from the tasks panel.
async fn task_cancel(app: &Arc<App>, request: TaskRequest) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    let task = conn
        .client
        .cancel_task(&request.task_id)
        .await
        .map_err(|e| upstream("tasks/cancel", &e))?;
    Ok(json!({ "task": task }))
}

/// `tasks/result` of one task of the connection: its tool result (waiting while it runs,
/// within the request timeout).
async fn task_result(app: &Arc<App>, request: TaskRequest) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    let result = conn
        .client
        .tool_task_result(&request.task_id, Some(app.request_timeout))
        .await
        .map_err(|e| upstream("tasks/result", &e))?;
    Ok(json!({ "result": result }))
}

#[derive(Deserialize)]
struct ResendRequest {
    conn: u64,
    method: String,
    #[serde(default)]
    params: Value,
}

/// Send a request again, as the page edited it: any request a client sends in the
/// connection's revision (the stateless era's `_meta` is the client's own, added again).
async fn resend(app: &Arc<App>, request: ResendRequest) -> Result<Value, Failure> {
    use ferry::protocol::methods::{Direction, MethodKind, methods_in};
    let conn = conn(app, request.conn).await?;
    let version = conn.client.version();
    let method = methods_in(version)
        .find(|m| {
            m.name == request.method
                && m.kind == MethodKind::Request
                && m.direction != Direction::ServerToClient
        })
        .ok_or_else(|| {
            bad(format!(
                "{:?} is not a request a client sends in {version}",
                request.method
            ))
        })?;
    let mut params = request.params;
    if let Some(object) = params.as_object_mut() {
        // What the client adds to each request itself.
        if let Some(meta) = object.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.retain(|key, _| !key.starts_with("io.modelcontextprotocol/"));
        }
    } else if !params.is_null() {
        return Err(bad("params must be a JSON object"));
    }
    let started = Instant::now();
    let answer: Result<Value, ClientError> = conn.client.request(method.name, &params).await;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    match answer {
        Ok(result) => Ok(json!({ "result": result, "ms": ms })),
        Err(ClientError::Rpc(error)) => Ok(json!({ "error": error, "ms": ms })),
        Err(e) => Err(upstream(method.name, &e)),
    }
}

/// A stdio server's last stderr lines (what it said as it failed, say).
async fn stderr(app: &Arc<App>, request: OnConn) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    Ok(json!({ "lines": conn.stderr_tail().await }))
}

#[derive(Deserialize)]
struct ReadRequest {
    conn: u64,
    uri: String,
}

async fn read(app: &Arc<App>, request: ReadRequest) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    let result = conn
        .client
        .read_resource(&request.uri)
        .await
        .map_err(|e| upstream("resources/read", &e))?;
    to_json(&result)
}

#[derive(Deserialize)]
struct SubscribeRequest {
    conn: u64,
    uri: String,
    on: bool,
}

/// Subscribe to a resource's updates (session era: `resources/subscribe`; stateless era:
/// a `subscriptions/listen` stream), or stop.
async fn subscribe(app: &Arc<App>, request: SubscribeRequest) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    let (uri, on) = (request.uri.as_str(), request.on);
    let done = match (conn.client.era(), on) {
        (Era::Stateless, _) => conn.listen(uri, on).await,
        (Era::Session, true) => conn.client.subscribe(uri).await,
        (Era::Session, false) => conn.client.unsubscribe(uri).await,
    };
    let what = if on { "subscribe" } else { "unsubscribe" };
    done.map_err(|e| upstream(what, &e))?;
    if conn.client.era() == Era::Session {
        let mut listens = lock(&conn.listens);
        if on {
            listens.entry(uri.to_owned()).or_insert(None);
        } else {
            listens.remove(uri);
        }
    }
    Ok(json!({"subscribed": on}))
}

#[derive(Deserialize)]
struct PromptRequest {
    conn: u64,
    name: String,
    #[serde(default)]
    arguments: BTreeMap<String, String>,
}

async fn prompt(app: &Arc<App>, request: PromptRequest) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    let result = conn
        .client
        .get_prompt(&request.name, request.arguments)
        .await
        .map_err(|e| upstream("prompts/get", &e))?;
    to_json(&result)
}

#[derive(Deserialize)]
struct CompleteRequest {
    conn: u64,
    #[serde(rename = "ref")]
    reference: Reference,
    argument: String,
    #[serde(default)]
    value: String,
    context: Option<BTreeMap<String, String>>,
}

async fn complete(app: &Arc<App>, request: CompleteRequest) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    let result = conn
        .client
        .complete(
            request.reference,
            &request.argument,
            &request.value,
            request.context,
        )
        .await
        .map_err(|e| upstream("completion/complete", &e))?;
    to_json(&result)
}

#[derive(Deserialize)]
struct LevelRequest {
    conn: u64,
    level: LoggingLevel,
}

async fn log_level(app: &Arc<App>, request: LevelRequest) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    conn.client
        .set_log_level(request.level)
        .await
        .map_err(|e| upstream("logging/setLevel", &e))?;
    Ok(json!({"level": request.level}))
}

#[derive(Deserialize)]
struct RootsRequest {
    conn: u64,
    roots: Vec<Root>,
}

/// Replace the roots the client offers, and tell the server they changed.
async fn roots(app: &Arc<App>, request: RootsRequest) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    if let Some(root) = request.roots.iter().find(|r| !r.uri.contains("://")) {
        return Err(bad(format!("a root must be a URI, not {:?}", root.uri)));
    }
    *lock(&conn.roots) = request.roots;
    conn.client
        .roots_changed()
        .await
        .map_err(|e| upstream("notifications/roots/list_changed", &e))?;
    Ok(json!({"roots": *lock(&conn.roots)}))
}

#[derive(Deserialize)]
struct AnswerRequest {
    id: u64,
    /// The result for the server.
    result: Option<Value>,
    /// Or a refusal, with why.
    decline: Option<String>,
}

/// The person's answer to a request of the server, checked against the request's result
/// type before it is passed on.
fn answer(app: &Arc<App>, request: AnswerRequest) -> Result<Value, Failure> {
    let asks = &app.shared.asks;
    let Some(method) = asks.method(request.id) else {
        return Err(Failure::new(
            StatusCode::NOT_FOUND,
            format!(
                "request {} is not waiting (answered already, or timed out)",
                request.id
            ),
        ));
    };
    let reply = match (request.result, request.decline) {
        (_, Some(why)) => Err(why),
        (Some(result), None) => {
            let checked = match method.as_str() {
                "sampling/createMessage" => {
                    serde_json::from_value::<CreateMessageResult>(result.clone()).map(drop)
                }
                _ => serde_json::from_value::<ElicitResult>(result.clone()).map(drop),
            };
            checked.map_err(|e| bad(format!("not a {method} result: {e}")))?;
            Ok(result)
        }
        (None, None) => return Err(bad("give a result or decline")),
    };
    if !asks.answer(request.id, reply) {
        return Err(Failure::new(
            StatusCode::NOT_FOUND,
            format!("request {} is not waiting any more", request.id),
        ));
    }
    Ok(json!({"answered": request.id}))
}

async fn ping(app: &Arc<App>, request: OnConn) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    let started = Instant::now();
    conn.client.ping().await.map_err(|e| upstream("ping", &e))?;
    Ok(json!({"ms": started.elapsed().as_secs_f64() * 1000.0}))
}

/// `ferry check --json` on the connection's server, run as a process of its own (its
/// connections are fresh ones), the server named with the same options (a named server's
/// entry looked up again, as a reconnection would).
async fn check(app: &Arc<App>, request: OnConn) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    let exe = std::env::current_exe().map_err(|e| {
        Failure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot find the ferry binary: {e}"),
        )
    })?;
    let mut words: Vec<String> = vec!["check".into(), "--json".into()];
    words.extend(conn.common.target.to_args());
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(exe)
            .args(&words)
            .stdin(std::process::Stdio::null())
            .output()
    })
    .await
    .map_err(|_| Failure::new(StatusCode::INTERNAL_SERVER_ERROR, "the check stopped"))?
    .map_err(|e| {
        Failure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot run ferry check: {e}"),
        )
    })?;
    match serde_json::from_slice::<Value>(&output.stdout) {
        Ok(report) => Ok(json!({"report": report, "exit": output.status.code()})),
        Err(_) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            Err(Failure::new(
                StatusCode::BAD_GATEWAY,
                format!("ferry check failed ({}): {}", output.status, stderr.trim()),
            ))
        }
    }
}

#[derive(Deserialize)]
struct ConnectRequest {
    /// A stdio server: the program and its arguments.
    #[serde(default)]
    command: Vec<String>,
    /// Or an HTTP server.
    url: Option<String>,
    /// Its headers, `Name: value`.
    #[serde(default)]
    headers: Vec<String>,
    /// The code the terminal showed for this exact request (absent: ask for one).
    code: Option<String>,
}

/// A connection the page asked for, waiting for the code printed in the terminal.
pub(crate) struct Confirmation {
    code: String,
    /// The request it is for, exactly (command, URL and headers).
    request: String,
    until: Instant,
}

/// How long a printed code stays good.
const CONFIRMATION_TTL: Duration = Duration::from_secs(120);

/// Connect to another server: only with `--allow-spawn`, and only with the code the
/// terminal that runs `ferry inspect` printed beside this exact command. Asked without a
/// code, it prints one (6 digits, good once, for 2 minutes) and answers
/// `{"confirm": ...}`; the page has the person type it. The terminal is the one channel a
/// holder of the page's cookie (or of a stolen launch URL) does not have: the page alone
/// cannot start anything.
async fn connect(app: &Arc<App>, request: ConnectRequest) -> Result<Value, Failure> {
    if !app.allow_spawn {
        return Err(Failure::forbidden(
            "connecting to other servers from the page needs ferry inspect --allow-spawn",
        ));
    }
    let exact = serde_json::to_string(&(&request.command, &request.url, &request.headers))
        .unwrap_or_default();
    let Some(code) = &request.code else {
        let code = confirmation_code().map_err(|e| {
            Failure::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("no random code: {e}"),
            )
        })?;
        let shown = match &request.url {
            Some(url) => format!("connect to {url}"),
            None => format!("run {}", crate::target::shown(&request.command)),
        };
        crate::stderr::note!(
            "ferry inspect: the page asks to {shown}\n  to allow it, type this code in the \
             page: {code}"
        );
        *lock(&app.confirming) = Some(Confirmation {
            code,
            request: exact,
            until: Instant::now() + CONFIRMATION_TTL,
        });
        return Ok(json!({
            "confirm": "type the code shown in the terminal that runs ferry inspect"
        }));
    };
    // A code is good once, for its own request: a wrong guess uses it up.
    let pending = lock(&app.confirming).take();
    let confirmed = pending.is_some_and(|p| {
        super::same(code.as_bytes(), p.code.as_bytes())
            && p.request == exact
            && Instant::now() < p.until
    });
    if !confirmed {
        return Err(Failure::forbidden(
            "wrong or expired code: nothing was run; ask again for a new code",
        ));
    }
    let common = match (request.url, request.command.is_empty()) {
        (Some(url), true) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(bad(format!("{url:?} is not an http:// or https:// URL")));
            }
            let headers = request
                .headers
                .iter()
                .map(|h| args::header(h))
                .collect::<Result<Vec<_>, _>>()
                .map_err(bad)?;
            app.base.retarget(Some(url), headers, Vec::new())
        }
        (None, false) => {
            if request.command[0].trim().is_empty() {
                return Err(bad("the command is empty"));
            }
            app.base.retarget(None, Vec::new(), request.command)
        }
        _ => return Err(bad("give either a command or a url")),
    };
    let conn = app
        .open(common)
        .await
        .map_err(|e| Failure::new(StatusCode::BAD_GATEWAY, e))?;
    Ok(conn.info())
}

/// Close the connection and open it again, the same way, under the same id.
async fn reconnect(app: &Arc<App>, request: OnConn) -> Result<Value, Failure> {
    let old = conn(app, request.conn).await?;
    app.conns.lock().await.remove(&old.id);
    old.close().await;
    let roots = lock(&old.roots).clone();
    let fresh = Conn::open(
        &app.shared,
        old.id,
        old.common.clone(),
        roots,
        app.request_timeout,
    )
    .await;
    let fresh = match fresh {
        Ok(fresh) => Arc::new(fresh),
        Err(e) => {
            app.shared
                .hub
                .emit(json!({"type": "closed", "conn": old.id, "why": e}));
            return Err(Failure::new(StatusCode::BAD_GATEWAY, e));
        }
    };
    app.conns.lock().await.insert(fresh.id, fresh.clone());
    let info = fresh.info();
    app.shared
        .hub
        .emit(json!({"type": "connection", "conn": fresh.id, "info": info}));
    Ok(info)
}

async fn disconnect(app: &Arc<App>, request: OnConn) -> Result<Value, Failure> {
    let conn = conn(app, request.conn).await?;
    app.conns.lock().await.remove(&conn.id);
    conn.close().await;
    app.shared
        .hub
        .emit(json!({"type": "closed", "conn": conn.id, "why": "disconnected"}));
    Ok(json!({"closed": conn.id}))
}
