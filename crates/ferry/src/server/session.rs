//! One connection's server side: lifecycle, era resolution, routing, and the
//! notifications a connection hears (list changes, resource updates).

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

use ferry_protocol::error_codes;
use ferry_protocol::jsonrpc::{ErrorObject, Notification, Request};
use ferry_protocol::methods::{ClientRequest, method_info};
use ferry_protocol::types::*;
use ferry_protocol::{Era, ProtocolVersion};
use futures_util::future::{self, Either};
use tokio::sync::broadcast;

use super::context::Context;
use super::core::Server;
use super::input::{Rounds, Salient};
use super::list::list;
use super::listen::{MAX_RESOURCE_SUBSCRIPTIONS, MAX_SUBSCRIBED_URI_BYTES};
use super::middleware::{End, Next, NotificationInfo, RequestInfo};
use super::mrtr;
use super::prompts::PromptEntry;
use super::registry::Change;
use super::reply::Call;
use super::resources::{ResourceEntry, TemplateEntry};
use super::tasks::{self, Tasks};
use super::tools::ToolEntry;
use super::{call_params, completion, listen, prompts, resources, tools};
use crate::engine::{
    Engine, EngineHandle, Handler, HandlerResult, Peer, RequestContext, TaskShare, Transport,
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
    state: Mutex<SessionState>,
    /// The session of one stateless-era request ([`serve_request`]): the connection is
    /// counted as closed when the session is dropped.
    request_only: bool,
}

impl Session {
    fn new(server: Server, request_only: bool) -> Session {
        static CONNECTIONS: AtomicU64 = AtomicU64::new(0);
        let number = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        server.counters().connected();
        Session {
            server,
            key: format!("connection-{number}").into(),
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
    let session = Arc::new(Session::new(server, true));
    // The engine's task ends by itself once the transport's input closes.
    drop(Engine::start(transport, session, config));
}

/// Serve one connection: the engine with a session handler, and a task that forwards the
/// server's changes to it until it ends, then closes the connection's books. Its tasks
/// are kept in `share` too, if given.
pub(crate) fn serve(
    server: Server,
    transport: Transport,
    share: Option<Arc<dyn TaskShare>>,
) -> EngineHandle {
    let changes = server.subscribe_changes();
    let config = server.engine_config().clone();
    let session = Session::new(server, false);
    if let Some(share) = share {
        let _ = session
            .tasks
            .set(Arc::new(tasks::TaskStore::new(Some(share))));
    }
    let session = Arc::new(session);
    let engine = Engine::start(transport, Arc::clone(&session), config);
    let peer = engine.peer.clone();
    let mut engine_task = engine.task;
    // One task for both (each task costs an idle connection ~0.25 KB): the forwarding
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
    fn tasks(&self) -> &Tasks {
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

    /// The revision a request is answered in: its own `_meta` version (stateless era) or
    /// the one this connection negotiated (session era); and the request's `_meta`, taken
    /// out of it.
    fn resolve(
        &self,
        request: &mut ClientRequest,
    ) -> Result<(Call, Arc<RequestMeta>), ErrorObject> {
        let meta = shared_meta(take_meta(request));
        let call = self.revision(
            request.method(),
            &meta,
            matches!(request, ClientRequest::Ping(_)),
            matches!(request, ClientRequest::Discover(_)),
            self.offers(request),
        )?;
        Ok((call, meta))
    }

    /// [`resolve`](Self::resolve) from the parts of a request: its method, `_meta`, whether
    /// it is a `ping` or `server/discover`, whether the server offers what it needs.
    fn revision(
        &self,
        method: &str,
        meta: &RequestMeta,
        ping: bool,
        discover: bool,
        offered: bool,
    ) -> Result<Call, ErrorObject> {
        let version = if meta.protocol_version.is_some() || discover {
            self.stateless_version(meta)?
        } else {
            let state = self.state();
            match state.version {
                Some(version) => version,
                None if ping => ProtocolVersion::LATEST_SESSION,
                // -32602: 2026-07-28 requires it for a missing `_meta` field, and a
                // session-era client learns the same from the message.
                None => {
                    return Err(ErrorObject::invalid_params(format!(
                        "{method} before initialize: send initialize first to start a session \
                         (2025-11-25 and earlier), or carry {} in the request's _meta \
                         (2026-07-28)",
                        keys::PROTOCOL_VERSION
                    )));
                }
            }
        };
        if !offered || !method_info(method).is_some_and(|m| m.in_revision(version)) {
            return Err(ErrorObject::method_not_found(method));
        }
        Ok(Call { version })
    }

    /// A `tools/call`'s context: its input rounds (stateless era) and what its handler
    /// reaches.
    #[allow(clippy::too_many_arguments)]
    fn tool_context(
        &self,
        call: Call,
        meta: Arc<RequestMeta>,
        name: &str,
        arguments: &tools::Arguments<'_>,
        request_state: Option<String>,
        input_responses: Option<InputResponses>,
        cx: RequestContext,
    ) -> Result<Context, ErrorObject> {
        let rounds = self.rounds(
            &call,
            "tools/call",
            || vec![serde_json::Value::from(name).into(), arguments.to_salient()],
            request_state,
            input_responses,
        )?;
        Ok(self.context(call, meta, cx, "tools/call", rounds))
    }

    /// Whether the server declared the capability a request needs.
    fn offers(&self, request: &ClientRequest) -> bool {
        let server = &self.server;
        match request {
            ClientRequest::ListTools(_) | ClientRequest::CallTool(_) => server.offers_tools(),
            ClientRequest::ListResources(_)
            | ClientRequest::ListResourceTemplates(_)
            | ClientRequest::ReadResource(_)
            | ClientRequest::Subscribe(_)
            | ClientRequest::Unsubscribe(_) => server.offers_resources(),
            ClientRequest::ListPrompts(_) | ClientRequest::GetPrompt(_) => server.offers_prompts(),
            ClientRequest::Complete(_) => server.offers_completions(),
            ClientRequest::GetTask(_)
            | ClientRequest::GetTaskPayload(_)
            | ClientRequest::ListTasks(_)
            | ClientRequest::CancelTask(_) => server.offers_tasks(),
            ClientRequest::SetLevel(_) => server.offers_logging(),
            ClientRequest::Initialize(_)
            | ClientRequest::Ping(_)
            | ClientRequest::Discover(_)
            | ClientRequest::SubscriptionsListen(_) => true,
            _ => false,
        }
    }

    fn stateless_version(&self, meta: &RequestMeta) -> Result<ProtocolVersion, ErrorObject> {
        let Some(requested) = meta.protocol_version.as_deref() else {
            return Err(ErrorObject::invalid_params(format!(
                "_meta must carry {}",
                keys::PROTOCOL_VERSION
            )));
        };
        if meta.client_capabilities.is_none() {
            return Err(ErrorObject::invalid_params(format!(
                "_meta must carry {}",
                keys::CLIENT_CAPABILITIES
            )));
        }
        let versions = self.server.versions();
        versions.accept_stateless(requested).ok_or_else(|| {
            let data = UnsupportedProtocolVersionData {
                requested: requested.to_owned(),
                supported: versions
                    .wire_strings()
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            };
            ErrorObject::new(
                error_codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!("unsupported protocol version {requested:?}"),
            )
            .with_data(serde_json::to_value(data).unwrap_or_default())
        })
    }

    fn initialize(&self, params: &InitializeRequestParams) -> HandlerResult {
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
        drop(state);
        let server = &self.server;
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

    fn discover(&self, call: &Call) -> HandlerResult {
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

    /// The context handlers get for a request (`meta` is the request's `_meta`).
    fn context(
        &self,
        call: Call,
        meta: Arc<RequestMeta>,
        cx: RequestContext,
        method: &'static str,
        rounds: Option<Arc<Rounds>>,
    ) -> Context {
        let logging = self.server.offers_logging();
        let (log_level, client_capabilities) = if meta.protocol_version.is_some() {
            // (The `_meta` keeps them too: handlers read it.)
            let capabilities = meta.client_capabilities.as_deref().cloned();
            (
                meta.log_level.filter(|_| logging),
                Arc::new(capabilities.unwrap_or_default()),
            )
        } else {
            let state = self.state();
            (
                logging.then(|| state.log_level.unwrap_or(LoggingLevel::Debug)),
                // (Before `initialize`: none.)
                state.client_capabilities.clone().unwrap_or_default(),
            )
        };
        Context {
            server: self.server.clone(),
            method,
            client_capabilities,
            rounds,
            version: call.version,
            meta,
            cancel: cx.cancel,
            progress: cx.progress,
            peer: cx.peer,
            log_level,
            session_key: Arc::clone(&self.key),
            attachment: cx.attachment,
        }
    }

    /// The context a list filters its items by, made only when the server has visibility
    /// rules (a list without any needs none).
    fn list_context(
        &self,
        call: Call,
        meta: Arc<RequestMeta>,
        cx: RequestContext,
        method: &'static str,
    ) -> Option<Context> {
        self.server
            .visibility()
            .any()
            .then(|| self.context(call, meta, cx, method, None))
    }

    /// Stateless era: the input rounds of a request that may ask the client for input
    /// (multi round-trip requests), resumed from its `requestState` if it has one.
    fn rounds(
        &self,
        call: &Call,
        method: &'static str,
        salient: impl FnOnce() -> Vec<Salient>,
        request_state: Option<String>,
        responses: Option<InputResponses>,
    ) -> Result<Option<Arc<Rounds>>, ErrorObject> {
        if !call.version.has(ferry_protocol::Feature::InputRequired) {
            return Ok(None);
        }
        mrtr::resume(
            &self.server,
            method,
            salient(),
            request_state.as_deref(),
            responses,
        )
        .map(Some)
    }

    fn subscribe(&self, call: &Call, uri: String, on: bool) -> HandlerResult {
        if on && !resources::exists(&self.server, &uri) {
            return Err(ErrorObject::new(
                error_codes::resource_not_found(call.version),
                format!("resource not found: {uri}"),
            )
            .with_data(serde_json::json!({ "uri": uri })));
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

    fn empty(&self, call: &Call) -> HandlerResult {
        self.server.reply(EmptyResult::default(), call.version)
    }
}

/// A request's `_meta` as its handler's context holds it: most requests have none, and
/// share one empty `_meta` (a `Context` is moved several times on its way to a tool; the
/// `_meta` inline made it 272 bytes instead of 112).
fn shared_meta(meta: Option<RequestMeta>) -> Arc<RequestMeta> {
    static NONE: std::sync::LazyLock<Arc<RequestMeta>> = std::sync::LazyLock::new(Arc::default);
    match meta {
        Some(meta) => Arc::new(meta),
        None => Arc::clone(&NONE),
    }
}

/// The `_meta` of a client request's params, taken out of them.
fn take_meta(request: &mut ClientRequest) -> Option<RequestMeta> {
    match request {
        ClientRequest::Initialize(p) => p.meta.take(),
        ClientRequest::Ping(p) | ClientRequest::Discover(p) => p.meta.take(),
        ClientRequest::ListTools(p)
        | ClientRequest::ListResources(p)
        | ClientRequest::ListResourceTemplates(p)
        | ClientRequest::ListPrompts(p)
        | ClientRequest::ListTasks(p) => p.meta.take(),
        ClientRequest::CallTool(p) => p.meta.take(),
        ClientRequest::ReadResource(p) => p.meta.take(),
        ClientRequest::Subscribe(p) | ClientRequest::Unsubscribe(p) => p.meta.take(),
        ClientRequest::GetPrompt(p) => p.meta.take(),
        ClientRequest::Complete(p) => p.meta.take(),
        ClientRequest::SetLevel(p) => p.meta.take(),
        ClientRequest::SubscriptionsListen(p) => p.meta.take(),
        ClientRequest::GetTask(p)
        | ClientRequest::GetTaskPayload(p)
        | ClientRequest::CancelTask(p) => p.meta.take(),
        _ => None,
    }
}

/// A request after routing: answered at once, a tool call, or another handler to await.
enum Routed<'a, T> {
    Answered(HandlerResult),
    Tool(T),
    Later(BoxFuture<'a, HandlerResult>),
}

type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

impl Session {
    /// Everything a request needs before its handler runs, done synchronously: the future
    /// the engine keeps per in-flight request then holds only the handler's own state, not
    /// the parsed request, the call and the context besides (which made it kilobytes,
    /// copied as it moved).
    fn route(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Routed<'_, impl Future<Output = HandlerResult> + Send + '_>, ErrorObject> {
        self.server.counters().request();
        let server = &self.server;
        // `tools/call` parsed once, its arguments left raw for the tool's own type.
        if let Some(fast) = call_params::fast(&request) {
            let meta = shared_meta(fast.meta);
            let call = self.revision("tools/call", &meta, false, false, server.offers_tools())?;
            let arguments = match fast.arguments {
                Some(raw) => tools::Arguments::Raw(raw),
                None => tools::Arguments::Object(None),
            };
            let cx = self.tool_context(
                call,
                meta,
                fast.name,
                &arguments,
                fast.request_state,
                fast.input_responses,
                cx,
            )?;
            let running = tools::call(server, call, fast.name, arguments, cx, false)?;
            return Ok(Routed::Tool(running));
        }
        let mut parsed = ClientRequest::parse(&request.method, request.params.as_deref())?;
        if let ClientRequest::Initialize(params) = &parsed {
            return Ok(Routed::Answered(self.initialize(params)));
        }
        let (call, meta) = self.resolve(&mut parsed)?;
        let answered = match parsed {
            ClientRequest::Ping(_) => self.empty(&call),
            ClientRequest::Discover(_) => self.discover(&call),
            ClientRequest::ListTools(p) => {
                let cx = self.list_context(call, meta, cx, "tools/list");
                list::<ToolEntry>(server, &call, p.cursor.as_deref(), cx.as_ref())
            }
            ClientRequest::CallTool(mut params) => {
                let arguments = tools::Arguments::Object(params.arguments.take());
                let cx = self.tool_context(
                    call,
                    meta,
                    &params.name,
                    &arguments,
                    params.request_state.take(),
                    params.input_responses.take(),
                    cx,
                )?;
                if let Some(task) = params.task.take().filter(|_| tasks::offered(server, &call)) {
                    if let tools::Arguments::Object(object) = arguments {
                        params.arguments = object;
                    }
                    return Ok(Routed::Later(Box::pin(async move {
                        tasks::start(server, &call, self.tasks(), params, task, cx).await
                    })));
                }
                return Ok(Routed::Tool(tools::call(
                    server,
                    call,
                    &params.name,
                    arguments,
                    cx,
                    false,
                )?));
            }
            ClientRequest::ListResources(p) => {
                let cx = self.list_context(call, meta, cx, "resources/list");
                list::<ResourceEntry>(server, &call, p.cursor.as_deref(), cx.as_ref())
            }
            ClientRequest::ListResourceTemplates(p) => {
                let cx = self.list_context(call, meta, cx, "resources/templates/list");
                list::<TemplateEntry>(server, &call, p.cursor.as_deref(), cx.as_ref())
            }
            ClientRequest::ReadResource(mut params) => {
                let rounds = self.rounds(
                    &call,
                    "resources/read",
                    || vec![serde_json::Value::from(params.uri.clone()).into()],
                    params.request_state.take(),
                    params.input_responses.take(),
                )?;
                let cx = self.context(call, meta, cx, "resources/read", rounds);
                return Ok(Routed::Later(Box::pin(async move {
                    resources::read(server, &call, params.uri, cx).await
                })));
            }
            ClientRequest::Subscribe(p) => self.subscribe(&call, p.uri, true),
            ClientRequest::Unsubscribe(p) => self.subscribe(&call, p.uri, false),
            ClientRequest::ListPrompts(p) => {
                let cx = self.list_context(call, meta, cx, "prompts/list");
                list::<PromptEntry>(server, &call, p.cursor.as_deref(), cx.as_ref())
            }
            ClientRequest::GetPrompt(mut params) => {
                let rounds = self.rounds(
                    &call,
                    "prompts/get",
                    || {
                        let arguments = serde_json::to_value(&params.arguments).unwrap_or_default();
                        vec![
                            serde_json::Value::from(params.name.clone()).into(),
                            arguments.into(),
                        ]
                    },
                    params.request_state.take(),
                    params.input_responses.take(),
                )?;
                let cx = self.context(call, meta, cx, "prompts/get", rounds);
                let arguments = params.arguments.unwrap_or_default();
                return Ok(Routed::Later(Box::pin(async move {
                    prompts::get(server, &call, &params.name, arguments, cx).await
                })));
            }
            ClientRequest::Complete(params) => {
                let cx = self.context(call, meta, cx, "completion/complete", None);
                return Ok(Routed::Later(Box::pin(async move {
                    completion::complete(server, &call, params, cx).await
                })));
            }
            ClientRequest::GetTask(p) => {
                return Ok(Routed::Later(Box::pin(async move {
                    tasks::get(server, &call, self.tasks(), &p.task_id).await
                })));
            }
            ClientRequest::GetTaskPayload(p) => {
                return Ok(Routed::Later(Box::pin(async move {
                    tasks::result(self.tasks(), &p.task_id).await
                })));
            }
            ClientRequest::ListTasks(p) => {
                return Ok(Routed::Later(Box::pin(async move {
                    tasks::list(server, &call, self.tasks(), p.cursor.as_deref()).await
                })));
            }
            ClientRequest::CancelTask(p) => {
                return Ok(Routed::Later(Box::pin(async move {
                    tasks::cancel(server, &call, self.tasks(), &p.task_id).await
                })));
            }
            ClientRequest::SubscriptionsListen(params) => {
                return Ok(Routed::Later(Box::pin(async move {
                    listen::listen(server, &call, params, cx).await
                })));
            }
            ClientRequest::SetLevel(params) => {
                self.state().log_level = Some(params.level);
                self.empty(&call)
            }
            other => Err(ErrorObject::method_not_found(other.method())),
        };
        Ok(Routed::Answered(answered))
    }
}

impl Session {
    /// A request through the server's middleware, routed when the last one calls on.
    async fn through_middleware(&self, request: Request, cx: RequestContext) -> HandlerResult {
        let info = self.request_info(&request, &cx);
        let end: End<'_> = Box::new(move || match self.route(request, cx) {
            Err(error) => Box::pin(future::ready(Err(error))),
            Ok(Routed::Answered(result)) => Box::pin(future::ready(result)),
            Ok(Routed::Tool(call)) => Box::pin(call),
            Ok(Routed::Later(later)) => later,
        });
        Next::new(self.server.middleware(), &info, end).run().await
    }

    /// What middleware know of a request: its target and `_meta` read from the params, its
    /// revision from the `_meta` (stateless era) or the session.
    fn request_info(&self, request: &Request, cx: &RequestContext) -> RequestInfo {
        #[derive(serde::Deserialize)]
        struct Head {
            name: Option<String>,
            uri: Option<String>,
            #[serde(rename = "_meta")]
            meta: Option<RequestMeta>,
        }
        let head = request
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str::<Head>(p.get()).ok());
        let (target, meta) = match head {
            Some(head) => (head.name.or(head.uri), head.meta),
            None => (None, None),
        };
        let version = match meta.as_ref().and_then(|m| m.protocol_version.as_deref()) {
            Some(version) => version.parse().ok(),
            None => self.state().version,
        };
        RequestInfo {
            method: request.method.to_string(),
            id: request.id.clone(),
            target,
            session: Arc::clone(&self.key),
            version,
            params: request.params.as_deref().map(|p| Arc::from(p.get())),
            meta: shared_meta(meta),
            cancel: cx.cancel.clone(),
            attachment: cx.attachment.clone(),
        }
    }
}

impl Handler for Session {
    fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> impl Future<Output = HandlerResult> + Send {
        // Routed when called, and no `async` block around the result: one would hold the
        // routed request and the future taken out of it side by side.
        let routed = if self.server.middleware().is_empty() {
            self.route(request, cx)
        } else {
            Ok(Routed::Later(Box::pin(
                self.through_middleware(request, cx),
            )))
        };
        match routed {
            Err(error) => Either::Left(future::ready(Err(error))),
            Ok(Routed::Answered(result)) => Either::Left(future::ready(result)),
            Ok(Routed::Tool(call)) => Either::Right(Either::Left(call)),
            Ok(Routed::Later(later)) => Either::Right(Either::Right(later)),
        }
    }

    async fn notification(&self, notification: Notification, _peer: &Peer) {
        let chain = &self.server.middleware();
        if !chain.is_empty() {
            let info = NotificationInfo {
                method: notification.method.to_string(),
                session: Arc::clone(&self.key),
            };
            if !chain.iter().all(|m| m.notification(&info)) {
                return;
            }
        }
        match &*notification.method {
            "notifications/initialized" => self.state().initialized = true,
            "notifications/cancelled" => {} // the engine stopped the handler
            other => tracing::debug!("notification {other} ignored"),
        }
    }

    fn in_order(&self, method: &str) -> bool {
        // Later messages depend on the outcome of these.
        matches!(
            method,
            "initialize" | "logging/setLevel" | "resources/subscribe"
        )
    }

    fn engine_answers_ping(&self, request: &Request) -> bool {
        // A stateless-era ping (its `_meta` names a revision) is not a method of
        // 2026-07-28: the session's routing refuses it.
        !request
            .params
            .as_ref()
            .is_some_and(|p| p.get().contains(keys::PROTOCOL_VERSION))
    }

    fn long_lived(&self, method: &str) -> bool {
        method == "subscriptions/listen"
    }

    fn accepts_batches(&self) -> bool {
        self.state()
            .version
            .is_some_and(|v| v.has(ferry_protocol::Feature::Batches))
    }
}

#[cfg(test)]
mod tests {
    /// Every connection keeps its engine's read loop future and its change forwarder for as
    /// long as it lives (idle HTTP sessions add them up): they stay small (~350 bytes, was
    /// ~2.4 KB when the rare paths' states were part of it; 136 bytes, was ~0.85 KB with
    /// the sends' state in it).
    #[test]
    fn the_futures_a_connection_keeps_stay_small() {
        let session = super::Session::new(super::Server::builder("x", "1").build(), false);
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
                |args: Echo, _cx: super::Context| async move { args.text },
            )
            .build();
        let session = std::sync::Arc::new(super::Session::new(server, false));
        let params = serde_json::json!({"name": "echo", "arguments": {"text": "hi"}});
        let params = serde_json::value::to_raw_value(&params).expect("params");
        let request = super::Request::new(1, "tools/call", params);
        let size = crate::engine::request_future_size(session, request);
        assert!(size <= 1032, "a tool call's future takes {size} bytes");
    }
}
