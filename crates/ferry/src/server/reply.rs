//! Shaping results for the revision a request is answered in.

use ferry_protocol::conform::Conform;
use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::*;
use ferry_protocol::{Feature, ProtocolVersion};
use serde::Serialize;

use crate::engine::{HandlerResult, ResultJson};

/// How one request is to be answered: in which revision. (Its `_meta` goes to the
/// handler's [`Context`](super::Context), moved, not copied.)
#[derive(Clone, Copy)]
pub(crate) struct Call {
    pub(crate) version: ProtocolVersion,
}

/// A result type with a `_meta` of its own.
pub(crate) trait HasResultMeta: Serialize {
    /// The result's `_meta`, created if absent.
    fn result_meta(&mut self) -> &mut ResultMeta;

    /// The result as JSON text.
    fn to_json(&self) -> serde_json::Result<ResultJson> {
        ResultJson::from_value(self)
    }
}

impl HasResultMeta for CallToolResult {
    fn result_meta(&mut self) -> &mut ResultMeta {
        self.meta.get_or_insert_with(Default::default)
    }

    /// Written without serde's escaper: the result of every tool call.
    fn to_json(&self) -> serde_json::Result<ResultJson> {
        CallToolResult::to_json(self).map(ResultJson::written)
    }
}

impl HasResultMeta for SubscriptionsListenResult {
    fn result_meta(&mut self) -> &mut ResultMeta {
        &mut self.meta
    }
}

macro_rules! has_result_meta {
    ($($ty:ty),* $(,)?) => {$(
        impl HasResultMeta for $ty {
            fn result_meta(&mut self) -> &mut ResultMeta {
                self.meta.get_or_insert_with(Default::default)
            }
        }
    )*};
}

has_result_meta!(
    EmptyResult,
    InitializeResult,
    DiscoverResult,
    ListToolsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult,
    ListPromptsResult,
    GetPromptResult,
    CompleteResult,
    InputRequiredResult,
    CreateTaskResult,
    TaskResult,
    ListTasksResult,
);

/// Shape `value` for the call's revision and serialize it once. In the stateless era the
/// server names itself in every result's `_meta`.
pub(crate) fn reply<T>(
    mut value: T,
    version: ProtocolVersion,
    server: &Implementation,
) -> HandlerResult
where
    T: Conform + Serialize + HasResultMeta,
{
    if version.has(Feature::RequestMeta) {
        value.result_meta().server_info = Some(server.clone());
    }
    value
        .conform(version)
        .map_err(|e| ErrorObject::internal_error(format!("the result cannot be sent: {e}")))?;
    value.to_json().map_err(ErrorObject::internal_error)
}
