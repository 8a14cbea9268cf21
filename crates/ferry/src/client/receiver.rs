//! The client as the receiver of tasks (2025-11-25): a server may ask for
//! `sampling/createMessage` or `elicitation/create` as a task. The client then answers at
//! once with the task it created, runs its handler in the background, and answers the
//! server's `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` about it; the end
//! of a task is also told with `notifications/tasks/status`.
//!
//! Limits: [`MAX_ACTIVE_TASKS`] running at once, [`MAX_STORED_TASKS`] kept (the oldest
//! finished first forgotten), a retention of at most [`MAX_TASK_TTL`]
//! ([`DEFAULT_TASK_TTL`] when the server asks none); a task whose retention ends is
//! cancelled and forgotten. `tasks/list` answers in one page (the store is small).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::{
    CreateTaskResult, InputRequest, ListTasksResult, RelatedTaskMetadata, Task, TaskMetadata,
    TaskResult, TaskStatus, TaskStatusNotificationParams, keys,
};
use indexmap::IndexMap;
use serde_json::Value;
use tokio::sync::watch;

use super::handlers::Handlers;
use crate::engine::Peer;

/// Tasks the server may have running on this client at once.
pub const MAX_ACTIVE_TASKS: usize = 16;
/// Tasks (running or finished) the client keeps for the server.
pub const MAX_STORED_TASKS: usize = 256;
/// The longest retention the server may ask for.
pub const MAX_TASK_TTL: Duration = Duration::from_secs(3600);
/// The retention of a task whose request names none.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(300);
/// The polling interval suggested to the server.
const POLL_INTERVAL_MS: u64 = 500;

struct Entry {
    state: Mutex<State>,
    expires: Instant,
    finished: watch::Sender<bool>,
    abort: tokio::task::AbortHandle,
}

struct State {
    task: Task,
    outcome: Option<Result<Value, ErrorObject>>,
}

impl Entry {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_terminal(&self) -> bool {
        terminal(self.lock().task.status)
    }
}

/// Whether a task in `status` has ended: it never changes again.
pub(super) fn terminal(status: TaskStatus) -> bool {
    matches!(
        status,
        TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
    )
}

fn unknown(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("no task {id:?}"))
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// The tasks the server started on this client.
#[derive(Default)]
pub(crate) struct ReceivedTasks {
    entries: Mutex<IndexMap<String, Arc<Entry>>>,
    next: std::sync::atomic::AtomicU64,
}

impl Drop for ReceivedTasks {
    fn drop(&mut self) {
        for entry in self.lock().values() {
            entry.abort.abort();
        }
    }
}

impl ReceivedTasks {
    fn lock(&self) -> std::sync::MutexGuard<'_, IndexMap<String, Arc<Entry>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forget expired tasks (stopping those still running).
    fn purge(entries: &mut IndexMap<String, Arc<Entry>>) {
        let now = Instant::now();
        entries.retain(|_, entry| {
            let keep = entry.expires > now;
            if !keep {
                entry.abort.abort();
            }
            keep
        });
    }

    fn get(&self, id: &str) -> Result<Arc<Entry>, ErrorObject> {
        let mut entries = self.lock();
        Self::purge(&mut entries);
        entries.get(id).cloned().ok_or_else(|| unknown(id))
    }

    /// Run `request` as a task: answer with the task, run the handler in the background.
    pub(crate) fn start(
        self: &Arc<Self>,
        request: InputRequest,
        meta: TaskMetadata,
        handlers: Handlers,
        peer: Peer,
    ) -> Result<Value, ErrorObject> {
        let ttl = meta
            .ttl
            .map_or(DEFAULT_TASK_TTL, Duration::from_millis)
            .min(MAX_TASK_TTL);
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = format!("client-task-{n}");
        let now = now_rfc3339();
        let created = Task {
            task_id: id.clone(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now.clone(),
            last_updated_at: now,
            ttl: Some(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
            poll_interval: Some(POLL_INTERVAL_MS),
        };
        let mut entries = self.lock();
        Self::purge(&mut entries);
        if entries.values().filter(|e| !e.is_terminal()).count() >= MAX_ACTIVE_TASKS {
            return Err(ErrorObject::invalid_request(format!(
                "too many tasks running on this client (limit {MAX_ACTIVE_TASKS})"
            )));
        }
        while entries.len() >= MAX_STORED_TASKS {
            match entries.iter().position(|(_, e)| e.is_terminal()) {
                Some(i) => {
                    entries.shift_remove_index(i);
                }
                None => break,
            }
        }
        let (finished, _) = watch::channel(false);
        let store = Arc::downgrade(self);
        let task_id = id.clone();
        let running = tokio::spawn(async move {
            let outcome = handlers.answer(request).await;
            let Some(store) = store.upgrade() else { return };
            let Ok(entry) = store.get(&task_id) else {
                return;
            };
            let task = {
                let mut state = entry.lock();
                if terminal(state.task.status) {
                    return;
                }
                state.task.status = match &outcome {
                    Ok(_) => TaskStatus::Completed,
                    Err(_) => TaskStatus::Failed,
                };
                state.task.status_message = outcome.as_ref().err().map(|e| e.message.clone());
                state.task.last_updated_at = now_rfc3339();
                state.outcome = Some(outcome);
                state.task.clone()
            };
            entry.finished.send_replace(true);
            let params = TaskStatusNotificationParams { task, meta: None };
            let _ = peer.notify("notifications/tasks/status", &params).await;
        });
        entries.insert(
            id,
            Arc::new(Entry {
                state: Mutex::new(State {
                    task: created.clone(),
                    outcome: None,
                }),
                expires: Instant::now() + ttl,
                finished,
                abort: running.abort_handle(),
            }),
        );
        serde_json::to_value(CreateTaskResult {
            task: created,
            meta: None,
        })
        .map_err(ErrorObject::internal_error)
    }

    /// `tasks/get`.
    pub(crate) fn status(&self, id: &str) -> Result<Value, ErrorObject> {
        let task = self.get(id)?.lock().task.clone();
        serde_json::to_value(TaskResult { task, meta: None }).map_err(ErrorObject::internal_error)
    }

    /// `tasks/list`: every task kept, oldest first, in one page.
    pub(crate) fn list(&self) -> Result<Value, ErrorObject> {
        let mut entries = self.lock();
        Self::purge(&mut entries);
        let tasks = entries.values().map(|e| e.lock().task.clone()).collect();
        serde_json::to_value(ListTasksResult {
            tasks,
            next_cursor: None,
            meta: None,
        })
        .map_err(ErrorObject::internal_error)
    }

    /// `tasks/cancel`: a finished task cannot be cancelled (`-32602`).
    pub(crate) fn cancel(&self, id: &str) -> Result<Value, ErrorObject> {
        let entry = self.get(id)?;
        let task = {
            let mut state = entry.lock();
            if terminal(state.task.status) {
                return Err(ErrorObject::invalid_params(format!(
                    "task {id:?} has already finished"
                )));
            }
            entry.abort.abort();
            state.task.status = TaskStatus::Cancelled;
            state.task.status_message = Some("The task was cancelled.".to_owned());
            state.task.last_updated_at = now_rfc3339();
            state.task.clone()
        };
        entry.finished.send_replace(true);
        serde_json::to_value(TaskResult { task, meta: None }).map_err(ErrorObject::internal_error)
    }

    /// `tasks/result`: wait until the task ends, then answer what its request would have,
    /// naming the task in `_meta`.
    pub(crate) async fn result(&self, id: &str) -> Result<Value, ErrorObject> {
        let entry = self.get(id)?;
        let mut finished = entry.finished.subscribe();
        let _ = finished.wait_for(|done| *done).await;
        let outcome = entry.lock().outcome.clone();
        match outcome {
            None => Err(ErrorObject::invalid_params(format!(
                "task {id:?} was cancelled: it has no result"
            ))),
            Some(Err(error)) => Err(error),
            Some(Ok(mut value)) => {
                if let Value::Object(map) = &mut value {
                    let meta = map
                        .entry("_meta")
                        .or_insert_with(|| Value::Object(Default::default()));
                    if let Value::Object(meta) = meta {
                        let related = RelatedTaskMetadata {
                            task_id: id.to_owned(),
                        };
                        meta.insert(
                            keys::RELATED_TASK.into(),
                            serde_json::to_value(related).map_err(ErrorObject::internal_error)?,
                        );
                    }
                }
                Ok(value)
            }
        }
    }
}
