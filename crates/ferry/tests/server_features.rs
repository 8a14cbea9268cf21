//! Server features through the in-memory transport and `TestClient`: resources,
//! templates, subscriptions, prompts, completion, logging, pagination, runtime changes.

use std::time::Duration;

use ferry::engine::CallError;
use ferry::protocol::ProtocolVersion::{self, *};
use ferry::protocol::types::{LoggingLevel, Resource, ResourceContents, ResourceTemplate};
use ferry::server::{Context, ResourceError, Server, TemplateVars, TestClient};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Greeting {
    /// Who to greet.
    name: String,
    /// How (optional).
    style: Option<String>,
}

fn server() -> Server {
    let mut builder = Server::builder("features", "1.0.0")
        .page_size(2)
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .tool(
            "log",
            "Log at every level",
            |a: Text, cx: Context| async move {
                let mut sent = 0;
                for level in [
                    LoggingLevel::Debug,
                    LoggingLevel::Warning,
                    LoggingLevel::Error,
                ] {
                    sent += u32::from(cx.log(level, Some("test"), a.text.clone()).await);
                }
                format!("{sent}")
            },
        )
        .resource(
            Resource {
                uri: "test://static".into(),
                name: "static".into(),
                mime_type: Some("text/plain".into()),
                ..Default::default()
            },
            |_cx: Context| async {
                vec![ResourceContents::text(
                    "test://static",
                    "text/plain",
                    "hello",
                )]
            },
        )
        .resource_template(
            ResourceTemplate {
                uri_template: "test://items/{id}".into(),
                name: "item".into(),
                ..Default::default()
            },
            |uri: String, vars: TemplateVars, _cx: Context| async move {
                match vars.get("id").map(String::as_str) {
                    Some("missing") => Err(ResourceError::NotFound(uri)),
                    Some(id) => Ok(vec![ResourceContents::text(
                        uri.clone(),
                        "text/plain",
                        format!("item {id}"),
                    )]),
                    None => Err(ResourceError::Failed("no id".into())),
                }
            },
        )
        .prompt(
            "greet",
            "Greet someone",
            |a: Greeting, _cx: Context| async move {
                format!("{} {}", a.style.unwrap_or_else(|| "Hello".into()), a.name)
            },
        )
        .complete_prompt_argument("greet", "name", |req, _cx| async move {
            ["alice", "albert", "bob"]
                .into_iter()
                .filter(|n| n.starts_with(&req.value))
                .map(String::from)
                .collect()
        })
        .complete_template_variable("test://items/{id}", "id", |_req, _cx| async move {
            (0..150).map(|i| i.to_string()).collect()
        });
    for i in 0..3 {
        builder = builder.tool(
            &format!("t{i}"),
            "filler",
            |a: Text, _cx: Context| async move { a.text },
        );
    }
    builder.build()
}

fn code(error: CallError) -> i64 {
    match error {
        CallError::Rpc(e) => e.code,
        other => panic!("expected an error response, got {other:?}"),
    }
}

async fn connect(version: ProtocolVersion) -> TestClient {
    TestClient::connect(&server(), version)
        .await
        .expect("connect")
}

#[tokio::test]
async fn capabilities_reflect_registrations() {
    let empty = Server::builder("empty", "1").build();
    let client = TestClient::connect(&empty, V2025_06_18).await.unwrap();
    let error = client.request("tools/list", json!({})).await.unwrap_err();
    assert_eq!(code(error), -32601, "no tools registered, no tools/list");

    let client = connect(V2026_07_28).await;
    let caps = &client.request("server/discover", json!({})).await.unwrap()["capabilities"];
    for key in ["tools", "resources", "prompts", "completions", "logging"] {
        assert!(caps.get(key).is_some(), "{key} declared: {caps}");
    }
    assert_eq!(caps["resources"]["subscribe"], true);
}

#[tokio::test]
async fn pagination_walks_every_list_and_refuses_bad_cursors() {
    for version in [V2024_11_05, V2025_11_25, V2026_07_28] {
        let client = connect(version).await;
        let mut names = Vec::new();
        let mut cursor = Value::Null;
        loop {
            let params = if cursor.is_null() {
                json!({})
            } else {
                json!({"cursor": cursor})
            };
            let page = client.request("tools/list", params).await.unwrap();
            let tools = page["tools"].as_array().unwrap();
            assert!(tools.len() <= 2, "page size 2");
            names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
            cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
            if cursor.is_null() {
                break;
            }
        }
        assert_eq!(names, ["echo", "log", "t0", "t1", "t2"], "{version}");
        let error = client
            .request("tools/list", json!({"cursor": "not-a-cursor"}))
            .await
            .unwrap_err();
        assert_eq!(code(error), -32602);
    }
}

#[tokio::test]
async fn resources_static_templates_and_not_found_per_revision() {
    for (version, not_found) in [
        (V2025_06_18, -32002),
        (V2025_11_25, -32002),
        (V2026_07_28, -32602),
    ] {
        let client = connect(version).await;
        let list = client.request("resources/list", json!({})).await.unwrap();
        assert_eq!(list["resources"][0]["uri"], "test://static");
        let templates = client
            .request("resources/templates/list", json!({}))
            .await
            .unwrap();
        assert_eq!(
            templates["resourceTemplates"][0]["uriTemplate"],
            "test://items/{id}"
        );
        let read = client
            .request("resources/read", json!({"uri": "test://static"}))
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["text"], "hello");
        let item = client
            .request("resources/read", json!({"uri": "test://items/42"}))
            .await
            .unwrap();
        assert_eq!(item["contents"][0]["text"], "item 42");
        assert_eq!(item["contents"][0]["uri"], "test://items/42");
        for uri in ["test://nothing", "test://items/missing"] {
            let error = client
                .request("resources/read", json!({"uri": uri}))
                .await
                .unwrap_err();
            assert_eq!(code(error), not_found, "{version} {uri}");
        }
    }
}

#[tokio::test]
async fn subscriptions_deliver_updates_only_for_subscribed_uris() {
    let server = server();
    let mut client = TestClient::connect(&server, V2025_06_18).await.unwrap();
    client
        .request("resources/subscribe", json!({"uri": "test://items/7"}))
        .await
        .unwrap();
    server.notify_resource_updated("test://items/8");
    server.notify_resource_updated("test://items/7");
    let (method, params) = tokio::time::timeout(Duration::from_secs(5), client.next_notification())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(method, "notifications/resources/updated");
    assert_eq!(params["uri"], "test://items/7", "not 8: not subscribed");
    client
        .request("resources/unsubscribe", json!({"uri": "test://items/7"}))
        .await
        .unwrap();
    server.notify_resource_updated("test://items/7");
    client.request("ping", json!({})).await.unwrap();
    assert!(client.try_next_notification().is_none(), "unsubscribed");
    let error = client
        .request("resources/subscribe", json!({"uri": "other://x"}))
        .await
        .unwrap_err();
    assert_eq!(code(error), -32002);
    let stateless = TestClient::connect(&server, V2026_07_28).await.unwrap();
    let error = stateless
        .request("resources/subscribe", json!({"uri": "test://static"}))
        .await
        .unwrap_err();
    assert_eq!(
        code(error),
        -32601,
        "2026-07-28 subscribes through subscriptions/listen"
    );
}

/// `resources/subscribe` keeps at most `MAX_RESOURCE_SUBSCRIPTIONS` URIs per session (a
/// template matches endless ones), each at most `MAX_SUBSCRIBED_URI_BYTES` long.
#[tokio::test]
async fn a_session_s_subscriptions_are_bounded() {
    use ferry::server::{MAX_RESOURCE_SUBSCRIPTIONS, MAX_SUBSCRIBED_URI_BYTES};
    let server = server();
    let client = TestClient::connect(&server, V2025_06_18).await.unwrap();
    for n in 0..MAX_RESOURCE_SUBSCRIPTIONS {
        let uri = format!("test://items/{n}");
        client
            .request("resources/subscribe", json!({"uri": uri}))
            .await
            .unwrap();
    }
    let error = client
        .request("resources/subscribe", json!({"uri": "test://items/x"}))
        .await
        .unwrap_err();
    assert_eq!(code(error), -32602);
    // Again one already taken: still fine; one freed makes room.
    client
        .request("resources/subscribe", json!({"uri": "test://items/0"}))
        .await
        .unwrap();
    client
        .request("resources/unsubscribe", json!({"uri": "test://items/0"}))
        .await
        .unwrap();
    client
        .request("resources/subscribe", json!({"uri": "test://items/x"}))
        .await
        .unwrap();
    let long = format!("test://items/{}", "y".repeat(MAX_SUBSCRIBED_URI_BYTES));
    let error = client
        .request("resources/subscribe", json!({"uri": long}))
        .await
        .unwrap_err();
    assert_eq!(code(error), -32602);
}

#[tokio::test]
async fn prompts_declare_and_validate_arguments() {
    let client = connect(V2025_11_25).await;
    let list = client.request("prompts/list", json!({})).await.unwrap();
    let arguments = &list["prompts"][0]["arguments"];
    assert_eq!(
        arguments[0],
        json!({"name": "name", "description": "Who to greet.", "required": true})
    );
    assert_eq!(arguments[1]["required"], false);
    let got = client
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        got["messages"][0],
        json!({"role": "user", "content": {"type": "text", "text": "Hello Ada"}})
    );
    for params in [json!({"name": "greet"}), json!({"name": "nope"})] {
        let error = client.request("prompts/get", params).await.unwrap_err();
        assert_eq!(code(error), -32602);
    }
}

#[tokio::test]
async fn completion_for_prompts_and_templates() {
    let client = connect(V2025_06_18).await;
    let done = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "al"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        done["completion"],
        json!({"values": ["alice", "albert"], "total": 2, "hasMore": false})
    );
    let many = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "test://items/{id}"}, "argument": {"name": "id", "value": ""}}),
        )
        .await
        .unwrap();
    assert_eq!(many["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!(
        (
            many["completion"]["total"].clone(),
            many["completion"]["hasMore"].clone()
        ),
        (json!(150), json!(true))
    );
    let error = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}}),
        )
        .await
        .unwrap_err();
    assert_eq!(code(error), -32602);
}

#[tokio::test]
async fn logging_follows_set_level_and_per_request_level() {
    let mut client = connect(V2025_06_18).await;
    let sent = client.call_tool("log", json!({"text": "x"})).await.unwrap();
    assert_eq!(
        sent["content"][0]["text"], "3",
        "every level until setLevel"
    );
    client
        .request("logging/setLevel", json!({"level": "warning"}))
        .await
        .unwrap();
    let sent = client.call_tool("log", json!({"text": "x"})).await.unwrap();
    assert_eq!(sent["content"][0]["text"], "2");
    let mut levels = Vec::new();
    while let Some((method, params)) = client.try_next_notification() {
        assert_eq!(method, "notifications/message");
        levels.push(params["level"].as_str().unwrap().to_owned());
    }
    assert_eq!(levels, ["debug", "warning", "error", "warning", "error"]);

    let client = connect(V2026_07_28).await;
    let sent = client.call_tool("log", json!({"text": "x"})).await.unwrap();
    assert_eq!(
        sent["content"][0]["text"], "0",
        "no logLevel in _meta: no messages"
    );
    let sent = client
        .request(
            "tools/call",
            json!({"name": "log", "arguments": {"text": "x"}, "_meta": {"io.modelcontextprotocol/logLevel": "error"}}),
        )
        .await
        .unwrap();
    assert_eq!(sent["content"][0]["text"], "1");
}

#[tokio::test]
async fn runtime_changes_notify_initialized_clients() {
    let server = server();
    let mut client = TestClient::connect(&server, V2025_03_26).await.unwrap();
    server.add_tool("late", "Added later", |a: Text, _cx: Context| async move {
        a.text
    });
    let (method, _) = tokio::time::timeout(Duration::from_secs(5), client.next_notification())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(method, "notifications/tools/list_changed");
    let result = client
        .call_tool("late", json!({"text": "ok"}))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "ok");
    assert!(server.remove_tool("late"));
    let (method, _) = client.next_notification().await.unwrap();
    assert_eq!(method, "notifications/tools/list_changed");
    let error = client
        .call_tool("late", json!({"text": "ok"}))
        .await
        .unwrap_err();
    assert_eq!(code(error), -32602, "unknown tool");
    assert!(server.remove_prompt("greet"));
    let (method, _) = client.next_notification().await.unwrap();
    assert_eq!(method, "notifications/prompts/list_changed");
}

#[tokio::test]
async fn handlers_share_typed_state() {
    use std::sync::atomic::{AtomicU64, Ordering};
    struct Hits(AtomicU64);
    let server = Server::builder("state", "1")
        .state(Hits(AtomicU64::new(0)))
        .tool("hit", "Count a hit", |_: Text, cx: Context| async move {
            let hits = cx.state::<Hits>().expect("state given");
            let n = hits.0.fetch_add(1, Ordering::Relaxed) + 1;
            assert!(cx.state::<String>().is_none(), "no state of another type");
            n.to_string()
        })
        .build();
    let a = TestClient::connect(&server, V2025_06_18).await.unwrap();
    let b = TestClient::connect(&server, V2026_07_28).await.unwrap();
    a.call_tool("hit", json!({"text": ""})).await.unwrap();
    let second = b.call_tool("hit", json!({"text": ""})).await.unwrap();
    assert_eq!(
        second["content"][0]["text"], "2",
        "one state across connections"
    );
    assert_eq!(server.stats().connections_open, 2);
    // initialize and two calls; the engine answers pings without the server.
    assert_eq!(server.stats().requests_served, 3);
}

#[tokio::test]
async fn tracing_events_in_handlers_reach_their_client() {
    use tracing_subscriber::layer::SubscriberExt;
    let subscriber = tracing_subscriber::registry().with(ferry::server::ClientLogLayer::new());
    let _guard = tracing::subscriber::set_default(subscriber);
    let server = Server::builder("traced", "1")
        .tool(
            "work",
            "Log through tracing",
            |_: Text, _cx: Context| async move {
                tracing::debug!("too detailed");
                tracing::info!(answer = 42, "hello from tracing");
                "done"
            },
        )
        .build();
    let mut client = TestClient::connect(&server, V2025_06_18).await.unwrap();
    client
        .request("logging/setLevel", json!({"level": "info"}))
        .await
        .unwrap();
    client.call_tool("work", json!({"text": ""})).await.unwrap();
    let (method, params) = client.next_notification().await.unwrap();
    assert_eq!(method, "notifications/message");
    assert_eq!(params["level"], "info");
    assert_eq!(
        params["data"],
        json!({"answer": 42, "message": "hello from tracing"})
    );
    assert_eq!(params["logger"], "server_features");
    assert_eq!(client.try_next_notification(), None, "debug filtered out");
    // Outside any handler, nothing is sent anywhere.
    tracing::info!("not in a handler");
    assert_eq!(client.try_next_notification(), None);
}

#[tokio::test]
async fn caching_hints_and_declared_capabilities() {
    use ferry::protocol::types::CacheScope;
    let server = Server::builder("cache", "1")
        .list_cache(Duration::from_secs(300), CacheScope::Public)
        .declare_tools()
        .build();
    let stateless = TestClient::connect(&server, V2026_07_28).await.unwrap();
    let list = stateless.request("tools/list", json!({})).await.unwrap();
    assert_eq!(list["ttlMs"], 300_000);
    assert_eq!(list["cacheScope"], "public");
    let discover = stateless
        .request("server/discover", json!({}))
        .await
        .unwrap();
    assert_eq!(discover["ttlMs"], 300_000);
    // Declared while empty: a session-era client hears tools arrive.
    let mut session = TestClient::connect(&server, V2025_06_18).await.unwrap();
    server.add_tool(
        "late",
        "Late",
        |a: Text, _cx: Context| async move { a.text },
    );
    let (method, _) = tokio::time::timeout(Duration::from_secs(5), session.next_notification())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(method, "notifications/tools/list_changed");
    let session_list = session.request("tools/list", json!({})).await.unwrap();
    assert!(
        session_list.get("ttlMs").is_none(),
        "no hints before 2026-07-28"
    );
}

#[tokio::test]
async fn handlers_take_extractors() {
    use ferry::server::{Cancel, ClientCaps, Meta, Progress, State};
    struct Greeting(String);
    async fn greet(a: Text, greeting: State<Greeting>, meta: Meta, caps: ClientCaps) -> String {
        let token = meta.0.progress_token.is_some();
        let sampling = caps.0.sampling.is_some();
        format!(
            "{} {} (token {token}, sampling {sampling})",
            greeting.0, a.text
        )
    }
    async fn bare(a: Text) -> String {
        a.text
    }
    async fn counted(_: Text, count: State<u64>, _p: Progress, _c: Cancel) -> String {
        count.to_string()
    }
    // A handler's state missing from the builder is found when it is built.
    let missing = Server::builder("extract", "1")
        .tool("counted", "Missing state", counted)
        .try_build()
        .unwrap_err();
    assert!(
        missing.to_string().contains("\"counted\" takes State<u64>"),
        "{missing}"
    );
    let server = Server::builder("extract", "1")
        .state(Greeting("Hello".into()))
        .state(7u64)
        .tool("greet", "Greet", greet)
        .tool("bare", "No context", bare)
        .tool("counted", "Progress and Cancel too", counted)
        .build();
    let client = TestClient::connect(&server, V2026_07_28).await.unwrap();
    let result = client
        .request(
            "tools/call",
            json!({"name": "greet", "arguments": {"text": "Ada"}, "_meta": {"progressToken": 1}}),
        )
        .await
        .unwrap();
    assert_eq!(
        result["content"][0]["text"],
        "Hello Ada (token true, sampling false)"
    );
    let result = client
        .call_tool("bare", json!({"text": "x"}))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "x");
    let result = client
        .call_tool("counted", json!({"text": "x"}))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "7");
}

/// Raw `tools/call` frames, however their params are spelled, are read as serde reads them
/// (the usual ones by a scan of the validated text, the rest by serde): the same answers.
#[tokio::test]
async fn tools_call_params_are_read_the_same_however_spelled() {
    use ferry::engine::{Transport, TransportEvent};
    let server = Server::builder("raw", "1.0.0")
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .build();
    let (to_server, incoming) = tokio::sync::mpsc::channel(16);
    let (outgoing, mut from_server) = tokio::sync::mpsc::channel(16);
    let _engine = server.serve(Transport::new(incoming, outgoing));
    let mut exchange = async |line: String| -> Value {
        to_server
            .send(TransportEvent::Frame(line.into_bytes()))
            .await
            .expect("sent");
        let frame = from_server.recv().await.expect("an answer");
        serde_json::from_slice(&frame).expect("JSON")
    };
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    assert!(exchange(init.into()).await["result"].is_object());
    let text = |answer: &Value| answer["result"]["content"][0]["text"].clone();
    for (params, expected) in [
        (r#"{"name":"echo","arguments":{"text":"a"}}"#, json!("a")),
        (
            r#" { "arguments" : { "text" : "b\"" } , "name" : "echo" } "#,
            json!("b\""),
        ),
        (
            r#"{"n\u0061me":"echo","arguments":{"text":"c"}}"#,
            json!("c"),
        ),
        (
            r#"{"name":"ech\u006f","arguments":{"text":"d"}}"#,
            json!("d"),
        ),
        (
            r#"{"name":"echo","arguments":{"text":"e"},"_meta":null,"task":null,"requestState":null,"x":[{"name":"}"}]}"#,
            json!("e"),
        ),
        (
            r#"{"name":"echo","arguments":{"text":"f"},"_meta":{"progressToken":5}}"#,
            json!("f"),
        ),
        (
            r#"{"name":"echo","arguments":{"text":"g","text":"h"}}"#,
            json!("h"),
        ),
        // An exponent in range, and text that looks like one: read as usual.
        (
            r#"{"name":"echo","arguments":{"text":"2e5","n":[1.5E+3,{"x":2e-1}]}}"#,
            json!("2e5"),
        ),
        (
            r#"{"name":"echo","arguments":{"text":"\u00e9\n","ok":"\ud83e\udd80"}}"#,
            json!("é\n"),
        ),
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
        let answer = exchange(line).await;
        assert_eq!(text(&answer), expected, "{params}: {answer}");
    }
    for params in [
        r#"{"name":"echo","name":"echo","arguments":{"text":"a"}}"#,
        r#"{"name":"echo","arguments":"text"}"#,
        r#"{"name":null,"arguments":{"text":"a"}}"#,
        r#"{"name":"echo","arguments":{"text":"a"},"_meta":3}"#,
        r#"{"name":"echo","arguments":{"text":"a"},"requestState":7}"#,
        // What the arguments' map refuses, though the tool's type would skip it: a number
        // out of range, a lone surrogate.
        r#"{"name":"echo","arguments":{"text":"a","big":1e400}}"#,
        r#"{"name":"echo","arguments":{"text":"a","n":[{"m":-2E+999}]}}"#,
        r#"{"name":"echo","arguments":{"text":"a","s":"\ud800"}}"#,
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{params}}}"#);
        let answer = exchange(line).await;
        assert_eq!(answer["error"]["code"], -32602, "{params}: {answer}");
    }
    // Missing arguments: the tool's argument error (a -32602 before 2025-11-25).
    let line = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":null}}"#;
    let answer = exchange(line.into()).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
}

/// Arguments whose schema counts how often it is derived.
#[derive(Deserialize)]
struct Counted {
    #[allow(dead_code)]
    n: u32,
}

static DERIVED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl JsonSchema for Counted {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Counted".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        DERIVED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        schemars::json_schema!({"type": "object", "properties": {"n": {"type": "integer"}}})
    }
}

#[tokio::test]
async fn a_tools_schema_is_derived_once_on_first_use() {
    let derived = || DERIVED.load(std::sync::atomic::Ordering::SeqCst);
    let server = Server::builder("lazy", "1")
        .tool("count", "Counted", |_: Counted, _cx: Context| async move {
            "ok".to_owned()
        })
        .build();
    // Not derived when built: the arguments are a struct, an object, as serde tells.
    assert_eq!(derived(), 0, "derived when built");
    let client = TestClient::connect(&server, V2025_11_25).await.unwrap();
    let called = client.call_tool("count", json!({"n": 1})).await.unwrap();
    assert_eq!(called["content"][0]["text"], "ok");
    assert_eq!(derived(), 0, "derived for a call");
    for _ in 0..2 {
        let listed = client.request("tools/list", json!({})).await.unwrap();
        assert_eq!(
            listed["tools"][0]["inputSchema"]["properties"]["n"]["type"],
            "integer"
        );
    }
    let other = TestClient::connect(&server, V2024_11_05).await.unwrap();
    other.request("tools/list", json!({})).await.unwrap();
    assert_eq!(derived(), 1, "derived once, for every session and list");
}
