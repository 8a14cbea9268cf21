//! Attribute macros for [Ferry](https://docs.rs/ferry)'s MCP servers: `#[tool]`,
//! `#[prompt]` and `#[resource]` on async functions, `#[tools]` (alias `#[server]`) on an
//! `impl` block. Use them through `ferry` (feature `macros`, on by default):
//! `use ferry::{tool, tools, prompt, resource};`.
//!
//! They are sugar over `ferry::server::ServerBuilder` and expand to its public calls
//! (`tool_with`, `prompt_with`, `resource`, `resource_template`) and nothing else: a
//! server written with them answers byte for byte what the same server written with the
//! builder answers, and the builder stays the way to do what they do not.
//!
//! ```
//! use ferry::server::{Json, Server, State};
//! use ferry::{tool, tools};
//!
//! /// Add two numbers.
//! #[tool(read_only, idempotent)]
//! async fn add(
//!     /// The first term.
//!     a: f64,
//!     /// The second term.
//!     b: f64,
//! ) -> String {
//!     (a + b).to_string()
//! }
//!
//! struct Notes(std::sync::Mutex<Vec<String>>);
//!
//! #[tools]
//! impl Notes {
//!     /// Keep a note.
//!     #[tool]
//!     async fn note(&self, text: String) -> String {
//!         let mut notes = self.0.lock().unwrap();
//!         notes.push(text);
//!         format!("{} notes", notes.len())
//!     }
//!
//!     /// Every note.
//!     #[tool(read_only)]
//!     async fn notes(&self) -> Json<Vec<String>> {
//!         Json(self.0.lock().unwrap().clone())
//!     }
//! }
//!
//! let server = Server::builder("calc", "1.0.0")
//!     .with(add_tool())
//!     .with(Notes(Default::default()))
//!     .build();
//! assert_eq!(server.tool_names(), ["add", "note", "notes"]);
//! ```
//!
//! # Parameters
//!
//! A handler's parameters are sorted by these rules, the same for every macro:
//!
//! - **Injected** (taken from the request, not from its arguments): a parameter whose
//!   type's last path segment is `Context`, `ToolContext`, `State`, `Progress`, `Cancel`,
//!   `Peer`, `Meta`, `ClientCaps`, `SessionData` or `Auth` (and `Option<Auth>`), or one marked
//!   `#[inject]` (any `ferry::server::FromContext` type of the program's own). They work as
//!   in the builder: a missing `State<T>` fails `ServerBuilder::build`. At most five.
//! - **`#[args]`** (tools and prompts): one parameter whose type is the whole arguments
//!   object (`Deserialize + JsonSchema`, its schema the input schema), as the builder
//!   takes it. It cannot be mixed with plain arguments.
//! - **Arguments** (tools and prompts): every other parameter is one property of the
//!   arguments object, named like the parameter (`r#type` is `type`). They become the
//!   fields of a struct the macro derives `Deserialize` and `JsonSchema` for, named
//!   `{Function}Args` (the schema's `title`); a parameter's doc comment is its property's
//!   `description`, and `#[serde(..)]` / `#[schemars(..)]` on a parameter go on its field
//!   (`#[serde(default)]`, `#[schemars(range(min = 1))]`...). `Option<T>` arguments are
//!   optional. `#[arg]` makes a parameter an argument even when its type is named like an
//!   extractor. A handler without arguments has the builder's schema for none:
//!   `{"type":"object","additionalProperties":false}`.
//! - **Resources** take the variables of their URI template (by name, any `FromStr` type;
//!   `Option<T>` for one the URI may leave out), `#[uri]` (the URI read, a `String`), and
//!   injected parameters.
//!
//! The function's doc comment is the description (`description = ".."` overrides it).
//! Functions stay as written and callable; they must be `async` and not generic.

use proc_macro::TokenStream;

mod attrs;
mod docs;
mod handler;
mod item_fn;
mod item_impl;
mod uri;

use attrs::Kind;

/// A tool: an async function whose arguments are deserialized from `tools/call`.
///
/// Beside the function, it generates `{name}_tool()`, of the function's visibility,
/// returning an `impl ferry::server::Register` to give to `ServerBuilder::with`. (On a
/// method, mark the `impl` block `#[tools]` instead.)
///
/// The result goes through `ferry::server::IntoToolResult`: a `String` (one text block),
/// `Json<T>` (`structuredContent` and the tool's `outputSchema`), a `CallToolResult`, or
/// a `Result` of one of these whose `Err` is an `isError` result. See the crate docs for
/// how parameters are read.
///
/// | option | sets |
/// |---|---|
/// | `name = ".."` | the tool's name (default: the function's) |
/// | `title = ".."` | `title` |
/// | `description = ".."` | `description` (default: the doc comment) |
/// | `read_only`, `destructive`, `idempotent`, `open_world` (`= true\|false`) | `annotations`' hints |
/// | `task_support = "forbidden"\|"optional"\|"required"` | `execution.taskSupport` |
/// | `icon = "src"`, `icon(src = .., mime_type = .., sizes = [..], theme = "light"\|"dark")`, `icons = [..]` | `icons` |
/// | `visible = predicate` | who sees the tool: a `Fn(&Context) -> bool` (a function's path or a closure), as `ServerBuilder::tool_visible_if` |
/// | `crate = path` | how the expansion names Ferry (default `::ferry`) |
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use ferry::protocol::ProtocolVersion;
/// use ferry::server::{Json, Progress, Server, TestClient};
/// use ferry::tool;
/// use ferry::serde_json::json;
///
/// #[derive(serde::Deserialize, ferry::schemars::JsonSchema)]
/// #[schemars(crate = "ferry::schemars")]
/// struct Division {
///     /// The dividend.
///     a: f64,
///     /// The divisor.
///     b: f64,
/// }
///
/// #[derive(serde::Serialize, ferry::schemars::JsonSchema)]
/// #[schemars(crate = "ferry::schemars")]
/// struct Quotient {
///     value: f64,
/// }
///
/// /// Divide `a` by `b`.
/// #[tool(read_only, title = "Division", icon = "https://example.com/divide.png")]
/// async fn divide(#[args] d: Division, progress: Progress) -> Result<Json<Quotient>, String> {
///     if let Some(progress) = &progress.0 {
///         let _ = progress.report(1.0, Some(1.0), None).await;
///     }
///     if d.b == 0.0 {
///         return Err("division by zero".into());
///     }
///     Ok(Json(Quotient { value: d.a / d.b }))
/// }
///
/// let server = Server::builder("calc", "1").with(divide_tool()).build();
/// let client = TestClient::connect(&server, ProtocolVersion::V2025_11_25).await.unwrap();
/// let result = client.call_tool("divide", json!({"a": 1, "b": 4})).await.unwrap();
/// assert_eq!(result["structuredContent"], json!({"value": 0.25}));
/// let result = client.call_tool("divide", json!({"a": 1, "b": 0})).await.unwrap();
/// assert_eq!(result["isError"], true);
/// # });
/// ```
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    item_fn::expand(Kind::Tool, args.into(), item.into()).into()
}

/// A prompt: an async function of its arguments (strings: `String`, `Option<String>`, or
/// anything that deserializes from a string) returning its messages.
///
/// Beside the function, it generates `{name}_prompt()`, returning an
/// `impl ferry::server::Register`. The prompt's declared arguments come from the
/// parameters (a parameter's doc comment is the argument's description; `Option` ones
/// are not required). The result goes through `ferry::server::IntoPromptResult`: a
/// `String` (one user message), `Vec<PromptMessage>`, a `GetPromptResult`, or a
/// `Result` of one of these.
///
/// Options: `name`, `title`, `description`, `icon`/`icons`, `visible`, `crate`, as for
/// [`tool`].
///
/// ```
/// use ferry::prompt;
/// use ferry::server::Server;
///
/// /// Ask for a review of some code.
/// #[prompt(title = "Code review")]
/// async fn review(
///     /// The code.
///     code: String,
///     /// Its language, when known.
///     language: Option<String>,
/// ) -> String {
///     let language = language.unwrap_or_else(|| "this".into());
///     format!("Review {language} code:\n{code}")
/// }
///
/// let server = Server::builder("reviews", "1").with(review_prompt()).build();
/// # let _ = server;
/// ```
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    item_fn::expand(Kind::Prompt, args.into(), item.into()).into()
}

/// A resource, or a resource template when its URI has `{variables}` (RFC 6570): an
/// async function returning the contents.
///
/// `#[resource("uri")]` (or `uri = ".."`); the function's parameters are the template's
/// variables, by name (parsed with `FromStr`: a value that does not parse is answered
/// `-32602`, a variable the URI leaves out is "not found" unless the parameter is an
/// `Option`), `#[uri] uri: String` for the URI read, and extractors. Beside the
/// function, it generates `{name}_resource()`, returning an `impl ferry::server::Register`.
///
/// The result goes through `ferry::server::IntoReadResult`: a `String` (text), bytes
/// (`Vec<u8>`, `bytes::Bytes`: a blob), `Json<T>` (JSON text), an `Option` of these
/// (`None`: not found), a `ferry::server::ReadResult`, or a `Result` of these. Contents
/// that do not say their MIME type get `mime_type`'s, or the output's default
/// (`text/plain`, `application/octet-stream`, `application/json`), which the resource is
/// then also listed with.
///
/// | option | sets |
/// |---|---|
/// | `"uri"` or `uri = ".."` | the URI, or URI template (required) |
/// | `name = ".."` | `name` (default: the function's) |
/// | `title`, `description`, `mime_type` | the same fields |
/// | `size = N` | `size` (a static resource) |
/// | `icon`/`icons`, `visible`, `crate` | as for [`tool`] (`visible` as `resource_visible_if`, or `template_visible_if` for a template) |
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use ferry::protocol::types::ResourceContents;
/// use ferry::resource;
/// use ferry::server::{Json, ReadResult, ResourceError, Server, State, TestClient};
///
/// struct Notes(Vec<String>);
///
/// /// A note, by number.
/// #[resource("notes://{id}", mime_type = "text/markdown")]
/// async fn note(id: usize, notes: State<Notes>) -> Option<String> {
///     notes.0.get(id).cloned()
/// }
///
/// /// How many notes there are.
/// #[resource("notes://count")]
/// async fn count(notes: State<Notes>) -> Json<usize> {
///     Json(notes.0.len())
/// }
///
/// /// The last note, with contents built by hand.
/// #[resource("notes://last")]
/// async fn last(#[uri] uri: String, notes: State<Notes>) -> ReadResult {
///     match notes.0.last() {
///         Some(text) => Ok(vec![ResourceContents::text(uri, "text/plain", text)]),
///         None => Err(ResourceError::NotFound(uri)),
///     }
/// }
///
/// let server = Server::builder("notes", "1")
///     .state(Notes(vec!["first".into()]))
///     .with((note_resource(), count_resource(), last_resource()))
///     .build();
/// let client = TestClient::new(&server).await.unwrap();
/// let first = client.read_resource("notes://0").await.unwrap();
/// assert_eq!(first.text(), "first");
/// assert_eq!(first.contents[0].mime_type(), Some("text/markdown"));
/// let count = client.read_resource("notes://count").await.unwrap();
/// assert_eq!(count.json::<usize>().unwrap(), 1);
/// assert_eq!(count.contents[0].mime_type(), Some("application/json"));
/// assert!(client.read_resource("notes://7").await.is_err());
/// # });
/// ```
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    item_fn::expand(Kind::Resource, args.into(), item.into()).into()
}

/// The handlers of a value: on an `impl` block, registers its methods marked `#[tool]`,
/// `#[prompt]` and `#[resource(..)]` (options as for the free functions' macros).
///
/// It implements `ferry::server::Register` for the type (`builder.with(value)`, which
/// puts the value in an `Arc`) and `ferry::server::RegisterShared` (`builder.with(arc)`,
/// for a program that keeps a handle on the same value). Every handler holds a clone of
/// that `Arc`. A method takes `&self`, `self: Arc<Self>`, or no receiver (an associated
/// function); `self` by value and `&mut self` are refused (the handlers share the value
/// and run concurrently: keep what changes behind a lock or an atomic). Other methods are
/// left alone. One `#[tools]` block per type; not on a generic or trait `impl`.
/// `#[tools(crate = path)]` names Ferry for every handler of the block.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use ferry::server::{Context, Server};
/// use ferry::tools;
///
/// #[derive(Default)]
/// struct Counter(AtomicU64);
///
/// #[tools]
/// impl Counter {
///     /// Count a hit.
///     #[tool]
///     async fn hit(&self, cx: Context) -> String {
///         let hits = self.0.fetch_add(1, Ordering::Relaxed) + 1;
///         format!("{hits} hits (session {})", cx.session_key())
///     }
///
///     /// Start over.
///     #[tool(destructive, idempotent)]
///     async fn reset(&self) -> String {
///         self.0.store(0, Ordering::Relaxed);
///         "reset".into()
///     }
/// }
///
/// let counter = Arc::new(Counter::default());
/// let server = Server::builder("counter", "1").with(Arc::clone(&counter)).build();
/// assert_eq!(server.tool_names(), ["hit", "reset"]);
/// ```
#[proc_macro_attribute]
pub fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    item_impl::expand(args.into(), item.into()).into()
}

/// The same as [`macro@tools`], for an `impl` block that is the whole server.
///
/// ```
/// use ferry::server::Server;
///
/// struct Calculator;
///
/// #[ferry::server]
/// impl Calculator {
///     /// Add two numbers.
///     #[tool]
///     async fn add(&self, a: i64, b: i64) -> String {
///         (a + b).to_string()
///     }
/// }
///
/// let server = Server::builder("calculator", "1").with(Calculator).build();
/// assert_eq!(server.tool_names(), ["add"]);
/// ```
#[proc_macro_attribute]
pub fn server(args: TokenStream, item: TokenStream) -> TokenStream {
    item_impl::expand(args.into(), item.into()).into()
}
