//! Shaping one superset value for one revision.
//!
//! **The design decision.** Ferry has one set of Rust types for all six revisions (a
//! superset: every field any revision defines), rather than a module of types per revision.
//! Users write a tool once and serve it to clients of every revision; a per-revision type
//! zoo would make them convert by hand. Parsing is lenient, so any revision's messages
//! parse into the superset. Sending goes through [`Conform::conform`], which shapes a value
//! in place for the revision the peer speaks:
//!
//! - it **omits** optional members the revision lacks (`title` before 2025-06-18, `icons`
//!   before 2025-11-25, `execution` outside 2025-11-25, `resultType` / `ttlMs` /
//!   `cacheScope` before 2026-07-28, stateless `_meta` keys in the session era, `_meta` on
//!   2026-07-28 input requests and responses, an `outputSchema` that does not say its
//!   type before 2026-07-28...);
//! - it **fills** members the revision requires and the superset leaves optional
//!   (`resultType: "complete"`, `ttlMs: 0`, `cacheScope: "private"` in 2026-07-28);
//! - it **converts** where the revision has an equivalent (a non-object tool output
//!   wrapped as `{"result": value}` before 2026-07-28, its schema too; a titled single-select enum
//!   becomes `enum` + `enumNames` for 2025-06-18, losslessly; more completion values than
//!   any revision carries, 100, become the first 100 with `hasMore` and the real `total`);
//! - it **rejects** with [`NotInRevision`] what the revision cannot express at all (audio
//!   content in 2024-11-05, resource links before 2025-06-18, sampling with tools before
//!   2025-11-25, tasks outside 2025-11-25, a method the revision does not have...). Silently
//!   dropping content would change meaning; the caller decides what to do instead.
//!
//! The tests validate conformed values against each revision's `schema.json`, with
//! `additionalProperties: false` added to every closed object, so an omission that is
//! missing here fails a test.

use std::borrow::Cow;

use crate::methods::{ClientNotification, ClientRequest, ServerNotification, ServerRequest};
use crate::types::*;
use crate::version::ProtocolVersion::{self, *};
use crate::version::{Era, Feature};

/// A value that cannot be expressed in a revision.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} is not part of MCP {version}")]
pub struct NotInRevision {
    /// What cannot be expressed.
    pub what: Cow<'static, str>,
    /// The revision.
    pub version: ProtocolVersion,
}

/// Shape a value in place for one revision. See the module docs.
pub trait Conform {
    /// Omit what `version` lacks, fill what it requires, reject what it cannot express.
    fn conform(&mut self, version: ProtocolVersion) -> Result<(), NotInRevision>;
}

fn reject<T>(
    what: impl Into<Cow<'static, str>>,
    version: ProtocolVersion,
) -> Result<T, NotInRevision> {
    Err(NotInRevision {
        what: what.into(),
        version,
    })
}

/// Set each listed `Option` field to `None` unless `$keep` holds.
macro_rules! keep_if {
    ($keep:expr, $($field:expr),+ $(,)?) => {
        if !$keep {
            $($field = None;)+
        }
    };
}

impl<T: Conform> Conform for Option<T> {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        match self {
            Some(inner) => inner.conform(v),
            None => Ok(()),
        }
    }
}

impl<T: Conform> Conform for Box<T> {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        (**self).conform(v)
    }
}

impl<T: Conform> Conform for Vec<T> {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        self.iter_mut().try_for_each(|item| item.conform(v))
    }
}

impl Conform for serde_json::Value {
    fn conform(&mut self, _: ProtocolVersion) -> Result<(), NotInRevision> {
        Ok(())
    }
}

/// Types that are the same in every revision that has them.
macro_rules! conform_unchanged {
    ($($ty:ty),* $(,)?) => {$(
        impl Conform for $ty {
            fn conform(&mut self, _: ProtocolVersion) -> Result<(), NotInRevision> {
                Ok(())
            }
        }
    )*};
}
conform_unchanged!(
    Icon,
    Role,
    LoggingLevel,
    ProgressToken,
    crate::jsonrpc::RequestId,
    ResultType,
    CacheScope,
    ToolAnnotations,
    ToolExecution,
    ModelHint,
    ModelPreferences,
    ToolChoice,
    TaskMetadata,
    RelatedTaskMetadata,
    Task,
    TaskStatus,
    SubscriptionFilter,
    Completion,
    CompletionArgument,
    CompletionContext,
    String,
    JsonObject,
    UnsupportedProtocolVersionData,
    MissingRequiredClientCapabilityData,
);

/// Results in 2026-07-28 carry `resultType`; earlier ones do not.
fn result_type(field: &mut Option<ResultType>, v: ProtocolVersion) {
    if v.has(Feature::ResultType) {
        field.get_or_insert(ResultType::Complete);
    } else {
        *field = None;
    }
}

/// Cacheable results in 2026-07-28 carry `ttlMs` and `cacheScope` (defaults: immediately
/// stale, private); earlier ones do not.
fn cache_hints(ttl: &mut Option<u64>, scope: &mut Option<CacheScope>, v: ProtocolVersion) {
    if v.has(Feature::CacheHints) {
        ttl.get_or_insert(0);
        scope.get_or_insert(CacheScope::Private);
    } else {
        *ttl = None;
        *scope = None;
    }
}

fn tasks_only(task: &mut Option<TaskMetadata>, v: ProtocolVersion) {
    keep_if!(v.has(Feature::Tasks), *task);
}

/// A request a client may retry with answers to `input_required` (2026-07-28): its
/// `inputResponses` and `requestState` exist only from that revision.
fn input_retry(
    responses: &mut Option<InputResponses>,
    state: &mut Option<String>,
    v: ProtocolVersion,
) -> Result<(), NotInRevision> {
    keep_if!(v.has(Feature::InputRequired), *responses, *state);
    responses.conform(v)
}

/// Whether `_meta` may ride on a server-to-client request or its result: in the session era
/// they are JSON-RPC messages; from 2026-07-28 they are input requests and input responses
/// inside `input_required` round trips, and the schema gives most of them no `_meta`.
fn input_meta_kept(v: ProtocolVersion) -> bool {
    v.has(Feature::ServerToClientRequests)
}

mod client_requests;
mod content;
mod features;
pub use features::{WRAPPED_MARKER, WRAPPED_RESULT};
mod lifecycle;
mod messages;
mod meta;
mod stateless;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_fields_follow_revisions() {
        let mut tool = Tool {
            title: Some("T".into()),
            icons: Some(vec![Icon::default()]),
            annotations: Some(ToolAnnotations::default()),
            execution: Some(ToolExecution::default()),
            output_schema: Some(Default::default()),
            ..Tool::new("t", Default::default())
        };
        let mut old = tool.clone();
        old.conform(V2024_11_05).expect("conforms");
        assert_eq!(old, Tool::new("t", Default::default()));
        tool.conform(V2026_07_28).expect("conforms");
        assert!(tool.execution.is_none() && tool.icons.is_some() && tool.title.is_some());
    }

    #[test]
    fn results_get_result_type_only_when_stateless() {
        let mut r = ListToolsResult::default();
        r.conform(V2026_07_28).expect("conforms");
        assert_eq!(r.result_type, Some(ResultType::Complete));
        assert_eq!(
            (r.ttl_ms, r.cache_scope),
            (Some(0), Some(CacheScope::Private))
        );
        r.conform(V2025_06_18).expect("conforms");
        assert_eq!((r.result_type, r.ttl_ms, r.cache_scope), (None, None, None));
    }

    #[test]
    fn inexpressible_content_is_rejected() {
        let mut r = CallToolResult::success(vec![ContentBlock::Audio(AudioContent::default())]);
        assert!(r.conform(V2024_11_05).is_err());
        assert!(r.conform(V2025_03_26).is_ok());
    }

    #[test]
    fn non_object_structured_output_is_wrapped_before_2026() {
        let schema = |kind: &str| {
            let mut schema = JsonObject::new();
            schema.insert("type".into(), kind.into());
            schema
        };
        let mut tool = Tool {
            output_schema: Some(schema("array")),
            ..Tool::new("t", schema("object"))
        };
        let mut result = CallToolResult {
            structured_content: Some(serde_json::json!([1, 2])),
            ..CallToolResult::success(vec![ContentBlock::text("[1, 2]")])
        };
        for v in [V2025_06_18, V2025_11_25] {
            let (mut t, mut r) = (tool.clone(), result.clone());
            t.conform(v).expect("conforms");
            r.conform(v).expect("conforms");
            let wrapped = serde_json::Value::Object(t.output_schema.expect("wrapped"));
            assert_eq!(wrapped["type"], "object", "{v}");
            assert_eq!(wrapped["properties"]["result"]["type"], "array", "{v}");
            assert_eq!(
                r.structured_content,
                Some(serde_json::json!({"result": [1, 2]}))
            );
        }
        for v in [V2024_11_05, V2025_03_26] {
            let (mut t, mut r) = (tool.clone(), result.clone());
            t.conform(v).expect("conforms");
            r.conform(v).expect("conforms");
            assert_eq!((t.output_schema, r.structured_content), (None, None), "{v}");
        }
        tool.conform(V2026_07_28).expect("conforms");
        result.conform(V2026_07_28).expect("conforms");
        assert!(tool.output_schema.is_some() && result.structured_content.is_some());
        let mut object_output = Tool {
            output_schema: Some(schema("object")),
            ..Tool::new("t", schema("object"))
        };
        object_output.conform(V2025_06_18).expect("conforms");
        assert!(object_output.output_schema.is_some());
    }

    #[test]
    fn a_wrapped_output_schema_keeps_its_definitions_where_its_refs_point() {
        let serde_json::Value::Object(schema) = serde_json::json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": "#/$defs/Node"},
            "$defs": {"Node": {"type": "object"}}
        }) else {
            unreachable!()
        };
        let mut tool = Tool {
            output_schema: Some(schema),
            ..Tool::new("t", JsonObject::new())
        };
        tool.conform(V2025_11_25).expect("conforms");
        let wrapped = serde_json::Value::Object(tool.output_schema.expect("wrapped"));
        assert_eq!(wrapped["$defs"]["Node"]["type"], "object");
        assert!(wrapped["$schema"].is_string());
        let inner = &wrapped["properties"]["result"];
        assert_eq!(inner["items"]["$ref"], "#/$defs/Node");
        assert!(inner.get("$defs").is_none() && inner.get("$schema").is_none());
        // A schema that does not say its type cannot be wrapped: omitted.
        let mut untyped = Tool {
            output_schema: Some(JsonObject::new()),
            ..Tool::new("t", JsonObject::new())
        };
        untyped.conform(V2025_11_25).expect("conforms");
        assert!(untyped.output_schema.is_none());
    }

    #[test]
    fn completion_values_are_capped_at_100() {
        let mut r = CompleteResult {
            completion: Completion {
                values: (0..150).map(|i| i.to_string()).collect(),
                ..Default::default()
            },
            ..Default::default()
        };
        r.conform(V2024_11_05).expect("conforms");
        assert_eq!(r.completion.values.len(), 100);
        assert_eq!(
            (r.completion.total, r.completion.has_more),
            (Some(150), Some(true))
        );
    }

    #[test]
    fn input_requests_and_responses_have_no_meta_when_stateless() {
        let mut roots = ListRootsResult {
            roots: vec![Root {
                uri: "file:///a".into(),
                name: None,
                meta: Some(JsonObject::new()),
            }],
            meta: Some(ResultMeta::default()),
        };
        let mut old = roots.clone();
        old.conform(V2024_11_05).expect("conforms");
        assert_eq!(
            (old.meta.is_some(), old.roots[0].meta.is_some()),
            (true, false)
        );
        roots.conform(V2026_07_28).expect("conforms");
        assert_eq!(
            (roots.meta.is_some(), roots.roots[0].meta.is_some()),
            (false, true)
        );
        let mut elicit = ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
            meta: Some(ResultMeta::default()),
        };
        elicit.conform(V2026_07_28).expect("conforms");
        assert!(elicit.meta.is_none());
        let mut params = InputResponseRequestParams::default();
        assert!(params.conform(V2025_11_25).is_err());
        assert!(params.conform(V2026_07_28).is_ok());
    }

    #[test]
    fn resource_subscribe_capability_is_kept_in_every_revision() {
        let caps = ServerCapabilities {
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: None,
            }),
            ..Default::default()
        };
        for v in ProtocolVersion::ALL {
            let mut conformed = caps.clone();
            conformed.conform(v).expect("conforms");
            assert_eq!(conformed, caps, "{v}");
        }
    }

    #[test]
    fn server_requests_and_client_progress_are_session_only() {
        let mut roots = ServerRequest::ListRoots(RequestParams::default());
        assert!(roots.conform(V2025_11_25).is_ok());
        assert!(roots.conform(V2026_07_28).is_err());
        let mut progress = ClientNotification::Progress(ProgressNotificationParams {
            progress_token: ProgressToken::Number(1),
            progress: 1.0,
            total: None,
            message: None,
            meta: None,
        });
        assert!(progress.conform(V2025_11_25).is_ok());
        assert!(progress.conform(V2026_07_28).is_err());
        let mut cancelled = ClientNotification::Cancelled(CancelledNotificationParams {
            request_id: Some(1.into()),
            ..Default::default()
        });
        assert!(cancelled.conform(V2026_07_28).is_ok());
    }
}
