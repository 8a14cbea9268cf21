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
//! Where a message goes — every request, whatever its method, the same way:
//!
//! 1. **Parsed** by the engine (`ferry_protocol::jsonrpc::classify`, called from
//!    `engine/dispatch.rs`), which hands each message to the connection's `Session`
//!    (`session.rs`) through its `Handler` implementation in `pipeline.rs`.
//! 2. **Routed** in `pipeline.rs`, the chain every request goes through, in this order:
//!    middleware (`middleware.rs`, when the server has any); the params parsed (a
//!    `tools/call` read by hand in `call_params.rs`); the method's row of the one
//!    per-method table (capability, `_meta`, the parts a multi round-trip `requestState`
//!    is bound to); the revision; the input rounds (`mrtr.rs`); the handler's
//!    [`Context`] (`context.rs`).
//! 3. **Answered** by the method's feature module — `tools.rs`, `resources.rs`,
//!    `prompts.rs`, `completion.rs`, `tasks.rs`, `subscriptions.rs`, `list.rs` (every list),
//!    `session.rs` (lifecycle) — with the chain's steps around a tool's, reader's or
//!    prompt's handler (`pipeline.rs`: log scope from `log_layer.rs`, `input_required`
//!    from `mrtr.rs`, errors shaped), and the result shaped for the caller's revision
//!    (`reply.rs`).
//!
//! The server's state is private to `core.rs`; everything else asks it through
//! [`Server`]'s crate-internal methods there. A feature adds its module, its arm in
//! `pipeline.rs`'s `route` and row in its table, and, if it registers entries, their
//! registry in `builder.rs` (filled) and `core.rs` (reached).
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
#[cfg(feature = "http-auth")]
mod claims;
mod completion;
mod context;
mod core;
mod extract;
mod input;
mod list;
mod log_layer;
mod middleware;
mod mrtr;
mod pagination;
mod pipeline;
mod prompts;
mod register;
mod registry;
mod reply;
mod request_state;
mod resources;
mod session;
mod session_data;
mod shape;
mod stats;
mod subscriptions;
mod tasks;
mod testing;
mod tools;
mod uri_template;
mod visibility;

pub use self::core::Server;
pub use builder::{BuildError, DEFAULT_PAGE_SIZE, ServerBuilder};
#[cfg(feature = "http-auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-auth")))]
pub use claims::{Auth, Claims, has_scope};
pub use completion::CompletionRequest;
pub use context::{Context, RootsChanged, ToolContext};
pub use extract::{Cancel, ClientCaps, FromContext, HandlerFn, Meta, Progress, State};
pub use input::InputError;
pub use log_layer::ClientLogLayer;
#[cfg(feature = "otel")]
pub(crate) use middleware::is_tool_error;
pub use middleware::{
    Authorize, BoxFuture, ConcurrencyLimit, LogRequests, Metrics, Middleware, Next,
    NotificationInfo, OperationStats, OperationTable, RateLimit, RequestInfo, SessionInfo,
};
pub use prompts::IntoPromptResult;
#[doc(hidden)]
pub use register::macro_support;
pub use register::{Register, RegisterShared};
pub use request_state::DEFAULT_REQUEST_STATE_TTL;
pub use resources::{IntoReadResult, ReadHandler, ReadResult, ResourceError, TemplateVars};
pub use session_data::{DEFAULT_SESSION_DATA_BYTES, DataError, MAX_UPDATE_ATTEMPTS, SessionData};
pub use stats::ServerStats;
pub use subscriptions::{MAX_RESOURCE_SUBSCRIPTIONS, MAX_SUBSCRIBED_URI_BYTES};
pub use tasks::{DEFAULT_TASK_TTL, MAX_ACTIVE_TASKS, MAX_STORED_TASKS, MAX_TASK_TTL};
pub use testing::{TestClient, TestClientBuilder, TestError, TestResponder};
pub use tools::{IntoToolResult, Json};
pub use uri_template::{TemplateError, UriTemplate};
