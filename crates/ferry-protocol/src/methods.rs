//! Every MCP method: its name, direction, the revisions that have it, and its params and
//! result types; and typed enums of each side's requests and notifications.
//!
//! The enums are parsed from a method name and raw params (the "parse once" step after
//! routing): an unknown method gives `-32601`, params that do not fit give `-32602`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::jsonrpc::{ErrorObject, parse_params};
use crate::types::*;
use crate::version::ProtocolVersion::{self, *};

/// Who sends a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The client sends it to the server.
    ClientToServer,
    /// The server sends it to the client.
    ServerToClient,
    /// Either side.
    Both,
}

/// Whether a method is a request or a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MethodKind {
    /// Expects a response.
    Request,
    /// Never gets a response.
    Notification,
}

/// What the registry knows about one method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MethodInfo {
    /// The wire name.
    pub name: &'static str,
    /// Request or notification.
    pub kind: MethodKind,
    /// Who sends it.
    pub direction: Direction,
    /// The first revision that has it.
    pub since: ProtocolVersion,
    /// The last revision that has it (`None`: still current).
    pub until: Option<ProtocolVersion>,
}

impl MethodInfo {
    /// Whether revision `v` has this method.
    pub fn in_revision(&self, v: ProtocolVersion) -> bool {
        v >= self.since && self.until.is_none_or(|u| v <= u)
    }
}

/// A method: its name and params type.
pub trait Method {
    /// The wire name.
    const NAME: &'static str;
    /// The params type.
    type Params: Serialize + DeserializeOwned;
}

/// A request method: a [`Method`] with a result type.
pub trait RequestMethod: Method {
    /// The result type.
    type Result: Serialize + DeserializeOwned;
}

macro_rules! methods {
    ($(
        $(#[$doc:meta])*
        $kind:ident $marker:ident = $name:literal, $dir:ident, $since:ident .. $until:expr,
            $params:ty $(=> $result:ty)?;
    )*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug)]
            pub struct $marker;
            impl Method for $marker {
                const NAME: &'static str = $name;
                type Params = $params;
            }
            $(impl RequestMethod for $marker { type Result = $result; })?
            impl $marker {
                const INFO: MethodInfo = MethodInfo {
                    name: $name,
                    kind: MethodKind::$kind,
                    direction: Direction::$dir,
                    since: $since,
                    until: $until,
                };
            }
        )*

        /// Every method of every revision.
        pub const ALL_METHODS: &[MethodInfo] = &[$($marker::INFO,)*];

        /// Look a method up by name (a `match` on the names, not a scan of
        /// [`ALL_METHODS`]: routing looks up every request's method).
        pub fn method_info(name: &str) -> Option<&'static MethodInfo> {
            match name {
                $($name => Some(&$marker::INFO),)*
                _ => None,
            }
        }
    };
}

methods! {
    /// `initialize`.
    Request Initialize = "initialize", ClientToServer, V2024_11_05..Some(V2025_11_25),
        InitializeRequestParams => InitializeResult;
    /// `ping`.
    Request Ping = "ping", Both, V2024_11_05..Some(V2025_11_25), RequestParams => EmptyResult;
    /// `server/discover`.
    Request Discover = "server/discover", ClientToServer, V2026_07_28..None,
        RequestParams => DiscoverResult;
    /// `tools/list`.
    Request ListTools = "tools/list", ClientToServer, V2024_11_05..None,
        PaginatedRequestParams => ListToolsResult;
    /// `tools/call`.
    Request CallTool = "tools/call", ClientToServer, V2024_11_05..None,
        CallToolRequestParams => CallToolResult;
    /// `resources/list`.
    Request ListResources = "resources/list", ClientToServer, V2024_11_05..None,
        PaginatedRequestParams => ListResourcesResult;
    /// `resources/templates/list`.
    Request ListResourceTemplates = "resources/templates/list", ClientToServer, V2024_11_05..None,
        PaginatedRequestParams => ListResourceTemplatesResult;
    /// `resources/read`.
    Request ReadResource = "resources/read", ClientToServer, V2024_11_05..None,
        ReadResourceRequestParams => ReadResourceResult;
    /// `resources/subscribe`.
    Request Subscribe = "resources/subscribe", ClientToServer, V2024_11_05..Some(V2025_11_25),
        ResourceRequestParams => EmptyResult;
    /// `resources/unsubscribe`.
    Request Unsubscribe = "resources/unsubscribe", ClientToServer, V2024_11_05..Some(V2025_11_25),
        ResourceRequestParams => EmptyResult;
    /// `prompts/list`.
    Request ListPrompts = "prompts/list", ClientToServer, V2024_11_05..None,
        PaginatedRequestParams => ListPromptsResult;
    /// `prompts/get`.
    Request GetPrompt = "prompts/get", ClientToServer, V2024_11_05..None,
        GetPromptRequestParams => GetPromptResult;
    /// `completion/complete`.
    Request Complete = "completion/complete", ClientToServer, V2024_11_05..None,
        CompleteRequestParams => CompleteResult;
    /// `logging/setLevel`.
    Request SetLevel = "logging/setLevel", ClientToServer, V2024_11_05..Some(V2025_11_25),
        SetLevelRequestParams => EmptyResult;
    /// `subscriptions/listen`.
    Request SubscriptionsListen = "subscriptions/listen", ClientToServer, V2026_07_28..None,
        SubscriptionsListenRequestParams => SubscriptionsListenResult;
    /// `sampling/createMessage` (an input request in 2026-07-28).
    Request CreateMessage = "sampling/createMessage", ServerToClient, V2024_11_05..None,
        CreateMessageRequestParams => CreateMessageResult;
    /// `roots/list` (an input request in 2026-07-28).
    Request ListRoots = "roots/list", ServerToClient, V2024_11_05..None,
        RequestParams => ListRootsResult;
    /// `elicitation/create` (an input request in 2026-07-28).
    Request Elicit = "elicitation/create", ServerToClient, V2025_06_18..None,
        ElicitRequestParams => ElicitResult;
    /// `tasks/get`.
    Request GetTask = "tasks/get", Both, V2025_11_25..Some(V2025_11_25),
        TaskIdParams => TaskResult;
    /// `tasks/result`: the task's final result, of the original request's result type.
    Request GetTaskPayload = "tasks/result", Both, V2025_11_25..Some(V2025_11_25),
        TaskIdParams => serde_json::Value;
    /// `tasks/list`.
    Request ListTasks = "tasks/list", Both, V2025_11_25..Some(V2025_11_25),
        PaginatedRequestParams => ListTasksResult;
    /// `tasks/cancel`.
    Request CancelTask = "tasks/cancel", Both, V2025_11_25..Some(V2025_11_25),
        TaskIdParams => TaskResult;
    /// `notifications/initialized`.
    Notification Initialized = "notifications/initialized", ClientToServer,
        V2024_11_05..Some(V2025_11_25), NotificationParams;
    /// `notifications/cancelled`.
    Notification Cancelled = "notifications/cancelled", Both, V2024_11_05..None,
        CancelledNotificationParams;
    /// `notifications/progress`.
    Notification Progress = "notifications/progress", Both, V2024_11_05..None,
        ProgressNotificationParams;
    /// `notifications/message`.
    Notification LoggingMessage = "notifications/message", ServerToClient, V2024_11_05..None,
        LoggingMessageNotificationParams;
    /// `notifications/tools/list_changed`.
    Notification ToolListChanged = "notifications/tools/list_changed", ServerToClient,
        V2024_11_05..None, NotificationParams;
    /// `notifications/prompts/list_changed`.
    Notification PromptListChanged = "notifications/prompts/list_changed", ServerToClient,
        V2024_11_05..None, NotificationParams;
    /// `notifications/resources/list_changed`.
    Notification ResourceListChanged = "notifications/resources/list_changed", ServerToClient,
        V2024_11_05..None, NotificationParams;
    /// `notifications/resources/updated`.
    Notification ResourceUpdated = "notifications/resources/updated", ServerToClient,
        V2024_11_05..None, ResourceUpdatedNotificationParams;
    /// `notifications/roots/list_changed`.
    Notification RootsListChanged = "notifications/roots/list_changed", ClientToServer,
        V2024_11_05..Some(V2025_11_25), NotificationParams;
    /// `notifications/elicitation/complete`.
    Notification ElicitationComplete = "notifications/elicitation/complete", ServerToClient,
        V2025_11_25..Some(V2025_11_25), ElicitationCompleteNotificationParams;
    /// `notifications/tasks/status`.
    Notification TaskStatusChanged = "notifications/tasks/status", Both,
        V2025_11_25..Some(V2025_11_25), TaskStatusNotificationParams;
    /// `notifications/subscriptions/acknowledged`.
    Notification SubscriptionsAcknowledged = "notifications/subscriptions/acknowledged",
        ServerToClient, V2026_07_28..None, SubscriptionsAcknowledgedNotificationParams;
}

/// The methods revision `v` defines.
pub fn methods_in(v: ProtocolVersion) -> impl Iterator<Item = &'static MethodInfo> {
    ALL_METHODS.iter().filter(move |m| m.in_revision(v))
}

fn parse<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, ErrorObject> {
    parse_params(params)
}

macro_rules! message_enum {
    ($(#[$doc:meta])* $enum:ident { $($variant:ident($marker:ident)),* $(,)? }) => {
        $(#[$doc])*
        // Variants differ in size; a parsed message lives only until it is dispatched, so
        // boxing each would add an allocation per message for no gain.
        #[allow(clippy::large_enum_variant)]
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        pub enum $enum {
            $(
                #[doc = concat!("`", stringify!($marker), "`: see [`", stringify!($marker), "`].")]
                $variant(<$marker as Method>::Params),
            )*
        }

        impl $enum {
            /// Parse from a method name and raw params: `-32601` for a method this enum does
            /// not hold, `-32602` for params that do not fit.
            pub fn parse(method: &str, params: Option<&RawValue>) -> Result<Self, ErrorObject> {
                match method {
                    $(<$marker as Method>::NAME => parse(params).map($enum::$variant),)*
                    _ => Err(ErrorObject::method_not_found(method)),
                }
            }

            /// The wire name of the method.
            pub fn method(&self) -> &'static str {
                match self {
                    $($enum::$variant(_) => <$marker as Method>::NAME,)*
                }
            }

            /// The params as a JSON value.
            pub fn params_value(&self) -> serde_json::Value {
                match self {
                    $($enum::$variant(p) => serde_json::to_value(p).unwrap_or_default(),)*
                }
            }
        }
    };
}

message_enum! {
    /// A request a client sends to a server (any revision).
    ClientRequest {
        Initialize(Initialize),
        Ping(Ping),
        Discover(Discover),
        ListTools(ListTools),
        CallTool(CallTool),
        ListResources(ListResources),
        ListResourceTemplates(ListResourceTemplates),
        ReadResource(ReadResource),
        Subscribe(Subscribe),
        Unsubscribe(Unsubscribe),
        ListPrompts(ListPrompts),
        GetPrompt(GetPrompt),
        Complete(Complete),
        SetLevel(SetLevel),
        SubscriptionsListen(SubscriptionsListen),
        GetTask(GetTask),
        GetTaskPayload(GetTaskPayload),
        ListTasks(ListTasks),
        CancelTask(CancelTask),
    }
}

message_enum! {
    /// A request a server sends to a client (session era).
    ServerRequest {
        Ping(Ping),
        CreateMessage(CreateMessage),
        ListRoots(ListRoots),
        Elicit(Elicit),
        GetTask(GetTask),
        GetTaskPayload(GetTaskPayload),
        ListTasks(ListTasks),
        CancelTask(CancelTask),
    }
}

message_enum! {
    /// A notification a client sends to a server.
    ClientNotification {
        Initialized(Initialized),
        Cancelled(Cancelled),
        Progress(Progress),
        RootsListChanged(RootsListChanged),
        TaskStatus(TaskStatusChanged),
    }
}

message_enum! {
    /// A notification a server sends to a client.
    ServerNotification {
        Cancelled(Cancelled),
        Progress(Progress),
        LoggingMessage(LoggingMessage),
        ToolListChanged(ToolListChanged),
        PromptListChanged(PromptListChanged),
        ResourceListChanged(ResourceListChanged),
        ResourceUpdated(ResourceUpdated),
        ElicitationComplete(ElicitationComplete),
        TaskStatus(TaskStatusChanged),
        SubscriptionsAcknowledged(SubscriptionsAcknowledged),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_name_finds_every_method() {
        for info in ALL_METHODS {
            assert_eq!(method_info(info.name), Some(info), "{}", info.name);
        }
        assert_eq!(method_info("tools/calls"), None);
        assert_eq!(method_info(""), None);
    }

    #[test]
    fn registry_matches_revisions() {
        let names = |v| methods_in(v).map(|m| m.name).collect::<Vec<_>>();
        assert!(names(V2025_11_25).contains(&"tasks/get"));
        assert!(!names(V2026_07_28).contains(&"ping"));
        assert!(names(V2026_07_28).contains(&"server/discover"));
        assert!(!names(V2025_03_26).contains(&"elicitation/create"));
        let mut all: Vec<_> = ALL_METHODS.iter().map(|m| m.name).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), ALL_METHODS.len(), "duplicate method names");
    }

    #[test]
    fn parse_routes_and_rejects() {
        let raw =
            RawValue::from_string(r#"{"name":"echo","arguments":{"x":1}}"#.into()).expect("raw");
        let req = ClientRequest::parse("tools/call", Some(&raw)).expect("parses");
        assert_eq!(req.method(), "tools/call");
        let err = ClientRequest::parse("nope", None).expect_err("unknown");
        assert_eq!(err.code, crate::error_codes::METHOD_NOT_FOUND);
        let err = ClientRequest::parse("tools/call", None).expect_err("missing name");
        assert_eq!(err.code, crate::error_codes::INVALID_PARAMS);
    }
}
