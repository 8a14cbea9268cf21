//! One connection's server side: lifecycle, era resolution, routing and result shaping.

use std::sync::Mutex;

use ferry_protocol::conform::Conform;
use ferry_protocol::error_codes;
use ferry_protocol::jsonrpc::{ErrorObject, Notification, Request};
use ferry_protocol::methods::{ClientRequest, method_info};
use ferry_protocol::types::*;
use ferry_protocol::{Era, Feature, ProtocolVersion};
use serde::Serialize;

use super::builder::Server;
use super::context::ToolContext;
use super::tools::{ToolOutcome, argument_error_is_result};
use crate::engine::{Handler, HandlerResult, Peer, RequestContext};

/// What the session era negotiated on this connection.
#[derive(Default)]
struct SessionState {
    version: Option<ProtocolVersion>,
    client_capabilities: ClientCapabilities,
    client_info: Option<Implementation>,
    initialized: bool,
}

pub(crate) struct Session {
    server: Server,
    state: Mutex<SessionState>,
}

/// How one request is to be answered: in which revision, with which `_meta`.
struct Call {
    version: ProtocolVersion,
    meta: RequestMeta,
}

impl Session {
    pub(crate) fn new(server: Server) -> Self {
        Session {
            server,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The revision a request is answered in: its own `_meta` version (stateless era) or
    /// the one this connection negotiated (session era).
    fn resolve(&self, request: &ClientRequest) -> Result<Call, ErrorObject> {
        let meta = request_meta(request).cloned().unwrap_or_default();
        let stateless =
            meta.protocol_version.is_some() || matches!(request, ClientRequest::Discover(_));
        let version = if stateless {
            self.stateless_version(&meta)?
        } else {
            let state = self.state();
            match state.version {
                Some(version) => version,
                None if matches!(request, ClientRequest::Ping(_)) => {
                    ProtocolVersion::LATEST_SESSION
                }
                None => {
                    return Err(ErrorObject::invalid_request(format!(
                        "{} before initialize: send initialize first, or carry {} in _meta",
                        request.method(),
                        keys::PROTOCOL_VERSION
                    )));
                }
            }
        };
        if !method_info(request.method()).is_some_and(|m| m.in_revision(version)) {
            return Err(ErrorObject::method_not_found(request.method()));
        }
        Ok(Call { version, meta })
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
        let versions = &self.server.inner.versions;
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
            .inner
            .versions
            .negotiate(&params.protocol_version, Era::Session)
            .ok_or_else(|| {
                ErrorObject::invalid_request("this server speaks no session-era revision")
            })?;
        state.version = Some(version);
        state.client_capabilities = params.capabilities.clone();
        state.client_info = Some(params.client_info.clone());
        drop(state);
        shaped(
            InitializeResult {
                protocol_version: version.as_str().to_owned(),
                capabilities: self.server.capabilities(),
                server_info: self.server.inner.info.clone(),
                instructions: self.server.inner.instructions.clone(),
                meta: None,
            },
            version,
        )
    }

    fn discover(&self, call: &Call) -> HandlerResult {
        let versions = &self.server.inner.versions;
        shaped(
            DiscoverResult {
                supported_versions: versions
                    .wire_strings()
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                capabilities: self.server.capabilities(),
                instructions: self.server.inner.instructions.clone(),
                meta: Some(self.result_meta(call.version)),
                ..Default::default()
            },
            call.version,
        )
    }

    /// `_meta` of a result: the server's identity in the stateless era.
    fn result_meta(&self, version: ProtocolVersion) -> ResultMeta {
        ResultMeta {
            server_info: version
                .has(Feature::RequestMeta)
                .then(|| self.server.inner.info.clone()),
            ..Default::default()
        }
    }

    fn list_tools(&self, call: &Call) -> HandlerResult {
        let tools = self.server.tools();
        shaped(
            ListToolsResult {
                tools: tools.values().map(|t| t.tool.clone()).collect(),
                meta: Some(self.result_meta(call.version)).filter(|m| m.server_info.is_some()),
                ..Default::default()
            },
            call.version,
        )
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        call: Call,
        cx: RequestContext,
    ) -> HandlerResult {
        let entry = self.server.tools().get(&params.name).cloned();
        let Some(entry) = entry else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown tool {:?}",
                params.name
            )));
        };
        let context = ToolContext {
            version: call.version,
            meta: call.meta,
            cancel: cx.cancel,
            progress: cx.progress,
            peer: cx.peer,
        };
        let mut result = match (entry.run)(params.arguments, context).await {
            ToolOutcome::Result(result) => *result,
            ToolOutcome::InvalidArguments(message) if argument_error_is_result(call.version) => {
                CallToolResult::error(message)
            }
            ToolOutcome::InvalidArguments(message) => {
                return Err(ErrorObject::invalid_params(message));
            }
        };
        if call.version.has(Feature::RequestMeta) {
            result.meta.get_or_insert_with(Default::default).server_info =
                Some(self.server.inner.info.clone());
        }
        shaped(result, call.version)
    }
}

/// Shape a result for `version` and serialize it once.
fn shaped<T: Conform + Serialize>(mut value: T, version: ProtocolVersion) -> HandlerResult {
    value
        .conform(version)
        .map_err(|e| ErrorObject::internal_error(format!("the result cannot be sent: {e}")))?;
    serde_json::value::to_raw_value(&value).map_err(ErrorObject::internal_error)
}

/// The `_meta` of a client request's params.
fn request_meta(request: &ClientRequest) -> Option<&RequestMeta> {
    match request {
        ClientRequest::Initialize(p) => p.meta.as_ref(),
        ClientRequest::Ping(p) | ClientRequest::Discover(p) => p.meta.as_ref(),
        ClientRequest::ListTools(p)
        | ClientRequest::ListResources(p)
        | ClientRequest::ListResourceTemplates(p)
        | ClientRequest::ListPrompts(p)
        | ClientRequest::ListTasks(p) => p.meta.as_ref(),
        ClientRequest::CallTool(p) => p.meta.as_ref(),
        ClientRequest::ReadResource(p) => p.meta.as_ref(),
        ClientRequest::Subscribe(p) | ClientRequest::Unsubscribe(p) => p.meta.as_ref(),
        ClientRequest::GetPrompt(p) => p.meta.as_ref(),
        ClientRequest::Complete(p) => p.meta.as_ref(),
        ClientRequest::SetLevel(p) => p.meta.as_ref(),
        ClientRequest::SubscriptionsListen(p) => p.meta.as_ref(),
        ClientRequest::GetTask(p)
        | ClientRequest::GetTaskPayload(p)
        | ClientRequest::CancelTask(p) => p.meta.as_ref(),
        _ => None,
    }
}

impl Handler for Session {
    async fn request(&self, request: Request, cx: RequestContext) -> HandlerResult {
        let parsed = ClientRequest::parse(&request.method, request.params.as_deref())?;
        if let ClientRequest::Initialize(params) = &parsed {
            return self.initialize(params);
        }
        let call = self.resolve(&parsed)?;
        match parsed {
            ClientRequest::Ping(_) => shaped(EmptyResult::default(), call.version),
            ClientRequest::Discover(_) => self.discover(&call),
            ClientRequest::ListTools(_) if self.server.capabilities().tools.is_some() => {
                self.list_tools(&call)
            }
            ClientRequest::CallTool(params) if self.server.capabilities().tools.is_some() => {
                self.call_tool(params, call, cx).await
            }
            other => Err(ErrorObject::method_not_found(other.method())),
        }
    }

    async fn notification(&self, notification: Notification, _peer: &Peer) {
        match &*notification.method {
            "notifications/initialized" => self.state().initialized = true,
            "notifications/cancelled" => {} // the engine stopped the handler
            other => tracing::debug!("notification {other} ignored"),
        }
    }

    fn in_order(&self, method: &str) -> bool {
        method == "initialize"
    }

    fn accepts_batches(&self) -> bool {
        self.state()
            .version
            .is_some_and(|v| v.has(Feature::Batches))
    }
}
