//! The fixture of the official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! read at version 0.1.16): exactly the tools, resources, templates, prompts and completions
//! its server scenarios call, with the names, arguments, texts, MIME types and data they
//! check. `ferry serve --conformance` runs it on stdio, or with `--http ADDR` on Streamable
//! HTTP, closing quiet POST SSE streams after [`SSE_POLL_AFTER`].
//!
//! The suite drives a server over Streamable HTTP (`conformance server --url <url>`), one
//! fresh session per scenario, as a client declaring `sampling` and `elicitation`. What each
//! scenario calls lives in [`tools`] (with the elicitation [`forms`]), [`resources`] and
//! [`prompts`]; the protocol-level scenarios (`server-initialize`, `ping`,
//! `logging-set-level`, `resources-subscribe`, `resources-unsubscribe`) need only what the
//! library does for every server, plus the `logging` capability and a resource to
//! subscribe to.
//!
//! `crates/ferry-cli/tests/conformance_fixture/` replays every scenario over stdio.

mod forms;
mod prompts;
mod resources;
mod tools;

use std::time::Duration;

use ferry::server::Server;

/// Over HTTP, how long a POST SSE stream may stay quiet before the server closes it for the
/// client to poll (SEP-1699): longer than the pauses of the logging and progress tools,
/// shorter than `test_reconnection`'s [`tools::RECONNECTION_PAUSE`].
pub(crate) const SSE_POLL_AFTER: Duration = Duration::from_millis(250);

/// A 1x1 red pixel, PNG, base64 (`test_image_content`, `test_multiple_content_types`,
/// `test://static-binary`, `test_prompt_with_image`).
const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";

/// Four samples of silence, 8 kHz mono 16-bit PCM WAV, base64 (`test_audio_content`).
const WAV_BASE64: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAAAAAAAAAA==";

/// The conformance fixture server.
pub(crate) fn server() -> Server {
    let builder = Server::builder("ferry-conformance", env!("CARGO_PKG_VERSION"))
        .title("Ferry conformance fixture")
        .instructions(
            "The fixture of the MCP conformance suite's server scenarios: test_* tools, \
             test:// resources, test_* prompts.",
        );
    let builder = tools::register(builder);
    let builder = resources::register(builder);
    prompts::register(builder).build()
}
