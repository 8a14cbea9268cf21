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
//!   2026-07-28 input requests and responses, a non-object `outputSchema` /
//!   `structuredContent` before 2026-07-28...);
//! - it **fills** members the revision requires and the superset leaves optional
//!   (`resultType: "complete"`, `ttlMs: 0`, `cacheScope: "private"` in 2026-07-28);
//! - it **converts** where the revision has an equivalent (a titled single-select enum
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

impl Conform for RequestMeta {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(
            v.has(Feature::RequestMeta),
            self.protocol_version,
            self.client_capabilities,
            self.client_info,
            self.log_level
        );
        keep_if!(v.has(Feature::Tasks), self.related_task);
        self.client_capabilities.conform(v)?;
        self.client_info.conform(v)
    }
}

impl Conform for ResultMeta {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(
            v.has(Feature::RequestMeta),
            self.server_info,
            self.subscription_id
        );
        keep_if!(v.has(Feature::Tasks), self.related_task);
        self.server_info.conform(v)
    }
}

impl Conform for NotificationMeta {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::RequestMeta), self.subscription_id);
        keep_if!(v.has(Feature::Tasks), self.related_task);
        Ok(())
    }
}

impl Conform for Implementation {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::Titles), self.title);
        keep_if!(
            v.has(Feature::Icons),
            self.description,
            self.icons,
            self.website_url
        );
        Ok(())
    }
}

impl Conform for Annotations {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v >= V2025_06_18, self.last_modified);
        Ok(())
    }
}

macro_rules! conform_content_struct {
    ($($ty:ty),*) => {$(
        impl Conform for $ty {
            fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
                keep_if!(v >= V2025_06_18, self.meta);
                self.annotations.conform(v)
            }
        }
    )*};
}
conform_content_struct!(TextContent, ImageContent, AudioContent, EmbeddedResource);

impl Conform for ResourceLink {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::ResourceLinks) {
            return reject("resource_link content", v);
        }
        keep_if!(v.has(Feature::Icons), self.icons);
        self.annotations.conform(v)
    }
}

impl Conform for ResourceContents {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        let meta = match self {
            ResourceContents::Text(t) => &mut t.meta,
            ResourceContents::Blob(b) => &mut b.meta,
        };
        keep_if!(v >= V2025_06_18, *meta);
        Ok(())
    }
}

impl Conform for ContentBlock {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        match self {
            ContentBlock::Text(c) => c.conform(v),
            ContentBlock::Image(c) => c.conform(v),
            ContentBlock::Audio(_) if !v.has(Feature::AudioContent) => reject("audio content", v),
            ContentBlock::Audio(c) => c.conform(v),
            ContentBlock::ResourceLink(c) => c.conform(v),
            ContentBlock::Resource(c) => {
                c.resource.conform(v)?;
                c.conform(v)
            }
        }
    }
}

impl Conform for SamplingContent {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        match self {
            SamplingContent::Text(c) => c.conform(v),
            SamplingContent::Image(c) => c.conform(v),
            SamplingContent::Audio(_) if !v.has(Feature::AudioContent) => {
                reject("audio content", v)
            }
            SamplingContent::Audio(c) => c.conform(v),
            SamplingContent::ToolUse(_) | SamplingContent::ToolResult(_)
                if !v.has(Feature::SamplingTools) =>
            {
                reject("tool use in sampling", v)
            }
            SamplingContent::ToolUse(_) => Ok(()),
            SamplingContent::ToolResult(c) => {
                if let Some(structured) = &c.structured_content
                    && !structured.is_object()
                    && v < V2026_07_28
                {
                    return reject("non-object structuredContent", v);
                }
                c.content.conform(v)
            }
        }
    }
}

impl Conform for SamplingContents {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if let SamplingContents::Many(blocks) = self
            && !v.has(Feature::SamplingTools)
        {
            match blocks.len() {
                1 => *self = SamplingContents::One(blocks.remove(0)),
                _ => return reject("several content blocks in one sampling message", v),
            }
        }
        match self {
            SamplingContents::One(block) => block.conform(v),
            SamplingContents::Many(blocks) => blocks.conform(v),
        }
    }
}

impl Conform for Tool {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::ToolAnnotations), self.annotations);
        keep_if!(v.has(Feature::StructuredOutput), self.output_schema);
        // Before 2026-07-28 `outputSchema` must be an object schema (`type: "object"`); a
        // tool with any other output is listed without one there, and its results without
        // `structuredContent` (see `CallToolResult`).
        if v < V2026_07_28
            && let Some(schema) = &self.output_schema
            && schema.get("type").and_then(serde_json::Value::as_str) != Some("object")
        {
            self.output_schema = None;
        }
        keep_if!(v.has(Feature::Titles), self.title, self.meta);
        keep_if!(v.has(Feature::Icons), self.icons);
        keep_if!(v.has(Feature::Tasks), self.execution);
        Ok(())
    }
}

impl Conform for CallToolRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        tasks_only(&mut self.task, v);
        keep_if!(
            v.has(Feature::InputRequired),
            self.input_responses,
            self.request_state
        );
        self.input_responses.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for CallToolResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        result_type(&mut self.result_type, v);
        // `structuredContent` duplicates `content` (tools must also return it as text), so
        // where the revision cannot carry it, it is omitted: before 2025-06-18 always, and
        // before 2026-07-28 when it is not an object (the tool's `outputSchema` is omitted
        // there too).
        let expressible = match &self.structured_content {
            Some(structured) => {
                v.has(Feature::StructuredOutput) && (structured.is_object() || v >= V2026_07_28)
            }
            None => true,
        };
        if !expressible {
            self.structured_content = None;
        }
        self.content.conform(v)?;
        self.meta.conform(v)
    }
}

macro_rules! conform_list_result {
    ($($ty:ty => $items:ident),*) => {$(
        impl Conform for $ty {
            fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
                result_type(&mut self.result_type, v);
                cache_hints(&mut self.ttl_ms, &mut self.cache_scope, v);
                self.$items.conform(v)?;
                self.meta.conform(v)
            }
        }
    )*};
}
conform_list_result!(
    ListToolsResult => tools,
    ListResourcesResult => resources,
    ListResourceTemplatesResult => resource_templates,
    ListPromptsResult => prompts,
    ReadResourceResult => contents
);

macro_rules! conform_listed_object {
    ($($ty:ty),*) => {$(
        impl Conform for $ty {
            fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
                keep_if!(v.has(Feature::Titles), self.title, self.meta);
                keep_if!(v.has(Feature::Icons), self.icons);
                self.annotations.conform(v)
            }
        }
    )*};
}
conform_listed_object!(Resource, ResourceTemplate);

impl Conform for Prompt {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::Titles), self.title, self.meta);
        keep_if!(v.has(Feature::Icons), self.icons);
        self.arguments.conform(v)
    }
}

impl Conform for PromptArgument {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::Titles), self.title);
        Ok(())
    }
}

impl Conform for PromptMessage {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        self.content.conform(v)
    }
}

impl Conform for GetPromptRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(
            v.has(Feature::InputRequired),
            self.input_responses,
            self.request_state
        );
        self.input_responses.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for GetPromptResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        result_type(&mut self.result_type, v);
        self.messages.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for ReadResourceRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(
            v.has(Feature::InputRequired),
            self.input_responses,
            self.request_state
        );
        self.input_responses.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for Reference {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if let Reference::Prompt(p) = self {
            keep_if!(v.has(Feature::Titles), p.title);
        }
        Ok(())
    }
}

impl Conform for CompleteRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::CompletionContext), self.context);
        self.reference.conform(v)?;
        self.meta.conform(v)
    }
}

/// The most completion values a result may carry ("must not exceed 100 items" in every
/// revision; `maxItems: 100` in the 2026-07-28 schema).
const MAX_COMPLETION_VALUES: usize = 100;

impl Conform for CompleteResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        result_type(&mut self.result_type, v);
        // More values than a result may carry become the first 100, with `hasMore` and the
        // real `total`: what the spec's `total` / `hasMore` are for.
        let completion = &mut self.completion;
        let count = completion.values.len();
        if count > MAX_COMPLETION_VALUES {
            completion.values.truncate(MAX_COMPLETION_VALUES);
            completion.has_more = Some(true);
            let total = completion.total.get_or_insert(0);
            *total = (*total).max(count as u64);
        }
        self.meta.conform(v)
    }
}

impl Conform for EmptyResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        result_type(&mut self.result_type, v);
        self.meta.conform(v)
    }
}

impl Conform for ClientCapabilities {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::Elicitation), self.elicitation);
        keep_if!(v.has(Feature::Tasks), self.tasks);
        keep_if!(v.has(Feature::Extensions), self.extensions);
        if let Some(roots) = &mut self.roots {
            keep_if!(v.has(Feature::RootsListChanged), roots.list_changed);
        }
        if let Some(sampling) = &mut self.sampling {
            keep_if!(
                v.has(Feature::SamplingTools),
                sampling.context,
                sampling.tools
            );
        }
        if let Some(elicitation) = &mut self.elicitation {
            keep_if!(
                v.has(Feature::UrlElicitation),
                elicitation.form,
                elicitation.url
            );
        }
        Ok(())
    }
}

impl Conform for ServerCapabilities {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::CompletionsCapability), self.completions);
        keep_if!(v.has(Feature::Tasks), self.tasks);
        keep_if!(v.has(Feature::Extensions), self.extensions);
        // `resources.subscribe` stays in 2026-07-28: it then advertises update notifications
        // through `subscriptions/listen` (`resourceSubscriptions`) instead of
        // `resources/subscribe`.
        Ok(())
    }
}

impl Conform for InitializeRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if v.era() != Era::Session {
            return reject("initialize", v);
        }
        self.capabilities.conform(v)?;
        self.client_info.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for InitializeResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if v.era() != Era::Session {
            return reject("initialize", v);
        }
        self.capabilities.conform(v)?;
        self.server_info.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for DiscoverResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::Discover) {
            return reject("server/discover", v);
        }
        result_type(&mut self.result_type, v);
        cache_hints(&mut self.ttl_ms, &mut self.cache_scope, v);
        self.capabilities.conform(v)?;
        self.meta.conform(v)
    }
}

macro_rules! conform_meta_only {
    ($($ty:ty),*) => {$(
        impl Conform for $ty {
            fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
                self.meta.conform(v)
            }
        }
    )*};
}
conform_meta_only!(
    RequestParams,
    NotificationParams,
    PaginatedRequestParams,
    ResourceRequestParams,
    ResourceUpdatedNotificationParams,
    SetLevelRequestParams,
    LoggingMessageNotificationParams
);

/// Whether `_meta` may ride on a server-to-client request or its result: in the session era
/// they are JSON-RPC messages; from 2026-07-28 they are input requests and input responses
/// inside `input_required` round trips, and the schema gives most of them no `_meta`.
fn input_meta_kept(v: ProtocolVersion) -> bool {
    v.has(Feature::ServerToClientRequests)
}

impl Conform for ListRootsResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(input_meta_kept(v), self.meta);
        self.roots.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for Root {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v >= V2025_06_18, self.meta);
        Ok(())
    }
}

impl Conform for SamplingMessage {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::SamplingTools), self.meta);
        self.content.conform(v)
    }
}

impl Conform for CreateMessageRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::SamplingTools) && (self.tools.is_some() || self.tool_choice.is_some()) {
            return reject("sampling with tools", v);
        }
        tasks_only(&mut self.task, v);
        keep_if!(input_meta_kept(v), self.meta);
        self.tools.conform(v)?;
        self.messages.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for CreateMessageResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        self.content.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for PrimitiveSchemaDefinition {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if v.has(Feature::UrlElicitation) {
            return Ok(());
        }
        // 2025-06-18: no defaults except on booleans, no multi-select, titled choices only
        // as `enum` + `enumNames`.
        match self {
            PrimitiveSchemaDefinition::String(s) => s.default = None,
            PrimitiveSchemaDefinition::Number(n) => n.default = None,
            PrimitiveSchemaDefinition::Boolean(_) => {}
            PrimitiveSchemaDefinition::UntitledSingleSelect(s) => s.default = None,
            PrimitiveSchemaDefinition::LegacyTitledEnum(s) => s.default = None,
            PrimitiveSchemaDefinition::TitledSingleSelect(s) => {
                let (values, names) = s
                    .one_of
                    .iter()
                    .map(|o| (o.value.clone(), o.title.clone()))
                    .unzip();
                *self = PrimitiveSchemaDefinition::LegacyTitledEnum(LegacyTitledEnumSchema {
                    kind: StringType,
                    title: s.title.take(),
                    description: s.description.take(),
                    values,
                    enum_names: Some(names),
                    default: None,
                });
            }
            PrimitiveSchemaDefinition::UntitledMultiSelect(_)
            | PrimitiveSchemaDefinition::TitledMultiSelect(_) => {
                return reject("multi-select elicitation fields", v);
            }
        }
        Ok(())
    }
}

impl Conform for ElicitRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        match self {
            ElicitRequestParams::Form(form) => form.conform(v),
            ElicitRequestParams::Url(url) => url.conform(v),
        }
    }
}

impl Conform for ElicitRequestFormParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::Elicitation) {
            return reject("elicitation", v);
        }
        if v.has(Feature::UrlElicitation) {
            self.mode.get_or_insert(FormMode);
        } else {
            self.mode = None;
            self.requested_schema.schema = None;
        }
        tasks_only(&mut self.task, v);
        keep_if!(input_meta_kept(v), self.meta);
        for field in self.requested_schema.properties.values_mut() {
            field.conform(v)?;
        }
        self.meta.conform(v)
    }
}

impl Conform for ElicitRequestUrlParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::UrlElicitation) {
            return reject("URL-mode elicitation", v);
        }
        if v.has(Feature::UrlElicitationRequiredError) {
            if self.elicitation_id.is_none() {
                return reject("URL elicitation without an elicitationId", v);
            }
        } else {
            self.elicitation_id = None;
        }
        tasks_only(&mut self.task, v);
        keep_if!(input_meta_kept(v), self.meta);
        self.meta.conform(v)
    }
}

impl Conform for UrlElicitationRequiredData {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::UrlElicitationRequiredError) {
            return reject("the URL-elicitation-required error", v);
        }
        self.elicitations.conform(v)
    }
}

impl Conform for ElicitResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::Elicitation) {
            return reject("elicitation", v);
        }
        if !v.has(Feature::UrlElicitation)
            && let Some(content) = &self.content
            && content.values().any(serde_json::Value::is_array)
        {
            return reject("multi-select elicitation answers", v);
        }
        keep_if!(input_meta_kept(v), self.meta);
        self.meta.conform(v)
    }
}

impl Conform for InputRequest {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        match self {
            InputRequest::CreateMessage(p) => p.conform(v),
            InputRequest::ListRoots(p) => p.conform(v),
            InputRequest::Elicit(p) => p.conform(v),
        }
    }
}

impl Conform for InputResponse {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        match self {
            InputResponse::CreateMessage(r) => r.conform(v),
            InputResponse::ListRoots(r) => r.conform(v),
            InputResponse::Elicit(r) => r.conform(v),
        }
    }
}

impl<T: Conform> Conform for indexmap::IndexMap<String, T> {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        self.values_mut().try_for_each(|item| item.conform(v))
    }
}

impl Conform for InputRequiredResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::InputRequired) {
            return reject("input_required results", v);
        }
        self.result_type = Some(ResultType::InputRequired);
        self.input_requests.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for InputResponseRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::InputRequired) {
            return reject("input responses", v);
        }
        self.input_responses.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for SubscriptionsListenRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::SubscriptionsListen) {
            return reject("subscriptions/listen", v);
        }
        self.meta.conform(v)
    }
}

impl Conform for SubscriptionsListenResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::SubscriptionsListen) {
            return reject("subscriptions/listen", v);
        }
        result_type(&mut self.result_type, v);
        self.meta.conform(v)
    }
}

impl Conform for SubscriptionsAcknowledgedNotificationParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::SubscriptionsListen) {
            return reject("subscriptions/listen", v);
        }
        self.meta.conform(v)
    }
}

impl Conform for CancelledNotificationParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if self.request_id.is_none() && !v.has(Feature::Tasks) {
            return reject("a cancellation without a requestId", v);
        }
        self.meta.conform(v)
    }
}

impl Conform for ProgressNotificationParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::ProgressMessage), self.message);
        self.meta.conform(v)
    }
}

macro_rules! conform_tasks_only {
    ($($ty:ty),*) => {$(
        impl Conform for $ty {
            fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
                if !v.has(Feature::Tasks) {
                    return reject("tasks", v);
                }
                self.meta.conform(v)
            }
        }
    )*};
}
conform_tasks_only!(
    TaskIdParams,
    CreateTaskResult,
    TaskResult,
    ListTasksResult,
    TaskStatusNotificationParams
);

impl Conform for ElicitationCompleteNotificationParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::UrlElicitationRequiredError) {
            return reject("notifications/elicitation/complete", v);
        }
        self.meta.conform(v)
    }
}

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
    fn non_object_structured_output_is_omitted_before_2026() {
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
