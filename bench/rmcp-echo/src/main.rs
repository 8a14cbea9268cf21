//! An rmcp stdio server with one tool, `echo` (`{"text": string}` -> one text block with the
//! same text), written the way rmcp's README shows a tools-only server: `#[tool_router]`
//! with `server_handler`, `#[tool]`, `serve(stdio())`.
//!
//! `rmcp-echo --pipes` serves over `stdio_pipes()` instead, which rmcp's docs prefer when
//! both standard streams are pipes (non-blocking pipe I/O instead of the blocking pool).

use rmcp::{
    ServiceExt,
    handler::server::wrapper::Parameters,
    schemars, tool, tool_router,
    transport::{stdio, stdio_pipes},
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
    let service = if std::env::args().any(|a| a == "--pipes") {
        Echo.serve(stdio_pipes()).await?
    } else {
        Echo.serve(stdio()).await?
    };
    service.waiting().await?;
    Ok(())
}
