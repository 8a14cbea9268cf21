//! Middleware around every request and notification a server handles: the trait, the
//! chain, and the middleware Ferry ships (see [`Middleware`]).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferry_protocol::jsonrpc::{ErrorObject, RequestId};
use ferry_protocol::types::RequestMeta;
use ferry_protocol::{Era, ProtocolVersion};

use crate::engine::{Attachment, Cancellation, HandlerResult};

/// A boxed future, as middleware return them.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The code that answers a request: the session's routing, behind every middleware.
pub(crate) type End<'a> = Box<dyn FnOnce() -> BoxFuture<'a, HandlerResult> + Send + 'a>;

/// What a middleware knows of a request.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RequestInfo {
    /// The method, e.g. `tools/call`.
    pub method: String,
    /// The request's id.
    pub id: RequestId,
    /// The tool or prompt name (`tools/call`, `prompts/get`), or the resource URI
    /// (`resources/read`, `resources/subscribe`, `resources/unsubscribe`).
    pub target: Option<String>,
    /// The session the request came on: over HTTP its `Mcp-Session-Id` (or HTTP+SSE
    /// `sessionId`), the same on every instance sharing it; otherwise `connection-N`,
    /// naming the connection (stdio, a stateless-era request).
    pub session: Arc<str>,
    /// The revision the request speaks (`None` before `initialize` in the session era).
    pub version: Option<ProtocolVersion>,
    /// The params as they came (JSON text), for middleware that inspect arguments.
    pub params: Option<Arc<str>>,
    /// The request's `_meta` (empty when it has none).
    pub meta: Arc<RequestMeta>,
    /// Cancelled when the client cancels the request or hangs up (the chain's future is
    /// then dropped at its next `.await`; see [`Cancel`](super::Cancel)).
    pub cancel: Cancellation,
    pub(crate) attachment: Option<Attachment>,
}

impl RequestInfo {
    /// The era of the request's revision.
    pub fn era(&self) -> Option<Era> {
        self.version.map(ProtocolVersion::era)
    }

    /// What the transport attached to the request (the HTTP server's verified claims with
    /// feature `http-auth`: see `claims`).
    pub fn attachment<T: std::any::Any>(&self) -> Option<&T> {
        self.attachment.as_ref().and_then(Attachment::get)
    }

    /// The verified claims of the request's bearer token (HTTP with `http-auth`).
    #[cfg(feature = "http-auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-auth")))]
    pub fn claims(&self) -> Option<&super::Claims> {
        self.attachment::<Arc<super::Claims>>()
            .map(|claims| &**claims)
    }

    /// Who is asking: the token's issuer, subject and client over HTTP with `http-auth`;
    /// over HTTP without it, the client's address ([`ClientAddress`]); otherwise the
    /// session (a stdio connection is its own caller).
    ///
    /// [`ClientAddress`]: crate::engine::ClientAddress
    pub fn principal(&self) -> String {
        #[cfg(feature = "http-auth")]
        if let Some(claims) = self.claims() {
            return claims.principal();
        }
        if let Some(crate::engine::ClientAddress(address)) = self.attachment() {
            return format!("address {address}");
        }
        format!("session {}", self.session)
    }
}

/// A notification the server received, as middleware see it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct NotificationInfo {
    /// The method, e.g. `notifications/cancelled`.
    pub method: String,
    /// The connection or HTTP session it came on.
    pub session: Arc<str>,
}

/// Middleware: code of the application's own around every request a server answers and
/// every notification it receives — timing, limits, authorization, audit logs.
///
/// A [`Middleware`] gets the request's [`RequestInfo`] (method, tool/prompt name or
/// resource URI, session, revision and era, `_meta`, the verified OAuth claims over HTTP,
/// cancellation) and [`Next`], the rest of the chain ending in the server's own handling.
/// It may answer at once (an error, a result), call `next.run()` and return what it gives,
/// or change that. Middleware run in the order given to [`ServerBuilder::middleware`](super::ServerBuilder::middleware): the
/// first sees the request first and the reply last. A panicking middleware is answered
/// `-32603`, like a panicking handler, and the server goes on.
///
/// ```
/// use ferry::engine::HandlerResult;
/// use ferry::protocol::jsonrpc::ErrorObject;
/// use ferry::server::{BoxFuture, Middleware, Next, RequestInfo, Server};
///
/// /// Refuses every tool whose name starts with `admin_`.
/// struct NoAdmin;
///
/// impl Middleware for NoAdmin {
///     fn handle<'a>(&'a self, request: &'a RequestInfo, next: Next<'a>) -> BoxFuture<'a, HandlerResult> {
///         Box::pin(async move {
///             if request.method == "tools/call"
///                 && request.target.as_deref().is_some_and(|t| t.starts_with("admin_"))
///             {
///                 return Err(ErrorObject::invalid_params("no admin tools here"));
///             }
///             next.run().await
///         })
///     }
/// }
///
/// let server = Server::builder("guarded", "1").middleware(NoAdmin).build();
/// # let _ = server;
/// ```
///
/// Shipped: [`Metrics`] (counts, errors and durations per method and target),
/// [`ConcurrencyLimit`] and [`RateLimit`] (per principal), [`Authorize`] (a check of your
/// own before anything runs) and [`LogRequests`] (a `tracing` event per request, with the
/// arguments you name redacted).
pub trait Middleware: Send + Sync + 'static {
    /// Handle `request`: usually by calling `next.run().await`, before and after which the
    /// middleware does its work; returning without calling it answers the request with
    /// what is returned, and nothing else runs.
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, HandlerResult>;

    /// See a notification before the server does; `false` drops it. Default: `true`.
    fn notification(&self, notification: &NotificationInfo) -> bool {
        let _ = notification;
        true
    }

    /// A session-era session began: the server answered its `initialize`. With sessions
    /// shared through a `SessionStore`, only the instance that answered the client's
    /// `initialize` hears it; an instance adopting the session replays it without hooks
    /// or middleware. Default: nothing. (The stateless era has no sessions.)
    fn session_started(&self, session: &SessionInfo) {
        let _ = session;
    }

    /// A session that [began](Self::session_started) here ended, `lasted` after it began:
    /// its connection closed (stdio ended, the HTTP session was deleted or expired, or
    /// this instance let go of a session shared through a `SessionStore`, which may live
    /// on at other instances). Default: nothing.
    fn session_ended(&self, session: &SessionInfo, lasted: Duration) {
        let _ = (session, lasted);
    }
}

/// A session as middleware see it begin and end (see [`Middleware::session_started`]).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::time::Duration;
///
/// use ferry::engine::HandlerResult;
/// use ferry::server::{BoxFuture, Middleware, Next, RequestInfo, Server, SessionInfo};
///
/// /// Counts the sessions open now.
/// #[derive(Default)]
/// struct OpenSessions(AtomicU64);
///
/// impl Middleware for OpenSessions {
///     fn handle<'a>(&'a self, request: &'a RequestInfo, next: Next<'a>) -> BoxFuture<'a, HandlerResult> {
///         Box::pin(next.run())
///     }
///
///     fn session_started(&self, _session: &SessionInfo) {
///         self.0.fetch_add(1, Ordering::Relaxed);
///     }
///
///     fn session_ended(&self, _session: &SessionInfo, _lasted: Duration) {
///         self.0.fetch_sub(1, Ordering::Relaxed);
///     }
/// }
///
/// let server = Server::builder("counted", "1").middleware(OpenSessions::default()).build();
/// # let _ = server;
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SessionInfo {
    /// The connection or HTTP session, as in [`RequestInfo::session`].
    pub session: Arc<str>,
    /// The revision `initialize` negotiated.
    pub version: ProtocolVersion,
}

/// Run a session hook of each middleware; a panicking one is logged and the others run.
pub(crate) fn session_hook(chain: &[Arc<dyn Middleware>], hook: impl Fn(&dyn Middleware)) {
    for middleware in chain {
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&**middleware)));
        if ran.is_err() {
            tracing::error!("a middleware's session hook panicked");
        }
    }
}

/// The rest of the chain after a middleware: the later middleware, then the server.
pub struct Next<'a> {
    rest: &'a [Arc<dyn Middleware>],
    request: &'a RequestInfo,
    end: End<'a>,
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("middleware_left", &self.rest.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Next<'a> {
    pub(crate) fn new(
        chain: &'a [Arc<dyn Middleware>],
        request: &'a RequestInfo,
        end: End<'a>,
    ) -> Self {
        Next {
            rest: chain,
            request,
            end,
        }
    }

    /// Run the rest of the chain and return its answer.
    pub async fn run(self) -> HandlerResult {
        match self.rest.split_first() {
            Some((first, rest)) => {
                let next = Next {
                    rest,
                    request: self.request,
                    end: self.end,
                };
                first.handle(self.request, next).await
            }
            None => (self.end)().await,
        }
    }
}

/// Counts, errors and durations of requests, per method and target. A tool result that
/// says `isError` counts as an error (and in [`OperationStats::tool_errors`]), as a
/// JSON-RPC error does.
///
/// ```
/// use ferry::protocol::ProtocolVersion;
/// use ferry::server::{Metrics, Server, TestClient};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let metrics = Metrics::new();
/// let server = Server::builder("m", "1")
///     .middleware(metrics.clone())
///     .tool("fail", "Fails", |_: ()| async { Err::<String, _>("no disk") })
///     .build();
/// let client = TestClient::connect(&server, ProtocolVersion::V2025_06_18).await.unwrap();
/// client.call_tool("fail", serde_json::json!({})).await.unwrap(); // an isError result
/// let fail = metrics.snapshot()[&("tools/call".to_owned(), Some("fail".to_owned()))];
/// assert_eq!((fail.count, fail.errors, fail.tool_errors), (1, 1, 1));
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    table: Arc<Mutex<OperationTable>>,
}

/// [`Metrics`]' figures by `(method, target)`.
pub type OperationTable = HashMap<(String, Option<String>), OperationStats>;

/// What [`Metrics`] measured of one method and target.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct OperationStats {
    /// Requests answered.
    pub count: u64,
    /// Of which failed: answered with a JSON-RPC error, or (`tools/call`) with a result
    /// that says `isError`.
    pub errors: u64,
    /// Of the errors, the `isError` tool results (the tool ran and reported a failure);
    /// the others are JSON-RPC errors.
    pub tool_errors: u64,
    /// Time spent answering, in all.
    pub total: Duration,
    /// The longest answer.
    pub max: Duration,
}

impl Metrics {
    /// Empty metrics, to give to [`ServerBuilder::middleware`](super::ServerBuilder::middleware) (a clone) and read later.
    pub fn new() -> Self {
        Self::default()
    }

    /// The figures so far, by `(method, target)`.
    pub fn snapshot(&self) -> OperationTable {
        self.table.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Middleware for Metrics {
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, HandlerResult> {
        Box::pin(async move {
            let started = Instant::now();
            let result = next.run().await;
            let took = started.elapsed();
            let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
            let stats = table
                .entry((request.method.clone(), request.target.clone()))
                .or_default();
            let tool_error = request.method == "tools/call"
                && result.as_ref().is_ok_and(|json| is_tool_error(json.get()));
            stats.count += 1;
            stats.errors += u64::from(result.is_err() || tool_error);
            stats.tool_errors += u64::from(tool_error);
            stats.total += took;
            stats.max = stats.max.max(took);
            result
        })
    }
}

/// The handshake and `ping`, which the limits do not count: a caller must always be
/// able to connect and to check that the server lives.
fn is_free(method: &str) -> bool {
    matches!(method, "ping" | "initialize" | "server/discover")
}

/// Whether the result text of a `tools/call` is an `isError` result: a quick look for the
/// member first, then a parse of the top level only when it is there (`"isError":true`
/// may also occur inside `structuredContent`).
pub(crate) fn is_tool_error(result: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    result.contains("\"isError\":true")
        && serde_json::from_str::<Flag>(result).is_ok_and(|f| f.is_error == Some(true))
}

/// At most `limit` requests in flight per principal ([`RequestInfo::principal`]); one
/// more is refused at once with `-32000` ("too many requests in flight"), not queued.
/// The handshake (`initialize`, `server/discover`) and `ping` are not counted.
#[derive(Clone, Debug)]
pub struct ConcurrencyLimit {
    limit: usize,
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
}

impl ConcurrencyLimit {
    /// At most `limit` requests in flight per principal.
    pub fn per_principal(limit: usize) -> Self {
        ConcurrencyLimit {
            limit: limit.max(1),
            in_flight: Arc::default(),
        }
    }
}

/// Takes one slot of a principal; gives it back when dropped (the request answered or
/// abandoned).
struct Slot<'a> {
    in_flight: &'a Mutex<HashMap<String, usize>>,
    principal: String,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = in_flight.get_mut(&self.principal) {
            *count -= 1;
            if *count == 0 {
                in_flight.remove(&self.principal);
            }
        }
    }
}

impl Middleware for ConcurrencyLimit {
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, HandlerResult> {
        Box::pin(async move {
            if is_free(&request.method) {
                return next.run().await;
            }
            let principal = request.principal();
            let slot = {
                let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
                let count = in_flight.entry(principal.clone()).or_default();
                if *count >= self.limit {
                    return Err(ErrorObject::new(
                        -32000,
                        format!(
                            "too many requests in flight: at most {} per caller",
                            self.limit
                        ),
                    ));
                }
                *count += 1;
                Slot {
                    in_flight: &self.in_flight,
                    principal,
                }
            };
            let result = next.run().await;
            drop(slot);
            result
        })
    }
}

/// At most `burst` requests at once and `per_second` on average per principal (a token
/// bucket); a request over the rate is refused with `-32000` saying when to retry (its
/// `data.retryAfterMs`). The handshake (`initialize`, `server/discover`) and `ping` are
/// not counted, nor are notifications: a caller's budget is for its own requests.
///
/// ```
/// use ferry::server::{RateLimit, Server};
///
/// // Two requests at once, then one every two seconds, per caller.
/// let server = Server::builder("limited", "1")
///     .middleware(RateLimit::per_principal(0.5, 2))
///     .build();
/// # let _ = server;
/// ```
#[derive(Clone, Debug)]
pub struct RateLimit {
    per_second: f64,
    burst: f64,
    buckets: Arc<Mutex<HashMap<String, (f64, Instant)>>>,
}

/// The most principals a [`RateLimit`] tracks; past it, the full buckets are forgotten
/// (a full bucket is what a new principal gets anyway).
const MAX_TRACKED: usize = 100_000;

impl RateLimit {
    /// `per_second` requests per second on average, `burst` at most at once, per principal.
    pub fn per_principal(per_second: f64, burst: u32) -> Self {
        RateLimit {
            per_second: per_second.max(f64::MIN_POSITIVE),
            burst: f64::from(burst.max(1)),
            buckets: Arc::default(),
        }
    }

    /// Take a token of `principal`'s bucket, or the time until one is there.
    fn take(&self, principal: String) -> Result<(), Duration> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= MAX_TRACKED && !buckets.contains_key(&principal) {
            let (rate, burst) = (self.per_second, self.burst);
            buckets.retain(|_, (tokens, at)| {
                *tokens + now.duration_since(*at).as_secs_f64() * rate < burst
            });
        }
        let (tokens, at) = buckets.entry(principal).or_insert((self.burst, now));
        *tokens =
            (*tokens + now.duration_since(*at).as_secs_f64() * self.per_second).min(self.burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / self.per_second))
        }
    }
}

impl Middleware for RateLimit {
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, HandlerResult> {
        Box::pin(async move {
            if !is_free(&request.method)
                && let Err(wait) = self.take(request.principal())
            {
                let retry_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
                return Err(ErrorObject::new(
                    -32000,
                    format!("rate limit exceeded: retry in {retry_ms} ms"),
                )
                .with_data(serde_json::json!({ "retryAfterMs": retry_ms })));
            }
            next.run().await
        })
    }
}

/// A check of the application's own before anything else runs: `check` returns `Err`
/// with the error to answer (`-32600` or an application code, say) to refuse a request.
///
/// ```
/// use ferry::protocol::jsonrpc::ErrorObject;
/// use ferry::server::{Authorize, Server};
///
/// let read_only = Authorize::new(|request| match request.method.as_str() {
///     "resources/subscribe" => Err(ErrorObject::invalid_request("subscriptions are off")),
///     _ => Ok(()),
/// });
/// let server = Server::builder("a", "1").middleware(read_only).build();
/// # let _ = server;
/// ```
pub struct Authorize<F> {
    check: F,
}

impl<F> std::fmt::Debug for Authorize<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorize").finish_non_exhaustive()
    }
}

impl<F> Authorize<F>
where
    F: Fn(&RequestInfo) -> Result<(), ErrorObject> + Send + Sync + 'static,
{
    /// Refuse the requests `check` refuses.
    pub fn new(check: F) -> Self {
        Authorize { check }
    }
}

impl<F> Middleware for Authorize<F>
where
    F: Fn(&RequestInfo) -> Result<(), ErrorObject> + Send + Sync + 'static,
{
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, HandlerResult> {
        match (self.check)(request) {
            Ok(()) => Box::pin(next.run()),
            Err(error) => Box::pin(std::future::ready(Err(error))),
        }
    }
}

/// A `tracing` event per request answered (target `ferry::requests`, level INFO): method,
/// target, principal, duration, outcome and the params, with the values of the argument
/// names given to [`redact`](Self::redact) replaced by `"[redacted]"` wherever they occur.
#[derive(Clone, Debug, Default)]
pub struct LogRequests {
    redact: Arc<[String]>,
}

impl LogRequests {
    /// Log every request, nothing redacted.
    pub fn new() -> Self {
        Self::default()
    }

    /// Redact the values of members with these names (at any depth of the params).
    #[must_use]
    pub fn redact<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.redact = names.into_iter().map(Into::into).collect();
        self
    }

    /// The params as logged: parsed, with the redacted members' values replaced.
    pub fn redacted(&self, params: &str) -> String {
        let Ok(mut value) = serde_json::from_str::<serde_json::Value>(params) else {
            return "(params that are not JSON)".to_owned();
        };
        redact(&mut value, &self.redact);
        value.to_string()
    }
}

fn redact(value: &mut serde_json::Value, names: &[String]) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, member) in map.iter_mut() {
                if names.iter().any(|n| n == key) {
                    *member = serde_json::Value::from("[redacted]");
                } else {
                    redact(member, names);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| redact(v, names)),
        _ => {}
    }
}

impl Middleware for LogRequests {
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, HandlerResult> {
        Box::pin(async move {
            let started = Instant::now();
            let result = next.run().await;
            let params = request
                .params
                .as_deref()
                .map(|p| self.redacted(p))
                .unwrap_or_default();
            let outcome = match &result {
                Ok(_) => "ok".to_owned(),
                Err(error) => format!("error {}", error.code),
            };
            tracing::info!(
                target: "ferry::requests",
                method = %request.method,
                target_name = request.target.as_deref().unwrap_or(""),
                principal = %request.principal(),
                duration_us = started.elapsed().as_micros() as u64,
                outcome = %outcome,
                params = %params,
                "request answered"
            );
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::is_tool_error;

    #[test]
    fn tool_errors_are_found_at_the_top_level_only() {
        assert!(is_tool_error(r#"{"content":[],"isError":true}"#));
        assert!(!is_tool_error(r#"{"content":[],"isError":false}"#));
        assert!(!is_tool_error(
            r#"{"content":[],"structuredContent":{"isError":true}}"#
        ));
        assert!(!is_tool_error(
            r#"{"content":[{"type":"text","text":"\"isError\":true"}]}"#
        ));
    }
}
