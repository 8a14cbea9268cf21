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
//! Handlers are plain async functions: the typed arguments first (the input schema is
//! derived from their type), then any [extractors](FromContext) — [`Context`], [`State`],
//! [`Progress`], [`Cancel`], [`Meta`], [`ClientCaps`], the [`crate::engine::Peer`].
//!
//! Where a message goes: it is parsed in `ferry_protocol::jsonrpc::classify` (inside the
//! engine), routed in `session.rs` by `ClientRequest::parse`, and answered by the feature
//! modules (`tools.rs`, `resources.rs`, `prompts.rs`, `completion.rs`), each shaping its
//! result for the caller's revision in `reply.rs`.
//!
//! ```
//! use ferry::server::{Context, Server};
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
//!     .tool("echo", "Echo the text back", |args: Echo, _cx: Context| async move { args.text })
//!     .build();
//! assert_eq!(server.tool_names(), ["echo"]);
//! ```

mod backend;
mod builder;
mod call_params;
mod completion;
mod context;
mod extract;
mod input;
mod listen;
mod log_layer;
mod members;
mod mrtr;
mod pagination;
mod prompts;
mod registry;
mod reply;
mod request_state;
mod resources;
mod session;
mod stats;
mod tasks;
mod testing;
mod tools;
mod uri_template;

pub use builder::{DEFAULT_PAGE_SIZE, Server, ServerBuilder};
pub use completion::CompletionRequest;
pub use context::{Context, ToolContext};
pub use extract::{Cancel, ClientCaps, FromContext, HandlerFn, Meta, Progress, State};
pub use input::InputError;
pub use listen::{MAX_RESOURCE_SUBSCRIPTIONS, MAX_SUBSCRIBED_URI_BYTES};
pub use log_layer::ClientLogLayer;
pub use prompts::IntoPromptResult;
pub use request_state::DEFAULT_REQUEST_STATE_TTL;
pub use resources::{ReadResult, ResourceError, TemplateVars};
pub use stats::ServerStats;
pub use tasks::{DEFAULT_TASK_TTL, MAX_ACTIVE_TASKS, MAX_STORED_TASKS, MAX_TASK_TTL};
pub use testing::{TestClient, TestResponder};
pub use tools::{IntoToolResult, Json};
pub use uri_template::{TemplateError, UriTemplate};
