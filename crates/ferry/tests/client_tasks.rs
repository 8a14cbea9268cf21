//! Tasks from the client (2025-11-25), against Ferry's server in memory and over
//! Streamable HTTP on 127.0.0.1: a tool run as a task is followed to its result with its
//! progress and status changes, cancelled (the tool stops), listed, refused outside
//! 2025-11-25; and the client as the receiver of a task-augmented sampling request.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferry::client::{Client, ClientError, ElicitationModes, TaskEvent};
use ferry::engine::Transport;
use ferry::http::HttpConfig;
use ferry::http_client::HttpClientConfig;
use ferry::protocol::ProtocolVersion;
use ferry::protocol::types::{
    CallToolResult, ContentBlock, CreateMessageResult, ElicitRequestFormParams,
    ElicitRequestParams, ElicitResult, TaskStatus, TaskSupport, Tool,
};
use ferry::server::{Context, Server};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Steps {
    /// How many steps, each reported as progress.
    steps: u32,
    /// Milliseconds per step.
    ms: u64,
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// Counts the runs of `wait` that were stopped before they ended.
struct Stopped(Arc<AtomicUsize>, bool);

impl Drop for Stopped {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn server(stopped: Arc<AtomicUsize>) -> Server {
    let optional = |name: &str, description: &str| {
        Tool::described(name, description).task_support(TaskSupport::Optional)
    };
    Server::builder("client-tasks", "1.0.0")
        .tool_with(
            optional("steps", "Works `steps` steps, reporting each"),
            |a: Steps, cx: Context| async move {
                for step in 1..=a.steps {
                    tokio::time::sleep(Duration::from_millis(a.ms)).await;
                    if let Some(progress) = &cx.progress {
                        let _ = progress
                            .report(f64::from(step), Some(f64::from(a.steps)), None)
                            .await;
                    }
                }
                format!("{} steps", a.steps)
            },
        )
        .tool_with(
            optional("wait", "Waits until cancelled"),
            move |_: NoArgs, cx: Context| {
                let stopped = Stopped(Arc::clone(&stopped), false);
                async move {
                    let _stopped = stopped;
                    cx.cancel.cancelled().await;
                    "cancelled"
                }
            },
        )
        .tool_with(
            optional("fail", "Fails"),
            |_: NoArgs, _cx: Context| async move { CallToolResult::error("it broke") },
        )
        .tool_with(
            optional(
                "ask",
                "Asks the client's model as a task and waits for the answer",
            ),
            |_: NoArgs, cx: Context| async move { ask_as_task(&cx).await },
        )
        .tool_with(
            optional("confirm", "Asks the user to confirm, then answers"),
            |_: NoArgs, cx: Context| async move {
                let form = ElicitRequestParams::Form(ElicitRequestFormParams {
                    message: "Go on?".into(),
                    ..Default::default()
                });
                let answer = cx.elicit(form).await.map_err(|e| e.to_string())?;
                Ok::<_, String>(format!("{:?}", answer.action))
            },
        )
        .tool(
            "plain",
            "Cannot run as a task",
            |_: NoArgs, _cx: Context| async move { "plain" },
        )
        .build()
}

/// A tool that sends `sampling/createMessage` as a task to the client, polls the client's
/// `tasks/get`, lists its tasks and fetches `tasks/result`: the receiving side.
async fn ask_as_task(cx: &Context) -> Result<String, String> {
    let peer = &cx.peer;
    let created: Value = peer
        .request(
            "sampling/createMessage",
            &json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
                "maxTokens": 10,
                "task": {"ttl": 60_000}
            }),
        )
        .await
        .map_err(|e| e.to_string())?;
    let id = created["task"]["taskId"]
        .as_str()
        .ok_or("no task id")?
        .to_owned();
    if created["task"]["status"] != "working" {
        return Err(format!("created: {created}"));
    }
    let listed: Value = peer
        .request("tasks/list", &json!({}))
        .await
        .map_err(|e| e.to_string())?;
    if !listed["tasks"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["taskId"] == id.as_str()))
    {
        return Err(format!("not listed: {listed}"));
    }
    let result: Value = peer
        .request("tasks/result", &json!({"taskId": id}))
        .await
        .map_err(|e| e.to_string())?;
    let status: Value = peer
        .request("tasks/get", &json!({"taskId": id}))
        .await
        .map_err(|e| e.to_string())?;
    let cancel_late = peer
        .request::<_, Value>("tasks/cancel", &json!({"taskId": id}))
        .await
        .is_err();
    Ok(format!(
        "{} {} {} {}",
        result["content"]["text"].as_str().unwrap_or("?"),
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] == id.as_str(),
        status["status"],
        cancel_late
    ))
}

fn builder() -> ferry::client::ClientBuilder {
    Client::builder("tasks-client", "1.0.0")
        .version(ProtocolVersion::V2025_11_25)
        .on_sampling(|_| async { Ok(CreateMessageResult::text("test-model", "4")) })
        .on_elicitation_with(ElicitationModes::Form, |params| async move {
            // Answers only a request that names the task it belongs to.
            let ElicitRequestParams::Form(form) = params else {
                return Ok(ElicitResult::decline());
            };
            match form.meta.and_then(|m| m.related_task) {
                Some(_) => Ok(ElicitResult::accept(json!({}))),
                None => Ok(ElicitResult::decline()),
            }
        })
}

async fn in_memory(stopped: &Arc<AtomicUsize>) -> Client {
    let (client_side, server_side) = Transport::pair(64);
    let serving = server(Arc::clone(stopped)).serve(server_side);
    std::mem::forget(serving);
    builder().connect(client_side).await.unwrap()
}

async fn over_http(stopped: &Arc<AtomicUsize>) -> (Client, ferry::http_client::HttpConnection) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(ferry::http::serve(
        server(Arc::clone(stopped)),
        listener,
        HttpConfig::default(),
    ));
    builder()
        .connect_http(
            &format!("http://{address}/mcp"),
            HttpClientConfig::default(),
        )
        .await
        .unwrap()
}

/// Everything a requestor does with tasks, on one connection.
async fn requestor(client: &Client, stopped: &Arc<AtomicUsize>) {
    // Followed to its result: progress for each step, a status change to completed.
    let mut task = client
        .call_tool_as_task(
            "steps",
            json!({"steps": 4, "ms": 30}),
            Some(Duration::from_secs(60)),
        )
        .await
        .unwrap();
    assert_eq!(task.task().status, TaskStatus::Working);
    assert_eq!(task.task().ttl, Some(60_000));
    let mut progress = Vec::new();
    let mut statuses = Vec::new();
    let result = task
        .wait_with(|event| match event {
            TaskEvent::Progress(p) => progress.push(p.progress),
            TaskEvent::Status(t) => statuses.push(t.status),
            _ => {}
        })
        .await
        .unwrap();
    assert_eq!(result.content, vec![ContentBlock::text("4 steps")]);
    assert_eq!(progress, vec![1.0, 2.0, 3.0, 4.0]);
    assert_eq!(statuses.last(), Some(&TaskStatus::Completed));
    assert_eq!(task.task().status, TaskStatus::Completed);
    let finished = task.id().to_owned();

    // Cancelled: the tool stops, the task says so, it has no result, and a second
    // cancellation is refused.
    let before = stopped.load(Ordering::SeqCst);
    let mut waiting = client
        .call_tool_as_task("wait", json!({}), None)
        .await
        .unwrap();
    assert_eq!(
        client.get_task(waiting.id()).await.unwrap().status,
        TaskStatus::Working
    );
    assert_eq!(
        waiting.cancel().await.unwrap().status,
        TaskStatus::Cancelled
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while stopped.load(Ordering::SeqCst) == before {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the tool never stopped"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let again = client.cancel_task(waiting.id()).await.unwrap_err();
    assert_eq!(again.rpc().map(|e| e.code), Some(-32602), "{again}");
    let no_result = waiting.wait_with(|_| {}).await.unwrap_err();
    assert!(no_result.to_string().contains("cancelled"), "{no_result}");

    // A tool error ends the task as failed; its result is the error result.
    let failing = client
        .call_tool_as_task("fail", json!({}), None)
        .await
        .unwrap();
    let failing_id = failing.id().to_owned();
    let result = failing.result().await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        client.get_task(&failing_id).await.unwrap().status,
        TaskStatus::Failed
    );

    // A task whose tool asks for input: it waits for input meanwhile, and the request
    // names the task (the handler declines any that does not).
    let mut asking = client
        .call_tool_as_task("confirm", json!({}), None)
        .await
        .unwrap();
    let mut statuses = Vec::new();
    let result = asking
        .wait_with(|event| {
            if let TaskEvent::Status(t) = event {
                statuses.push(t.status);
            }
        })
        .await
        .unwrap();
    assert_eq!(
        result.content,
        vec![ContentBlock::text("Accept")],
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&TaskStatus::InputRequired),
        "{statuses:?}"
    );
    assert_eq!(statuses.last(), Some(&TaskStatus::Completed));

    // A tool that does not support tasks is refused by the server (-32601).
    let refused = client
        .call_tool_as_task("plain", json!({}), None)
        .await
        .unwrap_err();
    assert_eq!(refused.rpc().map(|e| e.code), Some(-32601), "{refused}");

    // Listed, every one of them; an unknown id is -32602.
    let listed = client.list_all_tasks().await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|t| t.task_id.as_str()).collect();
    for id in [finished.as_str(), waiting.id(), failing_id.as_str()] {
        assert!(ids.contains(&id), "{id} not in {ids:?}");
    }
    let unknown = client.get_task("nope").await.unwrap_err();
    assert_eq!(unknown.rpc().map(|e| e.code), Some(-32602), "{unknown}");

    // The client as receiver: the server's sampling request run as a task on the client.
    let asked = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(
        asked.content,
        vec![ContentBlock::text("4 true \"completed\" true")],
        "{asked:?}"
    );
}

#[tokio::test]
async fn tasks_from_the_client_in_memory() {
    let stopped = Arc::new(AtomicUsize::new(0));
    let client = in_memory(&stopped).await;
    requestor(&client, &stopped).await;
}

#[tokio::test]
async fn tasks_from_the_client_over_http() {
    let stopped = Arc::new(AtomicUsize::new(0));
    let (client, _connection) = over_http(&stopped).await;
    requestor(&client, &stopped).await;
}

#[tokio::test]
async fn tasks_are_refused_before_sending_where_they_do_not_apply() {
    let stopped = Arc::new(AtomicUsize::new(0));
    // 2026-07-28 has no tasks (they moved to an extension).
    let (client_side, server_side) = Transport::pair(16);
    std::mem::forget(server(Arc::clone(&stopped)).serve(server_side));
    let client = Client::builder("c", "1")
        .version(ProtocolVersion::V2026_07_28)
        .connect(client_side)
        .await
        .unwrap();
    let error = client
        .call_tool_as_task("steps", json!({"steps": 1, "ms": 1}), None)
        .await;
    assert!(
        matches!(error, Err(ClientError::NotInRevision(_))),
        "{error:?}"
    );
    // A server without a task-capable tool offers no tasks.
    let (client_side, server_side) = Transport::pair(16);
    let plain = Server::builder("plain", "1")
        .tool("plain", "Plain", |_: NoArgs, _cx: Context| async move {
            "plain"
        })
        .build();
    std::mem::forget(plain.serve(server_side));
    let client = builder().connect(client_side).await.unwrap();
    let error = client.list_all_tasks().await;
    assert!(
        matches!(error, Err(ClientError::Unsupported(_))),
        "{error:?}"
    );
    // The client declares task support for its handlers in 2025-11-25 only.
    let tasks = client.capabilities().tasks.as_ref().unwrap();
    assert!(tasks.requests.as_ref().unwrap().sampling.is_some());
    assert!(tasks.requests.as_ref().unwrap().elicitation.is_some());
}

/// A session kept open by one connection is taken up by another (as `ferry call --task
/// --detach` and `ferry tasks` do): its task is followed to its result there; once the
/// session is ended, taking it up fails with the server's 404.
#[tokio::test]
async fn a_kept_session_is_taken_up_by_another_connection() {
    let stopped = Arc::new(AtomicUsize::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(ferry::http::serve(
        server(Arc::clone(&stopped)),
        listener,
        HttpConfig::default(),
    ));
    let (client, connection) = builder()
        .connect_http(&url, HttpClientConfig::default())
        .await
        .unwrap();
    let task = client
        .call_tool_as_task("steps", json!({"steps": 3, "ms": 100}), None)
        .await
        .unwrap();
    let id = task.id().to_owned();
    let session = connection.session_id().unwrap();
    connection.keep_session();
    drop((task, client));
    connection.close().await;

    let (resumed, connection) = builder()
        .resume_http(
            &url,
            HttpClientConfig::default(),
            &session,
            ProtocolVersion::V2025_11_25,
        )
        .await
        .unwrap();
    assert!(resumed.is_resumed());
    assert_eq!(connection.session_id().as_deref(), Some(session.as_str()));
    let listed = resumed.list_all_tasks().await.unwrap();
    assert!(listed.iter().any(|t| t.task_id == id), "{listed:?}");
    let result = resumed.tool_task_result(&id, None).await.unwrap();
    assert_eq!(result.content, vec![ContentBlock::text("3 steps")]);
    assert_eq!(stopped.load(Ordering::SeqCst), 0);
    drop(resumed);
    connection.close().await;

    let (gone, _connection) = builder()
        .resume_http(
            &url,
            HttpClientConfig::default(),
            &session,
            ProtocolVersion::V2025_11_25,
        )
        .await
        .unwrap();
    let error = gone.get_task(&id).await.unwrap_err();
    assert_eq!(
        error.transport().and_then(|t| t.status),
        Some(404),
        "{error}"
    );
    // Only a session-era session can be taken up.
    let error = builder()
        .resume_http(
            &url,
            HttpClientConfig::default(),
            &session,
            ProtocolVersion::V2026_07_28,
        )
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::NotInRevision(_)), "{error}");
}
