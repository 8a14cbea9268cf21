//! `subscriptions/listen` (2026-07-28): acknowledgement first with the accepted filter,
//! then only opted-in notifications, each carrying the subscription id; cancellation ends
//! the stream without a response.

use std::time::Duration;

use ferry::engine::CallOptions;
use ferry::protocol::ProtocolVersion::V2026_07_28;
use ferry::protocol::types::{Resource, ResourceContents};
use ferry::server::{Context, Server, TestClient};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text.
    text: String,
}

fn server() -> Server {
    Server::builder("listen", "1.0.0")
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .resource(
            Resource {
                uri: "test://a".into(),
                name: "a".into(),
                ..Default::default()
            },
            |_cx: Context| async { vec![ResourceContents::text("test://a", "text/plain", "a")] },
        )
        .resource(
            Resource {
                uri: "test://b".into(),
                name: "b".into(),
                ..Default::default()
            },
            |_cx: Context| async { vec![ResourceContents::text("test://b", "text/plain", "b")] },
        )
        .build()
}

async fn next(client: &mut TestClient) -> (String, Value) {
    tokio::time::timeout(Duration::from_secs(5), client.next_notification())
        .await
        .expect("a notification in time")
        .expect("connection open")
}

#[tokio::test]
async fn acknowledges_then_forwards_only_opted_in_changes() {
    let server = server();
    let mut client = TestClient::connect(&server, V2026_07_28).await.unwrap();
    let peer = client.peer().clone();
    let params = json!({
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}},
        "notifications": {"toolsListChanged": true, "promptsListChanged": true,
                          "resourceSubscriptions": ["test://a", "test://nope"]},
    });
    let stream = tokio::spawn(async move {
        peer.call("subscriptions/listen", &params, CallOptions::default())
            .await
    });
    let (method, ack) = next(&mut client).await;
    assert_eq!(method, "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://a"]}),
        "no prompts offered, no such resource"
    );
    let id = ack["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    assert!(id.is_number(), "{ack}");

    // Other requests are served while the stream is open.
    let echoed = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(echoed["content"][0]["text"], "hi");

    server.notify_resource_updated("test://b"); // not subscribed
    server.notify_resource_updated("test://a");
    let (method, params) = next(&mut client).await;
    assert_eq!(method, "notifications/resources/updated");
    assert_eq!(params["uri"], "test://a");
    assert_eq!(
        params["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );

    assert!(server.remove_resource("test://b")); // resources list: not opted in
    server.add_tool(
        "late",
        "Late",
        |a: Text, _cx: Context| async move { a.text },
    );
    let (method, params) = next(&mut client).await;
    assert_eq!(method, "notifications/tools/list_changed");
    assert_eq!(
        params["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );

    // The client cancels: no response ever comes, and the stream stops.
    stream.abort();
    let _ = stream.await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    server.add_tool(
        "later",
        "Later",
        |a: Text, _cx: Context| async move { a.text },
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(client.try_next_notification(), None);
}

#[tokio::test]
async fn many_listeners_do_not_starve_requests() {
    let server = Server::builder("listen", "1.0.0")
        .engine(ferry::engine::EngineConfig {
            max_concurrent_requests: 2,
            ..Default::default()
        })
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .build();
    let mut client = TestClient::connect(&server, V2026_07_28).await.unwrap();
    let mut streams = Vec::new();
    for _ in 0..5 {
        let peer = client.peer().clone();
        let params = json!({
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}},
            "notifications": {"toolsListChanged": true},
        });
        streams.push(tokio::spawn(async move {
            peer.call("subscriptions/listen", &params, CallOptions::default())
                .await
        }));
        assert_eq!(
            next(&mut client).await.0,
            "notifications/subscriptions/acknowledged"
        );
    }
    let echoed = client
        .call_tool("echo", json!({"text": "ok"}))
        .await
        .unwrap();
    assert_eq!(echoed["content"][0]["text"], "ok");
    for stream in streams {
        stream.abort();
    }
}
