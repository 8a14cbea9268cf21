//! The minimal reference server: the lifecycle of both eras and one `echo` tool, answered
//! line by line over the wire types of `ferry-protocol`.
//!
//! It exists so the foundation can be exercised end to end before the engine lands; the
//! engine-based server of the Server issue replaces it.

use ferry::protocol::conform::Conform;
use ferry::protocol::error_codes;
use ferry::protocol::jsonrpc::{
    ErrorObject, ErrorResponse, Inbound, Message, Request, ResultResponse, classify,
};
use ferry::protocol::methods::ClientRequest;
use ferry::protocol::types::*;
use ferry::protocol::{Era, Feature, ProtocolVersion, RequestId, VersionSet};
use serde::Serialize;

/// A reference server's state: the negotiated session revision, if any.
pub(crate) struct ReferenceServer {
    versions: VersionSet,
    session: Option<ProtocolVersion>,
}

type Reply = Result<serde_json::Value, ErrorObject>;

impl ReferenceServer {
    pub(crate) fn new() -> Self {
        ReferenceServer {
            versions: VersionSet::all(),
            session: None,
        }
    }

    /// Handle one line of input; returns the line to send back, if any.
    pub(crate) fn handle_line(&mut self, line: &[u8]) -> Option<String> {
        match classify(line) {
            Inbound::Single(message) => self.handle(message).map(|r| to_line(&r)),
            Inbound::Rejected(rejected) if rejected.reply => Some(to_line(&rejected.response)),
            Inbound::Rejected(rejected) => {
                eprintln!(
                    "ferry: dropped an invalid response: {}",
                    rejected.response.error.message
                );
                None
            }
            Inbound::Batch(entries) => {
                if !self.session.is_some_and(|v| v.has(Feature::Batches)) {
                    let error = ErrorObject::invalid_request(
                        "JSON-RPC batches are only part of MCP 2025-03-26",
                    );
                    return Some(to_line(&ErrorResponse::new(None, error)));
                }
                let replies: Vec<_> = entries
                    .into_iter()
                    .filter_map(|entry| match entry {
                        Ok(message) => self.handle(message),
                        Err(rejected) => rejected
                            .reply
                            .then(|| serde_json::to_value(&rejected.response).unwrap_or_default()),
                    })
                    .collect();
                (!replies.is_empty()).then(|| to_line(&replies))
            }
        }
    }

    fn handle(&mut self, message: Message) -> Option<serde_json::Value> {
        match message {
            Message::Request(request) => {
                let id = request.id.clone();
                let reply = match self.dispatch(&request) {
                    Ok(result) => serde_json::to_value(ResultResponse::new(id, result)),
                    Err(error) => serde_json::to_value(ErrorResponse::new(Some(id), error)),
                };
                Some(reply.unwrap_or_default())
            }
            Message::Notification(n) => {
                if n.method != "notifications/initialized" && n.method != "notifications/cancelled"
                {
                    eprintln!("ferry: ignored notification {}", n.method);
                }
                None
            }
            Message::Response(_) => None,
        }
    }

    fn dispatch(&mut self, request: &Request) -> Reply {
        let parsed = ClientRequest::parse(&request.method, request.params.as_deref())?;
        if let ClientRequest::Initialize(params) = &parsed {
            return self.initialize(params);
        }
        let version = match stateless_meta(&parsed) {
            Some(meta) => self.stateless_version(meta)?,
            None if matches!(parsed, ClientRequest::Ping(_)) => {
                self.session.unwrap_or(ProtocolVersion::LATEST_SESSION)
            }
            None => self.session.ok_or_else(|| {
                ErrorObject::invalid_request(
                    "initialize first (or send a stateless request with _meta)",
                )
            })?,
        };
        let known = ferry::protocol::methods::method_info(parsed.method())
            .is_some_and(|m| m.in_revision(version));
        if !known {
            return Err(ErrorObject::method_not_found(parsed.method()));
        }
        match parsed {
            ClientRequest::Ping(_) => shaped(EmptyResult::default(), version),
            ClientRequest::Discover(_) => shaped(self.discover(), version),
            ClientRequest::ListTools(_) => shaped(
                ListToolsResult {
                    tools: vec![echo_tool()],
                    ..Default::default()
                },
                version,
            ),
            ClientRequest::CallTool(call) => shaped(call_tool(&call), version),
            other => Err(ErrorObject::method_not_found(other.method())),
        }
    }

    fn initialize(&mut self, params: &InitializeRequestParams) -> Reply {
        if self.session.is_some() {
            return Err(ErrorObject::invalid_request("already initialized"));
        }
        let version = self
            .versions
            .negotiate(&params.protocol_version, Era::Session)
            .ok_or_else(|| ErrorObject::invalid_request("no session-era revision supported"))?;
        self.session = Some(version);
        shaped(
            InitializeResult {
                protocol_version: version.as_str().to_owned(),
                capabilities: capabilities(),
                server_info: server_info(),
                instructions: Some("Call `echo` to get your message back.".into()),
                meta: None,
            },
            version,
        )
    }

    fn stateless_version(&self, meta: &RequestMeta) -> Result<ProtocolVersion, ErrorObject> {
        let requested = meta.protocol_version.as_deref().unwrap_or_default();
        if meta.client_capabilities.is_none() {
            return Err(ErrorObject::invalid_params(format!(
                "_meta must carry {}",
                keys::CLIENT_CAPABILITIES
            )));
        }
        self.versions.accept_stateless(requested).ok_or_else(|| {
            let data = UnsupportedProtocolVersionData {
                requested: requested.to_owned(),
                supported: self
                    .versions
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

    fn discover(&self) -> DiscoverResult {
        DiscoverResult {
            supported_versions: self
                .versions
                .wire_strings()
                .iter()
                .map(|s| s.to_string())
                .collect(),
            capabilities: capabilities(),
            instructions: Some("Call `echo` to get your message back.".into()),
            meta: Some(ResultMeta {
                server_info: Some(server_info()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}

/// The `_meta` of a request that declares a stateless protocol version.
fn stateless_meta(request: &ClientRequest) -> Option<&RequestMeta> {
    let meta = match request {
        ClientRequest::Discover(p) | ClientRequest::Ping(p) => p.meta.as_ref(),
        ClientRequest::ListTools(p) => p.meta.as_ref(),
        ClientRequest::CallTool(p) => p.meta.as_ref(),
        _ => None,
    }?;
    (meta.protocol_version.is_some() || matches!(request, ClientRequest::Discover(_)))
        .then_some(meta)
}

fn shaped<T: Conform + Serialize>(mut value: T, version: ProtocolVersion) -> Reply {
    value
        .conform(version)
        .map_err(ErrorObject::internal_error)?;
    serde_json::to_value(&value).map_err(ErrorObject::internal_error)
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ToolsCapability::default()),
        ..Default::default()
    }
}

fn server_info() -> Implementation {
    Implementation {
        title: Some("Ferry reference server".into()),
        ..Implementation::new("ferry", env!("CARGO_PKG_VERSION"))
    }
}

fn echo_tool() -> Tool {
    let schema = serde_json::json!({
        "type": "object",
        "properties": { "message": { "type": "string", "description": "What to echo" } },
        "required": ["message"],
    });
    Tool {
        description: Some("Echo a message back.".into()),
        annotations: Some(ToolAnnotations {
            read_only_hint: Some(true),
            ..Default::default()
        }),
        ..Tool::new("echo", schema.as_object().cloned().unwrap_or_default())
    }
}

fn call_tool(call: &CallToolRequestParams) -> CallToolResult {
    if call.name != "echo" {
        return CallToolResult::error(format!("unknown tool {:?}", call.name));
    }
    let message = call
        .arguments
        .as_ref()
        .and_then(|a| a.get("message"))
        .and_then(serde_json::Value::as_str);
    match message {
        Some(message) => CallToolResult::success(vec![ContentBlock::text(message)]),
        None => CallToolResult::error("argument `message` (a string) is required"),
    }
}

fn to_line<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| {
        let error = ErrorObject::internal_error(format!("response did not serialize: {e}"));
        serde_json::to_string(&ErrorResponse::new(None::<RequestId>, error)).unwrap_or_default()
    })
}
