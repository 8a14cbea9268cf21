//! An rmcp stdio server with one tool, `echo` (`{"text": string}` -> one text block with the
//! same text), written the way rmcp's README shows a tools-only server: `#[tool_router]`
//! with `server_handler`, `#[tool]`, `serve(stdio())`.

use rmcp::{
    ServiceExt, handler::server::wrapper::Parameters, schemars, tool, tool_router, transport::stdio,
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
    let service = Echo.serve(stdio()).await?;
    service.waiting().await?;
    Ok(())
}
