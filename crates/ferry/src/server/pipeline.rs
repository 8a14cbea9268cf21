//! The request pipeline: the one way every request a server answers goes, from the parsed
//! message to its reply. In order:
//!
//! 1. `Handler::request`, where the engine hands the connection's [`Session`] a request:
//!    through the server's middleware (`middleware.rs`) when it has any, straight to
//!    routing otherwise. (Notifications come in here too, and the engine asks here which
//!    methods it must run in order.)
//! 2. [`Session::route`]: the request is counted; a `tools/call` is read by hand
//!    (`call_params.rs`), anything else parsed by `ClientRequest::parse`; `initialize` is
//!    answered at once (`session.rs`).
//! 3. The method's [`Row`], the one table of what differs per method before its handler:
//!    the capability it needs, its `_meta`, and for a method whose handler may ask the
//!    client for input, its params as [`AsksForInput`].
//! 4. The revision it is answered in ([`Session::revision`]): the session's, or the one
//!    its `_meta` names (stateless era).
//! 5. Its input rounds ([`Session::rounds`], `mrtr.rs`): resumed from its `requestState`,
//!    bound to the salient parts of the request.
//! 6. What its handler reaches ([`Resolved`]): the [`Context`] (`context.rs`), a context
//!    only where a list is filtered, or the connection itself.
//! 7. Its handler, by method: found by the feature modules (`tools.rs`, `resources.rs`,
//!    `prompts.rs`, `completion.rs`, `tasks.rs`, `subscriptions.rs`; `list.rs` for the lists;
//!    `session.rs` for the lifecycle methods).
//! 8. Around a tool's, reader's or prompt's handler ([`Around`]): its log scope
//!    (`log_layer.rs`), its input rounds (`mrtr.rs`: `input_required` when it asks for
//!    what the client has not answered), then its outcome made the answer ([`Answer`]):
//!    failures shaped into errors, results shaped for the revision (`reply.rs`; the other
//!    handlers shape theirs with `Server::reply` too).
//!
//! Errors at any step are the request's answer; the engine writes it.

use std::future::Future;
use std::sync::Arc;

use ferry_protocol::error_codes;
use ferry_protocol::jsonrpc::{ErrorObject, Notification, Request};
use ferry_protocol::methods::{ClientRequest, method_info};
use ferry_protocol::types::{
    CallToolRequestParams, GetPromptRequestParams, InputResponses, ReadResourceRequestParams,
    RequestMeta, UnsupportedProtocolVersionData, keys,
};
use ferry_protocol::{Feature, ProtocolVersion};
use futures_util::future::{self, Either};

use super::call_params::Arguments;
use super::context::Context;
use super::core::Server;
use super::input::{Rounds, Salient};
use super::list::list;
use super::log_layer::{LogTarget, scoped};
use super::middleware::{End, Next, NotificationInfo, RequestInfo};
use super::mrtr::{self, drive, missing_capability};
use super::prompts::PromptEntry;
use super::reply::Call;
use super::resources::{ResourceEntry, TemplateEntry};
use super::session::Session;
use super::tools::ToolEntry;
use super::{completion, prompts, resources, subscriptions, tasks, tools};
use crate::engine::{Handler, HandlerResult, Peer, RequestContext};
use ferry_protocol::read::{self, Member, ToolCall, tool_call};

type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A request after routing: answered at once, a tool call, or another handler to await.
enum Routed<'a, T> {
    Answered(HandlerResult),
    Tool(T),
    Later(BoxFuture<'a, HandlerResult>),
}

/// A handler other than a tool's, boxed: each has a future of its own type.
fn later<'a, T>(handler: impl Future<Output = HandlerResult> + Send + 'a) -> Routed<'a, T> {
    Routed::Later(Box::pin(handler))
}

/// Whether the request is a transport's replay, not the client's (see [`Replayed`]).
///
/// [`Replayed`]: crate::engine::Replayed
fn replayed(rcx: &RequestContext) -> bool {
    rcx.attachment
        .as_ref()
        .is_some_and(|a| a.get::<crate::engine::Replayed>().is_some())
}

/// Where the engine hands the connection its messages.
impl Handler for Session {
    /// A request, routed when called, and no `async` block around the result (one would
    /// hold the routed request and the future taken out of it side by side).
    fn request(
        &self,
        request: Request,
        rcx: RequestContext,
    ) -> impl Future<Output = HandlerResult> + Send {
        let routed = if self.server().middleware().is_empty() || replayed(&rcx) {
            self.route(request, rcx)
        } else {
            Ok(Routed::Later(Box::pin(
                self.through_middleware(request, rcx),
            )))
        };
        match routed {
            Err(error) => Either::Left(future::ready(Err(error))),
            Ok(Routed::Answered(result)) => Either::Left(future::ready(result)),
            Ok(Routed::Tool(call)) => Either::Right(Either::Left(call)),
            Ok(Routed::Later(later)) => Either::Right(Either::Right(later)),
        }
    }

    /// A notification: through the middleware, then heard.
    async fn notification(&self, notification: Notification, peer: &Peer) {
        let chain = self.server().middleware();
        if !chain.is_empty() {
            let info = NotificationInfo {
                method: notification.method.to_string(),
                session: Arc::clone(self.key()),
            };
            if !chain.iter().all(|m| m.notification(&info)) {
                return;
            }
        }
        match &*notification.method {
            "notifications/initialized" => self.initialized(),
            "notifications/cancelled" => {} // the engine stopped the handler
            "notifications/roots/list_changed" => {
                if let Some(hook) = self.server().roots_changed_hook() {
                    // In a task: the hook may ask for the roots, whose answer this
                    // connection's read loop, which runs notifications, has to read.
                    tokio::spawn(hook(super::RootsChanged {
                        session: Arc::clone(self.key()),
                        peer: peer.clone(),
                    }));
                }
            }
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
        self.version().is_some_and(|v| v.has(Feature::Batches))
    }
}

impl Session {
    /// A request through the server's middleware, routed when the last one calls on.
    async fn through_middleware(&self, request: Request, rcx: RequestContext) -> HandlerResult {
        let info = self.request_info(&request, &rcx);
        let end: End<'_> = Box::new(move || match self.route(request, rcx) {
            Err(error) => Box::pin(future::ready(Err(error))),
            Ok(Routed::Answered(result)) => Box::pin(future::ready(result)),
            Ok(Routed::Tool(call)) => Box::pin(call),
            Ok(Routed::Later(later)) => later,
        });
        Next::new(self.server().middleware(), &info, end)
            .run()
            .await
    }

    /// What middleware know of a request: its target and `_meta` read from the params, its
    /// revision from the `_meta` (stateless era) or the session.
    fn request_info(&self, request: &Request, rcx: &RequestContext) -> RequestInfo {
        let params = request.params.as_deref();
        let found = match rcx.landmarks.as_deref() {
            Some(found) => Some(*found),
            None => read::landmarks(params.map(|p| p.get())),
        };
        let (target, meta) = match (params, found) {
            (Some(params), Some(found)) => {
                let params = params.get();
                let string = |member: Option<Member>| {
                    serde_json::from_str::<String>(member?.text(params)).ok()
                };
                let meta = found
                    .meta
                    .filter(|m| !m.is_null(params))
                    .and_then(|m| serde_json::from_str::<RequestMeta>(m.text(params)).ok());
                (string(found.name).or_else(|| string(found.uri)), meta)
            }
            (Some(params), None) => request_head(params.get()),
            (None, _) => (None, None),
        };
        let version = match meta.as_ref().and_then(|m| m.protocol_version.as_deref()) {
            Some(version) => version.parse().ok(),
            None => self.version(),
        };
        RequestInfo {
            method: request.method.to_string(),
            id: request.id.clone(),
            target,
            session: Arc::clone(self.key()),
            version,
            params: request.params.as_deref().map(|p| Arc::from(p.get())),
            meta: shared_meta(meta),
            cancel: rcx.cancel.clone(),
            attachment: rcx.attachment.clone(),
        }
    }

    /// Everything a request needs before its handler runs, done synchronously: the future
    /// the engine keeps per in-flight request then holds only the handler's own state, not
    /// the parsed request, the call and the context besides (which made it kilobytes,
    /// copied as it moved).
    fn route(
        &self,
        request: Request,
        rcx: RequestContext,
    ) -> Result<Routed<'_, impl Future<Output = HandlerResult> + Send + '_>, ErrorObject> {
        let server = self.server();
        server.counters().request();
        // `tools/call` from the params' landmarks, its arguments left raw for the tool's
        // own type.
        if let Some(mut fast) = tool_call(&request, rcx.landmarks.as_deref()) {
            const METHOD: &str = "tools/call";
            let meta = shared_meta(fast.meta.take());
            let call = self.revision(METHOD, &meta, false, false, server.offers_tools())?;
            let rounds = self.rounds(&call, METHOD, Some(&mut fast))?;
            let cx = self.context(call, meta, rcx, METHOD, rounds);
            let arguments = match fast.arguments {
                Some(raw) => Arguments::Raw(raw),
                None => Arguments::Object(None),
            };
            return Ok(Routed::Tool(
                self.call_tool(call, fast.name, arguments, cx)?,
            ));
        }
        let mut parsed = ClientRequest::parse(&request.method, request.params.as_deref())?;
        if let ClientRequest::Initialize(params) = &parsed {
            return Ok(Routed::Answered(self.initialize(params, replayed(&rcx))));
        }
        let method = parsed.method();
        let ping = matches!(parsed, ClientRequest::Ping(_));
        let discover = matches!(parsed, ClientRequest::Discover(_));
        let row = Row::of(server, &mut parsed);
        let meta = shared_meta(row.meta);
        let call = self.revision(method, &meta, ping, discover, row.offered)?;
        let rounds = self.rounds(&call, method, row.input)?;
        let at = Resolved {
            session: self,
            call,
            meta,
            rcx,
            method,
            rounds,
        };
        let answered = match parsed {
            ClientRequest::Ping(_) => self.empty(&call),
            ClientRequest::Discover(_) => self.discover(&call),
            ClientRequest::ListTools(p) => list::<ToolEntry>(
                server,
                &call,
                p.cursor.as_deref(),
                at.list_context().as_ref(),
            ),
            ClientRequest::CallTool(mut params) => {
                let cx = at.context();
                if let Some(task) = params.task.take().filter(|_| tasks::offered(server, &call)) {
                    return Ok(later(async move {
                        tasks::start(server, &call, self.tasks(), params, task, cx).await
                    }));
                }
                let arguments = Arguments::Object(params.arguments.take());
                return Ok(Routed::Tool(self.call_tool(
                    call,
                    &params.name,
                    arguments,
                    cx,
                )?));
            }
            ClientRequest::ListResources(p) => list::<ResourceEntry>(
                server,
                &call,
                p.cursor.as_deref(),
                at.list_context().as_ref(),
            ),
            ClientRequest::ListResourceTemplates(p) => list::<TemplateEntry>(
                server,
                &call,
                p.cursor.as_deref(),
                at.list_context().as_ref(),
            ),
            ClientRequest::ReadResource(params) => {
                let reading = at.handle(|cx| resources::read(server, &call, params.uri, cx))?;
                return Ok(Routed::Later(reading));
            }
            ClientRequest::Subscribe(p) => self.subscribe(&call, p.uri, true),
            ClientRequest::Unsubscribe(p) => self.subscribe(&call, p.uri, false),
            ClientRequest::ListPrompts(p) => list::<PromptEntry>(
                server,
                &call,
                p.cursor.as_deref(),
                at.list_context().as_ref(),
            ),
            ClientRequest::GetPrompt(params) => {
                let arguments = params.arguments.unwrap_or_default();
                let getting = at.handle(|cx| prompts::get(server, &params.name, arguments, cx))?;
                return Ok(Routed::Later(getting));
            }
            ClientRequest::Complete(params) => {
                let cx = at.context();
                return Ok(later(async move {
                    completion::complete(server, &call, params, cx).await
                }));
            }
            ClientRequest::GetTask(p) => {
                return Ok(later(async move {
                    tasks::get(server, &call, self.tasks(), &p.task_id).await
                }));
            }
            ClientRequest::GetTaskPayload(p) => {
                return Ok(later(async move {
                    tasks::result(self.tasks(), &p.task_id).await
                }));
            }
            ClientRequest::ListTasks(p) => {
                return Ok(later(async move {
                    tasks::list(server, &call, self.tasks(), p.cursor.as_deref()).await
                }));
            }
            ClientRequest::CancelTask(p) => {
                return Ok(later(async move {
                    tasks::cancel(server, &call, self.tasks(), &p.task_id).await
                }));
            }
            ClientRequest::SubscriptionsListen(params) => {
                let rcx = at.connection();
                return Ok(later(async move {
                    subscriptions::listen(server, &call, params, rcx).await
                }));
            }
            ClientRequest::SetLevel(params) => self.set_level(&call, params.level),
            other => Err(ErrorObject::method_not_found(other.method())),
        };
        Ok(Routed::Answered(answered))
    }

    /// `tools/call`, however its params were read: the tool found, with the chain's steps
    /// around it. Inlined: returned through its own `Result`, the tool's future was copied
    /// once more on every call.
    #[inline(always)]
    fn call_tool<'s>(
        &'s self,
        call: Call,
        name: &str,
        arguments: Arguments<'_>,
        cx: Context,
    ) -> Result<impl Future<Output = HandlerResult> + Send + use<'s>, ErrorObject> {
        let around = Around::of(&cx);
        let running = tools::call(self.server(), call, name, arguments, cx, false)?;
        Ok(around.run(self.server(), call, running))
    }
}

/// The chain's table: what routing needs of each method before its handler runs.
struct Row<'p> {
    /// Whether the server declared the capability the method needs.
    offered: bool,
    /// The request's `_meta`, taken out of its params.
    meta: Option<RequestMeta>,
    /// The params of a method whose handler may ask the client for input.
    input: Option<&'p mut dyn AsksForInput>,
}

impl<'p> Row<'p> {
    fn of(server: &Server, request: &'p mut ClientRequest) -> Row<'p> {
        use ClientRequest as R;
        let row = |offered, meta| Row {
            offered,
            meta,
            input: None,
        };
        match request {
            R::Initialize(p) => row(true, p.meta.take()),
            R::Ping(p) | R::Discover(p) => row(true, p.meta.take()),
            R::ListTools(p) => row(server.offers_tools(), p.meta.take()),
            R::CallTool(p) => Row {
                offered: server.offers_tools(),
                meta: p.meta.take(),
                input: Some(p),
            },
            R::ListResources(p) | R::ListResourceTemplates(p) => {
                row(server.offers_resources(), p.meta.take())
            }
            R::ReadResource(p) => Row {
                offered: server.offers_resources(),
                meta: p.meta.take(),
                input: Some(p),
            },
            R::Subscribe(p) | R::Unsubscribe(p) => row(server.offers_resources(), p.meta.take()),
            R::ListPrompts(p) => row(server.offers_prompts(), p.meta.take()),
            R::GetPrompt(p) => Row {
                offered: server.offers_prompts(),
                meta: p.meta.take(),
                input: Some(p),
            },
            R::Complete(p) => row(server.offers_completions(), p.meta.take()),
            R::ListTasks(p) => row(server.offers_tasks(), p.meta.take()),
            R::GetTask(p) | R::GetTaskPayload(p) | R::CancelTask(p) => {
                row(server.offers_tasks(), p.meta.take())
            }
            R::SetLevel(p) => row(server.offers_logging(), p.meta.take()),
            R::SubscriptionsListen(p) => row(true, p.meta.take()),
            _ => row(false, None),
        }
    }
}

/// The params of a request whose handler may ask the client for input (2026-07-28 multi
/// round-trip requests): what a retry carries, and the parts of the request a
/// `requestState` is bound to (a retry that changes them is refused).
trait AsksForInput {
    /// The `requestState` and `inputResponses`, taken out of the params.
    fn take_input(&mut self) -> (Option<String>, Option<InputResponses>);
    /// The salient parts of the request.
    fn salient(&self) -> Vec<Salient>;
}

/// A tool call: the tool's name and its arguments.
impl AsksForInput for CallToolRequestParams {
    fn take_input(&mut self) -> (Option<String>, Option<InputResponses>) {
        (self.request_state.take(), self.input_responses.take())
    }

    fn salient(&self) -> Vec<Salient> {
        let arguments = self.arguments.clone().unwrap_or_default();
        vec![
            serde_json::Value::from(self.name.as_str()).into(),
            serde_json::Value::Object(arguments).into(),
        ]
    }
}

/// A tool call read by hand: the same, its arguments kept as the text they came as.
impl AsksForInput for ToolCall<'_> {
    fn take_input(&mut self) -> (Option<String>, Option<InputResponses>) {
        (self.request_state.take(), self.input_responses.take())
    }

    fn salient(&self) -> Vec<Salient> {
        let arguments = match self.arguments {
            Some(raw) => Arguments::Raw(raw),
            None => Arguments::Object(None),
        };
        vec![
            serde_json::Value::from(self.name).into(),
            arguments.to_salient(),
        ]
    }
}

/// A read: the resource's URI.
impl AsksForInput for ReadResourceRequestParams {
    fn take_input(&mut self) -> (Option<String>, Option<InputResponses>) {
        (self.request_state.take(), self.input_responses.take())
    }

    fn salient(&self) -> Vec<Salient> {
        vec![serde_json::Value::from(self.uri.as_str()).into()]
    }
}

/// A prompt: its name and arguments.
impl AsksForInput for GetPromptRequestParams {
    fn take_input(&mut self) -> (Option<String>, Option<InputResponses>) {
        (self.request_state.take(), self.input_responses.take())
    }

    fn salient(&self) -> Vec<Salient> {
        let arguments = serde_json::to_value(&self.arguments).unwrap_or_default();
        vec![
            serde_json::Value::from(self.name.as_str()).into(),
            arguments.into(),
        ]
    }
}

impl Session {
    /// The revision a request is answered in: its own `_meta` version (stateless era) or
    /// the one this connection negotiated (session era). `ping` and `discover` say whether
    /// it is a `ping` or `server/discover`; `offered` whether the server declared what it
    /// needs.
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
            match self.version() {
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
        let versions = self.server().versions();
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

    /// Stateless era: the input rounds of a request whose handler may ask the client for
    /// input (`params`), resumed from its `requestState` if it has one.
    fn rounds<P: AsksForInput + ?Sized>(
        &self,
        call: &Call,
        method: &'static str,
        params: Option<&mut P>,
    ) -> Result<Option<Arc<Rounds>>, ErrorObject> {
        let Some(params) = params else {
            return Ok(None);
        };
        let (request_state, responses) = params.take_input();
        if !call.version.has(Feature::InputRequired) {
            return Ok(None);
        }
        mrtr::resume(
            self.server(),
            method,
            params.salient(),
            request_state.as_deref(),
            responses,
        )
        .map(Some)
    }

    /// The context handlers get for a request (`meta` is the request's `_meta`).
    fn context(
        &self,
        call: Call,
        meta: Arc<RequestMeta>,
        rcx: RequestContext,
        method: &'static str,
        rounds: Option<Arc<Rounds>>,
    ) -> Context {
        let logging = self.server().offers_logging();
        // A stateless-era request has no session, whatever its transport.
        let stateless = meta.protocol_version.is_some();
        let (log_level, client_capabilities) = if stateless {
            // (The `_meta` keeps them too: handlers read it.)
            let capabilities = meta.client_capabilities.as_deref().cloned();
            (
                meta.log_level.filter(|_| logging),
                Arc::new(capabilities.unwrap_or_default()),
            )
        } else {
            self.session_client(logging)
        };
        Context {
            server: self.server().clone(),
            method,
            client_capabilities,
            rounds,
            version: call.version,
            meta,
            cancel: rcx.cancel,
            progress: rcx.progress,
            peer: rcx.peer,
            log_level,
            session_key: Arc::clone(self.key()),
            session_data: self.data().filter(|_| !stateless).cloned(),
            attachment: rcx.attachment,
        }
    }
}

/// A request whose revision and input rounds are resolved: what its handler's context is
/// made of. Each method's handler takes what it reaches of it.
struct Resolved<'s> {
    session: &'s Session,
    call: Call,
    meta: Arc<RequestMeta>,
    rcx: RequestContext,
    method: &'static str,
    rounds: Option<Arc<Rounds>>,
}

impl<'s> Resolved<'s> {
    /// The handler `find` makes of the request's context, with the chain's steps around
    /// it ([`Around`]), boxed.
    fn handle<H>(
        self,
        find: impl FnOnce(Context) -> Result<H, ErrorObject>,
    ) -> Result<BoxFuture<'s, HandlerResult>, ErrorObject>
    where
        H: Future + Send + 's,
        H::Output: Answer,
    {
        let (server, call) = (self.session.server(), self.call);
        let cx = self.context();
        let around = Around::of(&cx);
        Ok(Box::pin(around.run(server, call, find(cx)?)))
    }

    /// The handler's context.
    fn context(self) -> Context {
        let Resolved {
            session,
            call,
            meta,
            rcx,
            method,
            rounds,
        } = self;
        session.context(call, meta, rcx, method, rounds)
    }

    /// The context a list filters its items by, made only when the server has visibility
    /// rules (a list without any needs none).
    fn list_context(self) -> Option<Context> {
        let rules = self.session.server().visibility().any();
        rules.then(|| self.context())
    }

    /// The connection itself, for a handler that talks on it (`subscriptions/listen`).
    fn connection(self) -> RequestContext {
        self.rcx
    }
}

/// A request's target (`name`, else `uri`) and `_meta` read by serde, where the scan of its
/// params declined (a key with an escape, a member given twice).
#[cold]
fn request_head(params: &str) -> (Option<String>, Option<RequestMeta>) {
    #[derive(serde::Deserialize)]
    struct Head {
        name: Option<String>,
        uri: Option<String>,
        #[serde(rename = "_meta")]
        meta: Option<RequestMeta>,
    }
    match serde_json::from_str::<Head>(params) {
        Ok(head) => (head.name.or(head.uri), head.meta),
        Err(_) => (None, None),
    }
}

/// The chain's steps around a handler, taken from its context before the handler gets
/// it: where its `tracing` events go, and its input rounds.
pub(super) struct Around {
    log: Option<LogTarget>,
    rounds: Option<Arc<Rounds>>,
}

impl Around {
    pub(super) fn of(cx: &Context) -> Around {
        Around {
            log: LogTarget::of(cx),
            rounds: cx.rounds.clone(),
        }
    }

    /// `handler` run in its log scope and (stateless era) its input rounds, its outcome
    /// made the answer; or `input_required`, or the error its rounds came to.
    pub(super) fn run<'s, H>(
        self,
        server: &'s Server,
        call: Call,
        handler: H,
    ) -> impl Future<Output = HandlerResult> + Send + 's
    where
        H: Future + Send + 's,
        H::Output: Answer,
    {
        let Around { log, rounds } = self;
        let running = scoped(log, handler);
        async move {
            match drive(server, &call, rounds.as_ref(), running).await {
                Ok(outcome) => outcome.answer(&Answering {
                    server,
                    call,
                    rounds: rounds.as_ref(),
                }),
                Err(answer) => answer,
            }
        }
    }
}

/// A handler's outcome made the request's answer: the chain's last step, one per kind of
/// handler (tools, resource readers, prompts).
pub(super) trait Answer {
    fn answer(self, to: &Answering<'_>) -> HandlerResult;
}

/// What answering knows of a request: the server, the revision, the input rounds.
pub(super) struct Answering<'a> {
    server: &'a Server,
    call: Call,
    rounds: Option<&'a Arc<Rounds>>,
}

impl Answering<'_> {
    pub(super) fn server(&self) -> &Server {
        self.server
    }

    pub(super) fn call(&self) -> &Call {
        &self.call
    }

    /// `value` as the result, shaped for the revision.
    pub(super) fn result<T>(&self, value: T) -> HandlerResult
    where
        T: ferry_protocol::conform::Conform + serde::Serialize + super::reply::HasResultMeta,
    {
        self.server.reply(value, self.call.version)
    }

    /// The error a failed handler is answered with instead of its own: `-32021` when it
    /// asked for a client capability the client lacks (stateless era).
    pub(super) fn missing_capability(&self) -> Option<ErrorObject> {
        missing_capability(&self.call, self.rounds)
    }
}

/// A request's `_meta` as its handler's context holds it: most requests have none, and
/// share one empty `_meta` (a `Context` is moved several times on its way to a tool, and
/// the `_meta` inline would more than double its size).
fn shared_meta(meta: Option<RequestMeta>) -> Arc<RequestMeta> {
    static NONE: std::sync::LazyLock<Arc<RequestMeta>> = std::sync::LazyLock::new(Arc::default);
    match meta {
        Some(meta) => Arc::new(meta),
        None => Arc::clone(&NONE),
    }
}
