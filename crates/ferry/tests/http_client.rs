//! The Streamable HTTP client transport against Ferry's own HTTP server, over real sockets
//! on 127.0.0.1: both eras, JSON and SSE answers, progress, cancellation, the GET stream,
//! resuming a cut stream (after the server's `retry`), a session the server forgot, DELETE
//! on close, custom headers, `Mcp-Param-*` headers, an unreachable server.

mod http_client_support;

use std::time::Duration;

use ferry::client::{CallOptions, Client, ClientError};
use ferry::http::HttpConfig;
use ferry::http_client::HttpClientConfig;
use ferry::protocol::ProtocolVersion;
use ferry::protocol::methods::ServerNotification;
use ferry::protocol::types::ContentBlock;
use http_client_support::{Fixture, Proxy, Text, start, text_of};
use serde_json::json;

const SESSION_VERSIONS: [ProtocolVersion; 3] = [
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_03_26,
];

async fn connect(
    url: &str,
    version: Option<ProtocolVersion>,
    config: HttpClientConfig,
) -> (Client, ferry::http_client::HttpConnection) {
    let mut builder = Client::builder("http-client-test", "1.0.0")
        .on_sampling(|params| async move {
            let asked = serde_json::to_value(&params.messages[0].content).unwrap();
            Ok(serde_json::from_value(json!({
                "role": "assistant", "model": "test",
                "content": {"type": "text", "text": format!("sampled {}", asked["text"].as_str().unwrap_or("?"))}
            }))
            .unwrap())
        });
    if let Some(version) = version {
        builder = builder.version(version);
    }
    builder.connect_http(url, config).await.unwrap()
}

async fn progress_call(client: &Client, tool: &str) -> (String, Vec<f64>) {
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let result = client
        .call_tool_with(tool, json!({}), options)
        .await
        .unwrap();
    let mut seen = Vec::new();
    while let Ok(update) = rx.try_recv() {
        seen.push(update.progress);
    }
    (text_of(&result), seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_era_json_and_sse() {
    let fixture = start(HttpConfig::default()).await;
    let (client, connection) = connect(&fixture.url, None, HttpClientConfig::default()).await;
    assert_eq!(client.version(), ProtocolVersion::V2026_07_28);
    assert_eq!(connection.session_id(), None);
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    let echoed = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(echoed.content[0], ContentBlock::text("hi"));
    let (done, progress) = progress_call(&client, "slow").await;
    assert_eq!((done.as_str(), progress), ("done", vec![1.0, 2.0]));
    // `x-mcp-header`: the `sql` tool's region is mirrored into Mcp-Param-Region (the
    // server refuses the call without it).
    let region = client
        .call_tool("sql", json!({"region": "Zürich", "query": "select 1"}))
        .await
        .unwrap();
    assert_eq!(text_of(&region), "\"Zürich\"");
    // A tool the server does not know: its 404 with a JSON-RPC error is passed on.
    let unknown = client.call_tool("nope", json!({})).await.unwrap_err();
    assert!(matches!(unknown, ClientError::Rpc(_)), "{unknown:?}");
    drop(client);
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_era_every_revision() {
    session_era_on(HttpConfig::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_era_every_revision_answered_with_sse() {
    session_era_on(HttpConfig::default().sse_responses(true)).await;
}

async fn session_era_on(config: HttpConfig) {
    let fixture = start(config).await;
    for version in SESSION_VERSIONS {
        let (client, connection) =
            connect(&fixture.url, Some(version), HttpClientConfig::default()).await;
        assert_eq!(client.version(), version);
        let session = connection.session_id().expect("a session id");
        let echoed = client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert_eq!(text_of(&echoed), "hi", "{version}");
        let (done, progress) = progress_call(&client, "slow").await;
        assert_eq!(
            (done.as_str(), progress),
            ("done", vec![1.0, 2.0]),
            "{version}"
        );
        // The server's sampling request arrives on the POST's stream; our answer is POSTed.
        let asked = client.call_tool("ask", json!({"text": "x"})).await.unwrap();
        assert_eq!(text_of(&asked), "sampled x", "{version}");
        drop(client);
        connection.close().await;
        // Closing DELETEd the session: the server no longer knows it.
        assert_eq!(fixture.session_status(&session).await, 404, "{version}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_get_stream_carries_list_changes() {
    let fixture = start(HttpConfig::default()).await;
    let (client, connection) = connect(
        &fixture.url,
        Some(ProtocolVersion::V2025_11_25),
        HttpClientConfig::default(),
    )
    .await;
    let mut notifications = client.notifications();
    // The GET stream opens in the background; a change made before it is connected goes
    // to the session's event log instead, so changes are made until one arrives.
    let mut arrived = false;
    for round in 0..50 {
        fixture.server.add_tool(
            &format!("added_{round}"),
            "Added at runtime",
            |a: Text, _cx: ferry::server::Context| async move { a.text },
        );
        if let Ok(Ok(ServerNotification::ToolListChanged(_))) =
            tokio::time::timeout(Duration::from_millis(200), notifications.recv()).await
        {
            arrived = true;
            break;
        }
    }
    assert!(arrived, "a list change arrived on the GET stream");
    drop(client);
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_midway_is_resumed_without_loss_or_duplicates() {
    let fixture = start(HttpConfig::default()).await;
    let proxy = Proxy::start(fixture.address, b"notifications/progress").await;
    let config = HttpClientConfig::default().standalone_stream(false);
    for version in SESSION_VERSIONS {
        proxy.arm();
        let (client, connection) = connect(&proxy.url, Some(version), config.clone()).await;
        let (done, progress) = progress_call(&client, "slow").await;
        assert_eq!(proxy.cuts(), 1, "{version}: the proxy cut the stream");
        assert_eq!(
            (done.as_str(), progress),
            ("done", vec![1.0, 2.0]),
            "{version}"
        );
        drop(client);
        connection.close().await;
        proxy.reset();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_stream_is_resumed_after_the_servers_retry() {
    // The server asks for 2.5 s between reconnections (its priming event's `retry`); the
    // client's own default is far shorter. Resuming sooner than asked would be a bug, so
    // the bound is a lower one: it holds however slow the machine.
    let retry = Duration::from_millis(2500);
    let fixture = start(HttpConfig {
        sse_retry: retry,
        ..HttpConfig::default()
    })
    .await;
    let proxy = Proxy::start(fixture.address, b"notifications/progress").await;
    let mut config = HttpClientConfig::default().standalone_stream(false);
    config.default_retry = Duration::from_millis(50);
    proxy.arm();
    let (client, connection) =
        connect(&proxy.url, Some(ProtocolVersion::V2025_11_25), config).await;
    let started = std::time::Instant::now();
    let (done, progress) = progress_call(&client, "slow").await;
    let took = started.elapsed();
    assert_eq!(proxy.cuts(), 1, "the proxy cut the stream");
    assert_eq!((done.as_str(), progress), ("done", vec![1.0, 2.0]));
    assert!(
        took >= retry,
        "resumed after {took:?}, before the server's retry"
    );
    drop(client);
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_session_is_renewed_transparently() {
    let fixture = start(HttpConfig::default()).await;
    // Without the GET stream, only the requests below find out that the session is gone
    // (the stream would race them to it: see the next test).
    let (client, connection) = connect(
        &fixture.url,
        Some(ProtocolVersion::V2025_11_25),
        HttpClientConfig::default().standalone_stream(false),
    )
    .await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    let first = connection.session_id().unwrap();
    // The session ends behind the client's back.
    fixture.delete_session(&first).await;
    // tools/list is safe to repeat: sent again on a new session.
    let again = client.list_all_tools().await.unwrap();
    assert_eq!(again.len(), tools.len());
    let second = connection.session_id().unwrap();
    assert_ne!(first, second);
    assert_eq!(connection.sessions_started(), 2);
    // A read-only tool (annotated so) is repeated too...
    let peeked = client.call_tool("peek", json!({})).await;
    assert_eq!(text_of(&peeked.unwrap()), "peeked");
    fixture.delete_session(&second).await;
    let peeked = client.call_tool("peek", json!({})).await.unwrap();
    assert_eq!(text_of(&peeked), "peeked");
    // ...but a tool call without that signal is not: the caller hears why.
    fixture
        .delete_session(&connection.session_id().unwrap())
        .await;
    let refused = client
        .call_tool("echo", json!({"text": "once"}))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("not sent again"), "{refused}");
    // The client goes on working on the new session.
    let echoed = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text_of(&echoed), "hi");
    assert_eq!(connection.sessions_started(), 4);
    drop(client);
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_made_while_a_new_session_starts_goes_to_the_new_session() {
    let fixture = start(HttpConfig::default()).await;
    let config = HttpClientConfig {
        default_retry: Duration::from_millis(20),
        ..HttpClientConfig::default()
    };
    let (client, connection) =
        connect(&fixture.url, Some(ProtocolVersion::V2025_11_25), config).await;
    let first = connection.session_id().unwrap();
    assert_eq!(fixture.initializes(), 1);
    // The GET stream finds the session gone and starts a new one; the server holds its
    // initialize a while, and a tool call that is not safe to repeat comes meanwhile.
    fixture.hold_initialize(Duration::from_millis(300));
    fixture.delete_session(&first).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while fixture.initializes() < 2 {
        assert!(std::time::Instant::now() < deadline, "no new session");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let echoed = client
        .call_tool("echo", json!({"text": "meanwhile"}))
        .await
        .unwrap();
    assert_eq!(text_of(&echoed), "meanwhile");
    assert_ne!(connection.session_id().unwrap(), first);
    assert_eq!(connection.sessions_started(), 2);
    assert_eq!(fixture.initializes(), 2);
    drop(client);
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_expires_and_is_renewed() {
    let config = HttpConfig::default().session_idle_timeout(Duration::from_millis(200));
    let fixture = start(config).await;
    let client_config = HttpClientConfig::default().standalone_stream(false);
    let (client, connection) = connect(
        &fixture.url,
        Some(ProtocolVersion::V2025_06_18),
        client_config,
    )
    .await;
    let first = connection.session_id().unwrap();
    // Past the idle time the server has forgotten the session (whether or not its sweeper
    // ran: a lookup checks the idle time too). Nothing may touch it meanwhile.
    tokio::time::sleep(Duration::from_millis(500)).await;
    client.ping().await.unwrap();
    assert_ne!(connection.session_id().unwrap(), first);
    assert_eq!(connection.sessions_started(), 2);
    drop(client);
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_stateless_call_closes_its_request() {
    let mut fixture = start(HttpConfig::default()).await;
    let (client, connection) = connect(&fixture.url, None, HttpClientConfig::default()).await;
    let call = client.call_tool("hang", json!({}));
    // The call is under way once the server runs the handler.
    let waited = tokio::select! {
        _ = call => panic!("hang never answers"),
        started = fixture.hang_events.recv() => started,
    };
    assert_eq!(waited, Some("started"));
    // `call` is dropped: the transport closes the HTTP exchange, the server cancels.
    let dropped = tokio::time::timeout(Duration::from_secs(10), fixture.hang_events.recv())
        .await
        .expect("the server cancels the handler when the client closes the request");
    assert_eq!(dropped, Some("dropped"));
    drop(client);
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_headers_reach_the_server() {
    let fixture = start(HttpConfig::default()).await;
    let config = HttpClientConfig::default()
        .header("Authorization", "Bearer s3cret")
        .unwrap();
    for version in [None, Some(ProtocolVersion::V2025_11_25)] {
        let (client, connection) = connect(&fixture.url, version, config.clone()).await;
        client.ping().await.unwrap();
        drop(client);
        connection.close().await;
    }
    let seen = fixture.authorizations();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|h| h == "Bearer s3cret"),
        "every request carried the header: {seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_a_clean_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let error = Client::builder("t", "1")
        .connect_http(
            &format!("http://{address}/mcp"),
            HttpClientConfig::default(),
        )
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(text.contains("onnect"), "{text}");
    assert!(text.contains(&address.to_string()), "{text}");
    let error = Client::builder("t", "1")
        .connect_http("ftp://example/", HttpClientConfig::default())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("http or https"), "{error}");
}

impl Fixture {
    async fn session_status(&self, session: &str) -> u16 {
        self.http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", session)
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    async fn delete_session(&self, session: &str) {
        let status = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", session)
            .send()
            .await
            .unwrap()
            .status();
        assert!(status.is_success(), "DELETE: {status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn falls_back_to_2024_11_05_http_sse() {
    let fixture = start(HttpConfig::default()).await;
    let url = fixture.url.replace("/mcp", "/sse");
    for version in [None, Some(ProtocolVersion::V2024_11_05)] {
        let (client, connection) = connect(&url, version, HttpClientConfig::default()).await;
        assert!(connection.is_legacy());
        let echoed = client
            .call_tool("echo", json!({"text": "old"}))
            .await
            .unwrap();
        assert_eq!(text_of(&echoed), "old");
        let (done, progress) = progress_call(&client, "slow").await;
        assert_eq!((done.as_str(), progress), ("done", vec![1.0, 2.0]));
        let asked = client.call_tool("ask", json!({"text": "y"})).await.unwrap();
        assert_eq!(text_of(&asked), "sampled y");
        drop(client);
        connection.close().await;
    }
    // Custom headers go to the stream and to the messages endpoint alike.
    let config = HttpClientConfig::default()
        .header("Authorization", "Bearer legacy")
        .unwrap();
    let (client, connection) = connect(&url, None, config).await;
    client.ping().await.unwrap();
    drop(client);
    connection.close().await;
    let seen = fixture.authorizations();
    assert!(seen.len() >= 3, "{seen:?}");
}
