//! The server's state, private to this module, and the small API the rest of `server/`
//! reaches it through: what it serves (the registries, application state, visibility), how
//! it answers (revisions, reply shaping, pagination and cache settings, the `requestState`
//! sealer, middleware), and what it counts and announces (counters, the change feed).

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex, OnceLock};

use ferry_protocol::types::{
    ClientCapabilities, Implementation, PromptsCapability, ResourcesCapability, ServerCapabilities,
    ToolsCapability,
};
use ferry_protocol::{ProtocolVersion, VersionSet};
use tokio::sync::broadcast;

use super::builder::{CacheHint, Settings};
use super::completion::{CompleteFn, Target};
use super::middleware::Middleware;
use super::prompts::PromptEntry;
use super::registry::{Change, Registry, change_feed};
use super::reply::{HasResultMeta, reply};
use super::request_state::Sealer;
use super::resources::{ResourceEntry, TemplateEntry};
use super::stats::Counters;
use super::tasks;
use super::tools::ToolEntry;
use super::visibility::Visibility;
use crate::engine::{BackendChange, EngineConfig, HandlerResult};

thread_local! {
    /// Set while an instance message's hook runs: the changes it makes were made on
    /// another instance first, so they are not passed on again.
    static APPLYING_ELSEWHERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// An MCP server. Cheap to clone; every clone serves the same registry, and a change made
/// through one (adding a tool, say) reaches every connected client.
#[derive(Clone)]
pub struct Server {
    core: Arc<Core>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", self.info())
            .field("tools", &self.tool_names())
            .finish_non_exhaustive()
    }
}

/// What a built server holds: the builder's settings and registrations, and what serving
/// adds to them.
struct Core {
    /// What the builder gathered (registries included, edited at runtime).
    settings: Settings,
    /// Edits become `list_changed` notifications through this feed.
    changes: broadcast::Sender<Change>,
    /// Seals the `requestState` of multi round-trip requests.
    sealer: Sealer,
    /// Live counters.
    counters: Counters,
    /// The client capabilities the latest `initialize` declared, shared by the connections
    /// whose clients declared the same (a server's clients are mostly alike, and a copy of
    /// its own would be kept by each connection for its whole life).
    client_capabilities: Mutex<Arc<ClientCapabilities>>,
    /// What a tool's text result carries after its content, per revision (in the order of
    /// `ProtocolVersion::ALL`): `}` in the session era, the server named in `_meta` and
    /// `resultType` in the stateless era; written once (see `tools::Finish::output`).
    text_result_rest: [OnceLock<String>; ProtocolVersion::ALL.len()],
    /// This server's own changes for other instances (`Backend::changes`); made when first
    /// asked for, so a server alone keeps no second ring.
    outbound: OnceLock<broadcast::Sender<BackendChange>>,
}

impl Server {
    /// The server the builder's `settings` describe, sealing `requestState` with `sealer`.
    pub(super) fn new(settings: Settings, sealer: Sealer) -> Server {
        Server {
            core: Arc::new(Core {
                settings,
                changes: change_feed(),
                sealer,
                counters: Counters::default(),
                client_capabilities: Mutex::default(),
                text_result_rest: Default::default(),
                outbound: OnceLock::new(),
            }),
        }
    }

    fn settings(&self) -> &Settings {
        &self.core.settings
    }
}

/// Who the server is and how it answers.
impl Server {
    /// `serverInfo`.
    pub(super) fn info(&self) -> &Implementation {
        &self.settings().info
    }

    /// Usage guidance for the model, if given.
    pub(super) fn instructions(&self) -> Option<&str> {
        self.settings().instructions.as_deref()
    }

    /// The revisions it speaks.
    pub(super) fn versions(&self) -> &VersionSet {
        &self.settings().versions
    }

    /// The engine limits of its connections.
    pub(super) fn engine_config(&self) -> &EngineConfig {
        &self.settings().engine
    }

    /// `value` shaped for `version` and written as JSON (see [`reply`]): naming this server
    /// where the revision wants it.
    pub(super) fn reply<T>(&self, value: T, version: ProtocolVersion) -> HandlerResult
    where
        T: ferry_protocol::conform::Conform + serde::Serialize + HasResultMeta,
    {
        reply(value, version, self.info())
    }

    /// What a tool's text result carries after its content in `version`: `make` writes it
    /// the first time it is asked for.
    pub(super) fn text_result_rest(
        &self,
        version: ProtocolVersion,
        make: impl FnOnce() -> String,
    ) -> &str {
        self.core.text_result_rest[version.index()].get_or_init(make)
    }

    /// Items per page of a list result.
    pub(super) fn page_size(&self) -> usize {
        self.settings().page_size
    }

    /// The bytes one session's data may take.
    pub(super) fn session_data_limit(&self) -> usize {
        self.settings().session_data_limit
    }

    /// Caching hints of list results and `server/discover` (2026-07-28).
    pub(super) fn list_cache(&self) -> CacheHint {
        self.settings().list_cache
    }

    /// Caching hints of `resources/read` results (2026-07-28).
    pub(super) fn read_cache(&self) -> CacheHint {
        self.settings().read_cache
    }

    /// Seals and opens the `requestState` of multi round-trip requests.
    pub(super) fn sealer(&self) -> &Sealer {
        &self.core.sealer
    }

    /// The hook run when a client says its roots changed.
    pub(super) fn roots_changed_hook(&self) -> Option<&super::builder::RootsHook> {
        self.settings().roots_changed.as_ref()
    }

    /// The middleware every request goes through, in order (none: the direct path).
    pub(super) fn middleware(&self) -> &[Arc<dyn Middleware>] {
        &self.settings().middleware
    }
}

/// What the server serves.
impl Server {
    pub(super) fn tools(&self) -> &Registry<ToolEntry> {
        &self.settings().tools
    }

    pub(super) fn resources(&self) -> &Registry<ResourceEntry> {
        &self.settings().resources
    }

    pub(super) fn templates(&self) -> &Registry<TemplateEntry> {
        &self.settings().templates
    }

    pub(super) fn prompts(&self) -> &Registry<PromptEntry> {
        &self.settings().prompts
    }

    /// The completer of an argument of a prompt or template, if one was registered.
    pub(super) fn completer(&self, key: &(Target, String)) -> Option<&CompleteFn> {
        self.settings().completers.get(key)
    }

    /// Which callers see which items.
    pub(super) fn visibility(&self) -> &Visibility {
        &self.settings().visibility
    }

    /// The application state of type `T`, if the builder was given one.
    pub(super) fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.state_of(TypeId::of::<T>())
            .and_then(|s| s.downcast_ref::<T>())
    }

    /// The application state of type `T` as a shared handle.
    pub(super) fn state_arc<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        Arc::clone(self.state_of(TypeId::of::<T>())?)
            .downcast::<T>()
            .ok()
    }

    /// Whether the builder was given application state of the type `id`.
    pub(super) fn has_state(&self, id: TypeId) -> bool {
        self.settings().states.contains_key(&id)
    }

    fn state_of(&self, id: TypeId) -> Option<&Arc<dyn Any + Send + Sync>> {
        self.settings().states.get(&id)
    }

    /// `capabilities` as an `Arc` shared with the connections before whose clients
    /// declared the same.
    pub(super) fn shared_client_capabilities(
        &self,
        capabilities: &ClientCapabilities,
    ) -> Arc<ClientCapabilities> {
        let mut latest = self
            .core
            .client_capabilities
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if **latest != *capabilities {
            *latest = Arc::new(capabilities.clone());
        }
        Arc::clone(&latest)
    }
}

/// What the server offers: its capabilities, exactly as registered.
impl Server {
    pub(super) fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            tools: self.offers_tools().then_some(ToolsCapability {
                list_changed: Some(true),
            }),
            resources: self.offers_resources().then_some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
            }),
            prompts: self.offers_prompts().then_some(PromptsCapability {
                list_changed: Some(true),
            }),
            completions: self.offers_completions().then(Default::default),
            logging: self.offers_logging().then(Default::default),
            tasks: {
                let tools = self.tools().snapshot();
                let tools: Vec<_> = tools.entries.values().map(|e| e.head()).collect();
                tasks::capability(&tools)
            },
            ..Default::default()
        }
    }

    /// Whether the `tools` capability is declared: without building the others.
    pub(super) fn offers_tools(&self) -> bool {
        self.settings().declared.tools || !self.tools().is_empty()
    }

    /// Whether the `resources` capability is declared.
    pub(super) fn offers_resources(&self) -> bool {
        self.settings().declared.resources
            || !self.resources().is_empty()
            || !self.templates().is_empty()
    }

    /// Whether the `prompts` capability is declared.
    pub(super) fn offers_prompts(&self) -> bool {
        self.settings().declared.prompts || !self.prompts().is_empty()
    }

    /// Whether the `completions` capability is declared.
    pub(super) fn offers_completions(&self) -> bool {
        !self.settings().completers.is_empty()
    }

    /// Whether the `logging` capability is declared: clients may set a level, handlers'
    /// messages reach them.
    pub(super) fn offers_logging(&self) -> bool {
        self.settings().logging
    }

    /// Whether the `tasks` capability is declared: a tool can run as a task.
    pub(super) fn offers_tasks(&self) -> bool {
        self.tools()
            .read(|tools| tools.values().any(|e| tasks::supports_tasks(e.head())))
    }
}

/// What the server counts and announces.
impl Server {
    /// Connections and requests served.
    pub(super) fn counters(&self) -> &Counters {
        &self.core.counters
    }

    /// The feed of changes, from now on.
    pub(super) fn subscribe_changes(&self) -> broadcast::Receiver<Change> {
        self.core.changes.subscribe()
    }

    /// Announce a change made here: to this server's clients, and to other instances
    /// listening (`Backend::changes`).
    pub(super) fn changed(&self, change: Change) {
        if !APPLYING_ELSEWHERE.with(std::cell::Cell::get) {
            self.send_outbound(change.clone().into());
        }
        self.changed_here(change);
    }

    /// Pass `change` on to the other instances listening, if any.
    pub(super) fn send_outbound(&self, change: BackendChange) {
        if let Some(outbound) = self.core.outbound.get() {
            let _ = outbound.send(change);
        }
    }

    /// A message another instance sent: to the application's hook, the changes it makes
    /// announced here only.
    pub(super) fn instance_message(&self, topic: &str, payload: &str) {
        let Some(hook) = self.settings().instance_message.clone() else {
            return;
        };
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                APPLYING_ELSEWHERE.with(|flag| flag.set(false));
            }
        }
        APPLYING_ELSEWHERE.with(|flag| flag.set(true));
        let _reset = Reset;
        hook(self, topic, payload);
    }

    /// A change made by another instance: to this server's clients only.
    pub(super) fn changed_here(&self, change: Change) {
        // No receiver means no client is connected: nobody to tell.
        let _ = self.core.changes.send(change);
    }

    /// This server's own changes, for other instances.
    pub(super) fn outbound_changes(&self) -> broadcast::Receiver<BackendChange> {
        self.core
            .outbound
            .get_or_init(|| broadcast::channel(64).0)
            .subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::{ClientCapabilities, Server};

    #[test]
    fn connections_whose_clients_declare_the_same_capabilities_share_them() {
        let server = Server::builder("x", "1").build();
        let roots: ClientCapabilities =
            serde_json::from_value(serde_json::json!({"roots": {"listChanged": true}}))
                .expect("capabilities");
        let first = server.shared_client_capabilities(&roots);
        let second = server.shared_client_capabilities(&roots.clone());
        assert!(std::sync::Arc::ptr_eq(&first, &second));
        let other = server.shared_client_capabilities(&ClientCapabilities::default());
        assert_eq!(*other, ClientCapabilities::default());
        assert_eq!(
            *first, roots,
            "an earlier connection keeps what its client declared"
        );
        let third = server.shared_client_capabilities(&roots);
        assert_eq!(*third, roots);
    }
}
