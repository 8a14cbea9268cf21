//! A hook around each request the client sends: change its params (`_meta` keys such as a
//! trace context or a tenant), and decide whether a failed request is sent again.
//!
//! ```
//! use std::time::Duration;
//! use ferry::client::{Client, ClientError, RequestHook};
//! use serde_json::Value;
//!
//! /// Adds a tenant to every request's `_meta`; retries a transport failure twice.
//! struct Tenant;
//!
//! impl RequestHook for Tenant {
//!     fn before(&self, _method: &str, params: &mut Value) {
//!         params["_meta"]["example.com/tenant"] = "acme".into();
//!     }
//!
//!     fn retry(&self, _method: &str, attempt: u32, error: &ClientError) -> Option<Duration> {
//!         (error.is_transport() && attempt < 3).then(|| Duration::from_millis(100 * u64::from(attempt)))
//!     }
//! }
//!
//! let builder = Client::builder("app", "1").request_hook(Tenant);
//! # let _ = builder;
//! ```

use std::time::Duration;

use serde_json::Value;

use super::ClientError;

/// Code around each request a [`Client`](super::Client) sends (set with
/// [`ClientBuilder::request_hook`](super::ClientBuilder::request_hook)). HTTP headers per
/// request come from the HTTP transport's auth hook (`HttpClientConfig::auth`).
pub trait RequestHook: Send + Sync + 'static {
    /// Called before the request is sent (and before each retry), with its params: an
    /// object, its `_meta` already filled with what the revision requires. Default: no
    /// change.
    fn before(&self, method: &str, params: &mut Value) {
        let _ = (method, params);
    }

    /// Called when the request failed (an error response, a transport failure, a timeout)
    /// after `attempt` sends: `Some(delay)` sends it again after `delay`, `None` returns the
    /// error. Default: never retry. A request that is not idempotent should not be retried
    /// on a timeout or a lost connection: the server may have acted on it.
    fn retry(&self, method: &str, attempt: u32, error: &ClientError) -> Option<Duration> {
        let _ = (method, attempt, error);
        None
    }
}
