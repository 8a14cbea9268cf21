//! The smallest useful server: one tool on stdio, for clients of every revision.
//!
//! Run it and talk to it by hand:
//!
//! ```text
//! cargo run -q -p ferry-mcp --example echo_stdio
//! {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"me","version":"1"}}}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}
//! ```

use ferry::server::{Context, Server};

/// The tool's arguments; the input schema is derived from this type.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    Server::builder("echo", "1.0.0")
        .tool(
            "echo",
            "Echo the text back",
            |args: Echo, _cx: Context| async move { args.text },
        )
        .build()
        .serve_stdio()
        .await
}
