//! Tools: typed async functions with input schemas derived from their argument types.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use ferry_protocol::jsonrpc::{ErrorObject, quoted};
use ferry_protocol::types::{
    CallToolResult, ContentBlock, Cursor, JsonObject, ListToolsResult, Tool,
};
use ferry_protocol::{Feature, ProtocolVersion};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::builder::CacheHint;
pub(crate) use super::call_params::Arguments;
use super::context::Context;
use super::core::Server;
use super::extract::HandlerFn;
use super::list::Listed;
use super::pipeline::{Answer, Answering};
use super::registry::Registry;
use super::reply::Call;
use super::shape::{Shape, shape_of};
use super::tasks;
use super::visibility::{Rules, Visibility, visible};
use crate::engine::{HandlerResult, ResultJson};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A tool's behaviour behind its description: arguments in, result out.
///
/// The arguments are parsed when it is called, before the returned future is polled.
pub(crate) type ToolFn =
    Arc<dyn Fn(Arguments<'_>, Context) -> BoxFuture<ToolOutcome> + Send + Sync>;

/// What running a tool can come to.
pub(crate) enum ToolOutcome {
    /// The tool ran (successfully or not: failures are results with `isError`): its result
    /// shaped for the call's revision and written as JSON where the tool's future ends.
    /// (A `CallToolResult` is several hundred bytes: returned as such, it was copied at
    /// each of the three futures it came out through.)
    Result {
        /// The answer to send.
        answer: HandlerResult,
        /// Whether the result said `isError`.
        is_error: bool,
    },
    /// The arguments did not fit the tool's input schema; the message names the field.
    InvalidArguments(String),
    /// The handler could not run (an extractor refused: a server misconfiguration).
    Failed(ErrorObject),
}

/// How a tool's result is answered: in the call's revision, by this server.
struct Finish {
    version: ProtocolVersion,
    server: Server,
}

impl Finish {
    fn of(cx: &Context) -> Finish {
        Finish {
            version: cx.version,
            server: cx.server.clone(),
        }
    }

    fn result(&self, result: CallToolResult) -> ToolOutcome {
        ToolOutcome::Result {
            is_error: result.is_error == Some(true),
            answer: self.server.reply(result, self.version),
        }
    }

    /// A tool's output as its result. One text block is written as it is, without
    /// building a `CallToolResult`, followed by what the revision adds after a result's
    /// content (the stateless era names the server in `_meta` and adds `resultType`; the
    /// session era adds nothing): written once per revision, by the general path itself.
    fn output<T: IntoToolResult>(&self, output: T) -> ToolOutcome {
        let text = match output.into_text() {
            Ok(text) => text,
            Err(output) => return self.result(output.into_tool_result()),
        };
        let rest = self.server.text_result_rest(self.version, || {
            let empty = self
                .server
                .reply(CallToolResult::success(vec![]), self.version);
            empty
                .ok()
                .and_then(|json| {
                    json.get()
                        .strip_prefix(r#"{"content":[]"#)
                        .map(str::to_owned)
                })
                .unwrap_or_default()
        });
        if rest.is_empty() {
            return self.result(text.into_tool_result());
        }
        ToolOutcome::Result {
            is_error: false,
            answer: Ok(ResultJson::written(CallToolResult::text_json_then(
                &text, rest,
            ))),
        }
    }
}

/// A registered tool.
#[derive(Clone)]
pub(crate) struct ToolEntry {
    /// The tool as registered: for a typed tool without its derived schemas (see
    /// [`tool`](Self::tool)).
    head: Tool,
    /// A typed tool's schemas, written into a copy of `head` on first use.
    schemas: Option<Schemas>,
    /// That copy.
    full: OnceLock<Tool>,
    pub(crate) run: ToolFn,
}

/// How a typed tool's schemas are made, and what its arguments deserialize from.
#[derive(Clone, Copy)]
struct Schemas {
    write: fn(&mut Tool),
    args: fn() -> Shape,
}

impl ToolEntry {
    fn new(head: Tool, schemas: Option<Schemas>, run: ToolFn) -> Self {
        ToolEntry {
            head,
            schemas,
            full: OnceLock::new(),
            run,
        }
    }

    /// The tool's name, description, annotations and execution: all but a typed tool's
    /// schemas, without making them.
    pub(crate) fn head(&self) -> &Tool {
        &self.head
    }

    /// The whole description, schemas included. A typed tool's schemas are derived here,
    /// on first use (`tools/list`, the stateless era's header check), not when the tool is
    /// registered: schemars and `serde_json`'s maps then run after `initialize` is
    /// answered, not before, and a server of many tools starts without deriving them all.
    pub(crate) fn tool(&self) -> &Tool {
        match self.schemas {
            None => &self.head,
            Some(schemas) => self.full.get_or_init(|| {
                let mut tool = self.head.clone();
                (schemas.write)(&mut tool);
                // Building checked the arguments' shape from serde; a hand-written
                // `JsonSchema` could still disagree with it.
                if tool.input_schema.get("type").and_then(|t| t.as_str()) != Some("object") {
                    tracing::error!(tool = %tool.name, "the tool's input schema is not an object");
                }
                tool
            }),
        }
    }
}

impl ToolEntry {
    /// What is wrong with the tool's input schema, if anything: it must be an object.
    pub(crate) fn schema_problem(&self) -> Option<String> {
        // Arguments that are a struct or a map are an object: known from serde without
        // deriving the schema, which then waits for its first use.
        if self
            .schemas
            .is_some_and(|schemas| (schemas.args)() == Shape::Object)
        {
            return None;
        }
        let tool = self.tool();
        match tool.input_schema.get("type") {
            Some(serde_json::Value::String(t)) if t == "object" => None,
            other => Some(format!(
                "tool {:?}'s input schema must have \"type\": \"object\" (arguments are a JSON \
                 object), not {}; take a struct of named fields, or no arguments parameter",
                tool.name,
                other.map_or_else(|| "no type".to_owned(), |t| t.to_string())
            )),
        }
    }
}

/// Write `A`'s input schema, and `O`'s output schema unless one was given, into `tool`.
fn derive_schemas<A: JsonSchema + 'static, O: IntoToolResult>(tool: &mut Tool) {
    tool.input_schema = schema_of_args::<A>();
    if tool.output_schema.is_none() {
        tool.output_schema = O::output_schema();
    }
}

/// A tool's result, from a handler's return value.
///
/// Implemented for `String`, `&'static str`, numbers and `bool` (one text block),
/// [`CallToolResult`] (as is), [`Json`] (structured content plus its text), and
/// `Result<T, E>` where an `Err` becomes an `isError` result with `E`'s message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    note = "return a String, a number, a CallToolResult, Json<T> (structured content of a \
            Serialize + JsonSchema type), or a Result of one of these"
)]
pub trait IntoToolResult {
    /// The result.
    fn into_tool_result(self) -> CallToolResult;

    /// The JSON Schema of the structured content, if the type has one.
    fn output_schema() -> Option<JsonObject> {
        None
    }

    /// The text of a result that is one plain text block and nothing else (written
    /// without building a [`CallToolResult`]); `Err(self)` otherwise, the default.
    fn into_text(self) -> Result<String, Self>
    where
        Self: Sized,
    {
        Err(self)
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(self)])
    }

    fn into_text(self) -> Result<String, Self> {
        Ok(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(self)])
    }
}

/// Numbers and booleans: one text block with the value as Rust prints it.
macro_rules! display_result {
    ($($ty:ty),*) => {
        $(
            impl IntoToolResult for $ty {
                fn into_tool_result(self) -> CallToolResult {
                    CallToolResult::success(vec![ContentBlock::text(self.to_string())])
                }

                fn into_text(self) -> Result<String, Self> {
                    Ok(self.to_string())
                }
            }
        )*
    };
}

display_result!(
    f32, f64, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, bool
);

/// Structured tool output: becomes `structuredContent`, a text block with the same JSON
/// (for clients that read only text), and the tool's `outputSchema`.
///
/// Before 2026-07-28 structured output must be an object: a `T` that is not one (a `Vec`,
/// a number, a string) is sent to clients of 2025-06-18 and 2025-11-25 as
/// `{"result": value}`, with the object schema around `T`'s (marked
/// `x-fastmcp-wrap-result`, which FastMCP's client and Ferry's `Client::call_tool_as`
/// unwrap).
///
/// ```
/// use ferry::protocol::ProtocolVersion;
/// use ferry::server::{Json, Server, TestClient};
///
/// async fn tags(_: ()) -> Json<Vec<String>> {
///     Json(vec!["red".into(), "blue".into()])
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::builder("tags", "1").tool("tags", "The tags", tags).build();
/// let old = TestClient::connect(&server, ProtocolVersion::V2025_06_18).await.unwrap();
/// let result = old.call_tool("tags", serde_json::json!({})).await.unwrap();
/// assert_eq!(result["structuredContent"], serde_json::json!({"result": ["red", "blue"]}));
/// let new = TestClient::connect(&server, ProtocolVersion::V2026_07_28).await.unwrap();
/// let result = new.call_tool("tags", serde_json::json!({})).await.unwrap();
/// assert_eq!(result["structuredContent"], serde_json::json!(["red", "blue"]));
/// # }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> CallToolResult {
        match serde_json::to_value(&self.0) {
            Ok(value) => CallToolResult {
                content: vec![ContentBlock::text(value.to_string())],
                structured_content: Some(value),
                ..Default::default()
            },
            Err(e) => CallToolResult::error(format!("the tool's output did not serialize: {e}")),
        }
    }

    fn output_schema() -> Option<JsonObject> {
        Some(schema_for::<T>())
    }
}

impl<T: IntoToolResult, E: std::fmt::Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(error) => CallToolResult::error(error.to_string()),
        }
    }

    fn output_schema() -> Option<JsonObject> {
        T::output_schema()
    }

    fn into_text(self) -> Result<String, Self> {
        match self {
            Ok(value) => value.into_text().map_err(Ok),
            Err(error) => Err(Err(error)),
        }
    }
}

/// The input schema of a tool or prompt whose arguments are an `A`. `()` (a handler without
/// an arguments parameter) takes none: the spec's recommended schema for a tool without
/// parameters, not schemars' `{"type":"null"}`, which no client can call.
pub(crate) fn schema_of_args<A: JsonSchema + 'static>() -> JsonObject {
    if std::any::TypeId::of::<A>() == std::any::TypeId::of::<()>() {
        let mut object = JsonObject::new();
        object.insert("type".into(), "object".into());
        object.insert("additionalProperties".into(), false.into());
        return object;
    }
    schema_for::<A>()
}

/// What a tool's arguments `A` deserialize from; `()` (no arguments) takes an empty object,
/// as [`schema_of_args`] says.
fn shape_of_args<A: DeserializeOwned + 'static>() -> Shape {
    if std::any::TypeId::of::<A>() == std::any::TypeId::of::<()>() {
        return Shape::Object;
    }
    shape_of::<A>()
}

/// The JSON Schema of `T`, with every subschema inlined (no `$ref` clients must follow).
pub(crate) fn schema_for<T: JsonSchema>() -> JsonObject {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut object = match schema.to_value() {
        serde_json::Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    // Everything is inlined, so an empty `$defs` may remain; it is noise to clients.
    object.remove("$defs");
    if !object.contains_key("type") {
        object.insert("type".into(), "object".into());
    }
    object
}

/// Build a tool entry from a handler of typed arguments and extractors.
pub(crate) fn typed_tool<M, H>(tool: Tool, handler: H) -> ToolEntry
where
    H: HandlerFn<M>,
    H::Output: IntoToolResult,
{
    let handler = Arc::new(handler);
    let run: ToolFn = Arc::new(move |arguments: Arguments<'_>, cx| {
        let args = arguments.parse::<H::Args>();
        let handler = Arc::clone(&handler);
        let finish = Finish::of(&cx);
        Box::pin(async move {
            match args {
                Ok(args) => match handler.call(args, cx).await {
                    Ok(output) => finish.output(output),
                    Err(error) => ToolOutcome::Failed(error),
                },
                Err(message) => ToolOutcome::InvalidArguments(message),
            }
        })
    });
    let schemas = Schemas {
        write: derive_schemas::<H::Args, H::Output>,
        args: shape_of_args::<H::Args>,
    };
    ToolEntry::new(tool, Some(schemas), run)
}

/// Build a tool entry from a function of the raw `arguments` object, keeping the tool's
/// input schema exactly as given.
pub(crate) fn raw_tool<F, Fut, R>(tool: Tool, f: F) -> ToolEntry
where
    F: Fn(JsonObject, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResult + 'static,
{
    let f = Arc::new(f);
    let run: ToolFn = Arc::new(move |arguments: Arguments<'_>, cx| {
        let f = Arc::clone(&f);
        let arguments = arguments.into_object();
        let finish = Finish::of(&cx);
        Box::pin(async move {
            let result = f(arguments, cx).await;
            finish.output(result)
        })
    });
    ToolEntry::new(tool, None, run)
}

/// `-32602` for a tool that does not exist (or that the caller may not see), naming it in
/// `data` as a missing resource's error names its URI: a client tells "no such tool" from
/// bad arguments in every revision.
pub(crate) fn unknown_tool(name: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("unknown tool {:?}", quoted(name)))
        .with_data(serde_json::json!({ "name": name }))
}

/// How an argument error is reported in `version`: `-32602` up to 2025-06-18, an
/// `isError` result from 2025-11-25 (SEP-1303: the model can correct itself).
fn argument_error_is_result(version: ProtocolVersion) -> bool {
    version.has(Feature::Icons)
}

impl Listed for ToolEntry {
    const LIST: &'static str = "tools";
    type Item = Tool;
    type Result = ListToolsResult;

    fn registry(server: &Server) -> &Registry<Self> {
        server.tools()
    }

    fn rules(visibility: &Visibility) -> &Rules {
        &visibility.tools
    }

    fn item(&self) -> Tool {
        self.tool().clone()
    }

    fn result(tools: Vec<Tool>, next_cursor: Option<Cursor>, cache: CacheHint) -> ListToolsResult {
        ListToolsResult {
            tools,
            next_cursor,
            ttl_ms: cache.ttl_ms(),
            cache_scope: cache.scope(),
            ..Default::default()
        }
    }
}

/// `tools/call`: the tool's future, its arguments parsed (see [`Answer`] for its answer).
/// An unknown tool -> `-32602` ([`unknown_tool`]); a tool that requires a task called without one (`as_task`
/// false) in a revision with tasks -> `-32601`.
///
/// The lookup is done at once and the returned future holds only what the running tool
/// needs (it lives in every in-flight request's task, and is moved with it).
pub(crate) fn call(
    server: &Server,
    call: Call,
    name: &str,
    arguments: Arguments<'_>,
    cx: Context,
    as_task: bool,
) -> Result<BoxFuture<ToolOutcome>, ErrorObject> {
    // Only the handler is needed: cloning the whole entry would deep-copy the tool's
    // description and schemas on every call.
    let found = server.tools().read(|tools| {
        tools
            .get(name)
            .map(|entry| (Arc::clone(&entry.run), tasks::requires_task(entry.head())))
    });
    let found = found.filter(|_| visible(&server.visibility().tools, name, &cx));
    let Some((run, requires_task)) = found else {
        return Err(unknown_tool(name));
    };
    if requires_task && !as_task && call.version.has(Feature::Tasks) {
        return Err(ErrorObject::method_not_found(&format!(
            "tools/call of {name:?} without a task (the tool requires one)"
        )));
    }
    Ok(run(arguments, cx))
}

/// A tool's outcome as the answer: invalid arguments -> the error the revision prescribes;
/// a failing tool -> an `isError` result (in the stateless era `-32021` if it failed for
/// want of a client capability).
impl Answer for ToolOutcome {
    fn answer(self, to: &Answering<'_>) -> HandlerResult {
        match self {
            ToolOutcome::Result {
                answer,
                is_error: true,
            } => match to.missing_capability() {
                Some(error) => Err(error),
                None => answer,
            },
            ToolOutcome::Result { answer, .. } => answer,
            ToolOutcome::InvalidArguments(message)
                if argument_error_is_result(to.call().version) =>
            {
                to.result(CallToolResult::error(message))
            }
            ToolOutcome::InvalidArguments(message) => Err(ErrorObject::invalid_params(message)),
            ToolOutcome::Failed(error) => Err(error),
        }
    }
}
