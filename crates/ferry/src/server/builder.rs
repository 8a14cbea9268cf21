//! Building a server and running it on a transport.

use std::future::Future;
use std::sync::{Arc, RwLock};

use ferry_protocol::VersionSet;
use ferry_protocol::types::{Implementation, ServerCapabilities, Tool, ToolsCapability};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::context::ToolContext;
use super::session::Session;
use super::tools::{IntoToolResult, ToolEntry, typed_tool};
use crate::engine::{Engine, EngineConfig, EngineHandle, Transport};

/// The registered tools, swapped whole on change so readers never wait on writers for
/// long: a call clones the `Arc` and releases the lock.
pub(crate) type ToolSet = Arc<IndexMap<String, ToolEntry>>;

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) versions: VersionSet,
    pub(crate) engine: EngineConfig,
    tools: RwLock<ToolSet>,
}

/// An MCP server. Cheap to clone; every clone serves the same registry.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("tools", &self.tool_names())
            .finish_non_exhaustive()
    }
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    versions: VersionSet,
    engine: EngineConfig,
    tools: IndexMap<String, ToolEntry>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Start building a server with its name and version (`serverInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            versions: VersionSet::all(),
            engine: EngineConfig::default(),
            tools: IndexMap::new(),
        }
    }

    /// Serve one connection. The returned handle's task ends when the client hangs up.
    pub fn serve(&self, transport: Transport) -> EngineHandle {
        Engine::start(
            transport,
            Session::new(self.clone()),
            self.inner.engine.clone(),
        )
    }

    /// Serve this process's stdin and stdout until the client closes stdin.
    #[cfg(unix)]
    pub async fn serve_stdio(&self) -> std::io::Result<()> {
        let config = &self.inner.engine;
        let transport = crate::engine::stdio(config.max_message_bytes, config.write_queue);
        self.serve(transport)
            .task
            .await
            .map_err(std::io::Error::other)
    }

    /// The names of the registered tools, in registration order.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools().keys().cloned().collect()
    }

    pub(crate) fn tools(&self) -> ToolSet {
        Arc::clone(&self.inner.tools.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// What the server offers, exactly as registered.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            tools: (!self.tools().is_empty()).then(ToolsCapability::default),
            ..Default::default()
        }
    }
}

impl ServerBuilder {
    /// Usage guidance for the model (`instructions`).
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The display name (`serverInfo.title`, from 2025-06-18).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// The revisions to speak. Default: all ([`VersionSet::all`]).
    pub fn versions(mut self, versions: VersionSet) -> Self {
        self.versions = versions;
        self
    }

    /// Engine limits. Default: [`EngineConfig::default`].
    pub fn engine(mut self, config: EngineConfig) -> Self {
        self.engine = config;
        self
    }

    /// Add a tool: a plain async function of its typed arguments and a [`ToolContext`].
    ///
    /// The input schema comes from `A` (inlined, no `$ref`); arguments are checked against
    /// `A` before the function runs. A name registered twice panics: it is a programming
    /// error.
    pub fn tool<A, F, Fut, R>(self, name: &str, description: &str, f: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult + 'static,
    {
        let tool = Tool {
            description: Some(description.to_owned()),
            ..Tool::new(name, Default::default())
        };
        self.tool_with(tool, f)
    }

    /// Add a tool with a full description (title, annotations, icons...). The input schema
    /// is replaced by the one derived from `A`.
    pub fn tool_with<A, F, Fut, R>(mut self, tool: Tool, f: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult + 'static,
    {
        let name = tool.name.clone();
        let entry = typed_tool(tool, f);
        assert!(
            self.tools.insert(name.clone(), entry).is_none(),
            "tool {name:?} is registered twice"
        );
        self
    }

    /// Finish.
    pub fn build(self) -> Server {
        Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                instructions: self.instructions,
                versions: self.versions,
                engine: self.engine,
                tools: RwLock::new(Arc::new(self.tools)),
            }),
        }
    }
}
