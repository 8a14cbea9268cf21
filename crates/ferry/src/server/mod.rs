//! The MCP server: one [`Server`] serves clients of both eras.
//!
//! - **Session era** (2024-11-05 .. 2025-11-25): `initialize` negotiates the revision
//!   ([`ferry_protocol::VersionSet::negotiate`]); capabilities reflect exactly what is
//!   registered; requests other than `ping` before `initialize` and a second `initialize`
//!   are refused; the negotiated revision gates every method and shapes every result
//!   ([`ferry_protocol::conform`]).
//! - **Stateless era** (2026-07-28): each request carries its revision and the client's
//!   capabilities in `_meta` (missing -> `-32602`; unsupported revision -> `-32022` with
//!   `data.supported`); `server/discover`; `resultType`, `ttlMs` and `cacheScope` on
//!   results.
//!
//! A message is parsed in `ferry_protocol::jsonrpc::classify` (inside the engine), routed
//! in [`session`](self) by `ClientRequest::parse`, and answered by the feature modules.
//!
//! ```
//! use ferry::server::{Server, ToolContext};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Echo {
//!     /// The text to send back.
//!     text: String,
//! }
//!
//! let server = Server::builder("demo", "1.0.0")
//!     .tool("echo", "Echo the text back", |args: Echo, _cx: ToolContext| async move { args.text })
//!     .build();
//! assert_eq!(server.tool_names(), ["echo"]);
//! ```

mod builder;
mod context;
mod session;
mod tools;

pub use builder::{Server, ServerBuilder};
pub use context::ToolContext;
pub use tools::{IntoToolResult, Json};
