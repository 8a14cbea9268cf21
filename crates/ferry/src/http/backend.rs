//! What answers the messages behind the HTTP endpoint: by default the [`Server`] the router
//! was built with; a [`Backend`] can put something else there (a proxy to another server,
//! as `ferry bridge --http` does with a child process on stdio).
//!
//! The HTTP layer keeps everything that is HTTP's: the guard (`Origin`, `Host`), sessions
//! and their ids, which stream each message takes, resumability, the stateless era's
//! header checks, limits. It hands the backend one engine [`Transport`] per connection and
//! says which kind it is ([`Connection`]); the backend reads the client's frames from
//! `incoming` and writes its frames to `outgoing` until `incoming` ends.

use std::sync::Arc;

use crate::engine::Transport;
use crate::server::Server;

/// Which kind of connection the HTTP layer opens on a [`Backend`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Connection {
    /// A session of the session era (2025-03-26 .. 2025-11-25), opened by `initialize`:
    /// its first frame is that request; it ends when the session ends.
    Session,
    /// A 2024-11-05 HTTP+SSE session (`GET /sse`): the client's frames follow.
    Legacy,
    /// One 2026-07-28 request: one request frame (perhaps then its
    /// `notifications/cancelled`); the HTTP layer takes the notifications for it and its
    /// response, then drops the connection. Requests the backend sends are dropped.
    Stateless,
}

/// Serves the connections behind an HTTP endpoint (see the module docs).
pub trait Backend: Send + Sync + 'static {
    /// Serve one connection: read the client's frames from `transport.incoming` until it
    /// ends, write frames for the client to `transport.outgoing`. Must not block: spawn
    /// the work.
    fn connect(&self, connection: Connection, transport: Transport);
}

impl Backend for Server {
    fn connect(&self, connection: Connection, transport: Transport) {
        // The engine's task ends by itself once the transport's input closes.
        match connection {
            Connection::Stateless => self.serve_request(transport),
            Connection::Session | Connection::Legacy => drop(self.serve(transport)),
        }
    }
}

/// The default backend: the router's own server.
pub(crate) fn of(server: &Server) -> Arc<dyn Backend> {
    Arc::new(server.clone())
}
