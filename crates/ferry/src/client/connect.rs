//! Building a client and connecting: era negotiation (`server/discover`, falling back to
//! `initialize`), or a pinned revision.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, DiscoverResult,
    ElicitRequestParams, ElicitResult, Implementation, InitializeResult, Root,
    UnsupportedProtocolVersionData, keys,
};
use ferry_protocol::{Era, ProtocolVersion, VersionSet, error_codes};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::handlers::{ClientSide, Handlers};
use super::middleware::{End, Middleware, Next, Outgoing};
use super::{Client, ClientError, Inner};
use crate::engine::{CallOptions, Engine, EngineConfig, Transport};

/// How long the `server/discover` probe waits for its answer before the client sends
/// `initialize` too (see [`ClientBuilder::probe_timeout`]).
// Every server `bench/probe` runs answers the probe once started: this covers the slowest
// start it saw (Python's, on a loaded machine) and no more, as only a server that ignores
// the probe waits it out.
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The elicitation modes a client answers (see [`ClientBuilder::on_elicitation_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElicitationModes {
    /// Forms only: the server asks for values of a schema, the client shows a form.
    Form,
    /// Forms, and URL mode (from 2025-11-25): the server sends the user to a URL (a sign-in,
    /// a payment) and the client asks the user whether to open it.
    FormAndUrl,
}

/// Builds and connects a [`Client`].
pub struct ClientBuilder {
    info: Implementation,
    versions: VersionSet,
    pinned: Option<ProtocolVersion>,
    era: Option<Era>,
    /// `None`: [`DEFAULT_PROBE_TIMEOUT`], or over HTTP the request timeout.
    probe_timeout: Option<Duration>,
    /// `None`: the request timeout.
    connect_timeout: Option<Duration>,
    engine: EngineConfig,
    handlers: Handlers,
    hook: Option<std::sync::Arc<dyn super::RequestHook>>,
    middleware: Vec<Arc<dyn Middleware>>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .field("pinned", &self.pinned)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    pub(crate) fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientBuilder {
            info: Implementation::new(name, version),
            versions: VersionSet::all(),
            pinned: None,
            era: None,
            probe_timeout: None,
            connect_timeout: None,
            engine: EngineConfig {
                max_message_bytes: ferry_protocol::jsonrpc::DEFAULT_CLIENT_MAX_MESSAGE_BYTES,
                ..EngineConfig::default()
            },
            handlers: Handlers::default(),
            hook: None,
            middleware: Vec::new(),
        }
    }

    /// Run `hook` around every request this client sends (see [`super::RequestHook`]).
    pub fn request_hook(mut self, hook: impl super::RequestHook) -> Self {
        self.hook = Some(std::sync::Arc::new(hook));
        self
    }

    /// Run `middleware` around every request this client sends, the handshake's included
    /// (see [`Middleware`]); called again, the ones given before stay outside it. With
    /// feature `otel`, `ferry::otel::ClientTracing` traces each request with OpenTelemetry.
    ///
    /// ```
    /// use ferry::client::{BoxFuture, Client, ClientError, Middleware, Next, Outgoing};
    /// use serde_json::Value;
    ///
    /// /// Logs each request's method.
    /// struct Log;
    ///
    /// impl Middleware for Log {
    ///     fn call<'a>(&'a self, request: Outgoing, next: Next<'a>) -> BoxFuture<'a, Result<Value, ClientError>> {
    ///         eprintln!("-> {}", request.method);
    ///         Box::pin(next.run(request))
    ///     }
    /// }
    ///
    /// let builder = Client::builder("app", "1").middleware(Log);
    /// # let _ = builder;
    /// ```
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Speak exactly this revision (no probing). Default: negotiate.
    pub fn version(mut self, version: ProtocolVersion) -> Self {
        self.pinned = Some(version);
        self
    }

    /// Speak the newest revision of this era (no probing). Default: negotiate.
    pub fn era(mut self, era: Era) -> Self {
        self.era = Some(era);
        self
    }

    /// How long the `server/discover` probe of a negotiating client waits for its answer
    /// before the client sends `initialize` as well (a session-era server that ignores
    /// methods it does not know never answers the probe). Default:
    /// [`DEFAULT_PROBE_TIMEOUT`] (3 s); for [`connect_http`](Self::connect_http) the
    /// request timeout, as an HTTP server answers every POST, if only with an error.
    ///
    /// An answer to the probe ends the wait at once: a discover result (the stateless
    /// era), or an error (then `initialize`). After the timeout the probe is still awaited
    /// alongside `initialize`: a server slow to start that answers the probe after all is
    /// spoken to in the stateless era (its refusal of `initialize` is then ignored), and
    /// one that answers `initialize` first in the session era. `Duration::ZERO` sends no
    /// probe: `initialize` at once. A pinned [`version`](Self::version) or
    /// [`era`](Self::era) sends none either.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ferry::client::Client;
    ///
    /// // A server known to be slow to start: give it longer before `initialize` goes too.
    /// let builder = Client::builder("app", "1").probe_timeout(Duration::from_millis(5_000));
    /// # let _ = builder;
    /// // A server known to be of the session era: no probe.
    /// let builder = Client::builder("app", "1").probe_timeout(Duration::ZERO);
    /// # let _ = builder;
    /// ```
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = Some(timeout);
        self
    }

    /// How long the handshake may take in all (`server/discover`, `initialize`, or both
    /// when the probe goes unanswered): a server run as a child may still be compiling or
    /// installing itself. Default: the request timeout ([`timeout`](Self::timeout)). The
    /// requests after the handshake keep the request timeout.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ferry::client::Client;
    ///
    /// // `cargo run` may build the server first: wait for it up to ten minutes.
    /// let builder = Client::builder("app", "1").connect_timeout(Duration::from_secs(600));
    /// # let _ = builder;
    /// ```
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// The revisions the client may speak. Default: all.
    pub fn versions(mut self, versions: VersionSet) -> Self {
        self.versions = versions;
        self
    }

    /// The default timeout of every call. Default: 60 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.engine.request_timeout = timeout;
        self
    }

    /// Engine limits. Default: [`EngineConfig::default`], but messages from the server up
    /// to [`DEFAULT_CLIENT_MAX_MESSAGE_BYTES`](ferry_protocol::jsonrpc::DEFAULT_CLIENT_MAX_MESSAGE_BYTES)
    /// (64 MiB: answers carry files and images). A larger answer fails its call at once,
    /// naming the limit.
    pub fn engine(mut self, config: EngineConfig) -> Self {
        self.engine = config;
        self
    }

    /// Answer the server's sampling requests (declares `sampling`).
    pub fn on_sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.sampling = Some(Arc::new(move |p| Box::pin(handler(p))));
        self
    }

    /// Answer the server's elicitation requests, form mode (declares `elicitation`); with
    /// `url` true also URL mode.
    #[deprecated(note = "use `on_elicitation_with(ElicitationModes::Form, handler)` \
                         (or `ElicitationModes::FormAndUrl` for `url` true)")]
    pub fn on_elicitation<F, Fut>(self, url: bool, handler: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        let modes = if url {
            ElicitationModes::FormAndUrl
        } else {
            ElicitationModes::Form
        };
        self.on_elicitation_with(modes, handler)
    }

    /// Answer the server's elicitation requests in these `modes` (declares `elicitation`
    /// with them): the handler gets the request's params (`ElicitRequestParams::Form` or,
    /// with [`ElicitationModes::FormAndUrl`], `::Url`) and returns what the user did.
    ///
    /// ```
    /// use ferry::client::{Client, ElicitationModes};
    /// use ferry::protocol::types::{ElicitRequestParams, ElicitResult};
    /// use serde_json::json;
    ///
    /// let builder = Client::builder("app", "1").on_elicitation_with(
    ///     ElicitationModes::Form,
    ///     |params: ElicitRequestParams| async move {
    ///         Ok(match params {
    ///             ElicitRequestParams::Form(_) => ElicitResult::accept(json!({"name": "Ada"})),
    ///             _ => ElicitResult::decline(),
    ///         })
    ///     },
    /// );
    /// # let _ = builder;
    /// ```
    pub fn on_elicitation_with<F, Fut>(mut self, modes: ElicitationModes, handler: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.elicitation = Some(Arc::new(move |p| Box::pin(handler(p))));
        self.handlers.elicitation_url = modes == ElicitationModes::FormAndUrl;
        self
    }

    /// Offer these roots (declares `roots`).
    pub fn roots(self, roots: Vec<Root>) -> Self {
        self.roots_with(move || {
            let roots = roots.clone();
            async move { roots }
        })
    }

    /// Offer roots computed on each `roots/list` (declares `roots`; tell the server they
    /// changed with [`Client::roots_changed`]).
    pub fn roots_with<F, Fut>(mut self, roots: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<Root>> + Send + 'static,
    {
        self.handlers.roots = Some(Arc::new(move || Box::pin(roots())));
        self
    }

    /// Start `command` as a stdio server and connect to it. The returned handle owns the
    /// process: [`crate::engine::ChildProcess::shutdown`] ends it as the spec says; dropping it kills it.
    pub async fn spawn(
        self,
        command: &crate::engine::ChildCommand,
    ) -> Result<(Client, crate::engine::ChildProcess), ClientError> {
        let config = &self.engine;
        let (transport, child) = crate::engine::ChildProcess::spawn(
            command,
            config.max_message_bytes,
            config.write_queue,
        )
        .map_err(|e| ClientError::Spawn(e.to_string()))?;
        match self.connect(transport).await {
            Ok(client) => Ok((client, child)),
            Err(error) => {
                let quick = crate::engine::ShutdownTimeouts::all(Duration::from_millis(500));
                let _ = child.shutdown(quick).await;
                Err(error)
            }
        }
    }

    /// Connect to the Streamable HTTP endpoint at `url` (feature `http-client`; see
    /// `ferry::http_client`), negotiating the revision. The returned handle closes the
    /// connection (DELETE of the session) with `close`; dropping the client does it in the
    /// background.
    #[cfg(feature = "http-client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-client")))]
    pub async fn connect_http(
        self,
        url: &str,
        config: crate::http_client::HttpClientConfig,
    ) -> Result<(Client, crate::http_client::HttpConnection), ClientError> {
        let (transport, connection) = crate::http_client::connect(url, config)
            .map_err(|e| ClientError::Spawn(e.to_string()))?;
        let mut builder = self;
        builder
            .probe_timeout
            .get_or_insert(builder.engine.request_timeout);
        let session_id = connection.session_id_source();
        match builder
            .connect_with(transport, Some(session_id), None)
            .await
        {
            Ok(client) => Ok((client, connection)),
            Err(error) => {
                connection.close().await;
                Err(error)
            }
        }
    }

    /// Take up session `session_id` of the session-era server at `url`, opened by an
    /// earlier connection that kept it (`HttpConnection::keep_session`), to follow the
    /// tasks it started, say (feature `http-client`; see `ferry::http_client::resume`).
    /// `version` is the revision that session agreed on. Nothing is sent to connect; the
    /// server's capabilities are not known again (they were told to the first
    /// connection), so calls are sent unchecked: [`Client::is_resumed`].
    #[cfg(feature = "http-client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-client")))]
    pub async fn resume_http(
        self,
        url: &str,
        config: crate::http_client::HttpClientConfig,
        session_id: &str,
        version: ProtocolVersion,
    ) -> Result<(Client, crate::http_client::HttpConnection), ClientError> {
        if version.era() != Era::Session {
            return Err(ClientError::NotInRevision(format!(
                "only a session-era session can be resumed, not one of {version}"
            )));
        }
        let (transport, connection) = crate::http_client::resume(url, config, session_id, version)
            .map_err(|e| ClientError::Spawn(e.to_string()))?;
        let session_id = connection.session_id_source();
        let client = self
            .connect_with(transport, Some(session_id), Some(version))
            .await?;
        Ok((client, connection))
    }

    /// Take up a session of revision `version` already open on `transport`, with no
    /// handshake: for an HTTP session opened by another connection and taken up with
    /// `ferry::http_client::resume` ([`resume_http`](Self::resume_http) does both). The
    /// server's capabilities are unknown; calls are sent unchecked.
    pub async fn resume(
        self,
        transport: Transport,
        version: ProtocolVersion,
    ) -> Result<Client, ClientError> {
        self.connect_with(transport, None, Some(version)).await
    }

    /// Connect over `transport`, negotiating the revision.
    pub async fn connect(self, transport: Transport) -> Result<Client, ClientError> {
        self.connect_with(transport, None, None).await
    }

    /// [`connect`](Self::connect), the spans reading the session id from `session_id`;
    /// with `resumed`, a session of that revision already open (no handshake).
    async fn connect_with(
        self,
        transport: Transport,
        session_id: Option<crate::engine::SessionIdSource>,
        resumed: Option<ProtocolVersion>,
    ) -> Result<Client, ClientError> {
        let capabilities = self.handlers.capabilities();
        let (notifications, _) = broadcast::channel(256);
        let side = ClientSide {
            handlers: self.handlers.clone(),
            notifications: notifications.clone(),
            tasks: Default::default(),
        };
        let engine = Engine::start(transport, side, self.engine.clone());
        let peer = engine.peer.clone();
        let target = match (self.pinned, self.era) {
            (Some(v), _) => Target::Exactly(v),
            (None, Some(era)) => Target::Exactly(
                self.versions
                    .newest_of(era)
                    .ok_or_else(|| ClientError::NoCommonVersion(Vec::new()))?,
            ),
            (None, None) => Target::Negotiate,
        };
        let negotiated = match (resumed, self.connect_timeout) {
            (Some(version), _) => Negotiated {
                version,
                server_info: None,
                capabilities: Default::default(),
                instructions: None,
            },
            // Each request of the handshake is bounded by it too; this bounds them together.
            (None, Some(limit)) => {
                tokio::time::timeout(limit, negotiate(&peer, &self, &capabilities, target))
                    .await
                    .map_err(|_| ClientError::Timeout(limit))??
            }
            (None, None) => negotiate(&peer, &self, &capabilities, target).await?,
        };
        Ok(Client {
            inner: Arc::new(Inner {
                peer,
                engine,
                version: negotiated.version,
                info: self.info,
                capabilities: for_revision(&capabilities, negotiated.version),
                server_info: negotiated.server_info,
                server_capabilities: negotiated.capabilities,
                instructions: negotiated.instructions,
                handlers: self.handlers,
                notifications,
                log_level: Mutex::new(None),
                output_schemas: Default::default(),
                hook: self.hook,
                middleware: self.middleware,
                session_id,
                connected: std::time::Instant::now(),
                resumed: resumed.is_some(),
            }),
        })
    }
}

enum Target {
    Exactly(ProtocolVersion),
    Negotiate,
}

struct Negotiated {
    version: ProtocolVersion,
    server_info: Option<Implementation>,
    capabilities: ferry_protocol::types::ServerCapabilities,
    instructions: Option<String>,
}

/// The capabilities as revision `version` knows them (tasks only in 2025-11-25).
fn for_revision(capabilities: &ClientCapabilities, version: ProtocolVersion) -> ClientCapabilities {
    let mut capabilities = capabilities.clone();
    // Conforming capabilities only drops what the revision lacks; it cannot fail.
    let _ = ferry_protocol::conform::Conform::conform(&mut capabilities, version);
    capabilities
}

/// The `_meta` a stateless-era request carries.
pub(crate) fn stateless_meta(
    version: ProtocolVersion,
    capabilities: &ClientCapabilities,
    info: &Implementation,
) -> Value {
    json!({
        keys::PROTOCOL_VERSION: version.as_str(),
        keys::CLIENT_CAPABILITIES: capabilities,
        keys::CLIENT_INFO: info,
    })
}

async fn negotiate(
    peer: &crate::engine::Peer,
    builder: &ClientBuilder,
    capabilities: &ClientCapabilities,
    target: Target,
) -> Result<Negotiated, ClientError> {
    match target {
        Target::Exactly(v) if v.era() == Era::Stateless => {
            discover(peer, builder, capabilities, v, None).await
        }
        Target::Exactly(v) => initialize(peer, builder, capabilities, v).await,
        Target::Negotiate => {
            let Some(newest) = builder.versions.newest_of(Era::Stateless) else {
                return initialize_newest(peer, builder, capabilities).await;
            };
            let timeout = builder.probe_timeout.unwrap_or(DEFAULT_PROBE_TIMEOUT);
            if timeout.is_zero() {
                return initialize_newest(peer, builder, capabilities).await;
            }
            probe(peer, builder, capabilities, newest, timeout).await
        }
    }
}

/// Negotiate by probing: `server/discover` first, `initialize` when the server answers it
/// with an error or not within the probe timeout.
async fn probe(
    peer: &crate::engine::Peer,
    builder: &ClientBuilder,
    capabilities: &ClientCapabilities,
    newest: ProtocolVersion,
    timeout: Duration,
) -> Result<Negotiated, ClientError> {
    // Bounded by the request timeout only: a late answer still counts (below).
    let discovered = discover(peer, builder, capabilities, newest, None);
    tokio::pin!(discovered);
    let answered = match tokio::time::timeout(timeout, &mut discovered).await {
        Ok(answered) => answered,
        Err(_) => {
            // No answer yet: a server that ignores unknown methods, or one slow to start.
            // `initialize` goes now, and whichever handshake succeeds first is the era.
            let initialized = initialize_newest(peer, builder, capabilities);
            tokio::pin!(initialized);
            return tokio::select! {
                biased;
                discovered = &mut discovered => match discovered {
                    Ok(negotiated) => Ok(negotiated),
                    Err(_) => initialized.await,
                },
                initialized = &mut initialized => match initialized {
                    Ok(negotiated) => Ok(negotiated),
                    // A stateless server, slow to start, that took the probe first refuses
                    // `initialize` on a connection that is stateless now: its answer to
                    // the probe (due before the refusal) decides.
                    Err(refused) => {
                        match tokio::time::timeout(timeout, discovered).await {
                            Ok(Ok(negotiated)) => Ok(negotiated),
                            _ => Err(refused),
                        }
                    }
                },
            };
        }
    };
    match answered {
        Ok(negotiated) => Ok(negotiated),
        Err(ClientError::Rpc(error)) if error.code == error_codes::UNSUPPORTED_PROTOCOL_VERSION => {
            // The server is stateless but speaks another revision: pick from its list.
            let supported = serde_json::from_value::<UnsupportedProtocolVersionData>(
                error.data.clone().unwrap_or_default(),
            )
            .map(|d| d.supported)
            .unwrap_or_default();
            match newest_common(&builder.versions, &supported, Era::Stateless) {
                Some(v) => discover(peer, builder, capabilities, v, None).await,
                None => initialize_newest(peer, builder, capabilities).await,
            }
        }
        // A session-era server: no such method, nothing before `initialize`, an answer
        // that is no discover result (some answer any method with `{}`), or a transport's
        // refusal (HTTP: a 2024-11-05 server's 405, say).
        Err(
            ClientError::Rpc(_)
            | ClientError::Transport(_)
            | ClientError::Timeout(_)
            | ClientError::InvalidResult(_),
        ) => initialize_newest(peer, builder, capabilities).await,
        Err(other) => Err(other),
    }
}

fn newest_common(ours: &VersionSet, theirs: &[String], era: Era) -> Option<ProtocolVersion> {
    ours.versions()
        .iter()
        .rev()
        .copied()
        .filter(|v| v.era() == era)
        .find(|v| theirs.iter().any(|t| t == v.as_str()))
}

async fn discover(
    peer: &crate::engine::Peer,
    builder: &ClientBuilder,
    capabilities: &ClientCapabilities,
    version: ProtocolVersion,
    timeout: Option<Duration>,
) -> Result<Negotiated, ClientError> {
    let conformed = for_revision(capabilities, version);
    let params = json!({"_meta": stateless_meta(version, &conformed, &builder.info)});
    let options = CallOptions {
        timeout: timeout.or(builder.connect_timeout),
        ..Default::default()
    };
    let raw = handshake_call(peer, builder, "server/discover", params, version, options).await?;
    let result: DiscoverResult =
        serde_json::from_str(raw.get()).map_err(|e| ClientError::InvalidResult(e.to_string()))?;
    if !result
        .supported_versions
        .iter()
        .any(|v| v == version.as_str())
    {
        return match newest_common(
            &builder.versions,
            &result.supported_versions,
            Era::Stateless,
        ) {
            Some(v) if v != version => {
                Box::pin(discover(peer, builder, capabilities, v, timeout)).await
            }
            _ => Err(ClientError::NoCommonVersion(result.supported_versions)),
        };
    }
    Ok(Negotiated {
        version,
        server_info: result.meta.and_then(|m| m.server_info),
        capabilities: result.capabilities,
        instructions: result.instructions,
    })
}

/// A request of the handshake (`initialize`, `server/discover`), through the builder's
/// middleware when there are any.
async fn handshake_call(
    peer: &crate::engine::Peer,
    builder: &ClientBuilder,
    method: &'static str,
    params: Value,
    version: ProtocolVersion,
    options: CallOptions,
) -> Result<ferry_protocol::jsonrpc::RawJson, ClientError> {
    if builder.middleware.is_empty() {
        return Ok(peer.call(method, &params, options).await?);
    }
    let chain = &builder.middleware;
    let end: End<'_> = Box::new(move |request: Outgoing| {
        Box::pin(async move {
            let id = peer.next_request_id();
            for middleware in chain {
                middleware.sent(request.method, &id);
            }
            let raw = peer
                .call_with_id(id, request.method, &request.params, options)
                .await?;
            serde_json::from_str(raw.get()).map_err(|e| ClientError::InvalidResult(e.to_string()))
        })
    });
    // No session id yet: the answer to `initialize` brings it.
    let request = Outgoing {
        method,
        params,
        version,
        session_id: None,
    };
    let result = Next::new(chain, end).run(request).await?;
    serde_json::value::to_raw_value(&result).map_err(|e| ClientError::InvalidResult(e.to_string()))
}

async fn initialize_newest(
    peer: &crate::engine::Peer,
    builder: &ClientBuilder,
    capabilities: &ClientCapabilities,
) -> Result<Negotiated, ClientError> {
    let newest = builder
        .versions
        .newest_of(Era::Session)
        .ok_or_else(|| ClientError::NoCommonVersion(Vec::new()))?;
    initialize(peer, builder, capabilities, newest).await
}

async fn initialize(
    peer: &crate::engine::Peer,
    builder: &ClientBuilder,
    capabilities: &ClientCapabilities,
    version: ProtocolVersion,
) -> Result<Negotiated, ClientError> {
    let params = json!({
        "protocolVersion": version.as_str(),
        "capabilities": for_revision(capabilities, version),
        "clientInfo": builder.info,
    });
    let options = CallOptions {
        timeout: builder.connect_timeout,
        ..Default::default()
    };
    let raw = handshake_call(peer, builder, "initialize", params, version, options).await?;
    let result: InitializeResult =
        serde_json::from_str(raw.get()).map_err(|e| ClientError::InvalidResult(e.to_string()))?;
    let agreed = result
        .protocol_version
        .parse::<ProtocolVersion>()
        .ok()
        .filter(|v| v.era() == Era::Session && builder.versions.contains(*v))
        .ok_or_else(|| ClientError::NoCommonVersion(vec![result.protocol_version.clone()]))?;
    peer.notify("notifications/initialized", &json!({})).await?;
    Ok(Negotiated {
        version: agreed,
        server_info: Some(result.server_info),
        capabilities: result.capabilities,
        instructions: result.instructions,
    })
}
