//! Tasks (2025-11-25) from the command line: `ferry call --task` (follows the task with
//! its progress and status on stderr, then prints the result as `ferry call` does;
//! `--detach` prints the task and its session and leaves both on the server), and `ferry
//! tasks list|get|result|cancel --session ID` on a session kept that way.

use std::time::Duration;

use clap::{Args, Subcommand};
use ferry::client::{Client, TaskEvent};
use ferry::protocol::types::{CallToolResult, Task, TaskStatus};
use serde_json::{Value, json};

use super::render::Saver;
use super::{Common, Failure, Outcome, failed, output, render};

/// `ferry tasks`.
#[derive(Args)]
pub(crate) struct TasksArgs {
    #[command(subcommand)]
    pub(crate) action: TasksAction,
}

/// What `ferry tasks` does.
#[derive(Subcommand)]
pub(crate) enum TasksAction {
    /// List the session's tasks.
    List(ListArgs),
    /// Show a task's state.
    Get(TaskArgs),
    /// Wait for a task to end and print its result as `ferry call` does.
    Result(TaskArgs),
    /// Cancel a task.
    Cancel(TaskArgs),
}

/// `ferry tasks list`.
#[derive(Args)]
pub(crate) struct ListArgs {
    /// The HTTP session whose tasks to list (printed by `ferry call --task --detach`).
    #[arg(long, value_name = "ID", required = true)]
    pub(crate) session: String,
    #[command(flatten)]
    pub(crate) common: Common,
}

/// `ferry tasks get|result|cancel`.
#[derive(Args)]
pub(crate) struct TaskArgs {
    /// The task's id.
    pub(crate) task: String,
    /// The HTTP session the task belongs to (printed by `ferry call --task --detach`).
    #[arg(long, value_name = "ID", required = true)]
    pub(crate) session: String,
    #[command(flatten)]
    pub(crate) common: Common,
}

/// What a `ferry tasks` command does once connected.
pub(crate) enum TaskOperation {
    List,
    Get(String),
    Result(String),
    Cancel(String),
}

/// How `ferry call --task` runs the task.
pub(crate) struct AsTask {
    /// The retention asked for.
    pub(crate) ttl: Option<Duration>,
    /// Print the task and leave it running.
    pub(crate) detach: bool,
}

/// `ferry call --task`: start the task, then follow it or leave it.
pub(crate) async fn call(
    common: &Common,
    client: &Client,
    tool: &str,
    arguments: Value,
    how: &AsTask,
    session: Option<String>,
) -> Result<Outcome, Failure> {
    let mut task = client
        .call_tool_as_task(tool, arguments, how.ttl)
        .await
        .map_err(failed(format!("tools/call {tool} as a task")))?;
    if how.detach {
        let session = session.unwrap_or_default();
        if common.json {
            output::json(&json!({ "task": task.task(), "sessionId": session }));
        } else {
            output::out(&format!("task    {}", task.id()));
            output::out(&format!("status  {}", status_name(task.task().status)));
            output::out(&format!("session {session}"));
            output::note(&format!(
                "ferry: the task runs on; follow it with `ferry tasks result {} --session {session}` \
                 and the same server options",
                task.id()
            ));
        }
        return Ok(Outcome::Done);
    }
    output::note(&format!("ferry: task {} started", task.id()));
    if let Some(text) = task.immediate_response() {
        output::note(&format!("ferry: the server says meanwhile: {text}"));
    }
    let (updates, progress) = tokio::sync::mpsc::channel(64);
    let bar = output::progress(progress);
    let result = task
        .wait_with(|event| match event {
            TaskEvent::Progress(update) => {
                let _ = updates.try_send(update);
            }
            TaskEvent::Status(state) => note_status(&state),
            _ => {}
        })
        .await;
    drop(updates);
    let _ = bar.await;
    output::clear_progress();
    let result = result.map_err(failed(format!("tasks/result of task {}", task.id())))?;
    Ok(print_result(common, tool, &result))
}

/// A `ferry tasks` command.
pub(crate) async fn run(
    common: &Common,
    client: &Client,
    operation: TaskOperation,
) -> Result<Outcome, Failure> {
    match operation {
        TaskOperation::List => {
            let tasks = client
                .list_all_tasks()
                .await
                .map_err(failed("tasks/list"))?;
            if common.json {
                output::json(&json!({ "tasks": tasks }));
            } else {
                let rows = tasks.iter().map(row).collect();
                output::table(
                    &["TASK", "STATUS", "CREATED", "MESSAGE"],
                    rows,
                    "(no tasks)",
                );
            }
        }
        TaskOperation::Get(id) => {
            let task = client.get_task(&id).await.map_err(failed("tasks/get"))?;
            show(common, &task);
        }
        TaskOperation::Cancel(id) => {
            let task = client
                .cancel_task(&id)
                .await
                .map_err(failed("tasks/cancel"))?;
            show(common, &task);
        }
        TaskOperation::Result(id) => {
            // Waits as long as the task may live, at most a day.
            let task = client.get_task(&id).await.map_err(failed("tasks/get"))?;
            let wait = task
                .ttl
                .map_or(Duration::from_secs(86_400), Duration::from_millis)
                .min(Duration::from_secs(86_400));
            let result = client
                .tool_task_result(&id, Some(wait))
                .await
                .map_err(failed("tasks/result"))?;
            return Ok(print_result(common, &id, &result));
        }
    }
    Ok(Outcome::Done)
}

fn print_result(common: &Common, name: &str, result: &CallToolResult) -> Outcome {
    let mut saver = Saver::new(common.out.as_deref(), name);
    if common.json {
        output::json(result);
    } else {
        render::call(result, &mut saver);
    }
    if result.is_error == Some(true) {
        output::note(&format!("ferry: {name} reported an error (isError)"));
        return Outcome::Failed;
    }
    super::saved(&saver)
}

fn show(common: &Common, task: &Task) {
    if common.json {
        output::json(task);
    } else {
        output::table(
            &["TASK", "STATUS", "CREATED", "MESSAGE"],
            vec![row(task)],
            "",
        );
    }
}

fn row(task: &Task) -> Vec<String> {
    vec![
        task.task_id.clone(),
        status_name(task.status).to_owned(),
        task.created_at.clone(),
        task.status_message.clone().unwrap_or_default(),
    ]
}

fn note_status(task: &Task) {
    let status = status_name(task.status);
    match &task.status_message {
        Some(message) => output::note(&format!("ferry: task {status}: {message}")),
        None => output::note(&format!("ferry: task {status}")),
    }
}

fn status_name(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
    }
}
