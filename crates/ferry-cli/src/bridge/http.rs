//! `ferry bridge --http ADDR -- command args`: a stdio server behind Ferry's HTTP server.
//!
//! The HTTP layer is the library's ([`ferry::http::router_with`]): Origin/Host guard,
//! sessions, streams, resumability, the stateless era's checks and the 2024-11-05
//! HTTP+SSE transport. Behind it, a [`Backend`] puts every connection on a child:
//!
//! - `--per-session` (the default): each session (session era or 2024-11-05) gets a child
//!   of its own, shut down the MCP way when the session ends; its messages pass through
//!   (ids renumbered, invisibly). 2026-07-28 requests share one more child.
//! - `--shared`: one child for everything, its ids remapped so sessions cannot collide
//!   (see `mux`).
//!
//! **2026-07-28 requests** go to the child as they are (each carries its revision and
//! capabilities in `_meta`): a child that speaks that revision on stdio answers them; one
//! that does not answers with its own error, which the client gets (the bridge does not
//! translate between eras).

use crate::stderr::note;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ferry::engine::Transport;
use ferry::http::{Backend, Connection, HttpConfig};

use super::upstream::{ChildSpec, Upstream};

/// Each session on its own child; stateless requests on one shared child.
struct PerSession {
    spec: ChildSpec,
    stateless: OnceLock<Upstream>,
}

impl Backend for PerSession {
    fn connect(&self, connection: Connection, transport: Transport) {
        match connection {
            Connection::Stateless => self
                .stateless
                .get_or_init(|| Upstream::start(self.spec.clone(), false))
                .attach(connection, transport),
            _ => Upstream::start(self.spec.clone(), true).attach(connection, transport),
        }
    }
}

/// Every connection on one child.
struct Shared(Upstream);

impl Backend for Shared {
    fn connect(&self, connection: Connection, transport: Transport) {
        self.0.attach(connection, transport);
    }
}

/// Serve until the listener fails or Ctrl-C.
pub(crate) async fn run(
    addr: SocketAddr,
    config: HttpConfig,
    shared: bool,
    spec: ChildSpec,
) -> ExitCode {
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(e) => {
            note!("ferry bridge: cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bound = listener.local_addr().unwrap_or(addr);
    let lifecycle = Arc::clone(&spec.lifecycle);
    let backend: Arc<dyn Backend> = if shared {
        Arc::new(Shared(Upstream::start(spec, false)))
    } else {
        Arc::new(PerSession {
            spec,
            stateless: OnceLock::new(),
        })
    };
    note!("ferry bridge: MCP on http://{bound}{}", config.endpoint);
    if let Some(sse) = &config.legacy_sse {
        note!("ferry bridge: 2024-11-05 HTTP+SSE on http://{bound}{sse}");
    }
    // The HTTP layer's own checks use the backends' defaults: every revision Ferry knows
    // is accepted and passed on to the child, and no tool schema is checked here.
    let router = ferry::http::router_with(backend, config);
    tokio::select! {
        served = ferry::http::serve_router(router, listener) => match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                note!("ferry bridge: {e}");
                ExitCode::FAILURE
            }
        },
        () = crate::serve::stop_signal() => {
            // Every child the MCP way: stdin closed, then SIGTERM, then SIGKILL.
            lifecycle.shutdown(Duration::from_secs(10)).await;
            ExitCode::SUCCESS
        }
    }
}
