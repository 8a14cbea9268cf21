//! Building a server, changing it at runtime, and running it on a transport.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ferry_protocol::VersionSet;
use ferry_protocol::types::{
    CacheScope, Implementation, JsonObject, Prompt, Resource, ResourceTemplate, Tool,
};

use super::completion::{Completers, CompletionRequest, Target, completer};
use super::context::Context;
use super::core::Server;
use super::extract::HandlerFn;
use super::prompts::{IntoPromptResult, PromptEntry, typed_prompt};
use super::registry::{Change, Entries, Registry};
use super::request_state::{DEFAULT_REQUEST_STATE_TTL, Sealer};
use super::resources::{
    IntoReadResult, ReadHandler, ResourceEntry, TemplateEntry, default_mime_type, reader,
};
use super::session;
use super::stats::ServerStats;
use super::tools::{IntoToolResult, ToolEntry, raw_tool, typed_tool};
use super::uri_template::UriTemplate;
use crate::engine::{EngineConfig, EngineHandle, Transport};

/// The default number of items per page of a list result.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// What a builder gathers: the server's configuration and first registrations. At build it
/// becomes the private state of the [`Server`] (see `core.rs`), reached only through its
/// API there.
pub(super) struct Settings {
    pub(super) info: Implementation,
    pub(super) instructions: Option<String>,
    pub(super) versions: VersionSet,
    pub(super) engine: EngineConfig,
    pub(super) page_size: usize,
    /// The bytes (as JSON) one session's data may take.
    pub(super) session_data_limit: usize,
    pub(super) logging: bool,
    pub(super) tools: Registry<ToolEntry>,
    pub(super) resources: Registry<ResourceEntry>,
    pub(super) templates: Registry<TemplateEntry>,
    pub(super) prompts: Registry<PromptEntry>,
    pub(super) completers: Completers,
    /// Caching hints of list results and `server/discover` (2026-07-28).
    pub(super) list_cache: CacheHint,
    /// Caching hints of `resources/read` results (2026-07-28).
    pub(super) read_cache: CacheHint,
    /// Capabilities declared even while nothing of the kind is registered.
    pub(super) declared: Declared,
    /// Application state handlers reach with [`Context::state`], by type.
    pub(super) states: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// Which callers see which items (per-caller visibility).
    pub(super) visibility: super::visibility::Visibility,
    /// The middleware every request goes through, in order (none: the direct path).
    pub(super) middleware: Vec<Arc<dyn super::middleware::Middleware>>,
    /// Run when a client says its roots changed.
    pub(super) roots_changed: Option<RootsHook>,
    /// Run for each message another instance sent (`Server::tell_instances`).
    pub(super) instance_message: Option<InstanceHook>,
}

/// A hook run for a message from another instance: `(server, topic, payload)`.
pub(super) type InstanceHook = Arc<dyn Fn(&Server, &str, &str) + Send + Sync>;

/// A hook run when a client says its roots changed.
pub(super) type RootsHook =
    Arc<dyn Fn(super::RootsChanged) -> super::BoxFuture<'static, ()> + Send + Sync>;

/// Builds a [`Server`].
pub struct ServerBuilder {
    settings: Settings,
    request_state_key: Option<[u8; 32]>,
    request_state_ttl: Duration,
    /// The application state each handler takes: `(handler, state type)`, checked by
    /// [`build`](Self::build) against what [`state`](Self::state) was given.
    needs: Vec<(String, (TypeId, &'static str))>,
    /// Mistakes found while registering (a name given twice, a template that does not
    /// parse), reported by [`build`](Self::build).
    problems: Vec<String>,
}

/// Why a server could not be built: every mistake found, each naming the handler.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the server cannot be built: {}", .problems.join("; "))]
pub struct BuildError {
    problems: Vec<String>,
}

impl BuildError {
    /// Each mistake, in the order found.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.settings.info)
            .finish_non_exhaustive()
    }
}

/// Insert an entry whose name must be new; the mistake otherwise.
fn insert_new<T>(map: &mut Entries<T>, kind: &str, name: String, entry: T) -> Result<(), String> {
    if map.contains_key(&name) {
        return Err(format!("{kind} {name:?} is registered twice"));
    }
    map.insert(name, entry);
    Ok(())
}

/// The application state of `needs` that `has` says is missing, as mistakes.
fn missing_states<'a>(
    has: impl Fn(TypeId) -> bool,
    needs: impl IntoIterator<Item = (&'a str, (TypeId, &'static str))>,
) -> Vec<String> {
    needs
        .into_iter()
        .filter(|(_, (id, _))| !has(*id))
        .map(|(handler, (_, name))| {
            format!(
                "{handler} takes State<{name}>, but no {name} was given to the builder's `state`"
            )
        })
        .collect()
}

impl Server {
    /// Start building a server with its name and version (`serverInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            settings: Settings {
                info: Implementation::new(name, version),
                instructions: None,
                versions: VersionSet::all(),
                engine: EngineConfig::default(),
                page_size: DEFAULT_PAGE_SIZE,
                session_data_limit: super::session_data::DEFAULT_SESSION_DATA_BYTES,
                logging: true,
                tools: Registry::new(Entries::default()),
                resources: Registry::new(Entries::default()),
                templates: Registry::new(Entries::default()),
                prompts: Registry::new(Entries::default()),
                completers: Completers::new(),
                states: HashMap::new(),
                list_cache: CacheHint::default(),
                read_cache: CacheHint::default(),
                declared: Declared::default(),
                visibility: Default::default(),
                middleware: Vec::new(),
                roots_changed: None,
                instance_message: None,
            },
            request_state_key: None,
            request_state_ttl: DEFAULT_REQUEST_STATE_TTL,
            needs: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// Serve one connection. The returned handle's task ends when the client hangs up and
    /// everything queued for it has been written.
    pub fn serve(&self, transport: Transport) -> EngineHandle {
        session::serve(self.clone(), transport, None)
    }

    /// Serve this process's stdin and stdout until the client closes stdin. A client that
    /// stops reading stdout for the engine's `write_timeout` is let go: an error of kind
    /// `TimedOut` once its work has ended.
    pub async fn serve_stdio(&self) -> std::io::Result<()> {
        let (transport, watch) = crate::engine::stdio_watched(self.engine_config());
        self.serve(transport)
            .task
            .await
            .map_err(std::io::Error::other)?;
        match watch.and_then(|watch| watch.timed_out()) {
            Some(after) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "the client read nothing for {} s (the write timeout): it was let go",
                    after.as_secs_f64()
                ),
            )),
            None => Ok(()),
        }
    }

    /// Live counters: connections and requests served.
    pub fn stats(&self) -> ServerStats {
        self.counters().snapshot()
    }

    /// The names of the registered tools, in registration order.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools().snapshot().entries.keys().cloned().collect()
    }

    /// Add a tool while serving (see [`ServerBuilder::tool`]); connected clients get
    /// `notifications/tools/list_changed`. Replaces a tool of the same name.
    ///
    /// # Panics
    ///
    /// If the tool could not have been built: its arguments' schema is not an object, or
    /// it takes a [`State`](super::State) the server was not given.
    pub fn add_tool<M, H>(&self, name: &str, description: &str, f: H)
    where
        H: HandlerFn<M>,
        H::Output: IntoToolResult,
    {
        let entry = typed_tool(Tool::described(name, description), f);
        let what = format!("tool {name:?}");
        let mut problems = missing_states(
            |id| self.has_state(id),
            H::required_states().into_iter().map(|s| (what.as_str(), s)),
        );
        problems.extend(entry.schema_problem());
        assert!(problems.is_empty(), "{}", problems.join("; "));
        self.tools().edit(|m| m.insert(name.to_owned(), entry));
        self.changed(Change::Tools);
    }

    /// Remove a tool while serving; returns whether it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.tools().edit(|m| m.shift_remove(name).is_some());
        if removed {
            self.changed(Change::Tools);
        }
        removed
    }

    /// Add a static resource while serving (see [`ServerBuilder::resource`]).
    ///
    /// # Panics
    ///
    /// If the reader takes a [`State`](super::State) the server was not given.
    pub fn add_resource<M, R>(&self, mut resource: Resource, read: R)
    where
        R: ReadHandler<M>,
        R::Output: IntoReadResult,
    {
        let what = format!("resource {:?}", resource.uri);
        let problems = missing_states(
            |id| self.has_state(id),
            R::required_states().into_iter().map(|s| (what.as_str(), s)),
        );
        assert!(problems.is_empty(), "{}", problems.join("; "));
        default_mime_type::<R::Output>(&mut resource.mime_type);
        let entry = ResourceEntry {
            read: reader(read, resource.mime_type.clone()),
            resource,
        };
        self.resources()
            .edit(|m| m.insert(entry.resource.uri.clone(), entry));
        self.changed(Change::Resources);
    }

    /// Remove a static resource while serving; returns whether it existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.resources().edit(|m| m.shift_remove(uri).is_some());
        if removed {
            self.changed(Change::Resources);
        }
        removed
    }

    /// Add a prompt while serving (see [`ServerBuilder::prompt`]).
    ///
    /// # Panics
    ///
    /// If the prompt takes a [`State`](super::State) the server was not given.
    pub fn add_prompt<M, H>(&self, name: &str, description: &str, f: H)
    where
        H: HandlerFn<M>,
        H::Output: IntoPromptResult,
    {
        let what = format!("prompt {name:?}");
        let problems = missing_states(
            |id| self.has_state(id),
            H::required_states().into_iter().map(|s| (what.as_str(), s)),
        );
        assert!(problems.is_empty(), "{}", problems.join("; "));
        let entry = typed_prompt(described_prompt(name, description), f);
        self.prompts().edit(|m| m.insert(name.to_owned(), entry));
        self.changed(Change::Prompts);
    }

    /// Remove a prompt while serving; returns whether it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.prompts().edit(|m| m.shift_remove(name).is_some());
        if removed {
            self.changed(Change::Prompts);
        }
        removed
    }

    /// Tell every connected client that the tool, prompt and resource lists changed: call it
    /// when what a caller may see changes (a grant given or taken away, for the
    /// predicates of [`ServerBuilder::tool_visible_if`] and its siblings), so that clients
    /// list again and get their new view.
    pub fn visibility_changed(&self) {
        self.changed(Change::Tools);
        self.changed(Change::Prompts);
        self.changed(Change::Resources);
    }

    /// Tell subscribed clients that the contents of `uri` changed
    /// (`notifications/resources/updated`), on every instance sharing this server's
    /// sessions.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.changed(Change::ResourceUpdated(uri.into()));
    }

    /// [`notify_resource_updated`](Self::notify_resource_updated) for this instance's
    /// clients only: for a change every instance sees by itself (a clock, a file they all
    /// read), which each would otherwise also tell the others.
    pub fn notify_resource_updated_here(&self, uri: &str) {
        self.changed_here(Change::ResourceUpdated(uri.into()));
    }

    /// Send `payload` under `topic` to the other instances of this server, whose
    /// [`ServerBuilder::on_instance_message`] hook gets it; nothing where no transport
    /// shares the sessions (one instance). Best effort: an instance that is down, or too
    /// far behind, misses it.
    pub fn tell_instances(&self, topic: &str, payload: &str) {
        self.send_outbound(crate::engine::BackendChange::Message {
            topic: topic.to_owned(),
            payload: payload.to_owned(),
        });
    }
}

/// Caching hints of one kind of result.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CacheHint {
    ttl_ms: Option<u64>,
    scope: Option<CacheScope>,
}

impl CacheHint {
    fn new(ttl: Duration, scope: CacheScope) -> Self {
        CacheHint {
            ttl_ms: Some(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
            scope: Some(scope),
        }
    }

    pub(crate) fn ttl_ms(self) -> Option<u64> {
        self.ttl_ms
    }

    pub(crate) fn scope(self) -> Option<CacheScope> {
        self.scope
    }
}

/// Capabilities declared by the builder regardless of registrations.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Declared {
    pub(super) tools: bool,
    pub(super) resources: bool,
    pub(super) prompts: bool,
}

fn described_prompt(name: &str, description: &str) -> Prompt {
    Prompt {
        name: name.to_owned(),
        description: Some(description.to_owned()),
        ..Default::default()
    }
}

impl ServerBuilder {
    /// Usage guidance for the model (`instructions`).
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.settings.instructions = Some(instructions.into());
        self
    }

    /// The display name (`serverInfo.title`, from 2025-06-18).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.settings.info.title = Some(title.into());
        self
    }

    /// The revisions to speak. Default: all ([`VersionSet::all`]).
    pub fn versions(mut self, versions: VersionSet) -> Self {
        self.settings.versions = versions;
        self
    }

    /// Engine limits. Default: [`EngineConfig::default`].
    pub fn engine(mut self, config: EngineConfig) -> Self {
        self.settings.engine = config;
        self
    }

    /// Items per page of `tools/list`, `resources/list`, `resources/templates/list` and
    /// `prompts/list`. Default: [`DEFAULT_PAGE_SIZE`].
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.settings.page_size = page_size.max(1);
        self
    }

    /// The most bytes (as JSON, keys included) one session's [`SessionData`] may take;
    /// an update beyond it fails. Default: [`DEFAULT_SESSION_DATA_BYTES`].
    ///
    /// [`SessionData`]: super::SessionData
    /// [`DEFAULT_SESSION_DATA_BYTES`]: super::DEFAULT_SESSION_DATA_BYTES
    pub fn session_data_limit(mut self, bytes: usize) -> Self {
        self.settings.session_data_limit = bytes;
        self
    }

    /// Declare the `logging` capability, as a server does by default: clients may set a
    /// level, and [`Context::log`] sends `notifications/message`.
    #[deprecated(
        note = "the `logging` capability is declared by default; `without_logging` turns it off"
    )]
    pub fn logging(mut self) -> Self {
        self.settings.logging = true;
        self
    }

    /// Do not declare the `logging` capability (declared by default): `logging/setLevel`
    /// is then refused as an unknown method, and [`Context::log`] sends nothing and
    /// returns `false`.
    ///
    /// ```
    /// use ferry::protocol::ProtocolVersion;
    /// use ferry::server::{Server, TestClient};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let quiet = Server::builder("quiet", "1").without_logging().build();
    /// let client = TestClient::connect(&quiet, ProtocolVersion::V2025_06_18).await.unwrap();
    /// let refused = client
    ///     .request("logging/setLevel", serde_json::json!({"level": "info"}))
    ///     .await;
    /// assert!(refused.is_err());
    /// # }
    /// ```
    pub fn without_logging(mut self) -> Self {
        self.settings.logging = false;
        self
    }

    /// Add a tool: a plain async function of its typed arguments and a [`Context`].
    ///
    /// The input schema comes from `A` (inlined, no `$ref`); arguments are checked against
    /// `A` before the function runs. A name registered twice, an `A` whose schema is not
    /// an object, or a [`State`](super::State) the server was not given is a mistake
    /// [`try_build`](Self::try_build) reports as a [`BuildError`] (and
    /// [`build`](Self::build) panics with), all of them at once.
    ///
    /// ```
    /// use ferry::server::Server;
    ///
    /// let error = Server::builder("twice", "1")
    ///     .tool("echo", "Echo", |_: ()| async { "one" })
    ///     .tool("echo", "Echo again", |_: ()| async { "two" })
    ///     .try_build()
    ///     .unwrap_err();
    /// assert!(error.to_string().contains("\"echo\""), "{error}");
    /// ```
    pub fn tool<M, H>(self, name: &str, description: &str, f: H) -> Self
    where
        H: HandlerFn<M>,
        H::Output: IntoToolResult,
    {
        self.tool_with(Tool::described(name, description), f)
    }

    /// Add a tool with a full description (title, annotations, icons...). The input schema
    /// is replaced by the one derived from `A`. Mistakes are reported by
    /// [`try_build`](Self::try_build), as for [`tool`](Self::tool).
    pub fn tool_with<M, H>(mut self, tool: Tool, f: H) -> Self
    where
        H: HandlerFn<M>,
        H::Output: IntoToolResult,
    {
        let name = tool.name.clone();
        self.need(format!("tool {name:?}"), H::required_states());
        let entry = typed_tool(tool, f);
        self.insert_tool(name, entry)
    }

    /// Note the application state a handler takes, for [`build`](Self::build) to check.
    fn need(&mut self, handler: String, states: Vec<(TypeId, &'static str)>) {
        self.needs
            .extend(states.into_iter().map(|state| (handler.clone(), state)));
    }

    fn insert_tool(mut self, name: String, entry: ToolEntry) -> Self {
        if let Err(problem) = self
            .settings
            .tools
            .edit(|m| insert_new(m, "tool", name, entry))
        {
            self.problems.push(problem);
        }
        self
    }

    /// Add a tool whose input schema is given verbatim (`tool.input_schema`: `$defs`,
    /// `$ref`, any JSON Schema 2020-12), with a handler of the raw `arguments` object. For
    /// tools defined at runtime (proxies, bridges, schemas loaded from files). The
    /// arguments are not checked against the schema: the handler validates what it needs.
    /// A name registered twice is a mistake [`try_build`](Self::try_build) reports.
    pub fn raw_tool<F, Fut, R>(self, tool: Tool, f: F) -> Self
    where
        F: Fn(JsonObject, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult + 'static,
    {
        let name = tool.name.clone();
        let entry = raw_tool(tool, f);
        self.insert_tool(name, entry)
    }

    /// Add a static resource, read by `read`: an async function of extractors (see
    /// [`ReadHandler`]) returning the contents — a `String`, bytes, [`Json`](super::Json),
    /// a [`ReadResult`](super::ReadResult)... (see [`IntoReadResult`]), typed with the
    /// resource's `mime_type` (which, when not given, is the output's default:
    /// `text/plain` for a `String`...). A URI registered twice, or a
    /// [`State`](super::State) the server was not given, is a mistake
    /// [`try_build`](Self::try_build) reports.
    ///
    /// ```
    /// use ferry::protocol::types::Resource;
    /// use ferry::server::Server;
    ///
    /// let server = Server::builder("demo", "1")
    ///     .resource(
    ///         Resource::new("readme://md", "readme").mime_type("text/markdown"),
    ///         || async { "# Demo" },
    ///     )
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn resource<M, R>(mut self, mut resource: Resource, read: R) -> Self
    where
        R: ReadHandler<M>,
        R::Output: IntoReadResult,
    {
        let uri = resource.uri.clone();
        self.need(format!("resource {uri:?}"), R::required_states());
        default_mime_type::<R::Output>(&mut resource.mime_type);
        let entry = ResourceEntry {
            read: reader(read, resource.mime_type.clone()),
            resource,
        };
        if let Err(problem) = self
            .settings
            .resources
            .edit(|m| insert_new(m, "resource", uri, entry))
        {
            self.problems.push(problem);
        }
        self
    }

    /// Add a resource template: `read` gets the URI and the variables it matched
    /// (RFC 6570) and extractors (see [`ReadHandler`]), and returns the contents of that
    /// URI as a static resource's reader does (see [`IntoReadResult`]), typed with the
    /// template's `mime_type`. A template that does not parse or is registered twice is a
    /// mistake [`try_build`](Self::try_build) reports.
    ///
    /// ```
    /// use ferry::protocol::types::ResourceTemplate;
    /// use ferry::server::{Server, TemplateVars};
    ///
    /// async fn greeting(_uri: String, vars: TemplateVars) -> String {
    ///     format!("Hello, {}!", vars["name"])
    /// }
    ///
    /// let server = Server::builder("demo", "1")
    ///     .resource_template(ResourceTemplate::new("greetings://{name}", "greeting"), greeting)
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn resource_template<M, R>(mut self, mut template: ResourceTemplate, read: R) -> Self
    where
        R: ReadHandler<M>,
        R::Output: IntoReadResult,
    {
        let key = template.uri_template.clone();
        self.need(format!("resource template {key:?}"), R::required_states());
        let matcher = match UriTemplate::parse(&template.uri_template) {
            Ok(matcher) => matcher,
            Err(e) => {
                self.problems
                    .push(format!("resource template {key:?} does not parse: {e}"));
                return self;
            }
        };
        default_mime_type::<R::Output>(&mut template.mime_type);
        let entry = TemplateEntry {
            read: reader(read, template.mime_type.clone()),
            template,
            matcher,
        };
        if let Err(problem) = self
            .settings
            .templates
            .edit(|m| insert_new(m, "resource template", key, entry))
        {
            self.problems.push(problem);
        }
        self
    }

    /// Add a prompt: an async function of its typed arguments (fields `String` or
    /// `Option<String>`; the declared arguments come from the type) returning its
    /// messages (see [`IntoPromptResult`]). A name registered twice, or a
    /// [`State`](super::State) the server was not given, is a mistake
    /// [`try_build`](Self::try_build) reports.
    pub fn prompt<M, H>(self, name: &str, description: &str, f: H) -> Self
    where
        H: HandlerFn<M>,
        H::Output: IntoPromptResult,
    {
        self.prompt_with(described_prompt(name, description), f)
    }

    /// Add a prompt with a full description (title, icons...). Its arguments are replaced
    /// by the ones derived from `A`.
    pub fn prompt_with<M, H>(mut self, prompt: Prompt, f: H) -> Self
    where
        H: HandlerFn<M>,
        H::Output: IntoPromptResult,
    {
        let name = prompt.name.clone();
        self.need(format!("prompt {name:?}"), H::required_states());
        let entry = typed_prompt(prompt, f);
        if let Err(problem) = self
            .settings
            .prompts
            .edit(|m| insert_new(m, "prompt", name, entry))
        {
            self.problems.push(problem);
        }
        self
    }

    /// Run `hook` when a session-era client says its roots changed
    /// (`notifications/roots/list_changed`), in a task of its own, so that it may ask for
    /// them again with [`RootsChanged::list_roots`](super::RootsChanged::list_roots).
    /// (A stateless-era client sends its roots with each request that needs them.)
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    ///
    /// use ferry::protocol::types::Root;
    /// use ferry::server::{RootsChanged, Server};
    ///
    /// let known: Arc<Mutex<Vec<Root>>> = Arc::default();
    /// let keep = known.clone();
    /// let server = Server::builder("workspace", "1")
    ///     .on_roots_changed(move |changed: RootsChanged| {
    ///         let keep = keep.clone();
    ///         async move {
    ///             if let Ok(listed) = changed.list_roots().await {
    ///                 *keep.lock().unwrap() = listed.roots;
    ///             }
    ///         }
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn on_roots_changed<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(super::RootsChanged) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.settings.roots_changed = Some(Arc::new(move |changed| Box::pin(hook(changed))));
        self
    }

    /// Run `hook` for each message another instance of this server sends with
    /// [`Server::tell_instances`] (instances that share their sessions through a session
    /// store, Redis, hear each other): to apply there a change made on one instance, say
    /// (a tool added while serving). Changes the hook makes to the server (`add_tool`...)
    /// are announced to this instance's clients only, not sent on again.
    ///
    /// ```
    /// use ferry::server::Server;
    ///
    /// let server = Server::builder("demo", "1.0.0")
    ///     .on_instance_message(|server, topic, payload| {
    ///         if topic == "demo/tools" && payload == "remove-echo" {
    ///             server.remove_tool("echo");
    ///         }
    ///     })
    ///     .build();
    /// // On one instance: remove it here, and tell the others.
    /// server.remove_tool("echo");
    /// server.tell_instances("demo/tools", "remove-echo");
    /// ```
    pub fn on_instance_message<F>(mut self, hook: F) -> Self
    where
        F: Fn(&Server, &str, &str) + Send + Sync + 'static,
    {
        self.settings.instance_message = Some(Arc::new(hook));
        self
    }

    /// Run `middleware` around every request and notification (see
    /// [`Middleware`](super::Middleware)): the first given sees a request first and its
    /// reply last.
    pub fn middleware(mut self, middleware: impl super::middleware::Middleware) -> Self {
        self.settings.middleware.push(Arc::new(middleware));
        self
    }

    /// Show the tool `name` only to callers for whom `visible` is true: to the others it is
    /// absent from `tools/list` and unknown (`-32602`) when called. The predicate sees the
    /// request's [`Context`] (the OAuth claims over HTTP with `http-auth`: see
    /// `ferry::http::auth::has_scope`); it must be quick, it runs for every list and call.
    /// When what a caller may see changes, call [`Server::visibility_changed`].
    ///
    /// ```
    /// use ferry::server::{Context, Server};
    ///
    /// fn staff(cx: &Context) -> bool {
    ///     cx.meta.other.get("example.com/role").and_then(|r| r.as_str()) == Some("staff")
    /// }
    ///
    /// let server = Server::builder("shop", "1")
    ///     .tool("price", "A price", |_: ()| async { "3" })
    ///     .tool("refund", "Refund an order", |_: ()| async { "done" })
    ///     .tool_visible_if("refund", staff)
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn tool_visible_if(
        mut self,
        name: &str,
        visible: impl Fn(&Context) -> bool + Send + Sync + 'static,
    ) -> Self {
        let rules = &mut self.settings.visibility.tools;
        rules.insert(name.to_owned(), Arc::new(visible));
        self
    }

    /// Show the prompt `name` only to callers for whom `visible` is true (see
    /// [`tool_visible_if`](Self::tool_visible_if)).
    pub fn prompt_visible_if(
        mut self,
        name: &str,
        visible: impl Fn(&Context) -> bool + Send + Sync + 'static,
    ) -> Self {
        let rules = &mut self.settings.visibility.prompts;
        rules.insert(name.to_owned(), Arc::new(visible));
        self
    }

    /// Show the resource `uri` only to callers for whom `visible` is true: to the others it
    /// is absent from `resources/list` and not found when read (see
    /// [`tool_visible_if`](Self::tool_visible_if)).
    pub fn resource_visible_if(
        mut self,
        uri: &str,
        visible: impl Fn(&Context) -> bool + Send + Sync + 'static,
    ) -> Self {
        let rules = &mut self.settings.visibility.resources;
        rules.insert(uri.to_owned(), Arc::new(visible));
        self
    }

    /// Show the resource template `uri_template` only to callers for whom `visible` is
    /// true: to the others it is absent from `resources/templates/list` and matches no URI
    /// they read (see [`tool_visible_if`](Self::tool_visible_if)).
    pub fn template_visible_if(
        mut self,
        uri_template: &str,
        visible: impl Fn(&Context) -> bool + Send + Sync + 'static,
    ) -> Self {
        let rules = &mut self.settings.visibility.templates;
        rules.insert(uri_template.to_owned(), Arc::new(visible));
        self
    }

    /// Suggest values for argument `argument` of prompt `prompt` (`completion/complete`).
    pub fn complete_prompt_argument<F, Fut>(mut self, prompt: &str, argument: &str, f: F) -> Self
    where
        F: Fn(CompletionRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        let key = (Target::Prompt(prompt.to_owned()), argument.to_owned());
        self.settings.completers.insert(key, completer(f));
        self
    }

    /// Suggest values for variable `variable` of the resource template whose URI template
    /// is `uri_template`.
    pub fn complete_template_variable<F, Fut>(
        mut self,
        uri_template: &str,
        variable: &str,
        f: F,
    ) -> Self
    where
        F: Fn(CompletionRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        let key = (
            Target::Template(uri_template.to_owned()),
            variable.to_owned(),
        );
        self.settings.completers.insert(key, completer(f));
        self
    }

    /// Caching hints for `tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list` and `server/discover` results (2026-07-28): how long a
    /// client may consider them fresh, and whether they may be shared across users.
    /// Default: `ttlMs` 0 (immediately stale), `cacheScope` private.
    pub fn list_cache(mut self, ttl: Duration, scope: CacheScope) -> Self {
        self.settings.list_cache = CacheHint::new(ttl, scope);
        self
    }

    /// Caching hints for `resources/read` results (2026-07-28). Default: `ttlMs` 0,
    /// `cacheScope` private.
    pub fn read_cache(mut self, ttl: Duration, scope: CacheScope) -> Self {
        self.settings.read_cache = CacheHint::new(ttl, scope);
        self
    }

    /// Declare the tools capability even while no tool is registered, for a server that
    /// adds tools at runtime ([`Server::add_tool`]): clients then hear `list_changed`.
    /// Default: declared exactly when a tool is registered.
    pub fn declare_tools(mut self) -> Self {
        self.settings.declared.tools = true;
        self
    }

    /// Declare the resources capability even while none is registered (see
    /// [`ServerBuilder::declare_tools`]).
    pub fn declare_resources(mut self) -> Self {
        self.settings.declared.resources = true;
        self
    }

    /// Declare the prompts capability even while none is registered (see
    /// [`ServerBuilder::declare_tools`]).
    pub fn declare_prompts(mut self) -> Self {
        self.settings.declared.prompts = true;
        self
    }

    /// Share `state` with every handler: [`Context::state`] returns it by type. One value
    /// per type; a second value of the same type replaces the first. Wrap mutable state
    /// in a lock or use atomics: handlers run concurrently.
    pub fn state<T: Send + Sync + 'static>(mut self, state: T) -> Self {
        self.settings
            .states
            .insert(TypeId::of::<T>(), Arc::new(state));
        self
    }

    /// The key that seals the `requestState` of multi round-trip requests (2026-07-28).
    /// Instances that share it resume each other's requests, so give every instance behind
    /// one load balancer the same secret key. Default: a random key per process.
    pub fn request_state_key(mut self, key: [u8; 32]) -> Self {
        self.request_state_key = Some(key);
        self
    }

    /// How long an issued `requestState` stays valid. Default:
    /// [`DEFAULT_REQUEST_STATE_TTL`] (10 minutes).
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.request_state_ttl = ttl;
        self
    }

    /// Finish.
    ///
    /// # Panics
    ///
    /// On the mistakes [`try_build`](Self::try_build) reports, all named in the message:
    /// they are programming errors, found here rather than at every call.
    pub fn build(self) -> Server {
        self.try_build().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Finish, or report every mistake: a name or URI registered twice, a resource
    /// template that does not parse, a tool whose arguments' schema is not an object
    /// (`inputSchema` must be), a handler taking a [`State`](super::State) of a type
    /// [`state`](Self::state) was not given.
    ///
    /// ```
    /// use ferry::server::{Server, State};
    ///
    /// struct Notes;
    ///
    /// async fn count(_notes: State<Notes>) -> String {
    ///     "0".into()
    /// }
    ///
    /// let error = Server::builder("notes", "1").tool("count", "Count", count).try_build().unwrap_err();
    /// assert!(error.to_string().contains("Notes was given"), "{error}");
    /// ```
    pub fn try_build(self) -> Result<Server, BuildError> {
        let mut problems = self.problems;
        // Deriving the schemas here (they are kept) checks them before any client asks.
        problems.extend(
            self.settings
                .tools
                .snapshot()
                .entries
                .values()
                .filter_map(|entry| entry.schema_problem()),
        );
        let states = &self.settings.states;
        problems.extend(missing_states(
            |id| states.contains_key(&id),
            self.needs.iter().map(|(h, s)| (h.as_str(), *s)),
        ));
        if !problems.is_empty() {
            return Err(BuildError { problems });
        }
        let sealer = Sealer::new(self.request_state_key, self.request_state_ttl);
        Ok(Server::new(self.settings, sealer))
    }
}
