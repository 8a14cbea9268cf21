//! The Streamable HTTP server transport (feature `http-server`), on axum.
//!
//! One MCP endpoint (default `/mcp`) serves both eras. **2026-07-28 (stateless era)**: each
//! POST carries one JSON-RPC request (or notification) and is answered on its own (below).
//! **Session era (2025-03-26, 2025-06-18, 2025-11-25)**: a POSTed `initialize` starts a
//! session (`MCP-Session-Id`) with its own long-lived engine; GET opens its standalone SSE
//! stream, DELETE ends it, every SSE event is resumable with `Last-Event-ID` — see
//! `session.rs` for the rules (which stream a message takes, the version header, limits).
//! A POST is session-era when it is a batch, a response, `initialize`, a request without a
//! stateless revision in `_meta` or `MCP-Protocol-Version`, or a notification with a
//! session id. The 2024-11-05 HTTP+SSE transport and the HTTP client arrive later.
//!
//! What a stateless-era POST gets:
//!
//! | case | answer |
//! |---|---|
//! | foreign `Origin` or `Host` (any method) | 403 (loopback always allowed; see [`HttpConfig`]) |
//! | `GET`, `DELETE` without `Mcp-Session-Id`, other methods | 405 |
//! | `Accept` not covering both `application/json` and `text/event-stream` | 406 |
//! | body not `application/json` | 415 |
//! | body over [`HttpConfig::max_body_bytes`] | 413 |
//! | a notification | 202, no body |
//! | `MCP-Protocol-Version` missing or unlike `_meta`'s, `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*` missing or unlike the body | 400, `-32020` |
//! | unknown (or not offered) method | 404, `-32601` |
//! | `-32602`, `-32021`, `-32022` and other request errors | 400 |
//! | otherwise | 200: `application/json`, or `text/event-stream` (below) |
//!
//! **When the answer is SSE.** A request is answered on an SSE stream when it can produce
//! messages before its response: it carries `_meta.progressToken` or
//! `_meta["io.modelcontextprotocol/logLevel"]`, or it is `subscriptions/listen`. The stream
//! starts at the first such message; if the response comes first, it is sent as a plain
//! JSON object (with its proper status) instead. The stream carries only that request's
//! notifications, then its response, and ends. `subscriptions/listen` streams carry the
//! acknowledgement, then the change notifications, until the client closes it. Every SSE
//! stream sends a comment line (`:`) after [`HttpConfig::sse_keep_alive`] of silence.
//! Other requests are answered with one JSON object; notifications they produce (say,
//! logs without a level asked for) are dropped.
//!
//! **Cancellation.** Closing the response (the client disconnects, or drops the stream)
//! cancels the request: the handler's future is dropped and its cancellation token fires.
//!
//! **Cost.** Each POST runs on its own in-memory connection to the [`Server`] (one
//! `Server::serve` on a channel transport: a few channels and three tasks, no I/O), so
//! requests share nothing but the server; this is what the stateless era asks for and is
//! cheap next to HTTP itself. Server statistics count each POST as a connection.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use ferry::http::HttpConfig;
//! use ferry::server::Server;
//!
//! let server = Server::builder("demo", "1.0.0").build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! ferry::http::serve(server, listener, HttpConfig::default()).await
//! # }
//! ```
//!
//! Or mount [`router`] in an application of your own (it is an [`axum::Router`], a tower
//! service).

mod events;
mod guard;
mod headers;
mod session;
mod sse;
mod stateless;

pub use events::{EventStore, MemoryEventStore, ReplayError, StreamKey};

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::post;

use crate::server::Server;

/// The default body limit: 4 MiB, the engine's default message limit.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How the MCP endpoint is served.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// The endpoint's path. Default: `/mcp`.
    pub endpoint: String,
    /// Origins allowed besides loopback ones (`http://localhost:*`, `http://127.0.0.1:*`,
    /// `http://[::1]:*`), e.g. `https://app.example.com`. A request with any other
    /// `Origin` gets 403; one without `Origin` (not from a browser) passes.
    pub allowed_origins: Vec<String>,
    /// Allow every `Origin`. Default: no.
    pub any_origin: bool,
    /// Host names (optionally with port) allowed in `Host` besides loopback ones: list the
    /// names the server is reached by when it is not on localhost. Default: none.
    pub allowed_hosts: Vec<String>,
    /// Allow every `Host`. Default: no (DNS rebinding protection).
    pub any_host: bool,
    /// The largest body accepted (413 beyond). Default: [`DEFAULT_MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
    /// Silence after which an SSE stream gets a keep-alive comment. Default: 15 s.
    pub sse_keep_alive: Duration,
    /// Session era: the most sessions at once (503 beyond). Default: 10,000.
    pub max_sessions: usize,
    /// Session era: the most open streams per session — POSTs awaiting their answer and
    /// GET streams (429 beyond). Default: 32.
    pub max_streams_per_session: usize,
    /// Session era: how long a session lives without any open request or stream (then
    /// 404). Default: 30 minutes.
    pub session_idle_timeout: Duration,
    /// Session era: the reconnection delay sent in SSE `retry` fields. Default: 1 s.
    pub sse_retry: Duration,
    /// Session era: where SSE events are kept for resumption. Default: a
    /// [`MemoryEventStore`] (1,000 events per stream, 5 minutes each).
    pub event_store: Option<Arc<dyn EventStore>>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            endpoint: "/mcp".to_owned(),
            allowed_origins: Vec::new(),
            any_origin: false,
            allowed_hosts: Vec::new(),
            any_host: false,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            sse_keep_alive: Duration::from_secs(15),
            max_sessions: 10_000,
            max_streams_per_session: 32,
            session_idle_timeout: Duration::from_secs(30 * 60),
            sse_retry: Duration::from_secs(1),
            event_store: None,
        }
    }
}

impl HttpConfig {
    /// Serve the endpoint at `path`.
    pub fn endpoint(mut self, path: impl Into<String>) -> Self {
        self.endpoint = path.into();
        self
    }

    /// Allow one more `Origin` (`scheme://host[:port]`).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Allow one more `Host` (a name, or `name:port`).
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Set the body limit.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Set the session limit.
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Set the idle time after which a session ends.
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = idle;
        self
    }

    /// Keep SSE events in `store`.
    pub fn event_store(mut self, store: Arc<dyn EventStore>) -> Self {
        self.event_store = Some(store);
        self
    }
}

/// What every request of a router shares.
pub(crate) struct Shared {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) sessions: session::Sessions,
}

impl Shared {
    fn new(server: Server, config: HttpConfig) -> Arc<Shared> {
        let store = config
            .event_store
            .clone()
            .unwrap_or_else(|| Arc::new(MemoryEventStore::default()));
        Arc::new(Shared {
            server,
            config,
            sessions: session::Sessions::new(store),
        })
    }
}

/// The MCP endpoint as an [`axum::Router`]: mount it, nest it, layer it.
pub fn router(server: Server, config: HttpConfig) -> Router {
    router_of(Shared::new(server, config))
}

fn router_of(shared: Arc<Shared>) -> Router {
    let endpoint = shared.config.endpoint.clone();
    let route = post(stateless::post)
        .get(session::get)
        .delete(session::delete)
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&shared),
            guard::origin_and_host,
        ));
    Router::new().route(&endpoint, route).with_state(shared)
}

/// Serve [`router`] on `listener` (with `TCP_NODELAY` on every accepted socket) until the
/// listener fails.
pub async fn serve(
    server: Server,
    listener: tokio::net::TcpListener,
    config: HttpConfig,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|socket| {
        if let Err(e) = socket.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY failed: {e}");
        }
    });
    axum::serve(listener, router(server, config)).await
}

/// [`serve`] until `signal` completes, then shut down gracefully: stop accepting, end
/// every session (their engines get their shutdown grace; their SSE streams end) and
/// wait for the connections to finish.
pub async fn serve_with_shutdown(
    server: Server,
    listener: tokio::net::TcpListener,
    config: HttpConfig,
    signal: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|socket| {
        if let Err(e) = socket.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY failed: {e}");
        }
    });
    let shared = Shared::new(server, config);
    let sessions = Arc::clone(&shared);
    axum::serve(listener, router_of(shared))
        .with_graceful_shutdown(async move {
            signal.await;
            sessions.sessions.shutdown();
        })
        .await
}
