//! Middleware around each request the client sends: the client's counterpart of
//! [`ferry::server::Middleware`](https://docs.rs/ferry-mcp/latest/ferry/server/trait.Middleware.html).
//! Where a [`RequestHook`](super::RequestHook) changes params and decides retries, a
//! middleware wraps the whole request (every retry and `input_required` round inside it) in
//! code of its own: a span, a timer, a cache, a refusal. OpenTelemetry's
//! `ferry::otel::ClientTracing` is one.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use ferry::client::{BoxFuture, Client, ClientError, Middleware, Next, Outgoing};
//! use serde_json::Value;
//!
//! /// Counts the requests that failed.
//! struct Failures(Arc<AtomicUsize>);
//!
//! impl Middleware for Failures {
//!     fn call<'a>(&'a self, request: Outgoing, next: Next<'a>) -> BoxFuture<'a, Result<Value, ClientError>> {
//!         Box::pin(async move {
//!             let result = next.run(request).await;
//!             if result.is_err() {
//!                 self.0.fetch_add(1, Ordering::Relaxed);
//!             }
//!             result
//!         })
//!     }
//! }
//!
//! let failures = Arc::new(AtomicUsize::new(0));
//! let builder = Client::builder("app", "1").middleware(Failures(failures.clone()));
//! # let _ = builder;
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use ferry_protocol::{ProtocolVersion, RequestId};
use serde_json::Value;

use super::ClientError;

/// A boxed future, as [`Middleware::call`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A request on its way out, as a [`Middleware`] sees it: change `params` before handing it
/// to [`Next::run`].
#[derive(Debug)]
#[non_exhaustive]
pub struct Outgoing {
    /// The method, such as `tools/call`.
    pub method: &'static str,
    /// The params: an object, its `_meta` already filled with what the revision requires.
    pub params: Value,
    /// The revision the connection speaks (the one being tried, during the handshake).
    pub version: ProtocolVersion,
    /// The session id (`Mcp-Session-Id`) when the transport has one: HTTP in the session
    /// era, after `initialize`.
    pub session_id: Option<String>,
}

/// Code around every request a [`Client`](super::Client) sends, the handshake's included
/// (set with [`ClientBuilder::middleware`](super::ClientBuilder::middleware); the first one
/// given is the outermost).
pub trait Middleware: Send + Sync + 'static {
    /// Send `request`: usually by calling `next.run(request).await`, before and after which
    /// the middleware does its work. The result is the server's `result` as JSON, before
    /// it is read into the caller's type; returning without calling `next` answers the
    /// caller with what is returned, and nothing is sent.
    fn call<'a>(
        &'a self,
        request: Outgoing,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Value, ClientError>>;

    /// A request of the call is about to be written with `id`: once per send, so a retry or
    /// an `input_required` round each have their own. Called inside the future that
    /// [`call`](Self::call) returned (task-local context set around `next.run` is current).
    /// Default: nothing.
    fn sent(&self, method: &str, id: &RequestId) {
        let _ = (method, id);
    }

    /// The client's connection ended (its last clone was dropped), `lasted` after it was
    /// made. Default: nothing.
    fn closed(&self, version: ProtocolVersion, lasted: Duration) {
        let _ = (version, lasted);
    }
}

/// What sends the request after the middleware: the rest of the chain, then the client.
pub struct Next<'a> {
    rest: &'a [Arc<dyn Middleware>],
    end: End<'a>,
}

/// The client's own sending, at the end of the chain.
pub(crate) type End<'a> =
    Box<dyn FnOnce(Outgoing) -> BoxFuture<'a, Result<Value, ClientError>> + Send + 'a>;

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("middleware_left", &self.rest.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Next<'a> {
    pub(crate) fn new(chain: &'a [Arc<dyn Middleware>], end: End<'a>) -> Self {
        Next { rest: chain, end }
    }

    /// Hand the request to the rest of the chain, and the client at its end.
    pub async fn run(self, request: Outgoing) -> Result<Value, ClientError> {
        match self.rest.split_first() {
            Some((first, rest)) => {
                first
                    .call(
                        request,
                        Next {
                            rest,
                            end: self.end,
                        },
                    )
                    .await
            }
            None => (self.end)(request).await,
        }
    }
}
