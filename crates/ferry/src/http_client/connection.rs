//! What every task of one HTTP connection shares: the endpoint, the session, the way to the
//! engine, and sending a request with the configured headers and the auth hook.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use ferry_protocol::RequestId;
use futures_util::FutureExt as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Method, RequestBuilder, Response, StatusCode, Url};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use super::config::{AuthChallenge, HttpClientConfig};
use super::outgoing::ToolInfo;
use super::restore::Restorable;
use crate::engine::{TransportError, TransportEvent};

/// `MCP-Session-Id`.
pub(crate) const SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version`.
pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Accept` of a POST: both kinds of answer.
pub(crate) const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// The session-era state of a connection (and the 2024-11-05 fallback's endpoint).
#[derive(Clone, Debug, Default)]
pub(crate) struct SessionState {
    /// `MCP-Session-Id`, when the server gave one.
    pub(crate) id: Option<String>,
    /// The revision `initialize` agreed on (session era).
    pub(crate) version: Option<String>,
    /// The `initialize` request that started the session, replayed to start a new one.
    pub(crate) initialize: Option<Bytes>,
    /// The `notifications/initialized` that followed it.
    pub(crate) initialized: Option<Bytes>,
    /// 2024-11-05 HTTP+SSE: where messages are posted.
    pub(crate) legacy: Option<Url>,
    /// Counts (re)initializations, so concurrent failures re-initialize once.
    pub(crate) generation: u64,
    /// What the caller set on the session (subscriptions, log level), for a new one.
    pub(crate) restorable: Restorable,
    /// Leave the session open when the connection closes (no DELETE).
    pub(crate) keep: bool,
}

impl SessionState {
    /// Whether messages follow the session era (or 2024-11-05) rules.
    pub(crate) fn session_era(&self) -> bool {
        self.version.is_some() || self.legacy.is_some()
    }
}

/// Why one request got no response from the server: handed to the engine as a
/// [`TransportError`] (with the HTTP status when there was one).
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) status: Option<StatusCode>,
}

impl Failure {
    pub(crate) fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            status: None,
        }
    }

    pub(crate) fn status(status: StatusCode, message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            status: Some(status),
        }
    }
}

pub(crate) struct Shared {
    pub(crate) http: reqwest::Client,
    pub(crate) url: Url,
    pub(crate) config: HttpClientConfig,
    to_engine: mpsc::Sender<TransportEvent>,
    pub(crate) state: Arc<Mutex<SessionState>>,
    /// Held while a new session is started after the old one expired.
    pub(crate) reinit: tokio::sync::Mutex<()>,
    /// What `tools/list` said about each tool (headers to mirror, idempotence).
    pub(crate) tools: Mutex<HashMap<String, ToolInfo>>,
    /// Requests in flight, by id: a cancelled one is aborted (its HTTP exchange closed).
    pub(crate) in_flight: Mutex<HashMap<RequestId, AbortHandle>>,
    /// The background stream: the session's GET stream, or the 2024-11-05 event stream.
    pub(crate) background: Mutex<Option<AbortHandle>>,
    /// Fired when the connection is over (closed, or the 2024-11-05 stream ended and no
    /// new session could be started).
    pub(crate) closed: CancellationToken,
    /// 2024-11-05: the requests whose responses are due on the event stream.
    pub(crate) legacy: super::legacy::Tracker,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    pub(crate) fn new(
        http: reqwest::Client,
        url: Url,
        config: HttpClientConfig,
        to_engine: mpsc::Sender<TransportEvent>,
        state: Arc<Mutex<SessionState>>,
    ) -> Shared {
        Shared {
            http,
            url,
            config,
            to_engine,
            state,
            reinit: tokio::sync::Mutex::new(()),
            tools: Mutex::default(),
            in_flight: Mutex::default(),
            background: Mutex::default(),
            closed: CancellationToken::new(),
            legacy: Default::default(),
        }
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, SessionState> {
        lock(&self.state)
    }

    pub(crate) fn tools(&self) -> MutexGuard<'_, HashMap<String, ToolInfo>> {
        lock(&self.tools)
    }

    pub(crate) fn in_flight(&self) -> MutexGuard<'_, HashMap<RequestId, AbortHandle>> {
        lock(&self.in_flight)
    }

    /// Replace the background stream task (aborting the previous one).
    pub(crate) fn set_background(&self, task: Option<AbortHandle>) {
        if let Some(old) = std::mem::replace(&mut *lock(&self.background), task) {
            old.abort();
        }
    }

    /// Hand a frame from the server to the engine.
    pub(crate) async fn deliver(&self, frame: Vec<u8>) {
        if self
            .to_engine
            .send(TransportEvent::Frame(frame))
            .await
            .is_err()
        {
            tracing::debug!("the engine is gone; a message from the server was dropped");
        }
    }

    /// Fail request `id` with the transport's failure (a typed event: the engine fails
    /// the call with it, no JSON-RPC answer is made up).
    pub(crate) async fn fail(&self, id: &RequestId, failure: Failure) {
        let error = TransportError {
            message: failure.message,
            status: failure.status.map(|s| s.as_u16()),
        };
        if self
            .to_engine
            .send(TransportEvent::Failed(Box::new((id.clone(), error))))
            .await
            .is_err()
        {
            tracing::debug!("the engine is gone; a transport failure was dropped");
        }
    }

    /// A request to the endpoint (or `url`) with the configured headers.
    pub(crate) fn request(&self, method: Method, url: &Url) -> RequestBuilder {
        self.http
            .request(method, url.clone())
            .headers(self.config.headers.clone())
    }

    /// A POST of one JSON-RPC frame, accepting JSON or SSE.
    pub(crate) fn post(&self, url: &Url, body: Bytes) -> RequestBuilder {
        self.request(Method::POST, url)
            .header(ACCEPT, ACCEPT_BOTH)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
    }

    /// Add the session headers of `state` (id and negotiated revision).
    pub(crate) fn with_session(builder: RequestBuilder, state: &SessionState) -> RequestBuilder {
        let mut builder = builder;
        if let Some(id) = &state.id {
            builder = builder.header(SESSION_ID, id);
        }
        if let Some(version) = &state.version {
            builder = builder.header(PROTOCOL_VERSION, version);
        }
        builder
    }

    /// Send a request built by `build` with the auth hook's headers; on 401/403, let the
    /// hook react and send it again if it asks to ([`MAX_AUTH_RETRIES`] times at most: a
    /// 401 answered with a token, then a 403 answered with a step-up, is two).
    pub(crate) async fn send(
        &self,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<Response, Failure> {
        let mut retries = 0;
        loop {
            let mut builder = build();
            let mut sent = HeaderMap::new();
            if let Some(auth) = &self.config.auth {
                // A panicking hook fails this request (instead of leaving it unanswered).
                sent = AssertUnwindSafe(auth.headers())
                    .catch_unwind()
                    .await
                    .map_err(|_| Failure::new("the authentication hook panicked"))?
                    .map_err(Failure::new)?;
                builder = builder.headers(sent.clone());
            }
            let response = builder
                .send()
                .await
                .map_err(|e| Failure::new(unreachable(&e)))?;
            let status = response.status();
            let refused = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
            if let (true, true, Some(auth)) =
                (refused, retries < MAX_AUTH_RETRIES, &self.config.auth)
            {
                let challenge = AuthChallenge {
                    status: status.as_u16(),
                    www_authenticate: response
                        .headers()
                        .get_all(reqwest::header::WWW_AUTHENTICATE)
                        .iter()
                        .filter_map(|v| v.to_str().ok().map(str::to_owned))
                        .collect(),
                    url: response.url().clone(),
                    sent,
                };
                let retry = AssertUnwindSafe(auth.challenged(&challenge))
                    .catch_unwind()
                    .await
                    .map_err(|_| Failure::new("the authentication hook panicked"))?;
                if retry {
                    retries += 1;
                    continue;
                }
            }
            return Ok(response);
        }
    }
}

/// Why a request got no HTTP answer at all, and what to check.
pub(crate) fn unreachable(error: &reqwest::Error) -> String {
    let url = error
        .url()
        .map_or_else(|| "the server".to_owned(), |u| u.to_string());
    // The innermost cause says it best ("Connection refused (os error 111)").
    let mut cause = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        cause = inner.to_string();
        source = inner.source();
    }
    if error.is_connect() {
        format!("cannot connect to {url}: {cause}; is the server running there?")
    } else if error.is_timeout() {
        format!("{url} did not answer in time")
    } else {
        format!("the request to {url} failed: {}", describe(error))
    }
}

/// What an HTTP status without a JSON-RPC answer most likely means, to add to the error.
pub(crate) fn hint(status: StatusCode) -> Option<&'static str> {
    Some(match status.as_u16() {
        401 | 403 => "the server wants authorization: an Authorization header, or OAuth",
        404 => {
            "there is no MCP endpoint at this URL: check its path, often /mcp (or /sse for a 2024-11-05 server)"
        }
        405 => "this URL does not take the request's method: check that it is an MCP endpoint",
        406 | 415 => {
            "the server refused the request's Accept or Content-Type: it may not speak MCP over HTTP"
        }
        413 => "the message is larger than the server accepts",
        429 => "the server is limiting requests: try again later",
        502..=504 => "the server, or a proxy in front of it, is unavailable: try again later",
        500..=599 => "the server failed: see its logs",
        _ => return None,
    })
}

/// How many times one request is sent again because the auth hook asked to.
pub(crate) const MAX_AUTH_RETRIES: u32 = 3;

/// A reqwest error with its causes (reqwest's own message omits "connection refused").
pub(crate) fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The media type of a response, lowercased, without parameters.
pub(crate) fn media_type(response: &Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Read a whole body, at most `max` bytes.
pub(crate) async fn body(mut response: Response, max: usize) -> Result<Vec<u8>, Failure> {
    let status = response.status();
    let mut out = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| Failure::status(status, format!("reading the body: {}", describe(&e))))?
    {
        if out.len() + chunk.len() > max {
            return Err(Failure::status(
                status,
                format!("the response exceeds the limit of {max} bytes"),
            ));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}
