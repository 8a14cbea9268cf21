//! Tools, list results, resources, prompts and completion.

use super::*;

impl Conform for Tool {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::ToolAnnotations), self.annotations);
        keep_if!(v.has(Feature::StructuredOutput), self.output_schema);
        // Before 2026-07-28 `outputSchema` must be an object schema (`type: "object"`). An
        // output of another type (an array, a string...) is described there wrapped as
        // `{"result": value}`, as its results' `structuredContent` is (see
        // `CallToolResult`); a schema that does not say its type is omitted.
        if v < V2026_07_28
            && let Some(schema) = self.output_schema.take()
        {
            self.output_schema = match schema.get("type") {
                Some(serde_json::Value::String(t)) if t == "object" => Some(schema),
                Some(t) if !names_type(t, "object") => Some(wrap_output_schema(schema)),
                _ => None,
            };
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
        // before 2025-06-18 it is omitted. Until 2026-07-28 it must be an object: any other
        // value is sent as `{"result": value}`, as the tool's `outputSchema` describes it
        // there.
        if !v.has(Feature::StructuredOutput) {
            self.structured_content = None;
        } else if v < V2026_07_28
            && let Some(structured) = &mut self.structured_content
            && !structured.is_object()
        {
            let value = structured.take();
            *structured = serde_json::json!({ WRAPPED_RESULT: value });
        }
        self.content.conform(v)?;
        self.meta.conform(v)
    }
}

/// The member a non-object tool output is wrapped in before 2026-07-28.
pub const WRAPPED_RESULT: &str = "result";

/// The annotation of a wrapped output schema (FastMCP's: its client, and Ferry's, unwrap
/// `structuredContent` when the tool's `outputSchema` carries it).
pub const WRAPPED_MARKER: &str = "x-fastmcp-wrap-result";

/// Whether a schema's `type` (a name, or a list of names) names `name`.
fn names_type(types: &serde_json::Value, name: &str) -> bool {
    match types {
        serde_json::Value::String(t) => t == name,
        serde_json::Value::Array(ts) => ts.iter().any(|t| t.as_str() == Some(name)),
        _ => true,
    }
}

/// A non-object output schema as the object schema of `{"result": value}`: its `$defs`
/// (and `definitions`, and `$schema`) moved to the top, where its `$ref`s point.
fn wrap_output_schema(mut schema: JsonObject) -> JsonObject {
    let mut wrapped = JsonObject::new();
    for key in ["$schema", "$defs", "definitions"] {
        if let Some(value) = schema.remove(key) {
            wrapped.insert(key.into(), value);
        }
    }
    wrapped.insert("type".into(), "object".into());
    wrapped.insert(
        "properties".into(),
        serde_json::json!({ WRAPPED_RESULT: schema }),
    );
    wrapped.insert("required".into(), serde_json::json!([WRAPPED_RESULT]));
    wrapped.insert(WRAPPED_MARKER.into(), true.into());
    wrapped
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
