//! Whole messages: which methods a revision has, and their params.

use super::*;

/// A method enum refuses a method the revision lacks, and (with `sent_in`) a method this
/// side cannot send in the revision.
macro_rules! conform_message_enum {
    ($enum:ident { $($variant:ident),* $(,)? } $(, sent_in: $sent_in:expr)?) => {
        impl Conform for $enum {
            fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
                let method = self.method();
                let known = crate::methods::method_info(method).is_some_and(|m| m.in_revision(v));
                $(let known = known && $sent_in(&*self, v);)?
                if !known {
                    return reject(method, v);
                }
                match self {
                    $($enum::$variant(p) => p.conform(v),)*
                }
            }
        }
    };
}

conform_message_enum!(ClientRequest {
    Initialize,
    Ping,
    Discover,
    ListTools,
    CallTool,
    ListResources,
    ListResourceTemplates,
    ReadResource,
    Subscribe,
    Unsubscribe,
    ListPrompts,
    GetPrompt,
    Complete,
    SetLevel,
    SubscriptionsListen,
    GetTask,
    GetTaskPayload,
    ListTasks,
    CancelTask,
});
/// Server-to-client requests exist only in the session era: from 2026-07-28 sampling, roots
/// and elicitation are input requests inside an `input_required` result.
fn server_request_sent_in(_: &ServerRequest, v: ProtocolVersion) -> bool {
    v.has(Feature::ServerToClientRequests)
}

/// A client reports progress only on requests the server sent it, so not from 2026-07-28.
fn client_notification_sent_in(notification: &ClientNotification, v: ProtocolVersion) -> bool {
    !matches!(notification, ClientNotification::Progress(_))
        || v.has(Feature::ServerToClientRequests)
}

conform_message_enum!(ServerRequest {
    Ping,
    CreateMessage,
    ListRoots,
    Elicit,
    GetTask,
    GetTaskPayload,
    ListTasks,
    CancelTask,
}, sent_in: server_request_sent_in);
conform_message_enum!(ClientNotification {
    Initialized,
    Cancelled,
    Progress,
    RootsListChanged,
    TaskStatus,
}, sent_in: client_notification_sent_in);
conform_message_enum!(ServerNotification {
    Cancelled,
    Progress,
    LoggingMessage,
    ToolListChanged,
    PromptListChanged,
    ResourceListChanged,
    ResourceUpdated,
    ElicitationComplete,
    TaskStatus,
    SubscriptionsAcknowledged,
});
