//! The HTTP client renews a session the server forgot (here: DELETEd behind its back) and
//! restores what the caller had set on it — the log level and resource subscriptions
//! (less those unsubscribed) — and reopens the GET stream: against Ferry's HTTP server
//! over 127.0.0.1, in each session-era revision.

use std::time::Duration;

use ferry::client::Client;
use ferry::http::HttpConfig;
use ferry::http_client::HttpClientConfig;
use ferry::protocol::ProtocolVersion;
use ferry::protocol::methods::ServerNotification;
use ferry::protocol::types::{LoggingLevel, Resource, ResourceContents};
use ferry::server::{Context, Server};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::broadcast;

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

fn resource(uri: &str) -> Resource {
    Resource {
        uri: uri.into(),
        name: uri.into(),
        ..Default::default()
    }
}

fn server() -> Server {
    let mut builder = Server::builder("restore", "1.0.0").tool(
        "log",
        "Logs at info, then at warning",
        |_a: Nothing, cx: Context| async move {
            cx.log(LoggingLevel::Info, None, "an info").await;
            cx.log(LoggingLevel::Warning, None, "a warning").await;
            "logged"
        },
    );
    for uri in ["test://kept", "test://dropped"] {
        builder = builder.resource(resource(uri), move |_cx: Context| async move {
            vec![ResourceContents::text(uri, "text/plain", uri)]
        });
    }
    builder.build()
}

/// Change `test://dropped`, then `test://kept`, until an update of `test://kept` arrives
/// (the GET stream opens in the background: a change made before it is connected is not
/// delivered live). Updates of one session take one stream in order, so an update of
/// `test://dropped` would arrive first: its absence proves it is not subscribed.
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

/// Call `log`: only the warning may come back (the level is warning).
async fn only_warnings_arrive(
    client: &Client,
    notifications: &mut broadcast::Receiver<ServerNotification>,
) {
    while notifications.try_recv().is_ok() {}
    client
        .call_tool("log", serde_json::json!({}))
        .await
        .unwrap();
    let mut levels = Vec::new();
    // The log messages precede the response on the call's stream.
    while let Ok(notification) = notifications.try_recv() {
        if let ServerNotification::LoggingMessage(message) = notification {
            levels.push(message.level);
        }
    }
    assert_eq!(levels, [LoggingLevel::Warning]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_session_gets_back_the_level_subscriptions_and_get_stream() {
    let server = server();
    let router = ferry::http::router(server.clone(), HttpConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let http = reqwest::Client::new();
    for version in [
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
    ] {
        let (client, connection) = Client::builder("restore-test", "1.0.0")
            .version(version)
            .connect_http(&url, HttpClientConfig::default())
            .await
            .unwrap();
        let mut notifications = client.notifications();
        client.set_log_level(LoggingLevel::Warning).await.unwrap();
        client.subscribe("test://kept").await.unwrap();
        client.subscribe("test://dropped").await.unwrap();
        client.unsubscribe("test://dropped").await.unwrap();
        kept_updated_and_dropped_not(&server, &mut notifications).await;
        only_warnings_arrive(&client, &mut notifications).await;

        // The session ends behind the client's back; the next request renews it.
        let first = connection.session_id().unwrap();
        let status = http
            .delete(&url)
            .header("mcp-session-id", &first)
            .send()
            .await
            .unwrap()
            .status();
        assert!(status.is_success(), "{version}: DELETE {status}");
        client.ping().await.unwrap();
        assert_ne!(connection.session_id().unwrap(), first, "{version}");
        assert_eq!(connection.sessions_started(), 2, "{version}");

        // A fresh session would send every level and no updates at all.
        only_warnings_arrive(&client, &mut notifications).await;
        while notifications.try_recv().is_ok() {}
        kept_updated_and_dropped_not(&server, &mut notifications).await;
        drop(client);
        connection.close().await;
    }
}
