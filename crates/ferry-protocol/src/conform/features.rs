//! Tools, list results, resources, prompts and completion.

use super::*;

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
        input_retry(&mut self.input_responses, &mut self.request_state, v)?;
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
        input_retry(&mut self.input_responses, &mut self.request_state, v)?;
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
        input_retry(&mut self.input_responses, &mut self.request_state, v)?;
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
