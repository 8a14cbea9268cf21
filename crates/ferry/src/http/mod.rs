//! The Streamable HTTP server transport (feature `http-server`), on axum.
//!
//! One MCP endpoint (default `/mcp`) serves both eras. **2026-07-28 (stateless era)**: each
//! POST carries one JSON-RPC request (or notification) and is answered on its own (below).
//! **Session era (2025-03-26, 2025-06-18, 2025-11-25)**: a POSTed `initialize` starts a
//! session (`MCP-Session-Id`) with its own long-lived engine; GET opens its standalone SSE
//! stream, DELETE ends it, every SSE event is resumable with `Last-Event-ID` — see
//! `session/mod.rs` for the rules (which stream a message takes, the version header, limits).
//! A POST is session-era when it is a batch, a response, `initialize`, a request without a
//! stateless revision in `_meta` or `MCP-Protocol-Version`, or a notification with a
//! session id.
//!
//! **2024-11-05 HTTP+SSE** (deprecated, still spoken by many clients) is served on two
//! more paths, on by default: `GET /sse` opens a session's SSE stream, whose first event
//! (`endpoint`) names `/messages?sessionId=<id>`, where the client POSTs its messages (202;
//! answers come on the stream). See `legacy.rs` for its table;
//! [`HttpConfig::legacy_sse`] moves or disables it.
//!
//! **Paths.** The router claims exactly three paths, each configurable: the endpoint
//! ([`HttpConfig::endpoint`], `/mcp`), and the HTTP+SSE pair ([`HttpConfig::legacy_sse`],
//! `/sse` and `/messages`); every other path is free for the application's own routes.
//! Nested (`Router::nest("/api", ..)`) or behind a proxy stripping a prefix, it keeps
//! working: the `endpoint` event names the path the client used.
//!
//! **Browsers.** Allowed origins get CORS: preflights (`OPTIONS`) are answered and responses
//! carry `Access-Control-Allow-Origin` and expose `MCP-Session-Id` (see `cors.rs`).
//!
//! What a stateless-era POST gets:
//!
//! | case | answer |
//! |---|---|
//! | foreign `Origin` (any method) | 403 (loopback always allowed; see [`HttpConfig`]) |
//! | foreign `Host` (any method) | 421 Misdirected Request (see `guard.rs`) |
//! | `OPTIONS` with an allowed `Origin` (CORS preflight) | 204 |
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
//! **Cost.** Each POST runs on its own in-memory connection to the [`Server`](crate::server::Server) (one
//! `Server::serve` on a channel transport: a few channels and three tasks, no I/O), so
//! requests share nothing but the server; this is what the stateless era asks for and is
//! cheap next to HTTP itself. Server statistics count each POST as a connection.
//!
//! **Authorization.** With feature `http-auth`, `HttpConfig::auth` puts the endpoint behind
//! OAuth bearer tokens (the `auth` module: challenges, Protected Resource Metadata, JWT
//! and introspection verifiers, the `Auth` extractor). Any other layer can bind sessions
//! to a principal with the [`SessionOwner`] request extension and hand data to handlers
//! with an [`Attachment`](crate::engine::Attachment) extension.
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
//!
//! **Something else behind the endpoint.** [`router_with`] takes a [`Backend`]: the HTTP
//! layer keeps everything above (guard, sessions, streams, resumability, checks) and hands
//! the backend one engine transport per session or stateless request — a proxy to another
//! server, as `ferry bridge --http` puts a stdio child there. [`serve_router`] serves any
//! such router with `TCP_NODELAY`.

mod accept;
#[cfg(feature = "http-auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-auth")))]
pub mod auth;
mod clients;
mod cors;
mod events;
mod guard;
mod headers;
mod legacy;
mod owner;
mod probe;
mod session;
mod sse;
mod stateless;
pub mod store;

pub use crate::engine::{Backend, Connection};
pub use accept::ConnectionLimits;
pub use events::{EventStore, MemoryEventStore, ReplayError, StreamKey};
pub use owner::SessionOwner;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};

/// The default body limit: 4 MiB, the engine's default message limit.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How the MCP endpoint is served.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// The endpoint's path. Default: `/mcp`.
    pub endpoint: String,
    /// The 2024-11-05 HTTP+SSE transport's SSE path (`GET` opens a session), or `None` to
    /// serve only Streamable HTTP. Default: `/sse`.
    pub legacy_sse: Option<String>,
    /// The 2024-11-05 HTTP+SSE transport's messages path (`POST ?sessionId=…`), sent to
    /// the client in the `endpoint` event after the prefix the client's URL has (the
    /// router nested under `/api` names `/api/messages`; a proxy that strips a prefix
    /// says which in `X-Forwarded-Prefix`). Default: `/messages`.
    pub legacy_messages: String,
    /// Origins allowed besides loopback ones (`http://localhost:*`, `http://127.0.0.1:*`,
    /// `http://[::1]:*`), e.g. `https://app.example.com`. A request with any other
    /// `Origin` gets 403; one without `Origin` (not from a browser) passes. Allowed origins
    /// get CORS headers and answered preflights.
    pub allowed_origins: Vec<String>,
    /// Allow every `Origin`. Default: no.
    pub any_origin: bool,
    /// Host names (optionally with port) allowed in `Host` besides loopback ones: list the
    /// names the server is reached by when it is not on localhost; any other `Host` gets
    /// 421 Misdirected Request. Default: none.
    pub allowed_hosts: Vec<String>,
    /// Allow every `Host`. Default: no (DNS rebinding protection).
    pub any_host: bool,
    /// The largest body accepted (413 beyond). Default: [`DEFAULT_MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
    /// Silence after which an SSE stream gets a keep-alive comment. Default: 15 s.
    pub sse_keep_alive: Duration,
    /// The most sessions at once, of both eras and the 2024-11-05 HTTP+SSE transport (503
    /// beyond). Default: 10,000.
    pub max_sessions: usize,
    /// The most live sessions one client may hold (of both eras and the 2024-11-05 HTTP+SSE
    /// transport together): past it, its `initialize` or `GET` on the HTTP+SSE path gets 429
    /// with a JSON-RPC error naming the limit. The client is the request's
    /// [`SessionOwner`] when an authentication layer set one (the `http-auth` layer: the
    /// token's principal), otherwise the address the connection came from (an IPv6 one by
    /// its /64; see [`HttpConfig::trusted_proxies`] behind a reverse proxy). The address is
    /// what [`serve`] puts in every request as axum's
    /// [`ConnectInfo<SocketAddr>`](axum::extract::ConnectInfo); a [`router`] served
    /// otherwise counts by address only if its server provides that `ConnectInfo` too
    /// (`into_make_service_with_connect_info`). With a
    /// [`session_store`](HttpConfig::session_store) the count is this instance's: the
    /// sessions it started and still holds. Default: 2,500, a quarter of the default
    /// `max_sessions`: one client cannot take the table (four are needed to fill it), and
    /// a gateway or NAT serving many users through one address still has room. Lower it
    /// along with a lower `max_sessions`.
    pub max_sessions_per_client: usize,
    /// Reverse proxies in front of this server: a connection from one of these addresses
    /// is counted (for [`HttpConfig::max_sessions_per_client`]) against the rightmost
    /// `X-Forwarded-For` entry that is not itself a trusted proxy, the address the nearest
    /// proxy saw (the entries left of it are whatever the client wrote, so they are never
    /// trusted). Without this, every client behind a proxy shares the proxy's address.
    /// Default: none (`X-Forwarded-For` is ignored).
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// 2024-11-05 HTTP+SSE: the most bytes of a session's output that may wait for a
    /// client that does not read its SSE stream. Past it, the session's POSTs get 503 with a
    /// JSON-RPC error saying so (nothing is lost: the client may read, then post again);
    /// answers still due to requests accepted earlier are queued up to twice this, and then
    /// the stream is cut and the session ends (as the session era cuts a stream whose queue
    /// is full). Default: 4 MiB ([`DEFAULT_MAX_BODY_BYTES`]: one largest message).
    pub legacy_max_unread_bytes: usize,
    /// Session era: the most bytes of events one SSE stream (a POST's, the standalone GET
    /// stream) may hold for a client that does not read it. Past it (or past 1,024 events)
    /// the stream is cut; the client may resume it from the
    /// [`event_store`](HttpConfig::event_store) with `Last-Event-ID`. An event is queued
    /// while the bytes before it are within the bound, so an answer larger than the bound
    /// still goes through. Default: 8 MiB (twice [`DEFAULT_MAX_BODY_BYTES`], where an
    /// HTTP+SSE stream is cut).
    pub stream_max_unread_bytes: usize,
    /// Session era: the most open streams per session — POSTs awaiting their answer and
    /// GET streams (429 beyond). Default: 32.
    pub max_streams_per_session: usize,
    /// Session era: how long a session lives without any open request or stream (then
    /// 404). Default: 30 minutes.
    pub session_idle_timeout: Duration,
    /// Session era: when the session table is full, a session that has made no request
    /// since `initialize` (nor holds a stream) and has been quiet this long is ended to
    /// make room, the quietest first; otherwise a new session gets 503. Likewise when a
    /// client is at [`HttpConfig::max_sessions_per_client`], among that client's own
    /// sessions (otherwise 429). Default: 10 s.
    pub unused_session_grace: Duration,
    /// Session era, with a [`session_store`](HttpConfig::session_store): how long this
    /// instance keeps its local engine of a session that has no open request or stream and
    /// no task running here. The session itself stays in the store; its next request, on
    /// any instance, adopts it again from its record (one replay of its `initialize`), so
    /// a session idle here costs this instance no memory. Default: 30 s.
    pub replica_idle_timeout: Duration,
    /// Session era: the reconnection delay sent in SSE `retry` fields. Default: 1 s.
    pub sse_retry: Duration,
    /// Session era, 2025-11-25 sessions: close a POST's SSE stream once it has been this
    /// long without an event and its response has not come (SEP-1699 polling). A request
    /// that sends nothing in this time is answered with an SSE stream holding only its
    /// priming event. The client reconnects after the `retry` delay with `GET` and
    /// `Last-Event-ID` and gets the rest (the response included). This frees the
    /// connections long requests hold (say, behind a proxy with an idle timeout). Default:
    /// never.
    pub sse_poll_after: Option<Duration>,
    /// Session era: answer every POST that carries a request with an SSE stream, even when
    /// the response is the first thing to send. Default: no — such a POST gets one JSON
    /// object, which is cheaper for both sides; SSE is used when a notification or request
    /// comes before the response. Clients must accept both; turn this on for peers or
    /// proxies that expect a stream.
    pub sse_responses: bool,
    /// Session era: where SSE events are kept for resumption. Default: a
    /// [`MemoryEventStore`] (1,000 events and 4 MiB per stream, 5 minutes each).
    pub event_store: Option<Arc<dyn EventStore>>,
    /// Session era: where session records are shared with the other instances of this
    /// server (see [`store`]): any instance then serves any session. Default: none (the
    /// sessions live in this instance only).
    pub session_store: Option<Arc<dyn store::SessionStore>>,
    /// With a session store: this instance's name among the others (letters, digits, `-`
    /// and `_`; it tags the requests it sends clients, so their answers find it from any
    /// instance). Default: 16 random hex digits, new at every start.
    pub instance_id: Option<String>,
    /// How [`serve`] bounds connections: how many at once, how long headers may take, how
    /// long a shutdown waits (see [`ConnectionLimits`]). [`router`] alone leaves this to
    /// whatever serves it.
    pub connections: ConnectionLimits,
    /// Require OAuth bearer tokens (see [`auth`]). Default: none.
    #[cfg(feature = "http-auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-auth")))]
    pub auth: Option<Arc<auth::ResourceServer>>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            endpoint: "/mcp".to_owned(),
            legacy_sse: Some("/sse".to_owned()),
            legacy_messages: "/messages".to_owned(),
            allowed_origins: Vec::new(),
            any_origin: false,
            allowed_hosts: Vec::new(),
            any_host: false,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            sse_keep_alive: Duration::from_secs(15),
            max_sessions: 10_000,
            max_sessions_per_client: 2_500,
            trusted_proxies: Vec::new(),
            legacy_max_unread_bytes: DEFAULT_MAX_BODY_BYTES,
            stream_max_unread_bytes: 2 * DEFAULT_MAX_BODY_BYTES,
            max_streams_per_session: 32,
            session_idle_timeout: Duration::from_secs(30 * 60),
            unused_session_grace: Duration::from_secs(10),
            replica_idle_timeout: Duration::from_secs(30),
            sse_retry: Duration::from_secs(1),
            sse_poll_after: None,
            sse_responses: false,
            event_store: None,
            session_store: None,
            instance_id: None,
            connections: ConnectionLimits::default(),
            #[cfg(feature = "http-auth")]
            auth: None,
        }
    }
}

impl HttpConfig {
    /// Serve the endpoint at `path`.
    pub fn endpoint(mut self, path: impl Into<String>) -> Self {
        self.endpoint = path.into();
        self
    }

    /// Serve the 2024-11-05 HTTP+SSE transport at these paths (SSE, messages), or not at
    /// all with `None`.
    pub fn legacy_sse(mut self, paths: Option<(&str, &str)>) -> Self {
        match paths {
            Some((sse, messages)) => {
                self.legacy_sse = Some(sse.to_owned());
                self.legacy_messages = messages.to_owned();
            }
            None => self.legacy_sse = None,
        }
        self
    }

    /// Set the keep-alive interval of SSE streams.
    pub fn sse_keep_alive(mut self, every: Duration) -> Self {
        self.sse_keep_alive = every;
        self
    }

    /// Set the most open streams per session.
    pub fn max_streams_per_session(mut self, streams: usize) -> Self {
        self.max_streams_per_session = streams;
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

    /// Set the most live sessions per client (see
    /// [`HttpConfig::max_sessions_per_client`]).
    pub fn max_sessions_per_client(mut self, sessions: usize) -> Self {
        self.max_sessions_per_client = sessions;
        self
    }

    /// Trust `X-Forwarded-For` from one more reverse proxy's address (see
    /// [`HttpConfig::trusted_proxies`]).
    pub fn trust_proxy(mut self, address: std::net::IpAddr) -> Self {
        self.trusted_proxies.push(address);
        self
    }

    /// Set how many bytes of output may wait for an HTTP+SSE client that does not read (see
    /// [`HttpConfig::legacy_max_unread_bytes`]).
    pub fn legacy_max_unread_bytes(mut self, bytes: usize) -> Self {
        self.legacy_max_unread_bytes = bytes;
        self
    }

    /// Set how many bytes one session-era SSE stream may hold unread before it is cut (see
    /// [`HttpConfig::stream_max_unread_bytes`]).
    ///
    /// ```
    /// let config = ferry::http::HttpConfig::default().stream_max_unread_bytes(1 << 20);
    /// assert_eq!(config.stream_max_unread_bytes, 1 << 20);
    /// ```
    pub fn stream_max_unread_bytes(mut self, bytes: usize) -> Self {
        self.stream_max_unread_bytes = bytes;
        self
    }

    /// Set how long an unused session is kept when the table is full (see
    /// [`HttpConfig::unused_session_grace`]).
    pub fn unused_session_grace(mut self, grace: Duration) -> Self {
        self.unused_session_grace = grace;
        self
    }

    /// Set how long a shared session's local engine is kept while the session is idle
    /// (see [`HttpConfig::replica_idle_timeout`]).
    pub fn replica_idle_timeout(mut self, idle: Duration) -> Self {
        self.replica_idle_timeout = idle;
        self
    }

    /// Set the idle time after which a session ends.
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = idle;
        self
    }

    /// Close quiet POST SSE streams after `quiet` for the client to poll (see
    /// [`HttpConfig::sse_poll_after`]).
    pub fn sse_poll_after(mut self, quiet: Duration) -> Self {
        self.sse_poll_after = Some(quiet);
        self
    }

    /// Answer every session-era request with an SSE stream (see
    /// [`HttpConfig::sse_responses`]).
    pub fn sse_responses(mut self, always: bool) -> Self {
        self.sse_responses = always;
        self
    }

    /// Require OAuth bearer tokens checked by `server` (see [`auth`]).
    #[cfg(feature = "http-auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-auth")))]
    pub fn auth(mut self, server: auth::ResourceServer) -> Self {
        self.auth = Some(Arc::new(server));
        self
    }

    /// Keep SSE events in `store`.
    pub fn event_store(mut self, store: Arc<dyn EventStore>) -> Self {
        self.event_store = Some(store);
        self
    }

    /// Share session records with other instances through `store` (see
    /// [`HttpConfig::session_store`]).
    pub fn session_store(mut self, store: Arc<dyn store::SessionStore>) -> Self {
        self.session_store = Some(store);
        self
    }

    /// Name this instance (see [`HttpConfig::instance_id`]).
    pub fn instance_id(mut self, id: impl Into<String>) -> Self {
        self.instance_id = Some(id.into());
        self
    }
}

/// What every request of a router shares.
pub(crate) struct Shared {
    /// What answers the connections, and what the checks ask (revisions, tool schemas).
    pub(crate) backend: Arc<dyn Backend>,
    pub(crate) config: HttpConfig,
    pub(crate) sessions: session::Sessions,
    pub(crate) legacy: legacy::LegacySessions,
    /// How many sessions each client holds (see [`HttpConfig::max_sessions_per_client`]).
    pub(crate) clients: Arc<clients::ClientCounts>,
    /// This instance's id among those sharing the session store.
    pub(crate) instance: Arc<str>,
}

impl Shared {
    fn new(backend: Arc<dyn Backend>, config: HttpConfig) -> Arc<Shared> {
        let store = config
            .event_store
            .clone()
            .unwrap_or_else(|| Arc::new(MemoryEventStore::default()));
        let instance = match config.instance_id.as_deref() {
            Some(id) if store::valid_instance_id(id) => Arc::from(id),
            Some(id) => {
                tracing::warn!(
                    "instance id {id:?} is not letters, digits, - and _; a random one is used"
                );
                store::random_instance_id()
            }
            None => store::random_instance_id(),
        };
        Arc::new(Shared {
            backend,
            config,
            sessions: session::Sessions::new(store),
            legacy: legacy::LegacySessions::default(),
            clients: Arc::default(),
            instance,
        })
    }
}

/// The MCP endpoint (and the HTTP+SSE paths, unless disabled) as an [`axum::Router`]:
/// mount it, nest it, layer it. `backend` answers the messages: usually a
/// [`Server`](crate::server::Server).
pub fn router(backend: impl Backend, config: HttpConfig) -> Router {
    router_of(Shared::new(Arc::new(backend), config))
}

/// [`router`] with a shared `backend` (a proxy, say: see [`Backend`]). The backend also
/// supplies what the HTTP layer checks itself: the protocol revisions accepted in
/// `MCP-Protocol-Version`, and the tool schemas behind `Mcp-Param-*` headers (a backend
/// that knows no tools skips those checks).
pub fn router_with(backend: Arc<dyn Backend>, config: HttpConfig) -> Router {
    router_of(Shared::new(backend, config))
}

fn router_of(shared: Arc<Shared>) -> Router {
    // Sessions shared: hear the other instances from the start (their changes and
    // messages), not from this instance's first request; outside a runtime, at that
    // request.
    if shared.config.session_store.is_some()
        && let Ok(runtime) = tokio::runtime::Handle::try_current()
    {
        let listening = Arc::clone(&shared);
        runtime.spawn(async move { session::listen(&listening).await });
    }
    let config = &shared.config;
    let mut router = Router::new().route(
        &config.endpoint,
        post(stateless::post)
            .get(session::get)
            .delete(session::delete),
    );
    if let Some(sse) = &config.legacy_sse {
        router = router
            .route(sse, get(legacy::get))
            .route(&config.legacy_messages, post(legacy::post));
    }
    // Inside the origin guard: foreign origins are refused first, and challenges carry
    // the CORS headers that let a browser client read them.
    #[cfg(feature = "http-auth")]
    let auth = config.auth.clone();
    #[cfg(feature = "http-auth")]
    if let Some(auth) = &auth {
        router = auth.layer(router);
    }
    let router = router
        .route_layer(guard::GuardLayer(Arc::clone(&shared)))
        .with_state(shared);
    #[cfg(feature = "http-auth")]
    if let Some(auth) = &auth {
        return router.merge(auth::metadata::routes(auth));
    }
    router
}

/// Serve [`router`] on `listener` (with `TCP_NODELAY` on every accepted socket, within
/// [`HttpConfig::connections`]) until the listener fails.
pub async fn serve(
    backend: impl Backend,
    listener: tokio::net::TcpListener,
    config: HttpConfig,
) -> std::io::Result<()> {
    let limits = config.connections;
    serve_router_with(router(backend, config), listener, limits).await
}

/// Serve `router` (from [`router`] or [`router_with`], perhaps with layers of your own) on
/// `listener`, with `TCP_NODELAY` on every accepted socket and the default
/// [`ConnectionLimits`], until the listener fails.
pub async fn serve_router(
    router: Router,
    listener: tokio::net::TcpListener,
) -> std::io::Result<()> {
    serve_router_with(router, listener, ConnectionLimits::default()).await
}

/// [`serve_router`] within `limits`.
pub async fn serve_router_with(
    router: Router,
    listener: tokio::net::TcpListener,
    limits: ConnectionLimits,
) -> std::io::Result<()> {
    accept::serve(router, listener, limits, std::future::pending(), || {}).await
}

/// [`serve`] until `signal` completes, then shut down gracefully: stop accepting, end
/// every session (requests in flight still answer, within their engines' shutdown grace;
/// then their SSE streams end) and wait for the connections to finish, at most
/// [`ConnectionLimits::shutdown_timeout`].
pub async fn serve_with_shutdown(
    backend: impl Backend,
    listener: tokio::net::TcpListener,
    config: HttpConfig,
    signal: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = config.connections;
    let shared = Shared::new(Arc::new(backend), config);
    let sessions = Arc::clone(&shared);
    accept::serve(router_of(shared), listener, limits, signal, move || {
        sessions.sessions.shutdown();
        sessions.legacy.shutdown();
    })
    .await
}
