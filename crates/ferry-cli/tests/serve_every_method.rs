//! `ferry serve` over real stdio: every method in every revision — the session-era
//! handshake for the first four, stateless requests with `_meta` for 2026-07-28 — with
//! every response, notification and server request validated against that revision's
//! `schema.json`.

mod support;

use serde_json::{Value, json};
use support::{Schema, Server, initialize};

const SESSION: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The schema definition of each method's result.
fn result_def(method: &str) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        "server/discover" => "DiscoverResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        _ => "Result",
    }
}

/// The schema definition of a notification or server request.
fn message_def(method: &str) -> &'static str {
    match method {
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/subscriptions/acknowledged" => "SubscriptionsAcknowledgedNotification",
        "notifications/tasks/status" => "TaskStatusNotification",
        "sampling/createMessage" => "CreateMessageRequest",
        "roots/list" => "ListRootsRequest",
        "elicitation/create" => "ElicitRequest",
        other => panic!("no definition known for {other}"),
    }
}

/// Every request of a session: (method, params), all expected to succeed.
fn requests() -> Vec<(&'static str, Value)> {
    let tool = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    vec![
        ("tools/list", json!({})),
        ("tools/call", tool("echo", json!({"text": "hi"}))),
        ("tools/call", tool("add", json!({"a": 1, "b": 2}))),
        (
            "tools/call",
            tool("calculate", json!({"expression": "2 + 3 * 4"})),
        ),
        ("tools/call", tool("get_timestamp", json!({}))),
        ("tools/call", tool("evaluate", json!({"code": "40 + 2"}))),
        ("tools/call", tool("weather", json!({"city": "Oslo"}))),
        ("tools/call", tool("image", json!({}))),
        ("tools/call", tool("audio", json!({}))),
        ("tools/call", tool("embedded_resource", json!({}))),
        ("tools/call", tool("resource_link", json!({}))),
        ("tools/call", tool("mixed", json!({}))),
        ("tools/call", tool("log", json!({"message": "hello"}))),
        (
            "tools/call",
            json!({"name": "countdown", "arguments": {"steps": 2, "interval_ms": 1},
                   "_meta": {"progressToken": "count"}}),
        ),
        ("tools/call", tool("sample", json!({"prompt": "hi"}))),
        ("tools/call", tool("roots", json!({}))),
        (
            "tools/call",
            tool("elicit", json!({"message": "Who are you?"})),
        ),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "server://info"})),
        ("resources/read", json!({"uri": "ferry://readme"})),
        ("resources/read", json!({"uri": "ferry://logo.png"})),
        ("resources/read", json!({"uri": "ferry://notes/1"})),
        ("prompts/list", json!({})),
        (
            "prompts/get",
            json!({"name": "code_review", "arguments": {"code": "fn main() {}", "language": "rust"}}),
        ),
        (
            "prompts/get",
            json!({"name": "summarize", "arguments": {"text": "x"}}),
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "code_review"},
                   "argument": {"name": "language", "value": "r"}}),
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "ferry://notes/{id}"},
                   "argument": {"name": "id", "value": "1"}}),
        ),
    ]
}

fn client_capabilities(version: &str) -> Value {
    if version == "2024-11-05" || version == "2025-03-26" {
        json!({"sampling": {}, "roots": {"listChanged": true}})
    } else {
        json!({"sampling": {}, "roots": {"listChanged": true}, "elicitation": {}})
    }
}

fn answers(server: &mut Server) {
    server.answers.insert(
        "sampling/createMessage".into(),
        json!({"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}),
    );
    server.answers.insert(
        "roots/list".into(),
        json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
    );
    server.answers.insert(
        "elicitation/create".into(),
        json!({"action": "accept", "content": {"name": "Ada"}}),
    );
}

/// Check a result (and its whole response message) against the schema.
fn check_response(schema: &mut Schema, method: &str, response: &Value) -> Value {
    assert!(
        response.get("error").is_none(),
        "{} {method}: {response}",
        schema.version
    );
    schema.assert_valid("JSONRPCMessage", response);
    schema.assert_valid(result_def(method), &response["result"]);
    response["result"].clone()
}

/// Check every notification and server request seen.
fn check_backlog(schema: &mut Schema, server: &mut Server) -> Vec<Value> {
    let seen = std::mem::take(&mut server.backlog);
    for message in &seen {
        schema.assert_valid("JSONRPCMessage", message);
        let method = message["method"]
            .as_str()
            .expect("a notification or request");
        schema.assert_valid(message_def(method), message);
    }
    seen
}

#[test]
fn every_method_in_every_session_revision_validates() {
    for &version in SESSION {
        let mut schema = Schema::load(version);
        let mut server = Server::spawn(&[]);
        answers(&mut server);
        let init = initialize(&mut server, version, client_capabilities(version));
        let result = check_response(&mut schema, "initialize", &init);
        assert_eq!(result["protocolVersion"], version);
        check_response(
            &mut schema,
            "ping",
            &server.call(json!("ping"), "ping", json!({})),
        );
        let level = server.call(json!("lvl"), "logging/setLevel", json!({"level": "info"}));
        check_response(&mut schema, "logging/setLevel", &level);
        let subscribe = json!({"uri": "ferry://readme"});
        let sub = server.call(json!("sub"), "resources/subscribe", subscribe.clone());
        check_response(&mut schema, "resources/subscribe", &sub);
        for (i, (method, params)) in requests().into_iter().enumerate() {
            let response = server.call(json!(i), method, params.clone());
            // Content a revision lacks (audio before 2025-03-26, resource links before
            // 2025-06-18) cannot be expressed: the result is refused, saying why.
            let since = match params["name"].as_str() {
                Some("audio") => Some(("2025-03-26", "audio")),
                Some("resource_link") => Some(("2025-06-18", "resource_link")),
                _ => None,
            };
            if let Some((since, what)) = since.filter(|(since, _)| version < *since) {
                assert_eq!(response["error"]["code"], -32603, "{since}: {response}");
                let message = response["error"]["message"].as_str().unwrap();
                assert!(message.contains(what), "{message}");
                schema.assert_valid("JSONRPCMessage", &response);
                continue;
            }
            let result = check_response(&mut schema, method, &response);
            if method == "tools/call" && params["name"] == "elicit" && version < "2025-06-18" {
                // No elicitation before 2025-06-18: the tool fails as a result.
                assert_eq!(result["isError"], true, "{result}");
            } else if method == "tools/call" {
                assert_ne!(result["isError"], true, "{version} {params}: {result}");
            }
        }
        if version == "2025-11-25" {
            check_tasks(&mut schema, &mut server);
        }
        let unsub = server.call(json!("unsub"), "resources/unsubscribe", subscribe);
        check_response(&mut schema, "resources/unsubscribe", &unsub);
        let seen = check_backlog(&mut schema, &mut server);
        let methods: Vec<_> = seen.iter().filter_map(|m| m["method"].as_str()).collect();
        for expected in [
            "notifications/progress",
            "notifications/message",
            "sampling/createMessage",
            "roots/list",
        ] {
            assert!(
                methods.contains(&expected),
                "{version}: no {expected} in {methods:?}"
            );
        }
        if version >= "2025-06-18" {
            assert!(methods.contains(&"elicitation/create"), "{version}");
        }
        let debug_logs = seen
            .iter()
            .filter(|m| m["method"] == "notifications/message" && m["params"]["level"] == "debug")
            .count();
        assert_eq!(debug_logs, 0, "{version}: setLevel info filters debug");
        let (rest, ok) = server.finish();
        assert!(ok, "{version}: exits 0 on EOF");
        assert!(rest.is_empty(), "{version}: {rest:#?}");
    }
}

/// 2025-11-25 tasks: a task-augmented call, polled, listed, and its result.
fn check_tasks(schema: &mut Schema, server: &mut Server) {
    let created = server.call(
        json!("task"),
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 2, "interval_ms": 1}, "task": {}}),
    );
    schema.assert_valid("JSONRPCMessage", &created);
    schema.assert_valid("CreateTaskResult", &created["result"]);
    let id = created["result"]["task"]["taskId"].clone();
    let get = server.call(json!("task-get"), "tasks/get", json!({"taskId": id}));
    schema.assert_valid("GetTaskResult", &get["result"]);
    let list = server.call(json!("task-list"), "tasks/list", json!({}));
    schema.assert_valid("ListTasksResult", &list["result"]);
    let result = server.call(json!("task-result"), "tasks/result", json!({"taskId": id}));
    schema.assert_valid("CallToolResult", &result["result"]);
    schema.assert_valid("GetTaskPayloadResult", &result["result"]);
    assert_eq!(result["result"]["content"][0]["text"], "counted 2 steps");
    let late = server.call(json!("task-cancel"), "tasks/cancel", json!({"taskId": id}));
    assert_eq!(late["error"]["code"], -32602, "finished: cannot cancel");
}

/// Add the stateless era's `_meta` to `params`.
fn stateless(params: Value, capabilities: &Value) -> Value {
    let mut params = params;
    let meta = params
        .as_object_mut()
        .expect("params object")
        .entry("_meta")
        .or_insert_with(|| json!({}));
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    meta["io.modelcontextprotocol/clientCapabilities"] = capabilities.clone();
    meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "ferry-tests", "version": "1"});
    meta["io.modelcontextprotocol/logLevel"] = json!("info");
    params
}

/// Answers to `input_required` requests, as a stateless client builds them.
fn input_responses(result: &Value) -> Value {
    let mut responses = serde_json::Map::new();
    for (key, request) in result["inputRequests"].as_object().expect("inputRequests") {
        let answer = match request["method"].as_str() {
            Some("sampling/createMessage") => {
                json!({"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"})
            }
            Some("roots/list") => json!({"roots": [{"uri": "file:///work"}]}),
            Some("elicitation/create") => json!({"action": "accept", "content": {"name": "Ada"}}),
            other => panic!("unexpected input request {other:?}"),
        };
        responses.insert(key.clone(), answer);
    }
    Value::Object(responses)
}

#[test]
fn every_method_in_the_stateless_revision_validates() {
    let mut schema = Schema::load("2026-07-28");
    let mut server = Server::spawn(&[]);
    let capabilities = json!({"sampling": {}, "roots": {}, "elicitation": {}});
    let discover = server.call(
        json!("d"),
        "server/discover",
        stateless(json!({}), &capabilities),
    );
    let result = check_response(&mut schema, "server/discover", &discover);
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    schema.assert_valid("DiscoverResultResponse", &discover);
    let mut rounds = 0;
    for (i, (method, params)) in requests().into_iter().enumerate() {
        let params = stateless(params, &capabilities);
        let mut response = server.call(json!(i), method, params.clone());
        // Multi round-trip requests: answer and retry until complete.
        for round in 1.. {
            schema.assert_valid("JSONRPCMessage", &response);
            if response["result"]["resultType"] != "input_required" {
                break;
            }
            assert!(round < 5, "{method}: too many rounds");
            rounds += 1;
            schema.assert_valid("InputRequiredResult", &response["result"]);
            let mut retry = params.clone();
            retry["inputResponses"] = input_responses(&response["result"]);
            retry["requestState"] = response["result"]["requestState"].clone();
            response = server.call(json!(format!("{i}.{round}")), method, retry);
        }
        let result = check_response(&mut schema, method, &response);
        assert_eq!(result["resultType"], "complete", "{method}: {result}");
        assert!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "ferry",
            "{result}"
        );
        if method == "tools/call" {
            assert_ne!(result["isError"], true, "{params}: {result}");
        }
    }
    assert_eq!(rounds, 3, "sample, roots and elicit each take one round");
    // Session-only methods do not exist in the stateless revision.
    for method in ["ping", "logging/setLevel", "resources/subscribe"] {
        let response = server.call(
            json!(method),
            method,
            stateless(json!({"uri": "x", "level": "info"}), &capabilities),
        );
        assert_eq!(response["error"]["code"], -32601, "{method}: {response}");
        schema.assert_valid("JSONRPCMessage", &response);
    }
    // A listener: acknowledged first; ended gracefully, with a result, when stdin closes.
    server.send(
        &json!({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
        "params": stateless(json!({"notifications": {"toolsListChanged": true,
            "resourceSubscriptions": ["ferry://readme"]}}), &capabilities)}),
    );
    let ack = loop {
        let message = server.read().expect("acknowledgement");
        if message["method"] == "notifications/subscriptions/acknowledged" {
            break message;
        }
        server.backlog.push(message);
    };
    schema.assert_valid(
        message_def("notifications/subscriptions/acknowledged"),
        &ack,
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen"
    );
    check_backlog(&mut schema, &mut server);
    let started = std::time::Instant::now();
    let (rest, ok) = server.finish();
    assert!(ok);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "no wait for the grace period"
    );
    let end = rest
        .iter()
        .find(|m| m["id"] == "listen")
        .expect("graceful end");
    let result = check_response(&mut schema, "subscriptions/listen", end);
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen"
    );
    schema.assert_valid("SubscriptionsListenResultResponse", end);
}
