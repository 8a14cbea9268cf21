//! Samples of the stateless era (2026-07-28): `server/discover`, `subscriptions/listen`
//! with its filter, result and acknowledgement, and multi round-trip requests: the
//! `input_required` result, its input requests, and the retried requests carrying
//! `inputResponses` and `requestState` (which earlier revisions omit).

use ferry_protocol::ProtocolVersion::{self, *};
use ferry_protocol::RequestId;
use ferry_protocol::conform::{Conform, NotInRevision};
use ferry_protocol::methods::{ClientRequest, ServerNotification};
use ferry_protocol::types::*;
use serde::{Serialize, Serializer};
use serde_json::json;

use crate::schema::Sample;
use crate::schema::samples::support::{
    client_request, object, result_meta, server_notification, server_result, stateless,
    trace_context,
};

const STATELESS: ProtocolVersion = V2026_07_28;

/// The `_meta` of a `subscriptions/listen` result, on its own.
#[derive(Clone)]
struct ListenMeta(SubscriptionsListenResult);

impl Conform for ListenMeta {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        self.0.conform(v)
    }
}

impl Serialize for ListenMeta {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.meta.serialize(serializer)
    }
}

fn filter_full() -> SubscriptionFilter {
    SubscriptionFilter {
        tools_list_changed: Some(true),
        prompts_list_changed: Some(false),
        resources_list_changed: Some(true),
        resource_subscriptions: Some(vec!["file:///project/src/main.rs".into()]),
    }
}

fn listen_result(server_info: bool) -> SubscriptionsListenResult {
    SubscriptionsListenResult {
        meta: ResultMeta {
            subscription_id: Some(RequestId::from("listen-1")),
            ..if server_info {
                result_meta()
            } else {
                ResultMeta::default()
            }
        },
        result_type: None,
    }
}

fn sampling_input() -> InputRequest {
    InputRequest::CreateMessage(CreateMessageRequestParams {
        messages: vec![SamplingMessage {
            role: Role::User,
            content: SamplingContents::One(SamplingContent::Text(TextContent::new(
                "Summarize the diff",
            ))),
            meta: None,
        }],
        max_tokens: 200,
        ..Default::default()
    })
}

fn confirm_input() -> InputRequest {
    InputRequest::Elicit(ElicitRequestParams::Form(ElicitRequestFormParams {
        message: "Deploy to production?".into(),
        requested_schema: ElicitationSchema {
            properties: [(
                "confirm".to_owned(),
                PrimitiveSchemaDefinition::Boolean(BooleanSchema::default()),
            )]
            .into_iter()
            .collect(),
            required: Some(vec!["confirm".into()]),
            ..Default::default()
        },
        ..Default::default()
    }))
}

fn login_input() -> InputRequest {
    InputRequest::Elicit(ElicitRequestParams::Url(ElicitRequestUrlParams {
        message: "Sign in to continue".into(),
        url: "https://example.com/login?session=abc".into(),
        ..Default::default()
    }))
}

fn input_requests() -> InputRequests {
    [
        ("summary", sampling_input()),
        ("roots", InputRequest::ListRoots(RequestParams::default())),
        ("confirm", confirm_input()),
        ("login", login_input()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn input_responses() -> InputResponses {
    [
        (
            "summary",
            InputResponse::CreateMessage(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContents::One(SamplingContent::Text(TextContent::new(
                    "Two files changed.",
                ))),
                model: "claude-3-sonnet".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
            }),
        ),
        (
            "roots",
            InputResponse::ListRoots(ListRootsResult {
                roots: vec![Root {
                    uri: "file:///project".into(),
                    ..Default::default()
                }],
                meta: None,
            }),
        ),
        (
            "confirm",
            InputResponse::Elicit(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(object(json!({"confirm": true}))),
                meta: None,
            }),
        ),
        (
            "login",
            InputResponse::Elicit(ElicitResult {
                action: ElicitAction::Decline,
                content: None,
                meta: None,
            }),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

pub fn samples() -> Vec<Sample> {
    let mut all = discover();
    all.extend(filters());
    all.extend(subscriptions());
    all.extend(round_trips());
    all.extend(retries());
    all
}

fn discover() -> Vec<Sample> {
    let result: &[&str] = &["DiscoverResult", "CacheableResult"];
    let response: &[&str] = &["DiscoverResultResponse"];
    vec![
        client_request(
            "server/discover",
            &["RequestParams"],
            &["DiscoverRequest"],
            ClientRequest::Discover(RequestParams::default()),
        )
        .revisions(STATELESS, STATELESS),
        server_result(
            "server/discover result, minimal",
            result,
            response,
            DiscoverResult {
                supported_versions: vec!["2026-07-28".into()],
                ..Default::default()
            },
        )
        .revisions(STATELESS, STATELESS),
        server_result(
            "server/discover result, full",
            result,
            response,
            DiscoverResult {
                supported_versions: vec!["2026-07-28".into(), "2025-11-25".into()],
                capabilities: ServerCapabilities {
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
                        list_changed: Some(false),
                    }),
                    extensions: Some(
                        [(
                            "io.modelcontextprotocol/tasks".to_owned(),
                            JsonObject::new(),
                        )]
                        .into(),
                    ),
                    ..Default::default()
                },
                instructions: Some("Call `search` before `fetch`.".into()),
                ttl_ms: Some(86_400_000),
                cache_scope: Some(CacheScope::Public),
                meta: Some(result_meta()),
                ..Default::default()
            },
        )
        .revisions(STATELESS, STATELESS),
    ]
}

fn subscriptions() -> Vec<Sample> {
    let params: &[&str] = &["SubscriptionsListenRequestParams"];
    let request: &[&str] = &["SubscriptionsListenRequest"];
    let result: &[&str] = &["SubscriptionsListenResult"];
    let response: &[&str] = &["SubscriptionsListenResultResponse"];
    let acknowledged: &[&str] = &["SubscriptionsAcknowledgedNotificationParams"];
    let ack_message: &[&str] = &["SubscriptionsAcknowledgedNotification"];
    let ack = |notifications, meta| {
        ServerNotification::SubscriptionsAcknowledged(SubscriptionsAcknowledgedNotificationParams {
            notifications,
            meta,
        })
    };
    let listen = |notifications| {
        ClientRequest::SubscriptionsListen(SubscriptionsListenRequestParams {
            notifications,
            meta: None,
        })
    };
    let samples = vec![
        client_request(
            "subscriptions/listen, everything",
            params,
            request,
            listen(filter_full()),
        ),
        client_request(
            "subscriptions/listen, nothing",
            params,
            request,
            listen(SubscriptionFilter::default()),
        ),
        server_result(
            "subscriptions/listen result",
            result,
            response,
            listen_result(false),
        ),
        server_result(
            "subscriptions/listen result, with server info",
            result,
            response,
            listen_result(true),
        ),
        Sample::object(
            "subscriptions/listen result _meta",
            &["SubscriptionsListenResultMetaObject", "ResultMetaObject"],
            ListenMeta(listen_result(true)),
        ),
        server_notification(
            "subscriptions acknowledged",
            acknowledged,
            ack_message,
            ack(SubscriptionFilter::default(), None),
        ),
        server_notification(
            "subscriptions acknowledged, full",
            acknowledged,
            ack_message,
            ack(
                filter_full(),
                Some(NotificationMeta {
                    subscription_id: Some(RequestId::Number(7)),
                    other: trace_context(),
                    ..Default::default()
                }),
            ),
        ),
    ];
    samples
        .into_iter()
        .map(|s| s.revisions(STATELESS, STATELESS))
        .collect()
}

/// The filter is a plain value (its definition is 2026-07-28's).
fn filters() -> Vec<Sample> {
    let filter: &[&str] = &["SubscriptionFilter"];
    vec![
        Sample::object("subscription filter, full", filter, filter_full()),
        Sample::object(
            "subscription filter, empty",
            filter,
            SubscriptionFilter::default(),
        ),
        Sample::object(
            "subscription filter, no resources",
            filter,
            SubscriptionFilter {
                resource_subscriptions: Some(Vec::new()),
                ..Default::default()
            },
        ),
    ]
}

fn round_trips() -> Vec<Sample> {
    let result: &[&str] = &["InputRequiredResult"];
    let responses: &[&str] = &[
        "CallToolResultResponse",
        "GetPromptResultResponse",
        "ReadResourceResultResponse",
    ];
    let only = |s: Sample| s.revisions(STATELESS, STATELESS);
    vec![
        only(server_result(
            "input required, every kind of input request",
            result,
            responses,
            InputRequiredResult {
                input_requests: Some(input_requests()),
                request_state: Some("eyJzdGVwIjoxfQ".into()),
                meta: Some(result_meta()),
                ..Default::default()
            },
        )),
        only(server_result(
            "input required, requests only",
            result,
            responses,
            InputRequiredResult {
                input_requests: Some(
                    [("summary".to_owned(), sampling_input())]
                        .into_iter()
                        .collect(),
                ),
                ..Default::default()
            },
        )),
        // A server that only needs the client to come back (a load-shedding retry).
        only(server_result(
            "input required, request state only",
            result,
            responses,
            InputRequiredResult {
                request_state: Some("eyJzdGVwIjoyfQ".into()),
                ..Default::default()
            },
        )),
        only(Sample::object(
            "input requests",
            &["InputRequests"],
            stateless(input_requests()),
        )),
        only(Sample::object(
            "input requests, empty",
            &["InputRequests"],
            stateless(InputRequests::new()),
        )),
        only(Sample::object(
            "input responses",
            &["InputResponses"],
            stateless(input_responses()),
        )),
        only(Sample::object(
            "input responses, empty",
            &["InputResponses"],
            stateless(InputResponses::new()),
        )),
        only(Sample::object(
            "input response request params",
            &["InputResponseRequestParams"],
            InputResponseRequestParams {
                input_responses: Some(input_responses()),
                request_state: Some("eyJzdGVwIjoxfQ".into()),
                meta: Some(RequestMeta {
                    protocol_version: Some("2026-07-28".into()),
                    client_capabilities: Some(Box::default()),
                    ..Default::default()
                }),
            },
        )),
    ]
}

/// The retried requests: `inputResponses` and `requestState` (omitted before 2026-07-28).
fn retries() -> Vec<Sample> {
    let mrtr = "InputResponseRequestParams";
    vec![
        client_request(
            "tools/call, retried with input responses",
            &["CallToolRequestParams", mrtr],
            &["CallToolRequest"],
            ClientRequest::CallTool(CallToolRequestParams {
                name: "deploy".into(),
                arguments: Some(object(json!({"env": "production"}))),
                input_responses: Some(input_responses()),
                request_state: Some("eyJzdGVwIjoxfQ".into()),
                ..Default::default()
            }),
        ),
        client_request(
            "tools/call, retried with request state only",
            &["CallToolRequestParams", mrtr],
            &["CallToolRequest"],
            ClientRequest::CallTool(CallToolRequestParams {
                name: "deploy".into(),
                request_state: Some("eyJzdGVwIjoyfQ".into()),
                ..Default::default()
            }),
        ),
        client_request(
            "prompts/get, retried",
            &["GetPromptRequestParams", mrtr],
            &["GetPromptRequest"],
            ClientRequest::GetPrompt(GetPromptRequestParams {
                name: "release_notes".into(),
                input_responses: Some(input_responses()),
                request_state: Some("cHJvbXB0".into()),
                ..Default::default()
            }),
        ),
        client_request(
            "resources/read, retried",
            &["ReadResourceRequestParams", mrtr],
            &["ReadResourceRequest"],
            ClientRequest::ReadResource(ReadResourceRequestParams {
                uri: "file:///secrets/config.toml".into(),
                input_responses: Some(input_responses()),
                request_state: Some("cmVhZA".into()),
                ..Default::default()
            }),
        ),
    ]
}
