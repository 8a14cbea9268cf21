//! What a handler (tool, resource, prompt, completion) can reach besides its arguments.

use std::sync::Arc;

use ferry_protocol::ProtocolVersion;
use ferry_protocol::types::{
    ClientCapabilities, LoggingLevel, LoggingMessageNotificationParams, RequestMeta,
};

use super::core::Server;
use super::input::{ClientCaps, Rounds};
use super::session_data::{SessionData, SessionDataStore};
use crate::engine::{Attachment, Cancellation, Peer, ProgressReporter};

/// The context of one request to a server handler.
#[derive(Clone, Debug)]
pub struct Context {
    /// The revision the caller speaks.
    pub version: ProtocolVersion,
    /// The request's `_meta` (progress token, and in the stateless era the client's
    /// version, capabilities and identity). Shared: requests without one share an empty
    /// one, so the context stays small as it is moved to the handler.
    pub meta: Arc<RequestMeta>,
    /// Cancelled when the client cancels the request or hangs up. The handler's future is
    /// then dropped at its next `.await` (clean-up goes in a guard's `Drop`): the token is
    /// for work the future does not own (see [`Cancel`](super::Cancel)).
    pub cancel: Cancellation,
    /// Present when the client asked for progress.
    pub progress: Option<ProgressReporter>,
    /// The client, for notifications and (session era) requests of the handler's own.
    pub peer: Peer,
    /// The least severe level the client wants to hear (`None`: no log messages).
    pub(crate) log_level: Option<LoggingLevel>,
    /// Identifies the connection (session era) the request came from.
    pub(crate) session_key: Arc<str>,
    /// The session's application data (`None`: a stateless-era request has no session).
    pub(crate) session_data: Option<Arc<SessionDataStore>>,
    /// The method being answered.
    pub(crate) method: &'static str,
    /// What the client declared: at `initialize`, or in this request's `_meta`.
    pub(crate) client_capabilities: ClientCaps,
    /// Stateless era: the input rounds of a request that may ask for input.
    pub(crate) rounds: Option<Arc<Rounds>>,
    /// The server answering.
    pub(crate) server: Server,
    /// What the transport attached to the frame that carried the request.
    pub(crate) attachment: Option<Attachment>,
}

/// The context of a tool call.
pub type ToolContext = Context;

impl Context {
    /// Send `notifications/message` to the client if it wants messages of `level`: in the
    /// session era the level set by `logging/setLevel` (everything until it is set), in
    /// the stateless era this request's `_meta` `io.modelcontextprotocol/logLevel`
    /// (nothing when absent, as 2026-07-28 requires). Returns whether it was sent.
    pub async fn log(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: impl Into<serde_json::Value>,
    ) -> bool {
        if !self.wants_log(level) {
            return false;
        }
        let params = LoggingMessageNotificationParams {
            level,
            logger: logger.map(str::to_owned),
            data: data.into(),
            meta: None,
        };
        self.peer
            .notify("notifications/message", &params)
            .await
            .is_ok()
    }

    /// Whether a message of `level` would reach the client.
    pub fn wants_log(&self, level: LoggingLevel) -> bool {
        self.log_level.is_some_and(|min| level >= min)
    }

    /// An identifier of the session the request arrived on, stable for its lifetime: the
    /// key for per-session state a server keeps. Over HTTP it is the session's
    /// `Mcp-Session-Id` (so the same on every instance serving it); otherwise
    /// `connection-N`, unique within the process.
    pub fn session_key(&self) -> &str {
        &self.session_key
    }

    /// The session's application data: typed values that live as long as the session,
    /// on every instance serving it (see [`SessionData`]).
    pub fn session_data(&self) -> SessionData {
        SessionData::of(self.session_data.clone())
    }

    /// The application state of type `T` given to [`ServerBuilder::state`]
    /// (`None` if none was given).
    ///
    /// [`ServerBuilder::state`]: super::ServerBuilder::state
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.server.state::<T>()
    }

    /// The state of type `T` as a shared handle (the [`super::State`] extractor).
    pub(crate) fn state_arc<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.server.state_arc::<T>()
    }

    /// The server answering: to change it from a handler (add or remove tools, announce
    /// resource updates) or read its [`Server::stats`].
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The value of type `T` the transport attached to the frame carrying this request
    /// (the HTTP server's bearer-token claims, with feature `http-auth`), if any.
    pub fn attachment<T: std::any::Any>(&self) -> Option<&T> {
        self.attachment.as_ref().and_then(Attachment::get)
    }

    /// What the client declared it supports (session: at `initialize`; stateless: in this
    /// request's `_meta`).
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.client_capabilities
    }
}

/// A session-era client said its roots changed (`notifications/roots/list_changed`): what
/// a [`ServerBuilder::on_roots_changed`](super::ServerBuilder::on_roots_changed) hook gets.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RootsChanged {
    /// The connection or HTTP session whose client's roots changed (as
    /// [`Context::session_key`]).
    pub session: Arc<str>,
    /// The client.
    pub peer: Peer,
}

impl RootsChanged {
    /// Ask the client for its roots as they are now (`roots/list`).
    pub async fn list_roots(
        &self,
    ) -> Result<ferry_protocol::types::ListRootsResult, crate::engine::CallError> {
        self.peer
            .request("roots/list", &serde_json::json!({}))
            .await
    }
}
