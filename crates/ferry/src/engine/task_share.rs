//! Tasks (2025-11-25 `tasks/*`) kept where every instance of a server sees them. A
//! transport that shares its sessions with other instances hands the backend one
//! [`TaskShare`] per session ([`Backend::connect_shared`](super::Backend::connect_shared)),
//! so a task started on one instance is polled, awaited, listed and cancelled on any.

use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::{Task, TaskStatus};
use futures_util::future::BoxFuture;

use super::{Cancellation, HandlerResult};

/// A task as shared: its state and, once it ended with one, its outcome (what its
/// `tools/call` would have answered: the tool's result or the request's error).
#[derive(Clone, Debug)]
pub struct SharedTask {
    /// The task's state.
    pub task: Task,
    /// Its outcome; `None` while it runs and when it was cancelled.
    pub outcome: Option<HandlerResult>,
}

impl SharedTask {
    /// Whether the task has ended (completed, failed or cancelled): a share never changes
    /// an ended task.
    pub fn ended(&self) -> bool {
        terminal(self.task.status)
    }
}

/// Whether a task in `status` has ended: it never changes again.
pub(crate) fn terminal(status: TaskStatus) -> bool {
    matches!(
        status,
        TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
    )
}

/// The tasks of one session, kept where every instance of the server reads them.
///
/// The instance that starts a task [`save`](TaskShare::save)s it, says it runs there
/// ([`running`](TaskShare::running)) and saves it again when it ends; any instance
/// [`load`](TaskShare::load)s or [`list`](TaskShare::list)s it, and
/// [`stop`](TaskShare::stop)s it after saving it cancelled. Failures (the store is
/// unreachable) are JSON-RPC errors for the request that needed the store.
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
/// use ferry::engine::{Cancellation, SharedTask, TaskShare};
/// use ferry::protocol::jsonrpc::ErrorObject;
/// use ferry::protocol::types::Task;
/// use futures_util::future::BoxFuture;
///
/// /// One process's tasks, with the runners to stop.
/// #[derive(Default)]
/// struct Local {
///     tasks: Mutex<Vec<SharedTask>>,
///     running: Mutex<HashMap<String, Cancellation>>,
/// }
///
/// impl TaskShare for Local {
///     fn save<'a>(&'a self, task: &'a SharedTask) -> BoxFuture<'a, Result<SharedTask, ErrorObject>> {
///         let mut tasks = self.tasks.lock().unwrap();
///         let kept = match tasks.iter_mut().find(|t| t.task.task_id == task.task.task_id) {
///             Some(kept) if kept.ended() => kept.clone(),
///             Some(kept) => { *kept = task.clone(); kept.clone() }
///             None => { tasks.push(task.clone()); task.clone() }
///         };
///         Box::pin(std::future::ready(Ok(kept)))
///     }
///     fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SharedTask>, ErrorObject>> {
///         let tasks = self.tasks.lock().unwrap();
///         let found = tasks.iter().find(|t| t.task.task_id == id).cloned();
///         Box::pin(std::future::ready(Ok(found)))
///     }
///     fn list(&self) -> BoxFuture<'_, Result<Vec<Task>, ErrorObject>> {
///         let tasks = self.tasks.lock().unwrap();
///         Box::pin(std::future::ready(Ok(tasks.iter().map(|t| t.task.clone()).collect())))
///     }
///     fn running(&self, id: &str, cancel: Cancellation) {
///         self.running.lock().unwrap().insert(id.to_owned(), cancel);
///     }
///     fn stop<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()> {
///         if let Some(cancel) = self.running.lock().unwrap().remove(id) {
///             cancel.cancel();
///         }
///         Box::pin(std::future::ready(()))
///     }
/// }
/// let share: std::sync::Arc<dyn TaskShare> = std::sync::Arc::new(Local::default());
/// # drop(share);
/// ```
pub trait TaskShare: Send + Sync + 'static {
    /// Keep `task`, unless the kept one has already ended (it was cancelled on another
    /// instance, say): the task as kept from now on. A share may keep less than it was
    /// given (an outcome too large for it becomes a failure that says so).
    fn save<'a>(&'a self, task: &'a SharedTask) -> BoxFuture<'a, Result<SharedTask, ErrorObject>>;

    /// The session's task `id`, or `None` when it has none by that id (never had, or
    /// forgotten after its retention). A task whose instance stopped before the task
    /// ended is reported failed.
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SharedTask>, ErrorObject>>;

    /// The session's tasks, oldest first.
    fn list(&self) -> BoxFuture<'_, Result<Vec<Task>, ErrorObject>>;

    /// Task `id` runs on this instance until it is saved ended: `cancel` stops it when
    /// any instance calls [`stop`](TaskShare::stop).
    fn running(&self, id: &str, cancel: Cancellation);

    /// Stop task `id` wherever it runs (best effort: an instance that misses it still
    /// finds the task cancelled when it saves the task's end).
    fn stop<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()>;
}
