//! An rmcp server with one tool, `echo` (`{"text": string}` -> one text block with the same
//! text), written the way rmcp's README shows a tools-only server: `#[tool_router]` with
//! `server_handler`, `#[tool]`, `serve(stdio())`, `#[tokio::main]`.
//!
//! - `rmcp-echo`: `stdio()` (the README's way).
//! - `rmcp-echo --pipes`: `stdio_pipes()`, which rmcp's docs prefer when both standard
//!   streams are pipes (non-blocking pipe I/O instead of the blocking pool).
//! - `rmcp-echo --http ADDR`: `StreamableHttpService` with the `LocalSessionManager` and the
//!   default config (sessions, SSE answers) at `/mcp` on axum, as rmcp's
//!   `counter_streamhttp` example does, with `TCP_NODELAY` on every accepted socket.

use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::{
    ServiceExt,
    handler::server::wrapper::Parameters,
    schemars, tool, tool_router,
    transport::{
        StreamableHttpService, stdio, stdio_pipes,
        streamable_http_server::session::local::LocalSessionManager,
    },
};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoParams {
    /// The text to send back.
    text: String,
}

#[derive(Clone)]
struct Echo;

#[tool_router(server_handler)]
impl Echo {
    #[tool(description = "Send the text back unchanged.")]
    fn echo(&self, Parameters(EchoParams { text }): Parameters<EchoParams>) -> String {
        text
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--http") {
        let address = args.get(i + 1).map_or("127.0.0.1:8080", String::as_str);
        let service = StreamableHttpService::new(
            || Ok(Echo),
            Arc::new(LocalSessionManager::default()),
            Default::default(),
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind(address).await?.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, router).await?;
        return Ok(());
    }
    let service = if args.iter().any(|a| a == "--pipes") {
        Echo.serve(stdio_pipes()).await?
    } else {
        Echo.serve(stdio()).await?
    };
    service.waiting().await?;
    Ok(())
}
