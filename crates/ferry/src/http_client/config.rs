//! How the HTTP client connects: extra headers, a shared `reqwest::Client` (its
//! connection pool), the authentication hook, reconnection and size limits.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// A boxed future, as the [`HttpAuth`] hook returns.
pub type AuthFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A refusal the [`HttpAuth`] hook may act on: the server answered 401 or 403.
#[derive(Clone)]
pub struct AuthChallenge {
    /// 401 or 403.
    pub status: u16,
    /// The `WWW-Authenticate` headers of the response, as text.
    pub www_authenticate: Vec<String>,
    /// The URL that refused.
    pub url: reqwest::Url,
    /// The headers [`HttpAuth::headers`] gave the refused request (which token was
    /// refused, when several requests were in flight). Debug output shows their names only.
    pub sent: HeaderMap,
}

impl std::fmt::Debug for AuthChallenge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthChallenge")
            .field("status", &self.status)
            .field("www_authenticate", &self.www_authenticate)
            .field("url", &self.url.as_str())
            .field("sent", &self.sent.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Authentication for every HTTP request the client makes (POST, GET streams, DELETE):
/// the hook an OAuth implementation plugs into.
///
/// [`HttpAuth::headers`] is asked before each request (so a token can be refreshed
/// between requests); when the server answers 401 or 403, [`HttpAuth::challenged`] sees
/// the challenge and says whether to send the request again (with fresh headers).
pub trait HttpAuth: Send + Sync + 'static {
    /// Headers to add to the next request (say, `Authorization: Bearer ...`). An error
    /// fails that request with its message.
    fn headers(&self) -> AuthFuture<'_, Result<HeaderMap, String>>;

    /// The server refused a request: return `true` to send it again with new
    /// [`HttpAuth::headers`] (after obtaining a token, say), `false` to give up (the
    /// request then fails with the HTTP status). One request is sent again at most three
    /// times (a token, then a step-up, then one more). Default: give up.
    fn challenged<'a>(&'a self, challenge: &'a AuthChallenge) -> AuthFuture<'a, bool> {
        let _ = challenge;
        Box::pin(async { false })
    }
}

/// How an HTTP client transport behaves. `Default` gives sensible values.
#[derive(Clone)]
pub struct HttpClientConfig {
    /// Headers sent with every request (e.g. `Authorization`).
    pub headers: HeaderMap,
    /// The `reqwest::Client` to use: share one between connections to share its pool.
    /// Default: a new one.
    pub http: Option<reqwest::Client>,
    /// Authentication hook. Default: none.
    pub auth: Option<Arc<dyn HttpAuth>>,
    /// Session era: open the standalone GET stream after initialization (the server's
    /// notifications and requests unrelated to a request arrive on it). Default: yes.
    pub standalone_stream: bool,
    /// The reconnection delay when the server sent no `retry` field. Default: 1 s.
    pub default_retry: Duration,
    /// Reconnection attempts in a row (resuming a stream; starting a new 2024-11-05
    /// session after its event stream ended) before giving up. Default: 5.
    pub max_reconnects: u32,
    /// Try the 2024-11-05 HTTP+SSE transport when `initialize` is refused with a 4xx.
    /// Default: yes.
    pub legacy_fallback: bool,
    /// The largest message accepted from the server (a JSON body or one SSE event).
    /// Default: 64 MiB ([`DEFAULT_CLIENT_MAX_MESSAGE_BYTES`](ferry_protocol::jsonrpc::DEFAULT_CLIENT_MAX_MESSAGE_BYTES)).
    pub max_message_bytes: usize,
    /// Frames queued between the transport and the engine. Default: 64.
    pub queue: usize,
    /// How long closing waits for the session's DELETE. Default: 2 s.
    pub close_timeout: Duration,
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        HttpClientConfig {
            headers: HeaderMap::new(),
            http: None,
            auth: None,
            standalone_stream: true,
            default_retry: Duration::from_secs(1),
            max_reconnects: 5,
            legacy_fallback: true,
            max_message_bytes: ferry_protocol::jsonrpc::DEFAULT_CLIENT_MAX_MESSAGE_BYTES,
            queue: 64,
            close_timeout: Duration::from_secs(2),
        }
    }
}

impl std::fmt::Debug for HttpClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientConfig")
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("auth", &self.auth.is_some())
            .field("standalone_stream", &self.standalone_stream)
            .field("default_retry", &self.default_retry)
            .field("max_reconnects", &self.max_reconnects)
            .field("legacy_fallback", &self.legacy_fallback)
            .finish_non_exhaustive()
    }
}

impl HttpClientConfig {
    /// Send `name: value` with every request. Errors when either is not a valid header.
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, String> {
        let name = HeaderName::try_from(name).map_err(|e| format!("header name {name:?}: {e}"))?;
        let value =
            HeaderValue::try_from(value).map_err(|e| format!("header value of {name}: {e}"))?;
        self.headers.append(name, value);
        Ok(self)
    }

    /// Use this `reqwest::Client` (and its connection pool): build it with the reqwest
    /// Ferry re-exports, `ferry::http_client::reqwest`.
    pub fn http(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Authenticate with `auth`.
    pub fn auth(mut self, auth: Arc<dyn HttpAuth>) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Open (or not) the session era's standalone GET stream.
    pub fn standalone_stream(mut self, open: bool) -> Self {
        self.standalone_stream = open;
        self
    }
}
