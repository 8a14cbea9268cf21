//! Tasks (2025-11-25) of a session shared by two instances through one session store,
//! over real sockets on 127.0.0.1: a task started on one instance is polled, listed,
//! awaited and cancelled on the other, and a session's end forgets its tasks.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferry::http::HttpConfig;
use ferry::http::store::{MemorySessionStore, SessionStore};
use ferry::protocol::types::{CallToolResult, ContentBlock, TaskSupport, Tool, ToolExecution};
use ferry::server::{Context, Server};
use reqwest::StatusCode;
use reqwest::header::CONTENT_TYPE;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

const REVISION: &str = "2025-11-25";

#[derive(Deserialize, JsonSchema)]
struct Wait {
    /// How long to work, in milliseconds.
    ms: u64,
}

/// Counts a run of `work` that did not finish (stopped: cancelled, or its future dropped).
struct Unfinished(Arc<AtomicUsize>, bool);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// A server whose `work` tool may run as a task; `stopped` counts the runs stopped.
fn server(stopped: Arc<AtomicUsize>) -> Server {
    Server::builder("tasks-test", "1.0.0")
        .tool_with(
            Tool {
                execution: Some(ToolExecution {
                    task_support: Some(TaskSupport::Optional),
                }),
                ..Tool::described("work", "Works for `ms` milliseconds")
            },
            move |a: Wait, cx: Context| {
                let unfinished = Unfinished(Arc::clone(&stopped), false);
                async move {
                    // Moved whole into the future (a field alone would be captured).
                    let mut unfinished = unfinished;
                    tokio::select! {
                        () = cx.cancel.cancelled() => CallToolResult::error("cancelled"),
                        () = tokio::time::sleep(Duration::from_millis(a.ms)) => {
                            unfinished.1 = true;
                            CallToolResult::success(vec![ContentBlock::text(format!("worked {} ms", a.ms))])
                        }
                    }
                }
            },
        )
        .build()
}

struct Instance {
    url: String,
    stopped: Arc<AtomicUsize>,
}

async fn instance(store: &Arc<MemorySessionStore>) -> Instance {
    instance_with(store, HttpConfig::default()).await
}

async fn instance_with(store: &Arc<MemorySessionStore>, config: HttpConfig) -> Instance {
    let stopped = Arc::new(AtomicUsize::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shared: Arc<dyn SessionStore> = store.clone();
    let config = config.session_store(shared);
    tokio::spawn(ferry::http::serve(
        server(Arc::clone(&stopped)),
        listener,
        config,
    ));
    Instance {
        url: format!("http://{address}/mcp"),
        stopped,
    }
}

fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut request = http
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", REVISION);
    }
    request
}

async fn initialize(http: &reqwest::Client, url: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": REVISION, "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let response = post(http, url, None, &body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let body: Value = serde_json::from_str(&sse_or_json(response).await.remove(0)).unwrap();
    assert!(
        body["result"]["capabilities"]["tasks"].is_object(),
        "{body}"
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = post(http, url, Some(&id), &initialized)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    id
}

/// The JSON body, or every SSE event's data in order.
async fn sse_or_json(response: reqwest::Response) -> Vec<String> {
    let is_sse = response
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.to_str().unwrap_or("").starts_with("text/event-stream"));
    let text = response.text().await.unwrap();
    if !is_sse {
        return vec![text];
    }
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            // An event without data (the stream's priming event) carries no message.
            let data = data.join("\n");
            (!data.trim().is_empty()).then_some(data)
        })
        .collect()
}

/// The response to the request `body` (id 7), sent to `url` in `session`.
async fn call(http: &reqwest::Client, url: &str, session: &str, body: Value) -> Value {
    let response = post(http, url, Some(session), &body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    sse_or_json(response)
        .await
        .into_iter()
        .map(|data| serde_json::from_str::<Value>(&data).unwrap())
        .find(|message| message.get("id") == Some(&json!(7)))
        .expect("the response")
}

fn request(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
}

async fn start_task(http: &reqwest::Client, url: &str, session: &str, ms: u64) -> String {
    let created = call(
        http,
        url,
        session,
        request(
            "tools/call",
            json!({"name": "work", "arguments": {"ms": ms}, "task": {"ttl": 60_000}}),
        ),
    )
    .await;
    assert_eq!(created["result"]["task"]["status"], "working", "{created}");
    created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn status(http: &reqwest::Client, url: &str, session: &str, task: &str) -> Value {
    call(
        http,
        url,
        session,
        request("tasks/get", json!({"taskId": task})),
    )
    .await
}

#[tokio::test]
async fn a_task_started_on_one_instance_is_polled_listed_and_awaited_on_the_other() {
    let store = Arc::new(MemorySessionStore::new());
    let (a, b) = (instance(&store).await, instance(&store).await);
    let http = reqwest::Client::new();
    let session = initialize(&http, &a.url).await;
    let task = start_task(&http, &a.url, &session, 600).await;

    let got = status(&http, &b.url, &session, &task).await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    let listed = call(&http, &b.url, &session, request("tasks/list", json!({}))).await;
    let ids: Vec<&Value> = listed["result"]["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| &t["taskId"])
        .collect();
    assert_eq!(ids, vec![&json!(task)], "{listed}");

    // Awaited on B while it runs on A: B hears of its end through the store.
    let result = call(
        &http,
        &b.url,
        &session,
        request("tasks/result", json!({"taskId": task})),
    )
    .await;
    assert_eq!(
        result["result"]["content"][0]["text"], "worked 600 ms",
        "{result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(task)
    );
    for url in [&a.url, &b.url] {
        let got = status(&http, url, &session, &task).await;
        assert_eq!(got["result"]["status"], "completed", "{got}");
    }

    // An unknown task is -32602 on both.
    let unknown = status(&http, &b.url, &session, "no-such-task").await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[tokio::test]
async fn a_task_running_on_one_instance_is_cancelled_from_the_other() {
    let store = Arc::new(MemorySessionStore::new());
    let (a, b) = (instance(&store).await, instance(&store).await);
    let http = reqwest::Client::new();
    let session = initialize(&http, &a.url).await;
    let task = start_task(&http, &a.url, &session, 60_000).await;

    let cancelled = call(
        &http,
        &b.url,
        &session,
        request("tasks/cancel", json!({"taskId": task})),
    )
    .await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    // The tool on A is stopped (the bus carries the cancellation).
    for _ in 0..100 {
        if a.stopped.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(a.stopped.load(Ordering::SeqCst), 1, "the tool on A stopped");
    assert_eq!(b.stopped.load(Ordering::SeqCst), 0);
    for url in [&a.url, &b.url] {
        let got = status(&http, url, &session, &task).await;
        assert_eq!(got["result"]["status"], "cancelled", "{got}");
        let result = call(
            &http,
            url,
            &session,
            request("tasks/result", json!({"taskId": task})),
        )
        .await;
        assert_eq!(result["error"]["code"], -32602, "{result}");
        let again = call(
            &http,
            url,
            &session,
            request("tasks/cancel", json!({"taskId": task})),
        )
        .await;
        assert_eq!(again["error"]["code"], -32602, "{again}");
    }
}

#[tokio::test]
async fn a_deleted_session_leaves_no_task_in_the_store() {
    let store = Arc::new(MemorySessionStore::new());
    let (a, b) = (instance(&store).await, instance(&store).await);
    let http = reqwest::Client::new();
    let session = initialize(&http, &a.url).await;
    let task = start_task(&http, &a.url, &session, 10).await;
    assert!(store.load_task(&session, &task).await.unwrap().is_some());
    let response = http
        .delete(&b.url)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", REVISION)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(store.load_task(&session, &task).await.unwrap().is_none());
    assert!(store.list_tasks(&session).await.unwrap().is_empty());
}

/// A session quiet on an instance keeps its engine there while one of its tasks runs
/// there (releasing it would cancel the task).
#[tokio::test]
async fn a_running_task_keeps_its_sessions_engine() {
    let store = Arc::new(MemorySessionStore::new());
    let config = HttpConfig::default().replica_idle_timeout(Duration::from_millis(200));
    let a = instance_with(&store, config).await;
    let http = reqwest::Client::new();
    let session = initialize(&http, &a.url).await;
    let task = start_task(&http, &a.url, &session, 1200).await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    let result = call(
        &http,
        &a.url,
        &session,
        request("tasks/result", json!({"taskId": task})),
    )
    .await;
    assert_eq!(
        result["result"]["content"][0]["text"], "worked 1200 ms",
        "{result}"
    );
    assert_eq!(a.stopped.load(Ordering::SeqCst), 0);
}
