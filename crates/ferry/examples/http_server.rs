//! A Streamable HTTP server (2026-07-28 stateless requests) on 127.0.0.1.
//!
//!     cargo run -p ferry-mcp --features http-server --example http_server -- 127.0.0.1:8080
//!
//! Add `--sse-responses` to answer every session-era request with an SSE stream (by
//! default a response that is the first thing to send goes as one JSON object).
//!
//! Then, for example:
//!
//!     curl -s http://127.0.0.1:8080/mcp \
//!       -H 'content-type: application/json' \
//!       -H 'accept: application/json, text/event-stream' \
//!       -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/call' -H 'mcp-name: echo' \
//!       -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",
//!            "arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":
//!            "2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

use ferry::http::HttpConfig;
use ferry::server::{Context, Server};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sse_responses = args.iter().any(|a| a == "--sse-responses");
    let address = args
        .into_iter()
        .find(|a| !a.starts_with("--"))
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let server = Server::builder("http-demo", "1.0.0")
        .tool(
            "echo",
            "Echo the text back",
            |args: Echo, _cx: Context| async move { args.text },
        )
        .build();
    let listener = tokio::net::TcpListener::bind(&address).await?;
    eprintln!("serving MCP on http://{}/mcp", listener.local_addr()?);
    let config = HttpConfig::default().sse_responses(sse_responses);
    ferry::http::serve(server, listener, config).await
}
