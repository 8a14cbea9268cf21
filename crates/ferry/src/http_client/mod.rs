//! The Streamable HTTP client transport (feature `http-client`), on reqwest, for servers
//! of every era: 2026-07-28 stateless POSTs, the session era (2025-03-26 .. 2025-11-25)
//! and, as a fallback, the 2024-11-05 HTTP+SSE transport.
//!
//! [`connect`] gives an engine [`Transport`]: the client
//! ([`crate::client::ClientBuilder::connect_http`]) runs on it unchanged — it probes
//! `server/discover`, falls back to `initialize` — and the transport follows what each
//! frame is:
//!
//! - **Every request is one POST** (`Accept: application/json, text/event-stream`)
//!   answered by exactly one response frame: the server's, from a JSON body or from the
//!   request's SSE stream (whose notifications, progress say, are passed on first), or a
//!   failure of the transport's own ([`TransportEvent::Failed`](crate::engine::TransportEvent::Failed):
//!   a [`TransportError`](crate::engine::TransportError), with the HTTP status when there
//!   was one; the client reports it as `ClientError::Transport`) saying what went wrong over HTTP, where,
//!   what the server said and what to check: server unreachable, a status without a
//!   JSON-RPC body (404: no endpoint at this path; 502: a proxy's error page...), a wrong
//!   content type, a stream that ended before the response. A `-32020` (a header the
//!   server found unlike the body) is the server's answer, passed on with the headers
//!   sent and what to do added, never sent again.
//! - **Stateless era** (a request whose `_meta` names a 2026-07-28 revision): the metadata
//!   headers `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` (the
//!   last from the `x-mcp-header` annotations of the tool's schema, learnt from
//!   `tools/list`, whose invalid tools are dropped as the spec requires); values outside
//!   plain ASCII in the `=?base64?..?=` form. Cancelling a request closes its HTTP
//!   exchange, which is what cancels it on the server; `subscriptions/listen` is simply a
//!   request whose SSE stream lasts.
//! - **Session era**: `MCP-Session-Id` from the `initialize` response and the negotiated
//!   `MCP-Protocol-Version` on everything after; the standalone GET stream after
//!   `notifications/initialized` (405: none offered), reconnected with `Last-Event-ID`
//!   after the server's `retry`; a POST's SSE stream cut before its response is resumed
//!   the same way (a GET with `Last-Event-ID`); on 404 a new session is started
//!   transparently, told again what the caller had set on the old one (resource
//!   subscriptions, the log level: see `restore.rs`), its GET stream opened, and safe
//!   requests are sent again (see `session.rs`); the session is DELETEd on close.
//! - **2024-11-05**: when `initialize` is refused with 400, 404 or 405, a GET expecting an
//!   `endpoint` event; when that event stream ends (server restarted, session expired), a
//!   new session is started the same way a forgotten session-era one is (see `legacy.rs`).
//!
//! Extra headers, a shared `reqwest::Client` (its connection pool) and an authentication
//! hook ([`HttpAuth`]: headers per request, a say on 401/403) are in
//! [`HttpClientConfig`]. `https://` URLs need the feature `http-client-rustls`.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use ferry::client::Client;
//! use ferry::http_client::HttpClientConfig;
//!
//! let config = HttpClientConfig::default().header("Authorization", "Bearer t0k3n")?;
//! let (client, connection) = Client::builder("demo", "1.0.0")
//!     .connect_http("http://127.0.0.1:8080/mcp", config)
//!     .await?;
//! println!("{:?}", client.list_all_tools().await?);
//! drop(client);
//! connection.close().await; // DELETE the session
//! # Ok(())
//! # }
//! ```

mod config;
mod connection;
mod driver;
mod exchange;
mod legacy;
#[cfg(feature = "http-client-oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-client-oauth")))]
pub mod oauth;
mod outgoing;
mod restore;
mod session;
mod sse;

/// The SSE reading of responses (`sse`) on bytes given in chunks, for the fuzz targets
/// (`fuzz/checks/sse_reader.rs`). Feature `fuzzing` only; not an API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    use futures_util::StreamExt;

    /// One event as the reader delivers it.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Event {
        /// `event:`.
        pub event: Option<String>,
        /// `data:` lines joined.
        pub data: Option<String>,
        /// `id:`.
        pub id: Option<String>,
        /// `retry:`.
        pub retry: Option<u64>,
        /// What `sse::message_data` makes of it: the JSON-RPC message it carries.
        pub message: Option<Vec<u8>>,
        /// `sse::response_id` of that message.
        pub response_id: Option<ferry_protocol::RequestId>,
    }

    /// The events `sse::events` reads from a response whose body arrives as `chunks`, each
    /// event at most `max` bytes; an error ends the list.
    pub async fn events(chunks: Vec<Vec<u8>>, max: usize) -> Vec<Result<Event, String>> {
        let body = futures_util::stream::iter(
            chunks
                .into_iter()
                .map(|chunk| Ok::<_, std::io::Error>(bytes::Bytes::from(chunk))),
        );
        let response = http_response(reqwest::Body::wrap_stream(body));
        let mut events = super::sse::events(response, max);
        let mut out = Vec::new();
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => {
                    let (id, retry) = (event.id.clone(), event.retry);
                    let (name, data) = (event.event.clone(), event.data.clone());
                    let message = super::sse::message_data(event);
                    let response_id = message.as_deref().and_then(super::sse::response_id);
                    out.push(Ok(Event {
                        event: name,
                        data,
                        id,
                        retry,
                        message,
                        response_id,
                    }));
                }
                Err(e) => {
                    out.push(Err(e.to_string()));
                    break;
                }
            }
        }
        out
    }

    fn http_response(body: reqwest::Body) -> reqwest::Response {
        let mut response = http::Response::new(body);
        response
            .headers_mut()
            .insert("content-type", "text/event-stream".parse().expect("valid"));
        reqwest::Response::from(response)
    }
}

pub use config::{AuthChallenge, AuthFuture, HttpAuth, HttpClientConfig};
/// The reqwest this transport sends with, re-exported so that a program names the types of
/// its public API (`reqwest::Client` for [`HttpClientConfig::http`], `reqwest::Url`,
/// `reqwest::header::HeaderMap`) in the version Ferry uses, without depending on it.
///
/// ```
/// use std::time::Duration;
///
/// use ferry::http_client::{HttpClientConfig, reqwest};
///
/// let http = reqwest::Client::builder()
///     .connect_timeout(Duration::from_secs(5))
///     .build()
///     .unwrap();
/// let config = HttpClientConfig::default().http(http);
/// # let _ = config;
/// ```
pub use reqwest;

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::engine::Transport;
use connection::{SessionState, Shared};

/// Why an HTTP connection could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpClientError {
    /// The URL does not parse, or is not `http`/`https`.
    #[error("invalid URL {url:?}: {reason}")]
    Url {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client could not be built (TLS set-up, say).
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// The transport's side of an HTTP connection: what a caller may want to know or do
/// besides talking (the session id, closing with a DELETE).
#[derive(Debug)]
pub struct HttpConnection {
    state: Arc<Mutex<SessionState>>,
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

impl HttpConnection {
    /// The session id the server gave (session era), if any.
    pub fn session_id(&self) -> Option<String> {
        self.state().id.clone()
    }

    /// Reads the session id as it is at each call (it changes when a session is renewed).
    pub(crate) fn session_id_source(&self) -> crate::engine::SessionIdSource {
        let state = Arc::clone(&self.state);
        Arc::new(move || state.lock().unwrap_or_else(|e| e.into_inner()).id.clone())
    }

    /// Whether the server turned out to speak 2024-11-05 HTTP+SSE.
    pub fn is_legacy(&self) -> bool {
        self.state().legacy.is_some()
    }

    /// How many sessions were started (0 in the stateless era; more than 1 after the
    /// server forgot one and it was renewed).
    pub fn sessions_started(&self) -> u64 {
        self.state().generation
    }

    /// Leave the session open when the connection closes: no DELETE, so that its tasks
    /// and subscriptions stay on the server until the session expires there, and another
    /// connection can take it up ([`resume`], `ClientBuilder::resume_http`).
    pub fn keep_session(&self) {
        self.state().keep = true;
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// End the connection: abort requests in flight (their callers get "connection
    /// lost"), stop the background stream, DELETE the session, and wait for all that
    /// (the DELETE at most [`HttpClientConfig::close_timeout`]). Dropping the client
    /// without calling this does the same in the background.
    pub async fn close(self) {
        self.shutdown.cancel();
        let _ = self.task.await;
    }
}

/// Connect to the MCP endpoint at `url`: the engine's transport and the connection's
/// handle. Nothing is sent until the engine sends; must be called inside a Tokio runtime.
pub fn connect(
    url: &str,
    config: HttpClientConfig,
) -> Result<(Transport, HttpConnection), HttpClientError> {
    open(url, config, SessionState::default())
}

/// Take up session `session_id` of a session-era server (`version` is the revision its
/// `initialize` agreed on), opened by an earlier connection that kept it
/// ([`HttpConnection::keep_session`]): requests carry its id at once, with no
/// `initialize`, and the standalone GET stream is opened. A session the server has
/// forgotten is not renewed (there is no `initialize` to replay): requests then fail with
/// the server's 404.
pub fn resume(
    url: &str,
    config: HttpClientConfig,
    session_id: &str,
    version: ferry_protocol::ProtocolVersion,
) -> Result<(Transport, HttpConnection), HttpClientError> {
    let state = SessionState {
        id: Some(session_id.to_owned()),
        version: Some(version.as_str().to_owned()),
        ..Default::default()
    };
    open(url, config, state)
}

fn open(
    url: &str,
    config: HttpClientConfig,
    state: SessionState,
) -> Result<(Transport, HttpConnection), HttpClientError> {
    let resumed = state.id.is_some();
    let parsed = reqwest::Url::parse(url).map_err(|e| HttpClientError::Url {
        url: url.to_owned(),
        reason: e.to_string(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(HttpClientError::Url {
            url: url.to_owned(),
            reason: "the scheme must be http or https".into(),
        });
    }
    let http = match &config.http {
        Some(http) => http.clone(),
        None => reqwest::Client::builder()
            .build()
            .map_err(|e| HttpClientError::Client(connection::describe(&e)))?,
    };
    let (in_tx, in_rx) = mpsc::channel(config.queue);
    let (out_tx, out_rx) = mpsc::channel(config.queue);
    let state = Arc::new(Mutex::new(state));
    let shared = Arc::new(Shared::new(http, parsed, config, in_tx, Arc::clone(&state)));
    if resumed {
        session::open_standalone(&shared);
    }
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(driver::run(shared, out_rx, shutdown.clone()));
    let connection = HttpConnection {
        state,
        shutdown,
        task,
    };
    Ok((Transport::new(in_rx, out_tx), connection))
}
