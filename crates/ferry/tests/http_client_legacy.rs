//! The HTTP client on a 2024-11-05 HTTP+SSE server whose event stream ends — the session
//! idle-expired, or the server restarted on the same port — starts a new session and goes
//! on: the log level and resource subscriptions hold, a read-only call in flight is sent
//! again and answered, another call in flight gets an error saying it was not sent again,
//! and new calls work. A server that does not come back ends the connection with an error
//! for the call in flight, after a bounded number of attempts. Against Ferry's own HTTP
//! server over 127.0.0.1.

use std::net::SocketAddr;
use std::time::Duration;

use ferry::client::Client;
use ferry::http::HttpConfig;
use ferry::http_client::{HttpClientConfig, HttpConnection};
use ferry::protocol::methods::ServerNotification;
use ferry::protocol::types::{
    CallToolResult, LoggingLevel, Resource, ResourceContents, Tool, ToolAnnotations,
};
use ferry::server::{Context, Server};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{broadcast, mpsc};

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text.
    text: String,
}

/// The test server. `lookup` (read-only) waits forever when `lookup_waits`, otherwise
/// answers; `change` (no hints: not safe to repeat) always waits. Each says on `started`
/// when it starts waiting.
fn server(lookup_waits: bool, started: mpsc::UnboundedSender<&'static str>) -> Server {
    let lookup = Tool {
        annotations: Some(ToolAnnotations {
            read_only_hint: Some(true),
            ..Default::default()
        }),
        ..Tool::described("lookup", "Reads, changes nothing")
    };
    let on_lookup = started.clone();
    let mut builder = Server::builder("legacy-renewal", "1.0.0")
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .tool(
            "log",
            "Logs at info, then at warning",
            |_a: Nothing, cx: Context| async move {
                cx.log(LoggingLevel::Info, None, "an info").await;
                cx.log(LoggingLevel::Warning, None, "a warning").await;
                "logged"
            },
        )
        .tool_with(lookup, move |_a: Nothing, _cx: Context| {
            let started = on_lookup.clone();
            async move {
                if lookup_waits {
                    let _ = started.send("lookup");
                    std::future::pending::<()>().await;
                }
                "looked up"
            }
        })
        .tool(
            "change",
            "Changes something (slowly)",
            move |_a: Nothing, _cx: Context| {
                let started = started.clone();
                async move {
                    let _ = started.send("change");
                    std::future::pending::<String>().await
                }
            },
        );
    for uri in ["test://kept", "test://dropped"] {
        let resource = Resource {
            uri: uri.into(),
            name: uri.into(),
            ..Default::default()
        };
        builder = builder.resource(resource, move |_cx: Context| async move {
            vec![ResourceContents::text(uri, "text/plain", uri)]
        });
    }
    builder.build()
}

/// A server on a runtime of its own, in a thread: stopping it drops the runtime, and with
/// it every connection, at once (as a crash or a restart would).
struct Running {
    address: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Running {
    fn start(address: SocketAddr, server: impl FnOnce() -> Server + Send + 'static) -> Running {
        let (bound_tx, bound_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind(address).await.unwrap();
                bound_tx.send(listener.local_addr().unwrap()).unwrap();
                tokio::spawn(ferry::http::serve(
                    server(),
                    listener,
                    HttpConfig::default(),
                ));
                let _ = stopped.await;
            });
        });
        let address = bound_rx.recv().unwrap();
        Running {
            address,
            stop,
            thread,
        }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        let thread = self.thread;
        tokio::task::spawn_blocking(move || thread.join().unwrap())
            .await
            .unwrap();
    }
}

async fn connect(url: &str) -> (Client, HttpConnection) {
    let config = HttpClientConfig {
        default_retry: Duration::from_millis(100),
        ..HttpClientConfig::default()
    };
    let (client, connection) = Client::builder("legacy-renewal-test", "1.0.0")
        .connect_http(url, config)
        .await
        .unwrap();
    assert!(connection.is_legacy());
    (client, connection)
}

fn text_of(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content[0]).unwrap()["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Call `log`: only the warning may come back (the level is warning). The log messages
/// precede the response on the stream.
async fn only_warnings_arrive(
    client: &Client,
    notifications: &mut broadcast::Receiver<ServerNotification>,
) {
    while notifications.try_recv().is_ok() {}
    client.call_tool("log", json!({})).await.unwrap();
    let mut levels = Vec::new();
    while let Ok(notification) = notifications.try_recv() {
        if let ServerNotification::LoggingMessage(message) = notification {
            levels.push(message.level);
        }
    }
    assert_eq!(levels, [LoggingLevel::Warning]);
}

/// Change `test://dropped`, then `test://kept`, until an update of `test://kept` arrives;
/// an update of `test://dropped` (which would come first) must not.
async fn kept_updated_and_dropped_not(
    server: &Server,
    notifications: &mut broadcast::Receiver<ServerNotification>,
) {
    for _round in 0..100 {
        server.notify_resource_updated("test://dropped");
        server.notify_resource_updated("test://kept");
        let deadline = tokio::time::Instant::now() + Duration::from_millis(200);
        while let Ok(Ok(notification)) =
            tokio::time::timeout_at(deadline, notifications.recv()).await
        {
            if let ServerNotification::ResourceUpdated(update) = notification {
                assert_eq!(update.uri, "test://kept", "an unsubscribed resource");
                return;
            }
        }
    }
    panic!("no update of the subscribed resource arrived");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_expired_session_is_renewed_with_its_level_and_subscriptions() {
    let (started, _) = mpsc::unbounded_channel();
    let server = server(false, started);
    let config = HttpConfig {
        session_idle_timeout: Duration::from_secs(1),
        ..HttpConfig::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/sse", listener.local_addr().unwrap());
    tokio::spawn(ferry::http::serve(server.clone(), listener, config));
    let (client, connection) = connect(&url).await;
    let mut notifications = client.notifications();
    client.set_log_level(LoggingLevel::Warning).await.unwrap();
    client.subscribe("test://kept").await.unwrap();
    client.subscribe("test://dropped").await.unwrap();
    client.unsubscribe("test://dropped").await.unwrap();
    // (A slow machine may let it expire already: what follows needs one more.)
    let before = connection.sessions_started();
    assert!(before >= 1);

    // Idle, the session expires on the server and its stream ends: a new one starts.
    let mut waited = 0;
    while connection.sessions_started() <= before {
        assert!(waited < 600, "no new session after the old one expired");
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    only_warnings_arrive(&client, &mut notifications).await;
    kept_updated_and_dropped_not(&server, &mut notifications).await;
    let echoed = client
        .call_tool("echo", json!({"text": "still here"}))
        .await;
    assert_eq!(text_of(&echoed.unwrap()), "still here");
    drop(client);
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_gets_a_new_session_and_the_calls_in_flight_are_settled() {
    let (started, mut starts) = mpsc::unbounded_channel();
    let first = {
        let started = started.clone();
        Running::start("127.0.0.1:0".parse().unwrap(), move || {
            server(true, started)
        })
    };
    let address = first.address;
    let (client, connection) = connect(&format!("http://{address}/sse")).await;
    let mut notifications = client.notifications();
    // `tools/list` tells the client which tool is read-only.
    assert_eq!(client.list_all_tools().await.unwrap().len(), 4);
    client.set_log_level(LoggingLevel::Warning).await.unwrap();
    let lookup = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("lookup", json!({})).await }
    });
    let change = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("change", json!({})).await }
    });
    let mut waiting = vec![starts.recv().await.unwrap(), starts.recv().await.unwrap()];
    waiting.sort_unstable();
    assert_eq!(waiting, ["change", "lookup"]);

    // The server goes down with both calls in flight and comes back on the same port.
    first.stop().await;
    let second = {
        let started = started.clone();
        Running::start(address, move || server(false, started))
    };
    let looked_up = lookup
        .await
        .unwrap()
        .expect("the read-only call, sent again");
    assert_eq!(text_of(&looked_up), "looked up");
    let refused = change.await.unwrap().unwrap_err().to_string();
    assert!(
        refused.contains("a new session was started, but tools/call change was not sent again"),
        "{refused}"
    );
    assert_eq!(connection.sessions_started(), 2);
    only_warnings_arrive(&client, &mut notifications).await;
    let echoed = client.call_tool("echo", json!({"text": "again"})).await;
    assert_eq!(text_of(&echoed.unwrap()), "again");

    // Down for good: after its attempts, the client gives up with an error for the call
    // in flight.
    let change = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("change", json!({})).await }
    });
    assert_eq!(starts.recv().await.unwrap(), "change");
    second.stop().await;
    let failed = change.await.unwrap().unwrap_err().to_string();
    assert!(
        failed.contains("a new session could not be started: 5 attempts failed"),
        "{failed}"
    );
    assert!(
        client
            .call_tool("echo", json!({"text": "x"}))
            .await
            .is_err()
    );
    drop(client);
    connection.close().await;
}
