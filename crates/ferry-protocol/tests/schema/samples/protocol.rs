//! Samples: the lifecycle (`initialize`, `ping`, capabilities, implementation info),
//! cancellation and progress, the JSON-RPC layer (ids, envelopes, batches, `_meta`
//! objects, JSON values), error responses, and the client/server message unions.

use ferry_protocol::ProtocolVersion::{self, *};
use ferry_protocol::conform::{Conform, NotInRevision};
use ferry_protocol::error_codes;
use ferry_protocol::jsonrpc::{ErrorObject, ErrorResponse, Notification, Request, ResultResponse};
use ferry_protocol::methods::{
    ClientNotification, ClientRequest, ServerNotification, ServerRequest,
};
use ferry_protocol::types::*;
use ferry_protocol::{Feature, RequestId};
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use super::support::{
    NOTIFICATION_MESSAGE, RESULT_MESSAGE, Via, client_notification, client_request, error_reply,
    icon, object, server_notification, server_request, trace_context,
};
use crate::schema::Sample;

/// A JSON-RPC batch (an array of messages): 2025-03-26 only.
#[derive(Clone)]
struct Batch(Vec<Value>);

impl Conform for Batch {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if v.has(Feature::Batches) {
            Ok(())
        } else {
            Err(NotInRevision {
                what: "JSON-RPC batches".into(),
                version: v,
            })
        }
    }
}

impl Serialize for Batch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

fn implementation_full(name: &str) -> Implementation {
    Implementation {
        name: name.into(),
        version: "1.4.0".into(),
        title: Some("Example".into()),
        description: Some("An example MCP implementation".into()),
        icons: Some(vec![icon()]),
        website_url: Some("https://example.com".into()),
    }
}

fn client_capabilities_full() -> ClientCapabilities {
    ClientCapabilities {
        experimental: Some([("example.com/beta".to_owned(), object(json!({"level": 2})))].into()),
        roots: Some(RootsCapability {
            list_changed: Some(true),
        }),
        sampling: Some(SamplingCapability {
            context: Some(JsonObject::new()),
            tools: Some(JsonObject::new()),
        }),
        elicitation: Some(ElicitationCapability {
            form: Some(JsonObject::new()),
            url: Some(JsonObject::new()),
        }),
        tasks: Some(ClientTasksCapability {
            list: Some(JsonObject::new()),
            cancel: Some(JsonObject::new()),
            requests: Some(ClientTaskRequests {
                sampling: Some(SamplingTaskRequests {
                    create_message: Some(JsonObject::new()),
                }),
                elicitation: Some(ElicitationTaskRequests {
                    create: Some(JsonObject::new()),
                }),
            }),
        }),
        extensions: Some(
            [(
                "io.modelcontextprotocol/ui".to_owned(),
                object(json!({"mimeTypes": ["text/html;profile=mcp-app"]})),
            )]
            .into(),
        ),
    }
}

fn server_capabilities_full() -> ServerCapabilities {
    ServerCapabilities {
        experimental: Some([("example.com/beta".to_owned(), object(json!({"level": 2})))].into()),
        logging: Some(JsonObject::new()),
        completions: Some(JsonObject::new()),
        prompts: Some(PromptsCapability {
            list_changed: Some(true),
        }),
        resources: Some(ResourcesCapability {
            subscribe: Some(true),
            list_changed: Some(true),
        }),
        tools: Some(ToolsCapability {
            list_changed: Some(true),
        }),
        tasks: Some(ServerTasksCapability {
            list: Some(JsonObject::new()),
            cancel: Some(JsonObject::new()),
            requests: Some(ServerTaskRequests {
                tools: Some(ToolsTaskRequests {
                    call: Some(JsonObject::new()),
                }),
            }),
        }),
        extensions: Some(
            [(
                "io.modelcontextprotocol/tasks".to_owned(),
                JsonObject::new(),
            )]
            .into(),
        ),
    }
}

/// Every `_meta` key of a request (the stateless ones survive only in 2026-07-28).
fn request_meta_full() -> RequestMeta {
    RequestMeta {
        progress_token: Some(ProgressToken::String("discover-1".into())),
        protocol_version: Some("2026-07-28".into()),
        client_capabilities: Some(Box::new(client_capabilities_full())),
        client_info: Some(Box::new(implementation_full("example-client"))),
        log_level: Some(LoggingLevel::Info),
        related_task: None,
        other: trace_context(),
    }
}

fn result_meta_full() -> ResultMeta {
    ResultMeta {
        server_info: Some(implementation_full("example-server")),
        other: trace_context(),
        ..Default::default()
    }
}

fn notification_meta_full() -> NotificationMeta {
    NotificationMeta {
        subscription_id: Some(RequestId::from("listen-1")),
        other: trace_context(),
        ..Default::default()
    }
}

fn to_value(value: impl Serialize) -> Value {
    serde_json::to_value(value).expect("serializes")
}

pub fn samples() -> Vec<Sample> {
    let mut all = lifecycle();
    all.extend(notifications());
    all.extend(jsonrpc());
    all.extend(errors());
    all
}

fn lifecycle() -> Vec<Sample> {
    let init_messages: &[&str] = &["InitializeRequest"];
    let init_defs: &[&str] = &["InitializeRequestParams"];
    let init_result: &[&str] = &["InitializeResult", "ServerResult", "Result"];
    vec![
        client_request(
            "initialize, minimal",
            init_defs,
            init_messages,
            ClientRequest::Initialize(InitializeRequestParams {
                protocol_version: "2025-06-18".into(),
                capabilities: ClientCapabilities::default(),
                client_info: Implementation::new("example-client", "1.0.0"),
                meta: None,
            }),
        )
        .revisions(V2024_11_05, V2025_11_25),
        client_request(
            "initialize, full",
            init_defs,
            init_messages,
            ClientRequest::Initialize(InitializeRequestParams {
                protocol_version: "2025-11-25".into(),
                capabilities: client_capabilities_full(),
                client_info: implementation_full("example-client"),
                meta: None,
            }),
        )
        .revisions(V2024_11_05, V2025_11_25),
        client_request(
            "initialize, form-only elicitation",
            init_defs,
            init_messages,
            ClientRequest::Initialize(InitializeRequestParams {
                protocol_version: "2025-06-18".into(),
                capabilities: ClientCapabilities {
                    roots: Some(RootsCapability::default()),
                    sampling: Some(SamplingCapability::default()),
                    elicitation: Some(ElicitationCapability::default()),
                    ..Default::default()
                },
                client_info: Implementation::new("example-client", "1.0.0"),
                meta: None,
            }),
        )
        .revisions(V2024_11_05, V2025_11_25),
        Sample::result(
            "initialize result, minimal",
            init_result,
            RESULT_MESSAGE,
            InitializeResult {
                protocol_version: "2025-06-18".into(),
                capabilities: ServerCapabilities::default(),
                server_info: Implementation::new("example-server", "1.0.0"),
                instructions: None,
                meta: None,
            },
        )
        .revisions(V2024_11_05, V2025_11_25),
        Sample::result(
            "initialize result, full",
            init_result,
            RESULT_MESSAGE,
            InitializeResult {
                protocol_version: "2025-11-25".into(),
                capabilities: server_capabilities_full(),
                server_info: implementation_full("example-server"),
                instructions: Some("Call `search` before `fetch`.".into()),
                meta: Some(result_meta_full()),
            },
        )
        .revisions(V2024_11_05, V2025_11_25),
        client_notification(
            "initialized",
            &["NotificationParams"],
            &["InitializedNotification"],
            ClientNotification::Initialized(NotificationParams::default()),
        )
        .revisions(V2024_11_05, V2025_11_25),
        client_request(
            "ping from the client",
            &["RequestParams"],
            &["PingRequest"],
            ClientRequest::Ping(RequestParams::default()),
        )
        .revisions(V2024_11_05, V2025_11_25),
        server_request(
            "ping from the server, with a progress token",
            &["RequestParams"],
            &["PingRequest"],
            ServerRequest::Ping(RequestParams {
                meta: Some(RequestMeta {
                    progress_token: Some(ProgressToken::Number(7)),
                    ..Default::default()
                }),
            }),
        )
        .revisions(V2024_11_05, V2025_11_25),
        // Stateless era: every client request carries its own version, capabilities,
        // identity and log level.
        client_request(
            "discover, full request _meta",
            &["RequestParams"],
            &[],
            ClientRequest::Discover(RequestParams {
                meta: Some(request_meta_full()),
            }),
        )
        .revisions(V2026_07_28, V2026_07_28),
        Sample::result(
            "empty result, minimal",
            &["EmptyResult", "Result", "ClientResult", "ServerResult"],
            RESULT_MESSAGE,
            EmptyResult::default(),
        ),
        Sample::result(
            "empty result, full",
            &["EmptyResult", "Result", "ClientResult", "ServerResult"],
            RESULT_MESSAGE,
            EmptyResult {
                meta: Some(result_meta_full()),
                result_type: Some(ResultType::Complete),
            },
        ),
        Sample::object(
            "implementation, minimal",
            &["Implementation"],
            Implementation::new("example-server", "1.0.0"),
        ),
        Sample::object(
            "implementation, full",
            &["Implementation"],
            implementation_full("example-server"),
        ),
        Sample::object(
            "client capabilities, minimal",
            &["ClientCapabilities"],
            ClientCapabilities::default(),
        ),
        Sample::object(
            "client capabilities, full",
            &["ClientCapabilities"],
            client_capabilities_full(),
        ),
        Sample::object(
            "server capabilities, minimal",
            &["ServerCapabilities"],
            ServerCapabilities::default(),
        ),
        Sample::object(
            "server capabilities, full",
            &["ServerCapabilities"],
            server_capabilities_full(),
        ),
        Sample::object(
            "server capabilities, empty sub-capabilities",
            &["ServerCapabilities"],
            ServerCapabilities {
                prompts: Some(PromptsCapability::default()),
                resources: Some(ResourcesCapability::default()),
                tools: Some(ToolsCapability::default()),
                ..Default::default()
            },
        ),
    ]
}

fn notifications() -> Vec<Sample> {
    let cancelled: &[&str] = &["CancelledNotification"];
    let cancelled_defs: &[&str] = &["CancelledNotificationParams"];
    let progress: &[&str] = &["ProgressNotification"];
    let progress_defs: &[&str] = &["ProgressNotificationParams"];
    vec![
        client_notification(
            "cancelled, minimal",
            cancelled_defs,
            cancelled,
            ClientNotification::Cancelled(CancelledNotificationParams {
                request_id: Some(RequestId::from("123")),
                ..Default::default()
            }),
        ),
        server_notification(
            "cancelled, with reason",
            cancelled_defs,
            cancelled,
            ServerNotification::Cancelled(CancelledNotificationParams {
                request_id: Some(RequestId::Number(42)),
                reason: Some("User requested cancellation".into()),
                meta: None,
            }),
        ),
        // 2025-11-25: a task is cancelled with `tasks/cancel`, so `requestId` is optional.
        client_notification(
            "cancelled, without a request id",
            cancelled_defs,
            cancelled,
            ClientNotification::Cancelled(CancelledNotificationParams {
                request_id: None,
                reason: Some("No longer needed".into()),
                meta: None,
            }),
        )
        .revisions(V2025_11_25, V2025_11_25),
        // The inline params of 2024-11-05 .. 2025-06-18 do not list `_meta` (the base
        // `Notification` reserves it); the standalone params definitions do.
        Sample::notification(
            "notifications/cancelled",
            "cancelled, with _meta",
            &["CancelledNotificationParams", "NotificationParams"],
            NOTIFICATION_MESSAGE,
            Via(ServerNotification::Cancelled(CancelledNotificationParams {
                request_id: Some(RequestId::from("123")),
                reason: Some("Superseded".into()),
                meta: Some(NotificationMeta {
                    other: trace_context(),
                    ..Default::default()
                }),
            })),
        ),
        server_notification(
            "progress, minimal",
            progress_defs,
            progress,
            ServerNotification::Progress(ProgressNotificationParams {
                progress_token: ProgressToken::String("oivaizmir".into()),
                progress: 0.25,
                total: None,
                message: None,
                meta: None,
            }),
        ),
        client_notification(
            "progress, full",
            progress_defs,
            progress,
            ClientNotification::Progress(ProgressNotificationParams {
                progress_token: ProgressToken::Number(7),
                progress: 50.0,
                total: Some(100.0),
                message: Some("Reticulating splines...".into()),
                meta: None,
            }),
        )
        .revisions(V2024_11_05, V2025_11_25),
        server_notification(
            "progress, full",
            progress_defs,
            progress,
            ServerNotification::Progress(ProgressNotificationParams {
                progress_token: ProgressToken::Number(7),
                progress: 50.0,
                total: Some(100.0),
                message: Some("Reticulating splines...".into()),
                meta: None,
            }),
        ),
        Sample::notification(
            "notifications/progress",
            "progress, with _meta",
            &["ProgressNotificationParams", "NotificationParams"],
            NOTIFICATION_MESSAGE,
            Via(ServerNotification::Progress(ProgressNotificationParams {
                progress_token: ProgressToken::String("oivaizmir".into()),
                progress: 3.0,
                total: None,
                message: Some("3 files".into()),
                meta: Some(notification_meta_full()),
            })),
        ),
    ]
}

fn jsonrpc() -> Vec<Sample> {
    vec![
        Sample::object(
            "request id, string",
            &["RequestId"],
            RequestId::from("abc-1"),
        ),
        Sample::object("request id, number", &["RequestId"], RequestId::Number(1)),
        Sample::object(
            "progress token, string",
            &["ProgressToken"],
            ProgressToken::String("oivaizmir".into()),
        ),
        Sample::object(
            "progress token, number",
            &["ProgressToken"],
            ProgressToken::Number(7),
        ),
        Sample::object("role, user", &["Role"], Role::User),
        Sample::object("role, assistant", &["Role"], Role::Assistant),
        Sample::object(
            "result type, complete",
            &["ResultType"],
            ResultType::Complete,
        ),
        Sample::object(
            "result type, input required",
            &["ResultType"],
            ResultType::InputRequired,
        ),
        Sample::object(
            "request _meta, full",
            &["RequestMetaObject", "MetaObject"],
            request_meta_full(),
        ),
        Sample::object(
            "result _meta, full",
            &["ResultMetaObject", "MetaObject"],
            result_meta_full(),
        ),
        Sample::object(
            "notification _meta, full",
            &["NotificationMetaObject", "MetaObject"],
            notification_meta_full(),
        ),
        Sample::object(
            "_meta, empty",
            &[
                "MetaObject",
                "ResultMetaObject",
                "NotificationMetaObject",
                "JSONObject",
            ],
            JsonObject::new(),
        ),
        Sample::raw("JSON value, string", &["JSONValue"], json!("text")),
        Sample::raw("JSON value, integer", &["JSONValue"], json!(42)),
        Sample::raw("JSON value, boolean", &["JSONValue"], json!(true)),
        Sample::raw(
            "JSON array",
            &["JSONArray", "JSONValue"],
            json!(["a", 1, false, [2], {"k": "v"}]),
        ),
        Sample::raw(
            "JSON object",
            &["JSONObject", "JSONValue"],
            json!({"name": "x", "tags": ["a", "b"], "nested": {"n": 1, "ok": true}}),
        ),
        Sample::object(
            "batch request",
            &["JSONRPCBatchRequest", "JSONRPCMessage"],
            Batch(vec![
                to_value(Request::new(1, "ping", RequestParams::default())),
                to_value(Notification::new(
                    "notifications/cancelled",
                    CancelledNotificationParams {
                        request_id: Some(RequestId::Number(0)),
                        reason: Some("timeout".into()),
                        meta: None,
                    },
                )),
            ]),
        )
        .revisions(V2025_03_26, V2025_03_26),
        Sample::object(
            "batch response",
            &["JSONRPCBatchResponse", "JSONRPCMessage"],
            Batch(vec![
                to_value(ResultResponse::new(
                    RequestId::Number(1),
                    EmptyResult::default(),
                )),
                to_value(ErrorResponse::new(
                    Some(RequestId::from("b")),
                    ErrorObject::method_not_found("tools/frobnicate"),
                )),
            ]),
        )
        .revisions(V2025_03_26, V2025_03_26),
    ]
}

fn errors() -> Vec<Sample> {
    let reply: &[&str] = &["JSONRPCError", "JSONRPCErrorResponse", "JSONRPCMessage"];
    // From 2026-07-28 only, so every response union applies.
    let new_reply: &[&str] = &["JSONRPCErrorResponse", "JSONRPCResponse", "JSONRPCMessage"];
    let header = [&["HeaderMismatchError"][..], new_reply].concat();
    let capability = [&["MissingRequiredClientCapabilityError"][..], new_reply].concat();
    let version = [&["UnsupportedProtocolVersionError"][..], new_reply].concat();
    vec![
        Sample::raw(
            "parse error",
            &["ParseError", "Error"],
            to_value(ErrorObject::parse_error(
                "expected value at line 1 column 1",
            )),
        ),
        Sample::raw(
            "invalid request error",
            &["InvalidRequestError", "Error"],
            to_value(ErrorObject::invalid_request("missing `method`")),
        ),
        Sample::raw(
            "method not found error, with data",
            &["MethodNotFoundError", "Error"],
            to_value(
                ErrorObject::method_not_found("prompts/list")
                    .with_data(json!({"reason": "Server does not support the prompts capability"})),
            ),
        ),
        Sample::raw(
            "invalid params error",
            &["InvalidParamsError", "Error"],
            to_value(ErrorObject::invalid_params(
                "Unknown tool: invalid_tool_name",
            )),
        ),
        Sample::raw(
            "internal error",
            &["InternalError", "Error"],
            to_value(ErrorObject::internal_error("handler panicked")),
        ),
        Sample::object(
            "error response, string id",
            reply,
            error_reply("abc-1", ErrorObject::invalid_params("Invalid cursor")),
        ),
        Sample::object(
            "error response, number id, with data",
            reply,
            error_reply(
                7,
                ErrorObject::internal_error("database unavailable")
                    .with_data(json!({"retryAfterMs": 500})),
            ),
        ),
        Sample::object(
            "header mismatch error",
            &header,
            error_reply(
                1,
                ErrorObject::new(
                    error_codes::HEADER_MISMATCH,
                    "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'",
                ),
            ),
        )
        .revisions(V2026_07_28, V2026_07_28),
        Sample::object(
            "missing required client capability error",
            &capability,
            error_reply(
                1,
                ErrorObject::new(
                    error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    "Server requires the elicitation capability for this request",
                )
                .with_data(to_value(MissingRequiredClientCapabilityData {
                    required_capabilities: ClientCapabilities {
                        elicitation: Some(ElicitationCapability::default()),
                        ..Default::default()
                    },
                })),
            ),
        )
        .revisions(V2026_07_28, V2026_07_28),
        Sample::object(
            "unsupported protocol version error",
            &version,
            error_reply(
                "req-9",
                ErrorObject::new(
                    error_codes::UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                )
                .with_data(to_value(UnsupportedProtocolVersionData {
                    requested: "1900-01-01".into(),
                    supported: vec!["2026-07-28".into(), "2025-11-25".into()],
                })),
            ),
        )
        .revisions(V2026_07_28, V2026_07_28),
    ]
}
