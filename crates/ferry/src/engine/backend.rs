//! The one interface between a transport that opens many connections (the HTTP server)
//! and what answers them (a `ferry::server::Server`, or a proxy such as
//! `ferry bridge`). It sits below both, so neither reaches into the other.
//!
//! The transport keeps everything that is its own (sessions and their ids, streams,
//! resumability, header checks, limits); it hands the backend one engine [`Transport`] per
//! connection and says which kind it is ([`Connection`]). The backend reads the client's
//! frames from `incoming` and writes its frames to `outgoing` until `incoming` ends.

use std::sync::OnceLock;

use ferry_protocol::VersionSet;
use ferry_protocol::types::JsonObject;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use super::{EngineConfig, SessionShare, Transport};

/// Which kind of connection a transport opens on a [`Backend`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Connection {
    /// A session of the session era (2025-03-26 .. 2025-11-25), opened by `initialize`:
    /// its first frame is that request; it ends when the session ends.
    Session,
    /// A 2024-11-05 HTTP+SSE session (`GET /sse`): the client's frames follow.
    Legacy,
    /// One 2026-07-28 request: one request frame (perhaps then its
    /// `notifications/cancelled`); the transport takes the notifications for it and its
    /// response, then drops the connection. Requests the backend sends are dropped.
    Stateless,
}

/// A change of what a backend serves, as the instances of one server tell each other
/// (see [`Backend::changes`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum BackendChange {
    /// The tool list changed.
    Tools,
    /// The resource or template list changed.
    Resources,
    /// The prompt list changed.
    Prompts,
    /// The contents of the resource with this URI changed.
    ResourceUpdated(String),
    /// A message of the application's to the other instances (`Server::tell_instances`).
    Message {
        /// What it is about.
        topic: String,
        /// Its content.
        payload: String,
    },
}

/// Serves the connections a transport opens (see the module docs).
///
/// Only [`connect`](Backend::connect) is required; the rest describe the backend to the
/// transport's own checks and have defaults that accept everything (every revision, no
/// tool schema to check headers against).
///
/// ```
/// use ferry::engine::{Backend, Connection, Transport};
///
/// /// Answers nothing: closes every connection at once.
/// struct Closed;
///
/// impl Backend for Closed {
///     fn connect(&self, _connection: Connection, transport: Transport) {
///         drop(transport);
///     }
/// }
/// let backend: std::sync::Arc<dyn Backend> = std::sync::Arc::new(Closed);
/// assert_eq!(backend.versions(), &ferry::protocol::VersionSet::all());
/// ```
pub trait Backend: Send + Sync + 'static {
    /// Serve one connection: read the client's frames from `transport.incoming` until it
    /// ends, write frames for the client to `transport.outgoing`. Must not block: spawn
    /// the work.
    fn connect(&self, connection: Connection, transport: Transport);

    /// Serve one connection as [`connect`](Backend::connect) does, keeping its tasks
    /// (2025-11-25 `tasks/*`) and its application data in `share`, where the other
    /// instances of the server see them: a transport that shares its sessions calls this
    /// for each session. Default: `connect`, the backend keeping them itself.
    fn connect_shared(&self, connection: Connection, transport: Transport, share: SessionShare) {
        drop(share);
        self.connect(connection, transport);
    }

    /// The revisions the backend speaks, which the transport accepts in its version
    /// checks (`MCP-Protocol-Version`). Default: every revision Ferry knows.
    fn versions(&self) -> &VersionSet {
        static ALL: OnceLock<VersionSet> = OnceLock::new();
        ALL.get_or_init(VersionSet::all)
    }

    /// Call `check` once with the input schema of the tool named `tool`, or with `None`
    /// when there is no such tool or the backend does not know its tools (the default).
    /// The HTTP transport checks `Mcp-Param-*` headers against it.
    fn with_input_schema(&self, tool: &str, check: &mut dyn FnMut(Option<&JsonObject>)) {
        let _ = tool;
        check(None);
    }

    /// How many frames a connection's outgoing queue holds before its senders wait.
    /// Default: [`EngineConfig`]'s.
    fn write_queue(&self) -> usize {
        EngineConfig::default().write_queue
    }

    /// The backend's own changes from now on, for a transport that shares its sessions
    /// with other instances to pass on, or `None` when it has none to tell (the default).
    fn changes(&self) -> Option<broadcast::Receiver<BackendChange>> {
        None
    }

    /// A change another instance of this server made: tell this backend's clients as of
    /// one of its own (list changes, subscribed resources), without passing it on again.
    fn changed_elsewhere(&self, change: BackendChange) {
        let _ = change;
    }
}
