//! The peer engine shared by server and client.
//!
//! One engine runs one connection. It reads frames from a [`Transport`], classifies them
//! (`ferry_protocol::jsonrpc::classify`), and:
//!
//! - runs each incoming request in its own task (on a single-threaded runtime it is first
//!   polled in place, and gets a task only if it has to wait), at most
//!   [`EngineConfig::max_concurrent_requests`] at a time, each with a cancellation token,
//!   and sends exactly one response (none when the peer cancelled it);
//! - turns a panicking handler into `-32603` naming the method and id, and keeps serving;
//! - handles notifications in arrival order; `notifications/cancelled` stops the named
//!   handler; `notifications/progress` goes to the outgoing request it belongs to;
//! - answers `ping` itself at any time;
//! - correlates responses with outgoing requests made through the [`Peer`] handle
//!   (timeouts, cancellation on drop, late responses dropped with a debug log);
//! - writes through a bounded queue, so a slow peer slows its senders.
//!
//! Roles (server, client) implement [`Handler`]; the engine knows no MCP method but
//! `ping` and the two notifications above.

mod backend;
mod cancel;
#[cfg(feature = "child-process")]
mod child;
mod config;
mod dispatch;
mod incoming;
mod lines;
mod peer;
mod progress;
pub(crate) mod related;
mod result;

/// A `HashMap` with foldhash, seeded per map: for the maps of one connection (request ids,
/// stream numbers), whose keys the peer chooses but cannot make collide without the seed.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
mod data_share;
mod stall;
mod stdio;
mod task_share;
mod transport;

use std::future::Future;

use ferry_protocol::RequestId;
use ferry_protocol::jsonrpc::{ErrorObject, Notification, Request};

pub use backend::{Backend, BackendChange, Connection};
pub use cancel::Cancellation;
#[cfg(feature = "child-process")]
#[cfg_attr(docsrs, doc(cfg(feature = "child-process")))]
pub use child::{
    ChildCommand, ChildProcess, ShutdownOutcome, ShutdownStage, ShutdownTimeouts, StderrMode,
};
pub use config::EngineConfig;
pub use data_share::{DataEntry, DataSaved, DataShare, SessionShare};
pub use dispatch::{Engine, EngineHandle};
#[cfg(all(test, feature = "server"))]
pub(crate) use dispatch::{request_future_size, run_future_size};
pub use incoming::Incoming;
pub use peer::{CallError, CallOptions, Peer};
pub use progress::{ProgressError, ProgressReporter};
pub use related::RelatedSink;
pub use result::ResultJson;
#[cfg(feature = "server")]
pub(crate) use stdio::stdio_watched;
pub use stdio::{stdio, stdio_with};
#[cfg(feature = "server")]
pub(crate) use task_share::terminal;
pub use task_share::{SharedTask, TaskShare};
#[cfg(feature = "client")]
pub(crate) use transport::SessionIdSource;
pub use transport::{
    Attachment, Classified, ClientAddress, Frame, OVERSIZED_HEAD, Replayed, Transport,
    TransportError, TransportEvent, Writer,
};

/// The outcome of an incoming request: its result as JSON text, or an error.
pub type HandlerResult = Result<ResultJson, ErrorObject>;

/// What an incoming request's handler gets besides the request.
#[derive(Clone, Debug)]
pub struct RequestContext {
    /// The request's id.
    pub id: RequestId,
    /// Cancelled when the peer cancels the request or the connection ends. The handler's
    /// future is then dropped at its next `.await` without a response: the token is for
    /// work the future does not own (a thread, a spawned task).
    pub cancel: Cancellation,
    /// Cancelled when the peer has hung up (no more input): in-flight requests have the
    /// shutdown grace period to answer, so a long-lived request (a subscription stream)
    /// can end with a graceful response instead of being cut off. One token for the
    /// whole connection, shared.
    pub closing: Cancellation,
    /// Present when the peer asked for progress (`_meta.progressToken`).
    pub progress: Option<ProgressReporter>,
    /// The other side, for requests and notifications of the handler's own.
    pub peer: Peer,
    /// What the transport attached to the frame that carried the request.
    pub attachment: Option<Attachment>,
    /// The members of the request's params the layers read (`_meta`'s version and progress
    /// token, a tool's name and raw arguments...), as `ferry_protocol::read::landmarks`
    /// found them when the transport read the params (HTTP); `None` otherwise, and the
    /// handler reads them itself. Boxed: the context stays small where they are absent
    /// (stdio), whose calls move it several times.
    pub landmarks: Option<Box<ferry_protocol::read::Landmarks>>,
}

/// A role on top of the engine: answers requests, receives notifications.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot handle MCP messages",
    note = "implement `ferry::engine::Handler` (or use the server or client builders)"
)]
pub trait Handler: Send + Sync + 'static {
    /// Answer a request. Runs concurrently with other requests; dropped (no response is
    /// sent) if the peer cancels it.
    fn request(
        &self,
        request: Request,
        context: RequestContext,
    ) -> impl Future<Output = HandlerResult> + Send;

    /// Receive a notification. Notifications are delivered one at a time, in arrival
    /// order.
    fn notification(
        &self,
        notification: Notification,
        peer: &Peer,
    ) -> impl Future<Output = ()> + Send;

    /// Whether a JSON-RPC batch may be answered now (MCP allows batches only in
    /// 2025-03-26). Default: no.
    fn accepts_batches(&self) -> bool {
        false
    }

    /// Whether the engine answers this `ping` itself, at once and without a concurrency
    /// slot (when [`EngineConfig::answer_ping`] is on). A role whose peers may send a
    /// `ping` that must be refused (2026-07-28 has none) says no for those. Default: yes.
    fn engine_answers_ping(&self, request: &Request) -> bool {
        let _ = request;
        true
    }

    /// Whether requests of `method` live as long as the connection (streams such as
    /// `subscriptions/listen`): they take no slot of
    /// [`EngineConfig::max_concurrent_requests`], so they cannot starve other requests;
    /// they still count against [`EngineConfig::max_pending_requests`]. Default: no.
    fn long_lived(&self, method: &str) -> bool {
        let _ = method;
        false
    }

    /// Whether the engine must finish a request of `method` before it reads the next
    /// message, because later messages depend on its outcome (`initialize`). Default: no.
    fn in_order(&self, method: &str) -> bool {
        let _ = method;
        false
    }
}

impl<H: Handler> Handler for std::sync::Arc<H> {
    fn request(
        &self,
        request: Request,
        context: RequestContext,
    ) -> impl Future<Output = HandlerResult> + Send {
        H::request(self, request, context)
    }

    fn notification(
        &self,
        notification: Notification,
        peer: &Peer,
    ) -> impl Future<Output = ()> + Send {
        H::notification(self, notification, peer)
    }

    fn accepts_batches(&self) -> bool {
        H::accepts_batches(self)
    }

    fn in_order(&self, method: &str) -> bool {
        H::in_order(self, method)
    }

    fn long_lived(&self, method: &str) -> bool {
        H::long_lived(self, method)
    }

    fn engine_answers_ping(&self, request: &Request) -> bool {
        H::engine_answers_ping(self, request)
    }
}
