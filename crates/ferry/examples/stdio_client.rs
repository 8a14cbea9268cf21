//! A client that runs a stdio server as a child process: it lists the server's tools,
//! calls one, prints the results and shuts the child down.
//!
//!     cargo run -p ferry-mcp --example stdio_client
//!
//! To stay self-contained the example is its own server: run with `serve`, it serves one
//! tool on stdin/stdout. Any stdio server works the same way, say
//! `ChildCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"])`.

use ferry::client::Client;
use ferry::engine::{ChildCommand, ShutdownTimeouts, StderrMode};
use ferry::server::Server;
use serde_json::json;

/// The arguments of the child's one tool.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Shout {
    /// The text to shout.
    text: String,
}

/// The child: a stdio server. Its stdout carries the protocol, so anything it wants to
/// say goes to stderr.
async fn serve() -> std::io::Result<()> {
    Server::builder("shouter", "1.0.0")
        .tool("shout", "Shout the text back", |s: Shout| async move {
            s.text.to_uppercase()
        })
        .build()
        .serve_stdio()
        .await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        return Ok(serve().await?);
    }

    // The parent: run this same program with `serve` as the server.
    let command = ChildCommand::new(std::env::current_exe()?)
        .arg("serve")
        // The child's stderr goes to ours (by default it becomes `tracing` events).
        .stderr(StderrMode::Inherit);
    // `spawn` starts the child and negotiates the protocol revision with it.
    let (client, child) = Client::builder("stdio-client-example", "1.0.0")
        .spawn(&command)
        .await?;
    let server = client.server_info().map(|i| i.name.as_str());
    println!(
        "connected to {} (pid {}), protocol {}",
        server.unwrap_or("?"),
        child.id(),
        client.version().as_str()
    );

    for tool in client.list_all_tools().await? {
        println!(
            "tool: {} - {}",
            tool.name,
            tool.description.as_deref().unwrap_or("")
        );
    }

    let result = client.call_tool("shout", json!({"text": "ahoy"})).await?;
    for text in result.content.iter().filter_map(|block| block.as_text()) {
        println!("shout says: {text}");
    }

    // Close the connection, then end the child as the MCP spec says: close its stdin and
    // wait, then SIGTERM, then SIGKILL. (Dropping `child` would kill it at once.)
    drop(client);
    let outcome = child.shutdown(ShutdownTimeouts::default()).await?;
    println!("child exited: {}", outcome.status);
    Ok(())
}
