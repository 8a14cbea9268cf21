//! Tasks (2025-11-25): a `tools/call` with `params.task` is answered at once with the task
//! it created; the tool runs in the background; the client polls `tasks/get`, waits on
//! `tasks/result`, lists with `tasks/list` and stops with `tasks/cancel`.
//!
//! A task's tool reports progress with the request's token for the task's whole life,
//! and its requests to the client (sampling, elicitation, roots) name the task in their
//! `_meta` (`io.modelcontextprotocol/related-task`); the task is `input_required` while
//! one is pending, as the spec asks, so the client knows to answer.
//!
//! A tool opts in with `execution.taskSupport` (`optional` or `required`) in its
//! description; the server declares the `tasks` capability exactly when one does. Tasks
//! belong to the connection that created them (the requestor), so one client never sees
//! another's. Limits, per connection: [`MAX_ACTIVE_TASKS`] running at once,
//! [`MAX_STORED_TASKS`] kept (the oldest finished ones are forgotten first), a retention of
//! at most [`MAX_TASK_TTL`] ([`DEFAULT_TASK_TTL`] when the client asks none); a task
//! still running when its retention ends is cancelled, and every task is cancelled when
//! its connection closes.
//!
//! A transport that shares its sessions with other instances of the server gives each
//! session a [`TaskShare`]: tasks are then saved there when they start and when they end,
//! and `tasks/get`, `tasks/list`, `tasks/cancel` and `tasks/result` read them there, so
//! they work on every instance whichever one runs the task.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use chacha20poly1305::aead::OsRng;
use chacha20poly1305::aead::rand_core::RngCore;
use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::{
    CallToolRequestParams, CreateTaskResult, ListTasksResult, RelatedTaskMetadata,
    ServerTaskRequests, ServerTasksCapability, Task, TaskMetadata, TaskResult, TaskStatus,
    TaskStatusNotificationParams, TaskSupport, ToolsTaskRequests, keys,
};
use indexmap::IndexMap;
use tokio::sync::watch;

use super::context::Context;
use super::core::Server;
use super::pagination::page;
use super::pipeline::Around;
use super::reply::Call;
use super::tools;
use crate::engine::{
    Cancellation, HandlerResult, ProgressReporter, ResultJson, SharedTask, TaskShare, terminal,
};

/// Tasks one connection may have running at once.
pub const MAX_ACTIVE_TASKS: usize = 64;
/// Tasks (running or finished) one connection keeps.
pub const MAX_STORED_TASKS: usize = 1024;
/// The longest retention a client may ask for.
pub const MAX_TASK_TTL: Duration = Duration::from_secs(3600);
/// The retention of a task whose request names none.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(300);
/// The polling interval suggested to clients.
const POLL_INTERVAL_MS: u64 = 500;
/// How often `tasks/result` reads a task running on another instance.
const SHARED_POLL: Duration = Duration::from_millis(200);

/// One task: its state, its outcome once finished, and how to stop it.
struct Entry {
    state: Mutex<State>,
    expires: Instant,
    cancel: Cancellation,
    finished: watch::Sender<bool>,
}

struct State {
    task: Task,
    outcome: Option<HandlerResult>,
}

impl Entry {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn snapshot(&self) -> Task {
        self.lock().task.clone()
    }

    fn is_terminal(&self) -> bool {
        terminal(self.lock().task.status)
    }
}

fn unknown(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("no task {id:?}"))
}

/// The tasks of one connection: those running here, and where the session's tasks are
/// shared, if they are.
pub(crate) struct TaskStore {
    entries: Mutex<IndexMap<String, Arc<Entry>>>,
    /// Set when the connection ends; every task is cancelled then, and a task started
    /// after it at once.
    closed: AtomicBool,
    share: Option<Arc<dyn TaskShare>>,
}

impl Default for TaskStore {
    fn default() -> Self {
        TaskStore::new(None)
    }
}

impl TaskStore {
    /// A connection's tasks, kept in `share` too when it is given.
    pub(crate) fn new(share: Option<Arc<dyn TaskShare>>) -> Self {
        TaskStore {
            entries: Mutex::new(IndexMap::new()),
            closed: AtomicBool::new(false),
            share,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, IndexMap<String, Arc<Entry>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forget expired tasks (cancelling those still running).
    fn purge(entries: &mut IndexMap<String, Arc<Entry>>) {
        let now = Instant::now();
        entries.retain(|_, entry| {
            let keep = entry.expires > now;
            if !keep {
                entry.cancel.cancel();
            }
            keep
        });
    }

    fn get(&self, id: &str) -> Result<Arc<Entry>, ErrorObject> {
        let mut entries = self.lock();
        Self::purge(&mut entries);
        entries.get(id).cloned().ok_or_else(|| unknown(id))
    }

    /// Stop every task: the connection is gone.
    pub(crate) fn close(&self) {
        // Set before the entries are read: a task inserted after this reads it (`start`).
        self.closed.store(true, Ordering::SeqCst);
        for entry in self.lock().values() {
            entry.cancel.cancel();
        }
    }
}

/// The `tasks` capability a server with `tools` declares: present when a tool can run as
/// a task.
pub(crate) fn capability(tools: &[&ferry_protocol::types::Tool]) -> Option<ServerTasksCapability> {
    tools
        .iter()
        .any(|t| supports_tasks(t))
        .then(|| ServerTasksCapability {
            list: Some(Default::default()),
            cancel: Some(Default::default()),
            requests: Some(ServerTaskRequests {
                tools: Some(ToolsTaskRequests {
                    call: Some(Default::default()),
                }),
            }),
        })
}

/// Whether `tool` can run as a task.
pub(crate) fn supports_tasks(tool: &ferry_protocol::types::Tool) -> bool {
    matches!(support(tool), TaskSupport::Optional | TaskSupport::Required)
}

fn support(tool: &ferry_protocol::types::Tool) -> TaskSupport {
    tool.execution
        .as_ref()
        .and_then(|e| e.task_support)
        .unwrap_or_default()
}

/// Whether tasks apply to this call: the revision has them and the server offers them.
pub(crate) fn offered(server: &Server, call: &Call) -> bool {
    call.version.has(ferry_protocol::Feature::Tasks) && server.offers_tasks()
}

/// Whether `tool` must be called as a task (a plain call is refused with `-32601` in
/// revisions that have tasks: see `tools::call`). A tool that requires tasks makes the
/// server offer them.
pub(crate) fn requires_task(tool: &ferry_protocol::types::Tool) -> bool {
    support(tool) == TaskSupport::Required
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

fn task_id() -> String {
    let mut bytes = [0u8; 16];
    OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `tools/call` with a task: create it, run the tool in the background, answer at once
/// (once the task is shared, where it is).
pub(crate) async fn start(
    server: &Server,
    call: &Call,
    store: &Arc<TaskStore>,
    mut params: CallToolRequestParams,
    task: TaskMetadata,
    mut cx: Context,
) -> HandlerResult {
    let known = server.tools().snapshot();
    let Some(entry) = known.entries.get(&params.name) else {
        return Err(tools::unknown_tool(&params.name));
    };
    if support(entry.head()) == TaskSupport::Forbidden {
        return Err(ErrorObject::method_not_found(&format!(
            "tools/call of {:?} as a task (the tool does not support tasks)",
            params.name
        )));
    }
    let ttl = task
        .ttl
        .map_or(DEFAULT_TASK_TTL, Duration::from_millis)
        .min(MAX_TASK_TTL);
    let now = now_rfc3339();
    let id = task_id();
    let created = Task {
        task_id: id.clone(),
        status: TaskStatus::Working,
        status_message: None,
        created_at: now.clone(),
        last_updated_at: now,
        ttl: Some(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
        poll_interval: Some(POLL_INTERVAL_MS),
    };
    let cancel = Cancellation::new();
    let entry = Arc::new(Entry {
        state: Mutex::new(State {
            task: created.clone(),
            outcome: None,
        }),
        expires: Instant::now() + ttl,
        cancel: cancel.clone(),
        finished: watch::channel(false).0,
    });
    {
        let mut entries = store.lock();
        TaskStore::purge(&mut entries);
        let active = entries.values().filter(|e| !e.is_terminal()).count();
        if active >= MAX_ACTIVE_TASKS {
            return Err(ErrorObject::invalid_request(format!(
                "too many tasks running on this connection (limit {MAX_ACTIVE_TASKS})"
            )));
        }
        while entries.len() >= MAX_STORED_TASKS {
            let oldest_done = entries.iter().position(|(_, e)| e.is_terminal());
            match oldest_done {
                Some(i) => {
                    entries.shift_remove_index(i);
                }
                None => break,
            }
        }
        entries.insert(id.clone(), Arc::clone(&entry));
        if store.closed.load(Ordering::SeqCst) {
            cancel.cancel();
        }
    }
    if let Some(share) = &store.share {
        let shared = SharedTask {
            task: created.clone(),
            outcome: None,
        };
        if let Err(error) = share.save(&shared).await {
            store.lock().shift_remove(&id);
            return Err(error);
        }
        share.running(&id, cancel.clone());
    }
    // The tool runs past this request's response: its own cancellation, and a reporter
    // of its own (the request's token stays valid for the task's life).
    cx.cancel = cancel.clone();
    cx.progress = cx
        .progress
        .take()
        .map(|p| ProgressReporter::with_task(p.token().clone(), cx.peer.clone(), Some(id.clone())));
    let server_for_task = server.clone();
    let call_for_task = *call;
    let peer = cx.peer.clone();
    let share = store.share.clone();
    let link = Arc::new(TaskLink {
        id: id.clone(),
        entry: Arc::clone(&entry),
        share: share.clone(),
        peer: peer.clone(),
        asking: std::sync::atomic::AtomicUsize::new(0),
    });
    tokio::spawn(RUNNING.scope(link, async move {
        let arguments = tools::Arguments::Object(params.arguments.take());
        let around = Around::of(&cx);
        let outcome = match tools::call(
            &server_for_task,
            call_for_task,
            &params.name,
            arguments,
            cx,
            true,
        ) {
            Err(error) => Some(Err(error)),
            Ok(running) => tokio::select! {
                () = cancel.cancelled() => None,
                outcome = around.run(&server_for_task, call_for_task, running) => Some(outcome),
            },
        };
        let task = finish(&entry, outcome, share.as_deref()).await;
        let params = TaskStatusNotificationParams { task, meta: None };
        let _ = peer.notify("notifications/tasks/status", &params).await;
    }));
    server.reply(
        CreateTaskResult {
            task: created,
            meta: None,
        },
        call.version,
    )
}

tokio::task_local! {
    /// The task whose tool runs on this tokio task: what its input requests belong to.
    static RUNNING: Arc<TaskLink>;
}

/// A running task as its tool's input requests see it: they name it, and it waits for
/// input (`input_required`) while any is pending.
pub(crate) struct TaskLink {
    id: String,
    entry: Arc<Entry>,
    share: Option<Arc<dyn TaskShare>>,
    peer: crate::engine::Peer,
    /// Input requests pending.
    asking: std::sync::atomic::AtomicUsize,
}

/// The task the current tool runs as, if it runs as one.
pub(crate) fn current() -> Option<Arc<TaskLink>> {
    RUNNING.try_with(Arc::clone).ok()
}

impl TaskLink {
    /// The task's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// An input request of the task's tool starts: the task waits for input.
    pub(crate) async fn asking(&self) {
        if self.asking.fetch_add(1, Ordering::SeqCst) == 0 {
            self.set(TaskStatus::InputRequired).await;
        }
    }

    /// An input request of the task's tool ended: the task works again when none is left.
    pub(crate) async fn answered(&self) {
        if self.asking.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.set(TaskStatus::Working).await;
        }
    }

    /// Move a task that has not ended to `status` (shared, where it is), and say so.
    async fn set(&self, status: TaskStatus) {
        let task = {
            let mut state = self.entry.lock();
            if terminal(state.task.status) || state.task.status == status {
                return;
            }
            state.task.status = status;
            state.task.status_message = (status == TaskStatus::InputRequired)
                .then(|| "The task waits for the client's input.".to_owned());
            state.task.last_updated_at = now_rfc3339();
            state.task.clone()
        };
        if let Some(share) = &self.share {
            let shared = SharedTask {
                task: task.clone(),
                outcome: None,
            };
            if let Err(error) = share.save(&shared).await {
                tracing::warn!("cannot share task {}'s status: {}", self.id, error.message);
            }
        }
        let params = TaskStatusNotificationParams { task, meta: None };
        let _ = self
            .peer
            .notify("notifications/tasks/status", &params)
            .await;
    }
}

/// Record a task's end (`None`: cancelled), in the share first if there is one (which
/// may have it cancelled already: then that is its end), and wake `tasks/result` waiters.
async fn finish(
    entry: &Entry,
    outcome: Option<HandlerResult>,
    share: Option<&dyn TaskShare>,
) -> Task {
    let current = entry.snapshot();
    if terminal(current.status) {
        entry.finished.send_replace(true);
        return current;
    }
    let mut ended = SharedTask {
        task: ended(current, &outcome),
        outcome,
    };
    if let Some(share) = share {
        match share.save(&ended).await {
            Ok(kept) => ended = kept,
            Err(error) => tracing::warn!(
                "cannot share the end of task {}: {}",
                ended.task.task_id,
                error.message
            ),
        }
    }
    let mut state = entry.lock();
    if !terminal(state.task.status) {
        state.task = ended.task;
        state.outcome = ended.outcome;
    }
    let task = state.task.clone();
    drop(state);
    entry.finished.send_replace(true);
    task
}

/// `task` ended with `outcome` (`None`: cancelled).
fn ended(mut task: Task, outcome: &Option<HandlerResult>) -> Task {
    let (status, message) = match outcome {
        None => (
            TaskStatus::Cancelled,
            Some("The task was cancelled.".to_owned()),
        ),
        Some(Err(error)) => (TaskStatus::Failed, Some(error.message.clone())),
        Some(Ok(raw)) if is_error_result(raw) => (
            TaskStatus::Failed,
            Some("The tool reported an error.".to_owned()),
        ),
        Some(Ok(_)) => (TaskStatus::Completed, None),
    };
    task.status = status;
    task.status_message = message;
    task.last_updated_at = now_rfc3339();
    task
}

fn is_error_result(raw: &ResultJson) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    serde_json::from_str::<Probe>(raw.get()).is_ok_and(|p| p.is_error == Some(true))
}

/// `tasks/get`.
pub(crate) async fn get(
    server: &Server,
    call: &Call,
    store: &TaskStore,
    id: &str,
) -> HandlerResult {
    let task = match &store.share {
        Some(share) => share.load(id).await?.ok_or_else(|| unknown(id))?.task,
        None => store.get(id)?.snapshot(),
    };
    server.reply(TaskResult { task, meta: None }, call.version)
}

/// `tasks/cancel`: a finished task cannot be cancelled (`-32602`).
pub(crate) async fn cancel(
    server: &Server,
    call: &Call,
    store: &TaskStore,
    id: &str,
) -> HandlerResult {
    let finished = || ErrorObject::invalid_params(format!("task {id:?} has already finished"));
    let task = match &store.share {
        Some(share) => {
            let kept = share.load(id).await?.ok_or_else(|| unknown(id))?;
            if kept.ended() {
                return Err(finished());
            }
            let cancelled = SharedTask {
                task: ended(kept.task, &None),
                outcome: None,
            };
            let kept = share.save(&cancelled).await?;
            if kept.task.status != TaskStatus::Cancelled {
                return Err(finished());
            }
            // The runner, here or elsewhere, stops; its end finds the task cancelled.
            share.stop(id).await;
            kept.task
        }
        None => {
            let entry = store.get(id)?;
            if entry.is_terminal() {
                return Err(finished());
            }
            entry.cancel.cancel();
            finish(&entry, None, None).await
        }
    };
    server.reply(TaskResult { task, meta: None }, call.version)
}

/// `tasks/list`: this connection's tasks (or the session's, where they are shared),
/// oldest first.
pub(crate) async fn list(
    server: &Server,
    call: &Call,
    store: &TaskStore,
    cursor: Option<&str>,
) -> HandlerResult {
    let tasks: Vec<Task> = match &store.share {
        Some(share) => share.list().await?,
        None => {
            let mut entries = store.lock();
            TaskStore::purge(&mut entries);
            entries.values().map(|e| e.snapshot()).collect()
        }
    };
    let page = page(tasks.len(), cursor, server.page_size(), "tasks", 0)?;
    server.reply(
        ListTasksResult {
            tasks: tasks[page.range].to_vec(),
            next_cursor: page.next,
            meta: None,
        },
        call.version,
    )
}

/// `tasks/result`: wait until the task ends, then answer what its request would have
/// (the tool's result, or its error), naming the task in `_meta`.
pub(crate) async fn result(store: &TaskStore, id: &str) -> HandlerResult {
    let outcome = match (store.get(id), &store.share) {
        // Running here (or ended here): its end is known here first.
        (Ok(entry), _) => {
            let mut finished = entry.finished.subscribe();
            let _ = finished.wait_for(|done| *done).await;
            entry.lock().outcome.clone()
        }
        (Err(error), None) => return Err(error),
        (Err(_), Some(share)) => loop {
            let kept = share.load(id).await?.ok_or_else(|| unknown(id))?;
            if kept.ended() {
                break kept.outcome;
            }
            tokio::time::sleep(SHARED_POLL).await;
        },
    };
    match outcome {
        None => Err(ErrorObject::invalid_params(format!(
            "task {id:?} was cancelled: it has no result"
        ))),
        Some(Err(error)) => Err(error),
        Some(Ok(raw)) => with_related_task(&raw, id),
    }
}

fn with_related_task(raw: &ResultJson, id: &str) -> HandlerResult {
    let mut value: serde_json::Value =
        serde_json::from_str(raw.get()).map_err(ErrorObject::internal_error)?;
    if let serde_json::Value::Object(map) = &mut value {
        let meta = map
            .entry("_meta")
            .or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let serde_json::Value::Object(meta) = meta {
            let related = RelatedTaskMetadata {
                task_id: id.to_owned(),
            };
            meta.insert(
                keys::RELATED_TASK.into(),
                serde_json::to_value(related).map_err(ErrorObject::internal_error)?,
            );
        }
    }
    ResultJson::from_value(&value).map_err(ErrorObject::internal_error)
}

/// Tasks by connection are kept in the session; nothing is global.
pub(crate) type Tasks = Arc<TaskStore>;
