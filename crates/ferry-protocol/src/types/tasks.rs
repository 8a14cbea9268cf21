//! Tasks (2025-11-25, experimental): durable requests polled for status and results.
//! In 2026-07-28 tasks moved to the `io.modelcontextprotocol/tasks` extension.

use serde::{Deserialize, Serialize};

use super::meta::{NotificationMeta, RequestMeta, ResultMeta};

/// The state of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for input from the requester.
    InputRequired,
    /// Finished successfully.
    Completed,
    /// Failed.
    Failed,
    /// Cancelled.
    Cancelled,
}

/// Asks for a request to run as a task (`params.task`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskMetadata {
    /// Requested retention in milliseconds after creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

/// `_meta["io.modelcontextprotocol/related-task"]`: the task a message belongs to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatedTaskMetadata {
    /// The task's id.
    pub task_id: String,
}

/// A task's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task's id.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// Human-readable status detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last update.
    pub last_updated_at: String,
    /// Retention in milliseconds from creation; `null` for unlimited.
    pub ttl: Option<u64>,
    /// Suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
}

/// `params` of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task's id.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The answer to a task-augmented request: the task that was created.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CreateTaskResult {
    /// The new task.
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// The result of `tasks/get` and `tasks/cancel`: the task's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// The result of `tasks/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// The tasks.
    pub tasks: Vec<Task>,
    /// Cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// `notifications/tasks/status` params: the task's new state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskStatusNotificationParams {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}
