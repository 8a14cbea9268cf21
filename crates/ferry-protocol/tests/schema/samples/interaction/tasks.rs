//! Samples: tasks (2025-11-25, experimental; an extension from 2026-07-28): task-augmented
//! requests, `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` from either side,
//! task states, and `notifications/tasks/status`.

use ferry_protocol::ProtocolVersion::*;
use ferry_protocol::methods::{
    ClientNotification, ClientRequest, ServerNotification, ServerRequest,
};
use ferry_protocol::types::*;
use serde_json::json;

use crate::schema::Sample;
use crate::schema::samples::support::{
    client_notification, client_request, client_result, object, progress_meta, request_with_meta,
    server_notification, server_request, server_result, trace_context,
};

const STATUSES: [TaskStatus; 5] = [
    TaskStatus::Working,
    TaskStatus::InputRequired,
    TaskStatus::Completed,
    TaskStatus::Failed,
    TaskStatus::Cancelled,
];

fn task_minimal(status: TaskStatus) -> Task {
    Task {
        task_id: "786512e2-9e0d-44bd-8f29-789f320fe840".into(),
        status,
        status_message: None,
        created_at: "2025-11-25T10:30:00Z".into(),
        last_updated_at: "2025-11-25T10:30:00Z".into(),
        ttl: None,
        poll_interval: None,
    }
}

fn task_full(status: TaskStatus) -> Task {
    Task {
        status_message: Some("Processing 3 of 10 files".into()),
        last_updated_at: "2025-11-25T10:31:10Z".into(),
        ttl: Some(60_000),
        poll_interval: Some(5_000),
        ..task_minimal(status)
    }
}

fn related() -> RelatedTaskMetadata {
    RelatedTaskMetadata {
        task_id: "786512e2-9e0d-44bd-8f29-789f320fe840".into(),
    }
}

fn task_id() -> TaskIdParams {
    TaskIdParams {
        task_id: "786512e2-9e0d-44bd-8f29-789f320fe840".into(),
        meta: None,
    }
}

fn result_meta() -> ResultMeta {
    ResultMeta {
        related_task: Some(related()),
        other: trace_context(),
        ..Default::default()
    }
}

pub fn samples() -> Vec<Sample> {
    // Task values and task-augmented requests exist in every revision's types (the task
    // members are omitted outside 2025-11-25); the task methods are 2025-11-25 only.
    let only = |samples: Vec<Sample>| {
        samples
            .into_iter()
            .map(|s| s.revisions(V2025_11_25, V2025_11_25))
    };
    let mut all = objects();
    all.extend(augmented());
    all.extend(payloads());
    all.extend(only(requests()));
    all.extend(only(results()));
    all.extend(only(notifications()));
    all
}

fn objects() -> Vec<Sample> {
    let mut all: Vec<Sample> = STATUSES
        .into_iter()
        .flat_map(|status| {
            [
                Sample::object(&format!("task status {status:?}"), &["TaskStatus"], status),
                Sample::object(
                    &format!("task, {status:?}, minimal"),
                    &["Task"],
                    task_minimal(status),
                ),
            ]
        })
        .collect();
    all.extend([
        Sample::object(
            "task, full",
            &["Task"],
            task_full(TaskStatus::InputRequired),
        ),
        Sample::object(
            "task metadata, ttl",
            &["TaskMetadata"],
            TaskMetadata { ttl: Some(60_000) },
        ),
        Sample::object(
            "task metadata, empty",
            &["TaskMetadata"],
            TaskMetadata::default(),
        ),
        Sample::object("related task", &["RelatedTaskMetadata"], related()),
    ]);
    all
}

/// Requests run as tasks; outside 2025-11-25 they go without `task`.
fn augmented() -> Vec<Sample> {
    let call = |task, meta| {
        ClientRequest::CallTool(CallToolRequestParams {
            name: "analyze_repository".into(),
            arguments: Some(object(json!({"path": "/repo"}))),
            task,
            meta,
            ..Default::default()
        })
    };
    let defs: &[&str] = &["CallToolRequestParams", "TaskAugmentedRequestParams"];
    vec![
        client_request(
            "tools/call as a task",
            defs,
            &["CallToolRequest"],
            call(Some(TaskMetadata { ttl: Some(60_000) }), None),
        ),
        client_request(
            "tools/call as a task, default ttl",
            defs,
            &["CallToolRequest"],
            call(Some(TaskMetadata::default()), None),
        ),
        // A request that belongs to a task names it in `_meta`.
        request_with_meta(
            "tools/call, related task",
            defs,
            call(
                None,
                Some(RequestMeta {
                    related_task: Some(related()),
                    ..progress_meta("task-call")
                }),
            ),
        ),
    ]
}

fn requests() -> Vec<Sample> {
    let get: &[&str] = &["GetTaskRequest"];
    let payload: &[&str] = &["GetTaskPayloadRequest"];
    let cancel: &[&str] = &["CancelTaskRequest"];
    let list: &[&str] = &["ListTasksRequest", "PaginatedRequest"];
    let page = PaginatedRequestParams {
        cursor: Some("tasks-2".into()),
        meta: None,
    };
    vec![
        client_request("tasks/get", &[], get, ClientRequest::GetTask(task_id())),
        server_request(
            "tasks/get, server",
            &[],
            get,
            ServerRequest::GetTask(task_id()),
        ),
        request_with_meta(
            "tasks/get, with _meta",
            &[],
            ClientRequest::GetTask(TaskIdParams {
                meta: Some(progress_meta("task-get")),
                ..task_id()
            }),
        ),
        client_request(
            "tasks/result",
            &[],
            payload,
            ClientRequest::GetTaskPayload(task_id()),
        ),
        server_request(
            "tasks/result, server",
            &[],
            payload,
            ServerRequest::GetTaskPayload(task_id()),
        ),
        client_request(
            "tasks/cancel",
            &[],
            cancel,
            ClientRequest::CancelTask(task_id()),
        ),
        server_request(
            "tasks/cancel, server",
            &[],
            cancel,
            ServerRequest::CancelTask(task_id()),
        ),
        client_request(
            "tasks/list",
            &["PaginatedRequestParams"],
            list,
            ClientRequest::ListTasks(PaginatedRequestParams::default()),
        ),
        server_request(
            "tasks/list, server, next page",
            &["PaginatedRequestParams"],
            list,
            ServerRequest::ListTasks(page),
        ),
    ]
}

fn results() -> Vec<Sample> {
    let created: &[&str] = &["CreateTaskResult", "ClientResult"];
    let state: &[&str] = &["GetTaskResult", "CancelTaskResult", "ClientResult"];
    let list: &[&str] = &["ListTasksResult", "PaginatedResult", "ClientResult"];
    vec![
        server_result(
            "task created",
            created,
            &[],
            CreateTaskResult {
                task: task_minimal(TaskStatus::Working),
                meta: None,
            },
        ),
        server_result(
            "task created, full",
            created,
            &[],
            CreateTaskResult {
                task: task_full(TaskStatus::Working),
                meta: Some(result_meta()),
            },
        ),
        server_result(
            "task state",
            state,
            &[],
            TaskResult {
                task: task_minimal(TaskStatus::Completed),
                meta: None,
            },
        ),
        server_result(
            "task state, full",
            state,
            &[],
            TaskResult {
                task: task_full(TaskStatus::Cancelled),
                meta: Some(result_meta()),
            },
        ),
        server_result(
            "tasks/list result, empty",
            list,
            &[],
            ListTasksResult::default(),
        ),
        server_result(
            "tasks/list result, full",
            list,
            &[],
            ListTasksResult {
                tasks: STATUSES.into_iter().map(task_full).collect(),
                next_cursor: Some("tasks-3".into()),
                meta: Some(result_meta()),
            },
        ),
    ]
}

/// `tasks/result`: the original request's result, naming its task in `_meta` (which
/// other revisions omit).
fn payloads() -> Vec<Sample> {
    vec![
        server_result(
            "task payload, a tools/call result",
            &["GetTaskPayloadResult", "CallToolResult"],
            &["CallToolResultResponse"],
            CallToolResult {
                meta: Some(result_meta()),
                ..CallToolResult::success(vec![ContentBlock::text("42 files analyzed")])
            },
        ),
        client_result(
            "task payload, a sampling result",
            &["GetTaskPayloadResult", "CreateMessageResult"],
            CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContents::One(SamplingContent::Text(TextContent::new("Done"))),
                model: "claude-3-sonnet".into(),
                stop_reason: Some("endTurn".into()),
                meta: Some(result_meta()),
            },
        ),
    ]
}

fn notifications() -> Vec<Sample> {
    let params: &[&str] = &["TaskStatusNotificationParams"];
    let message: &[&str] = &["TaskStatusNotification"];
    let status = |task, meta| TaskStatusNotificationParams { task, meta };
    vec![
        server_notification(
            "task status",
            params,
            message,
            ServerNotification::TaskStatus(status(task_minimal(TaskStatus::Working), None)),
        ),
        client_notification(
            "task status, client, full",
            params,
            message,
            ClientNotification::TaskStatus(status(
                task_full(TaskStatus::Failed),
                Some(NotificationMeta {
                    related_task: Some(related()),
                    other: trace_context(),
                    ..Default::default()
                }),
            )),
        ),
    ]
}
