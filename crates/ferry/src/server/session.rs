//! One connection's server side: its lifecycle (`initialize`, `server/discover`,
//! subscriptions, the log level), what it negotiated, and the notifications it hears (list
//! changes, resource updates). The way its messages go is `pipeline.rs`.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Instant;

use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::*;
use ferry_protocol::{Era, ProtocolVersion};
use tokio::sync::broadcast;

use super::core::Server;
use super::input::ClientCaps;
use super::middleware::{SessionInfo, session_hook};
use super::registry::Change;
use super::reply::Call;
use super::resources;
use super::session_data::SessionDataStore;
use super::subscriptions::{MAX_RESOURCE_SUBSCRIPTIONS, MAX_SUBSCRIBED_URI_BYTES};
use super::tasks::{self, Tasks};
use crate::engine::{
    DataShare, Engine, EngineHandle, HandlerResult, Peer, SessionShare, Transport,
};

/// What the session era negotiated on this connection. (Every connection keeps it for its
/// whole life: it holds only what is read later.)
#[derive(Default)]
struct SessionState {
    version: Option<ProtocolVersion>,
    /// What the client declared in `initialize` (see `Server::shared_client_capabilities`).
    client_capabilities: Option<Arc<ClientCapabilities>>,
    /// The lists `initialize` told the client the server offers: the promise list changes
    /// are announced against, even after the last tool (say) is removed.
    advertised: Advertised,
    initialized: bool,
    /// Set by `logging/setLevel`; until then every level is sent.
    log_level: Option<LoggingLevel>,
    /// URIs the client subscribed to with `resources/subscribe`.
    subscriptions: HashSet<String>,
    /// When `initialize` was answered (for the middleware's `session_ended`).
    started: Option<Instant>,
}

/// Which lists a server's capabilities in `initialize` offered.
#[derive(Clone, Copy, Default)]
struct Advertised {
    tools: bool,
    resources: bool,
    prompts: bool,
}

pub(crate) struct Session {
    server: Server,
    /// Tasks this connection created (2025-11-25); made by the first request that needs
    /// them (most connections never do, and each keeps its state for its whole life), or
    /// at the start where the transport shares them ([`serve`]'s `share`).
    tasks: std::sync::OnceLock<Tasks>,
    key: Arc<str>,
    /// The application data of the session (none for a stateless-era request).
    data: Option<Arc<SessionDataStore>>,
    state: Mutex<SessionState>,
    /// The session of one stateless-era request ([`serve_request`]): the connection is
    /// counted as closed when the session is dropped.
    request_only: bool,
}

impl Session {
    /// A session keyed by the transport's session id, or `connection-N` where the
    /// transport has none (stdio, a stateless-era request).
    fn new(
        server: Server,
        request_only: bool,
        id: Option<Arc<str>>,
        data: Option<Arc<dyn DataShare>>,
    ) -> Session {
        static CONNECTIONS: AtomicU64 = AtomicU64::new(0);
        let key = id.unwrap_or_else(|| {
            let number = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
            format!("connection-{number}").into()
        });
        server.counters().connected();
        let data = (!request_only)
            .then(|| Arc::new(SessionDataStore::new(data, server.session_data_limit())));
        Session {
            server,
            key,
            data,
            tasks: std::sync::OnceLock::new(),
            state: Mutex::default(),
            request_only,
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.request_only {
            self.server.counters().disconnected();
        }
    }
}

/// Serve one stateless-era request on a connection of its own (the HTTP layer runs each
/// so): the engine alone. Without the change forwarding of [`serve`] (a stateless-era
/// client hears changes through `subscriptions/listen`) no second task is needed, nor a
/// subscription to the server's changes (a tokio task is a 128-byte-aligned allocation,
/// which glibc serves on its slow path).
pub(crate) fn serve_request(server: Server, transport: Transport) {
    let config = server.engine_config().clone();
    let session = Arc::new(Session::new(
        server,
        true,
        transport.session_id.clone(),
        None,
    ));
    // The engine's task ends by itself once the transport's input closes.
    drop(Engine::start(transport, session, config));
}

/// Serve one connection: the engine with a session handler, and a task that forwards the
/// server's changes to it until it ends, then closes the connection's books. Its tasks
/// are kept in `share` too, if given.
pub(crate) fn serve(
    server: Server,
    transport: Transport,
    share: Option<SessionShare>,
) -> EngineHandle {
    let changes = server.subscribe_changes();
    let config = server.engine_config().clone();
    let (tasks, data) = match share {
        Some(share) => (Some(share.tasks), Some(share.data)),
        None => (None, None),
    };
    let session = Session::new(server, false, transport.session_id.clone(), data);
    if let Some(share) = tasks {
        let _ = session
            .tasks
            .set(Arc::new(tasks::TaskStore::new(Some(share))));
    }
    let session = Arc::new(session);
    let engine = Engine::start(transport, Arc::clone(&session), config);
    let peer = engine.peer.clone();
    let mut engine_task = engine.task;
    // One task for both (every task is memory an idle connection keeps): the forwarding
    // ends with the engine, or earlier if the server or the peer goes away. (Its future is
    // made and pinned inside the task's, and polled by hand: moved in, or into `select!`,
    // it would be stored twice.)
    let task = tokio::spawn(async move {
        let mut forwarding = std::pin::pin!(forward_changes(Arc::clone(&session), peer, changes));
        let mut forwarded = false;
        let outcome = std::future::poll_fn(|cx| {
            if let Poll::Ready(outcome) = Pin::new(&mut engine_task).poll(cx) {
                return Poll::Ready(outcome);
            }
            if !forwarded {
                forwarded = forwarding.as_mut().poll(cx).is_ready();
            }
            Poll::Pending
        })
        .await;
        session.server.counters().disconnected();
        if let Some(tasks) = session.tasks.get() {
            tasks.close();
        }
        session.ended();
        if let Err(e) = outcome {
            tracing::error!("the connection's engine failed: {e}");
        }
    });
    EngineHandle {
        peer: engine.peer,
        task,
    }
}

/// Tell an initialized session-era client what changed. (Stateless-era clients hear
/// changes through `subscriptions/listen`.)
async fn forward_changes(
    session: Arc<Session>,
    peer: Peer,
    mut changes: broadcast::Receiver<Change>,
) {
    loop {
        let notices: Vec<(&'static str, Option<ResourceUpdatedNotificationParams>)> =
            match changes.recv().await {
                Ok(change) => session.notices_for(&change).into_iter().collect(),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::debug!("{missed} server changes missed; announcing every list");
                    [Change::Tools, Change::Resources, Change::Prompts]
                        .iter()
                        .filter_map(|c| session.notices_for(c))
                        .collect()
                }
                Err(broadcast::error::RecvError::Closed) => return,
            };
        // Boxed: changes are rare, and the sends' state would otherwise be part of this
        // future, which every connection keeps while it waits for the next change.
        if Box::pin(send_notices(&peer, notices)).await.is_err() {
            return;
        }
    }
}

async fn send_notices(
    peer: &Peer,
    notices: Vec<(&'static str, Option<ResourceUpdatedNotificationParams>)>,
) -> Result<(), crate::engine::CallError> {
    for (method, params) in notices {
        match params {
            Some(params) => peer.notify(method, &params).await?,
            None => peer.notify(method, &NotificationParams::default()).await?,
        }
    }
    Ok(())
}

impl Session {
    /// The server this connection serves.
    pub(super) fn server(&self) -> &Server {
        &self.server
    }

    /// Identifies the connection (`Context::session_key`, `RequestInfo::session`).
    pub(super) fn key(&self) -> &Arc<str> {
        &self.key
    }

    /// The revision `initialize` negotiated (session era), if it was sent.
    pub(super) fn version(&self) -> Option<ProtocolVersion> {
        self.state().version
    }

    /// What a session-era request's handler hears of its client: the least severe log
    /// level it wants (every level until `logging/setLevel`; none when the server does not
    /// log) and the capabilities it declared at `initialize` (none before).
    pub(super) fn session_client(&self, logging: bool) -> (Option<LoggingLevel>, ClientCaps) {
        let state = self.state();
        (
            logging.then(|| state.log_level.unwrap_or(LoggingLevel::Debug)),
            state.client_capabilities.clone().unwrap_or_default(),
        )
    }

    /// The session as middleware see it.
    fn info(&self, version: ProtocolVersion) -> SessionInfo {
        SessionInfo {
            session: Arc::clone(&self.key),
            version,
        }
    }

    /// The connection closed: the middleware hear that its session (if it began) ended.
    fn ended(&self) {
        let chain = self.server.middleware();
        if chain.is_empty() {
            return;
        }
        let state = self.state();
        let (Some(version), Some(started)) = (state.version, state.started) else {
            return;
        };
        drop(state);
        let info = self.info(version);
        let lasted = started.elapsed();
        session_hook(chain, |m| m.session_ended(&info, lasted));
    }

    /// `notifications/initialized`: the client now hears notifications.
    pub(super) fn initialized(&self) {
        self.state().initialized = true;
    }

    /// The session's application data (none for a stateless-era request).
    pub(super) fn data(&self) -> Option<&Arc<SessionDataStore>> {
        self.data.as_ref()
    }

    /// This connection's tasks.
    pub(super) fn tasks(&self) -> &Tasks {
        self.tasks.get_or_init(Tasks::default)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The notification a change becomes for this connection, if it hears it.
    fn notices_for(
        &self,
        change: &Change,
    ) -> Option<(&'static str, Option<ResourceUpdatedNotificationParams>)> {
        let state = self.state();
        if !state.initialized || state.version.is_none() {
            return None;
        }
        let advertised = state.advertised;
        match change {
            Change::Tools => advertised
                .tools
                .then_some(("notifications/tools/list_changed", None)),
            Change::Resources => advertised
                .resources
                .then_some(("notifications/resources/list_changed", None)),
            Change::Prompts => advertised
                .prompts
                .then_some(("notifications/prompts/list_changed", None)),
            Change::ResourceUpdated(uri) => state.subscriptions.contains(&**uri).then(|| {
                let params = ResourceUpdatedNotificationParams {
                    uri: uri.to_string(),
                    meta: None,
                };
                ("notifications/resources/updated", Some(params))
            }),
        }
    }

    /// `initialize` (session era): the revision negotiated, the client's capabilities kept,
    /// the server's offer recorded. A `replayed` one (a shared session adopted here) begins
    /// no session for the middleware's hooks: the instance that answered the client did.
    pub(super) fn initialize(
        &self,
        params: &InitializeRequestParams,
        replayed: bool,
    ) -> HandlerResult {
        let mut state = self.state();
        if state.version.is_some() {
            return Err(ErrorObject::invalid_request(
                "initialize was already answered",
            ));
        }
        let version = self
            .server
            .versions()
            .negotiate(&params.protocol_version, Era::Session)
            .ok_or_else(|| {
                ErrorObject::invalid_request("this server speaks no session-era revision")
            })?;
        state.version = Some(version);
        state.client_capabilities =
            Some(self.server.shared_client_capabilities(&params.capabilities));
        let capabilities = self.server.capabilities();
        state.advertised = Advertised {
            tools: capabilities.tools.is_some(),
            resources: capabilities.resources.is_some(),
            prompts: capabilities.prompts.is_some(),
        };
        if !replayed {
            state.started = Some(Instant::now());
        }
        drop(state);
        let server = &self.server;
        if !replayed && !server.middleware().is_empty() {
            let info = self.info(version);
            session_hook(server.middleware(), |m| m.session_started(&info));
        }
        server.reply(
            InitializeResult {
                protocol_version: version.as_str().to_owned(),
                capabilities,
                server_info: server.info().clone(),
                instructions: server.instructions().map(str::to_owned),
                meta: None,
            },
            version,
        )
    }

    /// `server/discover` (stateless era).
    pub(super) fn discover(&self, call: &Call) -> HandlerResult {
        let server = &self.server;
        let cache = server.list_cache();
        server.reply(
            DiscoverResult {
                ttl_ms: cache.ttl_ms(),
                cache_scope: cache.scope(),
                supported_versions: server
                    .versions()
                    .wire_strings()
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                capabilities: server.capabilities(),
                instructions: server.instructions().map(str::to_owned),
                ..Default::default()
            },
            call.version,
        )
    }

    /// `resources/subscribe` (`on`) and `resources/unsubscribe`.
    pub(super) fn subscribe(&self, call: &Call, uri: String, on: bool) -> HandlerResult {
        if on && !resources::exists(&self.server, &uri) {
            return Err(ErrorObject::resource_not_found(call.version, &uri));
        }
        if on && uri.len() > MAX_SUBSCRIBED_URI_BYTES {
            return Err(ErrorObject::invalid_params(format!(
                "a subscribed URI is at most {MAX_SUBSCRIBED_URI_BYTES} bytes (this one is {})",
                uri.len()
            )));
        }
        let mut state = self.state();
        if on {
            // Bounded: a template matches endless URIs, each of which "exists".
            if !state.subscriptions.contains(&uri)
                && state.subscriptions.len() >= MAX_RESOURCE_SUBSCRIPTIONS
            {
                return Err(ErrorObject::invalid_params(format!(
                    "at most {MAX_RESOURCE_SUBSCRIPTIONS} resource subscriptions per session; \
                     unsubscribe from one first"
                )));
            }
            state.subscriptions.insert(uri);
        } else {
            state.subscriptions.remove(&uri);
        }
        drop(state);
        self.empty(call)
    }

    /// `logging/setLevel`: the least severe level this connection's client hears.
    pub(super) fn set_level(&self, call: &Call, level: LoggingLevel) -> HandlerResult {
        self.state().log_level = Some(level);
        self.empty(call)
    }

    /// The empty result (`ping`, and the methods that only acknowledge).
    pub(super) fn empty(&self, call: &Call) -> HandlerResult {
        self.server.reply(EmptyResult::default(), call.version)
    }
}

#[cfg(test)]
mod tests {
    /// Every connection keeps its engine's read loop future and its change forwarder for as
    /// long as it lives (idle HTTP sessions add them up): they must stay small, the rare
    /// paths' states and the sends' state boxed out of them.
    #[test]
    fn the_futures_a_connection_keeps_stay_small() {
        let session =
            super::Session::new(super::Server::builder("x", "1").build(), false, None, None);
        let session = std::sync::Arc::new(session);
        let (_tx, changes) = tokio::sync::broadcast::channel(1);
        let (out, _rx) = tokio::sync::mpsc::channel(1);
        let peer = crate::engine::Peer::new(out, None, std::time::Duration::from_secs(1));
        let forwarding = super::forward_changes(session.clone(), peer, changes);
        let size = std::mem::size_of_val(&forwarding);
        assert!(size <= 256, "forwarding changes takes {size} bytes");
        let size = crate::engine::run_future_size(session);
        assert!(size <= 512, "the engine's future takes {size} bytes");
    }

    /// A `tools/call`'s future is allocated and freed on every call: it stays within
    /// glibc's per-thread cache of small blocks (tcache, up to 1032 bytes), past which
    /// every call takes malloc's slow path.
    #[test]
    fn a_tool_call_future_fits_the_allocator_cache() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct Echo {
            text: String,
        }
        let server = super::Server::builder("x", "1")
            .tool(
                "echo",
                "Echo",
                |args: Echo, _cx: crate::server::Context| async move { args.text },
            )
            .build();
        let session = std::sync::Arc::new(super::Session::new(server, false, None, None));
        let params = serde_json::json!({"name": "echo", "arguments": {"text": "hi"}});
        let params = serde_json::value::to_raw_value(&params).expect("params");
        let request = ferry_protocol::jsonrpc::Request::new(1, "tools/call", params);
        let size = crate::engine::request_future_size(session, request);
        assert!(size <= 1032, "a tool call's future takes {size} bytes");
    }
}
