//! Resources: a static resource, a template, and subscriptions to changes. A client
//! subscribes to `status://current`; a tool call changes it; the server tells every
//! subscriber with `notifications/resources/updated`, and the client reads it again.
//!
//!     cargo run -p ferry-mcp --example resources_subscriptions
//!
//! Subscribing differs between the two eras of the protocol, so the client runs twice: in
//! the session era it sends `resources/subscribe`; in the stateless era (2026-07-28) it
//! opens a `subscriptions/listen` stream. The server side is the same for both.

use std::sync::Mutex;
use std::time::Duration;

use ferry::client::Client;
use ferry::engine::Transport;
use ferry::protocol::Era;
use ferry::protocol::methods::ServerNotification;
use ferry::protocol::types::{Resource, ResourceContents, ResourceTemplate, SubscriptionFilter};
use ferry::server::{Context, ReadResult, ResourceError, Server, State, TemplateVars};
use serde_json::json;

const CURRENT: &str = "status://current";

/// The server's state: the current status and every earlier one.
#[derive(Default)]
struct Statuses(Mutex<Vec<String>>);

/// Reads the static resource `status://current`.
async fn current(statuses: State<Statuses>) -> ReadResult {
    let text = statuses
        .0
        .lock()
        .unwrap()
        .last()
        .cloned()
        .unwrap_or_default();
    Ok(vec![ResourceContents::text(CURRENT, "text/plain", text)])
}

/// Reads the template `status://history/{n}`: the `n`-th status ever set. A template's
/// reader gets the URI asked for and the template's variables.
async fn history(uri: String, vars: TemplateVars, statuses: State<Statuses>) -> ReadResult {
    let n: usize = vars["n"]
        .parse()
        .map_err(|_| ResourceError::NotFound(uri.clone()))?;
    match statuses.0.lock().unwrap().get(n) {
        Some(text) => Ok(vec![ResourceContents::text(uri, "text/plain", text)]),
        None => Err(ResourceError::NotFound(uri)),
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SetStatus {
    /// The new status.
    text: String,
}

/// A tool that changes the resource, then tells the subscribers.
async fn set_status(args: SetStatus, statuses: State<Statuses>, cx: Context) -> String {
    statuses.0.lock().unwrap().push(args.text);
    cx.server().notify_resource_updated(CURRENT);
    "status set".to_string()
}

fn server() -> Server {
    Server::builder("status-board", "1.0.0")
        .state(Statuses(Mutex::new(vec!["all quiet".into()])))
        .resource(
            Resource::new(CURRENT, "current status").mime_type("text/plain"),
            current,
        )
        .resource_template(
            ResourceTemplate::new("status://history/{n}", "an earlier status"),
            history,
        )
        .tool("set_status", "Change the status", set_status)
        .build()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = server();
    for era in [Era::Session, Era::Stateless] {
        let (client_side, server_side) = Transport::pair(16);
        let _serving = server.serve(server_side);
        let client = Client::builder("status-watcher", "1.0.0")
            .era(era)
            .connect(client_side)
            .await?;
        println!("-- {era:?} era ({})", client.version().as_str());

        for resource in client.list_all_resources().await? {
            println!("resource: {}", resource.uri);
        }
        for template in client.list_all_resource_templates().await? {
            println!("template: {}", template.uri_template);
        }

        // Take the receiver before subscribing, so that nothing is missed.
        let mut notifications = client.notifications();
        // Kept alive while we listen: dropping a `listen` subscription ends its stream.
        let _subscription = match client.era() {
            Era::Session => {
                client.subscribe(CURRENT).await?;
                None
            }
            _ => {
                let filter = SubscriptionFilter {
                    resource_subscriptions: Some(vec![CURRENT.into()]),
                    ..Default::default()
                };
                let subscription = client.listen(filter).await?;
                // The stream opens with the server's acknowledgement.
                let ack =
                    tokio::time::timeout(Duration::from_secs(5), notifications.recv()).await??;
                assert!(matches!(
                    ack,
                    ServerNotification::SubscriptionsAcknowledged(_)
                ));
                Some(subscription)
            }
        };
        println!("subscribed to {CURRENT}");

        client
            .call_tool(
                "set_status",
                json!({"text": format!("deploying ({era:?})")}),
            )
            .await?;
        // Wait for the update (other notifications, such as log messages, are skipped).
        let updated = loop {
            let next = tokio::time::timeout(Duration::from_secs(5), notifications.recv());
            if let ServerNotification::ResourceUpdated(updated) = next.await?? {
                break updated.uri;
            }
        };
        println!("updated: {updated}");

        let read = client.read_resource(&updated).await?;
        println!("now: {}", read.contents[0].as_text().unwrap_or_default());
        let first = client.read_resource("status://history/0").await?;
        println!("first: {}", first.contents[0].as_text().unwrap_or_default());
    }
    Ok(())
}
