//! Tasks from the client (2025-11-25): a `tools/call` run as a task is answered at once
//! with the task the server created; [`ToolTask`] follows it (`tasks/get` at the server's
//! polling interval, woken early by `notifications/tasks/status`), passes its progress on
//! (the request's progress token stays valid for the task's life), answers the server's
//! requests while the task waits for input (`tasks/result` is sent as soon as the task
//! is `input_required`, as the spec advises) and returns the tool's result.
//!
//! Tasks are a feature of the 2025-11-25 revision only (2026-07-28 moved them to an
//! extension): on other revisions these calls fail with [`ClientError::NotInRevision`]
//! before anything is sent.

use std::time::Duration;

use ferry_protocol::Feature;
use ferry_protocol::methods::ServerNotification;
use ferry_protocol::types::{
    CallToolRequestParams, CallToolResult, CreateTaskResult, ListTasksResult,
    ProgressNotificationParams, ProgressToken, RequestMeta, Task, TaskIdParams, TaskMetadata,
    TaskResult, TaskStatus,
};
use serde_json::Value;
use tokio::sync::broadcast;

use super::receiver::terminal;
use super::{CallOptions, Client, ClientError};

/// The polling interval used when the server suggests none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Bounds put on a server's suggested polling interval.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(50), Duration::from_secs(30));
/// How long `tasks/result` may wait for a task without a retention (`ttl: null`).
const UNBOUNDED_TASK_WAIT: Duration = Duration::from_secs(24 * 3600);

/// What happens to a task while [`ToolTask::wait_with`] follows it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TaskEvent {
    /// The task's state changed (status, status message).
    Status(Task),
    /// The tool reported progress.
    Progress(ProgressNotificationParams),
}

/// A `tools/call` running as a task on the server. Dropping it leaves the task running
/// (tasks outlive their requests); [`ToolTask::cancel`] stops it.
#[derive(Debug)]
pub struct ToolTask {
    client: Client,
    task: Task,
    token: ProgressToken,
    notifications: broadcast::Receiver<ServerNotification>,
    immediate: Option<String>,
}

impl Client {
    fn require_tasks(&self) -> Result<(), ClientError> {
        if !self.version().has(Feature::Tasks) {
            return Err(ClientError::NotInRevision(format!(
                "tasks are a feature of revision 2025-11-25; this connection speaks {}",
                self.version()
            )));
        }
        if self.is_resumed() {
            return Ok(());
        }
        let offered = self.server_capabilities().tasks.as_ref();
        let calls = offered
            .and_then(|t| t.requests.as_ref())
            .and_then(|r| r.tools.as_ref())
            .and_then(|t| t.call.as_ref());
        match (offered, calls) {
            (Some(_), Some(_)) => Ok(()),
            (Some(_), None) => Err(ClientError::Unsupported("tools/call as a task")),
            (None, _) => Err(ClientError::Unsupported("tasks")),
        }
    }

    /// `tools/call` as a task (2025-11-25): the server creates a task and answers at once;
    /// the returned [`ToolTask`] follows it to its result. `ttl` asks for how long the
    /// server keeps the task (it may shorten it).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use ferry::client::Client;
    /// use ferry::engine::Transport;
    /// use ferry::protocol::types::{TaskSupport, Tool};
    /// use ferry::protocol::ProtocolVersion;
    /// use ferry::server::{Context, Server};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct NoArgs {}
    ///
    /// let slow = Tool::described("slow", "Takes its time").task_support(TaskSupport::Optional);
    /// let server = Server::builder("demo", "1.0.0")
    ///     .tool_with(slow, |_: NoArgs, _cx: Context| async move { "done" })
    ///     .build();
    /// let (client_side, server_side) = Transport::pair(16);
    /// let _serving = server.serve(server_side);
    /// let client = Client::builder("demo-client", "1.0.0")
    ///     .version(ProtocolVersion::V2025_11_25)
    ///     .connect(client_side)
    ///     .await
    ///     .unwrap();
    /// let task = client.call_tool_as_task("slow", serde_json::json!({}), None).await.unwrap();
    /// println!("started task {}", task.id());
    /// let result = task.result().await.unwrap();
    /// assert_eq!(result.content[0], ferry::protocol::types::ContentBlock::text("done"));
    /// # });
    /// ```
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        ttl: Option<Duration>,
    ) -> Result<ToolTask, ClientError> {
        self.require_tasks()?;
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(ClientError::NotInRevision(format!(
                    "tool arguments must be an object, not {other}"
                )));
            }
        };
        // A token of our own (the request ids are numbers, so it is never a pending
        // request's): progress after the answer reaches the notifications, where the
        // task's follower finds it.
        let token = ProgressToken::String(format!("task-{}", self.peer().next_request_id()));
        let params = self.conform(CallToolRequestParams {
            name: name.to_owned(),
            arguments,
            task: Some(TaskMetadata {
                ttl: ttl.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
            }),
            meta: Some(RequestMeta {
                progress_token: Some(token.clone()),
                ..Default::default()
            }),
            ..Default::default()
        })?;
        // Listening before the request is sent: nothing the task says is missed.
        let notifications = self.notifications();
        let created: CreateTaskResult = self.request("tools/call", &params).await?;
        let immediate = created
            .meta
            .as_ref()
            .and_then(|m| m.other.get(IMMEDIATE_RESPONSE))
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(ToolTask {
            client: self.clone(),
            task: created.task,
            token,
            notifications,
            immediate,
        })
    }

    /// `tasks/get`: a task's current state.
    pub async fn get_task(&self, task_id: &str) -> Result<Task, ClientError> {
        self.require_tasks()?;
        let result: TaskResult = self.request("tasks/get", &task_params(task_id)).await?;
        Ok(result.task)
    }

    /// `tasks/cancel`: stop a task; its state after the cancellation. A task that has
    /// already ended cannot be cancelled (the server answers `-32602`).
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, ClientError> {
        self.require_tasks()?;
        let result: TaskResult = self.request("tasks/cancel", &task_params(task_id)).await?;
        Ok(result.task)
    }

    /// `tasks/list`: one page of this client's tasks.
    pub async fn list_tasks(&self, cursor: Option<String>) -> Result<ListTasksResult, ClientError> {
        self.require_tasks()?;
        self.list_page(cursor).await
    }

    /// Every task, following pagination.
    pub async fn list_all_tasks(&self) -> Result<Vec<Task>, ClientError> {
        self.require_tasks()?;
        self.list_all::<ListTasksResult>().await
    }

    /// `tasks/result` of a `tools/call` task: waits until the task ends (up to `timeout`,
    /// the client's default when `None`) and returns the tool's result, or the error the
    /// call would have had.
    pub async fn tool_task_result(
        &self,
        task_id: &str,
        timeout: Option<Duration>,
    ) -> Result<CallToolResult, ClientError> {
        self.require_tasks()?;
        let options = CallOptions {
            timeout,
            ..Default::default()
        };
        self.request_with("tasks/result", &task_params(task_id), options)
            .await
    }
}

/// `_meta` key of a `CreateTaskResult`: text to give the model at once.
const IMMEDIATE_RESPONSE: &str = "io.modelcontextprotocol/model-immediate-response";

fn task_params(task_id: &str) -> TaskIdParams {
    TaskIdParams {
        task_id: task_id.to_owned(),
        meta: None,
    }
}

impl ToolTask {
    /// The task's id.
    pub fn id(&self) -> &str {
        &self.task.task_id
    }

    /// The task as last seen (created, polled or notified).
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The server's text for the model while the task runs
    /// (`io.modelcontextprotocol/model-immediate-response`), if it gave one.
    pub fn immediate_response(&self) -> Option<&str> {
        self.immediate.as_deref()
    }

    /// `tasks/get`: the task's current state.
    pub async fn refresh(&mut self) -> Result<&Task, ClientError> {
        self.task = self.client.get_task(&self.task.task_id).await?;
        Ok(&self.task)
    }

    /// `tasks/cancel`: stop the task; its state after.
    pub async fn cancel(&mut self) -> Result<&Task, ClientError> {
        self.task = self.client.cancel_task(&self.task.task_id).await?;
        Ok(&self.task)
    }

    /// Follow the task to its end and return the tool's result.
    pub async fn result(mut self) -> Result<CallToolResult, ClientError> {
        self.wait_with(|_| {}).await
    }

    /// Follow the task to its end, telling `on_event` each change of state and each
    /// progress update, and return the tool's result (or the error the call would have
    /// had; a cancelled task has none: [`ClientError::NotInRevision`] is not it, the
    /// server's `-32602` is). Dropping the future stops following, not the task.
    pub async fn wait_with(
        &mut self,
        mut on_event: impl FnMut(TaskEvent),
    ) -> Result<CallToolResult, ClientError> {
        while !terminal(self.task.status) && self.task.status != TaskStatus::InputRequired {
            let interval = self
                .task
                .poll_interval
                .map_or(DEFAULT_POLL_INTERVAL, Duration::from_millis)
                .clamp(POLL_BOUNDS.0, POLL_BOUNDS.1);
            let woken = tokio::time::sleep(interval);
            tokio::pin!(woken);
            loop {
                tokio::select! {
                    () = &mut woken => break,
                    note = self.notifications.recv() => match note {
                        Ok(note) => if self.take(note, &mut on_event) { break },
                        Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(broadcast::error::RecvError::Closed) => {
                            return Err(ClientError::ConnectionLost);
                        }
                    },
                }
            }
            let task = self.client.get_task(&self.task.task_id).await?;
            self.update(task, &mut on_event);
        }
        // Ended, or waiting for input that the server sends while `tasks/result` is
        // pending: the handlers answer it. The task cannot outlive its retention.
        let timeout = self
            .task
            .ttl
            .map_or(UNBOUNDED_TASK_WAIT, Duration::from_millis)
            .saturating_add(self.client.peer().default_timeout());
        let client = self.client.clone();
        let id = self.task.task_id.clone();
        let result = client.tool_task_result(&id, Some(timeout));
        tokio::pin!(result);
        loop {
            tokio::select! {
                result = &mut result => {
                    if let Ok(task) = self.client.get_task(&id).await {
                        self.update(task, &mut on_event);
                    }
                    return result;
                }
                Ok(note) = self.notifications.recv() => {
                    self.take(note, &mut on_event);
                }
            }
        }
    }

    /// Pass on a notification about this task; true when its state changed.
    fn take(&mut self, note: ServerNotification, on_event: &mut impl FnMut(TaskEvent)) -> bool {
        match note {
            ServerNotification::Progress(progress) if progress.progress_token == self.token => {
                on_event(TaskEvent::Progress(progress));
                false
            }
            ServerNotification::TaskStatus(status) if status.task.task_id == self.task.task_id => {
                self.update(status.task, on_event)
            }
            _ => false,
        }
    }

    fn update(&mut self, task: Task, on_event: &mut impl FnMut(TaskEvent)) -> bool {
        // A terminal state is final; an older status must not replace it.
        if task == self.task || terminal(self.task.status) && !terminal(task.status) {
            return false;
        }
        self.task = task;
        on_event(TaskEvent::Status(self.task.clone()));
        true
    }
}
