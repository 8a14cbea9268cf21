//! The reference server of `ferry serve`: every server feature, for clients of both eras.
//!
//! - here: `echo` and `add` (structured output);
//! - [`calculate`]: the seed 001 tools `calculate` and `get_timestamp`;
//! - [`evaluate`]: the seed 000 tool, a persistent sandboxed scripting session per client;
//! - [`interactive`]: progress and cancellation, logging, sampling, roots, elicitation;
//! - [`media`]: image, audio, embedded resource, resource link, mixed and structured content;
//! - [`catalog`]: `server://info` and other resources, a template, prompts, completions;
//! - [`live`]: what changes while it serves (a tool and a prompt that come and go, a clock).

mod calculate;
mod catalog;
pub(crate) mod conformance;
mod evaluate;
mod interactive;
pub(crate) mod live;
mod media;

use ferry::server::{Json, Server, ToolContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    /// `a + b`.
    sum: f64,
}

/// The reference server.
pub(crate) fn server() -> Server {
    server_with(
        None,
        false,
        ferry::engine::EngineConfig::default().write_timeout,
    )
}

/// The reference server, sealing 2026-07-28 request state with `key` when given (shared
/// by every instance of a deployment) instead of a random one; `traced`: OpenTelemetry
/// spans and metrics of every request (`ferry serve --otlp`); `write_timeout`: how long a
/// stdio client may read nothing while an answer waits (`--write-timeout`).
pub(crate) fn server_with(
    request_state_key: Option<[u8; 32]>,
    traced: bool,
    write_timeout: Option<std::time::Duration>,
) -> Server {
    let mut builder =
        Server::builder("ferry", env!("CARGO_PKG_VERSION")).engine(ferry::engine::EngineConfig {
            write_timeout,
            ..ferry::engine::EngineConfig::default()
        });
    if traced {
        builder = builder.middleware(ferry::otel::ServerTracing::new());
    }
    if let Some(key) = request_state_key {
        builder = builder.request_state_key(key);
    }
    let builder = calculate::register(builder);
    let builder = evaluate::register(builder);
    let builder = interactive::register(builder);
    let builder = media::register(builder);
    let builder = catalog::register(builder);
    let builder = live::register(builder);
    // `FERRY_PAGE_SIZE` shrinks list pages, so clients' pagination can be exercised.
    let page_size = std::env::var("FERRY_PAGE_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(ferry::server::DEFAULT_PAGE_SIZE);
    builder
        .page_size(page_size)
        .title("Ferry reference server")
        .instructions(
            "The Ferry reference server: every MCP server feature. Read ferry://readme for the list.",
        )
        .tool(
            "echo",
            "Send the text back unchanged.",
            |args: EchoArgs, _cx: ToolContext| async move { args.text },
        )
        .tool(
            "add",
            "Add two numbers.",
            |args: AddArgs, _cx: ToolContext| async move {
                Json(Sum {
                    sum: args.a + args.b,
                })
            },
        )
        .build()
}
