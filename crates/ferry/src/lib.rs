//! Ferry: Model Context Protocol servers and clients for every revision, in both eras.
//!
//! - [`protocol`]: the wire types (the `ferry-mcp-protocol` crate).
//! - [`engine`] (feature `engine`, on by default): the peer engine both ends share, with
//!   in-memory and newline-delimited stream transports, and the child-process transport
//!   (feature `child-process`, which `client` turns on).
//! - [`server`](mod@server) (feature `server`, on by default): the server, for clients of
//!   both eras.
//! - [`client`] (feature `client`, on by default): the client, for servers of both eras.
//! - `http` (feature `http-server`, off by default): the Streamable HTTP server transport,
//!   on axum (2026-07-28 stateless requests and the session era).
//! - `http_client` (feature `http-client`, off by default): the Streamable HTTP client
//!   transport on reqwest, for servers of every era (2024-11-05 HTTP+SSE as a fallback);
//!   `http-client-rustls` adds `https://`.
//! - `otel` (feature `otel`, off by default): OpenTelemetry spans and metrics following
//!   the semantic conventions for MCP, W3C trace context in `_meta`, OTLP/HTTP export.
//!
//! ```
//! use ferry::protocol::{ProtocolVersion, VersionSet, Era};
//!
//! let versions = VersionSet::all();
//! assert_eq!(versions.negotiate("2025-06-18", Era::Session), Some(ProtocolVersion::V2025_06_18));
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

pub use ferry_protocol as protocol;

/// The attribute macros (feature `macros`, on by default): `#[tool]`, `#[prompt]` and
/// `#[resource]` on async functions, `#[tools]` (alias `#[server]`) on an `impl` block.
/// They expand to [`server::ServerBuilder`] calls and nothing else.
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use ferry_macros::{prompt, resource, server, tool, tools};

/// The JSON Schema derive the server's typed arguments use: re-exported so that the
/// `JsonSchema` a program derives is the version Ferry reads (with
/// `#[schemars(crate = "ferry::schemars")]` when the program has no `schemars` of its own).
///
/// ```
/// use ferry::schemars::JsonSchema;
///
/// #[derive(serde::Deserialize, JsonSchema)]
/// #[schemars(crate = "ferry::schemars")]
/// struct Echo {
///     text: String,
/// }
///
/// let server = ferry::server::Server::builder("demo", "1")
///     .tool("echo", "Echo", |args: Echo| async move { args.text })
///     .build();
/// assert_eq!(server.tool_names(), ["echo"]);
/// ```
#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub use schemars;
/// The JSON values of raw arguments, results and `_meta`.
///
/// ```
/// let arguments = ferry::serde_json::json!({"text": "hi"});
/// assert_eq!(arguments["text"], "hi");
/// ```
pub use serde_json;

/// What the macros' expansions name: not an API.
#[cfg(feature = "macros")]
#[doc(hidden)]
pub mod __private {
    pub use crate::server::macro_support::*;
    pub use schemars;
    pub use serde;
}

#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;
#[cfg(feature = "engine")]
#[cfg_attr(docsrs, doc(cfg(feature = "engine")))]
pub mod engine;
#[cfg(feature = "http-server")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-server")))]
pub mod http;
#[cfg(feature = "http-client")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-client")))]
pub mod http_client;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel;
#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub mod server;
