//! The MCP client: one [`Client`] talks to servers of both eras.
//!
//! - **Connecting** negotiates the era: by default it probes `server/discover` (the
//!   stateless era, 2026-07-28) and falls back to `initialize` on the same connection when
//!   the server does not know it (a session-era server answers `-32601`, or refuses a
//!   request before `initialize`) or does not answer it within
//!   [`ClientBuilder::probe_timeout`]; [`ClientBuilder::version`] pins a revision instead.
//! - **Calls** are typed, checked against the server's capabilities before they are sent,
//!   and in the stateless era carry the revision, capabilities and identity in `_meta`.
//!   `list_all_*` follow pagination.
//! - **The server's needs** — sampling, roots, elicitation — are answered by the handlers
//!   given to the builder: as requests in the session era, and in the stateless era by
//!   answering `input_required` results and retrying with the answers and the exact
//!   `requestState`, a new request id each round, at most [`MAX_INPUT_ROUNDS`] rounds.
//! - **Timeouts and cancellation**: every call has a timeout (default 60 s,
//!   [`ClientBuilder::timeout`]); [`Client::call_tool_with`] takes per-call
//!   [`CallOptions`] (timeout, progress, restart on progress, maximum total); dropping a
//!   call's future cancels it (`notifications/cancelled`).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use ferry::client::Client;
//! use ferry::engine::Transport;
//! use ferry::server::{Context, Server};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo {
//!     text: String,
//! }
//!
//! let server = Server::builder("demo", "1.0.0")
//!     .tool("echo", "Echo", |a: Echo, _cx: Context| async move { a.text })
//!     .build();
//! let (client_side, server_side) = Transport::pair(16);
//! let _serving = server.serve(server_side);
//! let client = Client::builder("demo-client", "1.0.0").connect(client_side).await.unwrap();
//! assert_eq!(client.version().as_str(), "2026-07-28");
//! let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await.unwrap();
//! assert_eq!(result.content[0], ferry::protocol::types::ContentBlock::text("hi"));
//! # });
//! ```

mod calls;
mod connect;
pub(crate) mod error;
mod handlers;
mod hook;
mod middleware;
mod receiver;
mod supervisor;
mod tasks;
mod typed;

use std::sync::{Arc, Mutex};

use ferry_protocol::methods::ServerNotification;
use ferry_protocol::types::{ClientCapabilities, Implementation, LoggingLevel, ServerCapabilities};
use ferry_protocol::{Era, ProtocolVersion};
use tokio::sync::broadcast;

pub use crate::engine::CallOptions;
pub use calls::{MAX_PAGES, Subscription};
pub use connect::{ClientBuilder, DEFAULT_PROBE_TIMEOUT, ElicitationModes};
pub use error::{ClientError, ErrorKind};
pub use handlers::{ElicitationHandler, RootsHandler, SamplingHandler};
pub use hook::RequestHook;
pub use middleware::{BoxFuture, Middleware, Next, Outgoing};
pub use receiver::{DEFAULT_TASK_TTL, MAX_ACTIVE_TASKS, MAX_STORED_TASKS, MAX_TASK_TTL};
pub use supervisor::{Backoff, Supervisor};
pub use tasks::{DEFAULT_POLL_INTERVAL, TaskEvent, ToolTask};

use crate::engine::{EngineHandle, Peer, SessionIdSource};
use handlers::Handlers;

/// Rounds of `input_required` a stateless-era call answers before it gives up.
pub const MAX_INPUT_ROUNDS: u32 = 16;

/// A connection to an MCP server. Cheap to clone; the connection closes when the last
/// clone is dropped.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    peer: Peer,
    engine: EngineHandle,
    version: ProtocolVersion,
    info: Implementation,
    capabilities: ClientCapabilities,
    server_info: Option<Implementation>,
    server_capabilities: ServerCapabilities,
    instructions: Option<String>,
    handlers: Handlers,
    notifications: broadcast::Sender<ServerNotification>,
    /// Stateless era: the log level sent in every request's `_meta`.
    log_level: Mutex<Option<LoggingLevel>>,
    /// The tools' output schemas as last listed, for [`Client::call_tool_as`].
    output_schemas: typed::OutputSchemas,
    /// The application's hook around each request.
    hook: Option<Arc<dyn RequestHook>>,
    /// The application's middleware around each request, outermost first.
    middleware: Vec<Arc<dyn Middleware>>,
    /// Where the middleware read the session id (HTTP), when the transport has one.
    session_id: Option<SessionIdSource>,
    /// When the connection was made, for [`Middleware::closed`].
    connected: std::time::Instant,
    /// A session taken up again without a handshake: the server's capabilities are unknown.
    resumed: bool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for middleware in &self.middleware {
            middleware.closed(self.version, self.connected.elapsed());
        }
        self.engine.task.abort();
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("version", &self.inner.version)
            .field("server_info", &self.inner.server_info)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Start building a client with its name and version (`clientInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(name, version)
    }

    /// The negotiated revision.
    pub fn version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// The era of the negotiated revision.
    pub fn era(&self) -> Era {
        self.inner.version.era()
    }

    /// What the server offers.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.inner.server_capabilities
    }

    /// The server's identity, if it gave one.
    pub fn server_info(&self) -> Option<&Implementation> {
        self.inner.server_info.as_ref()
    }

    /// The server's usage guidance for the model.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// What this client declared.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.inner.capabilities
    }

    /// The server's notifications from now on: list changes, resource updates, log
    /// messages, subscription notifications. A receiver that lags skips the oldest.
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.inner.notifications.subscribe()
    }

    /// The engine's handle to the server (raw requests and notifications).
    pub fn peer(&self) -> &Peer {
        &self.inner.peer
    }

    /// Whether this client took up a session opened by another connection
    /// ([`ClientBuilder::resume_http`]): the server's capabilities are not known then, and
    /// calls are sent without checking them.
    pub fn is_resumed(&self) -> bool {
        self.inner.resumed
    }

    /// Whether the connection is still open.
    pub fn is_connected(&self) -> bool {
        !self.inner.engine.task.is_finished()
    }
}
