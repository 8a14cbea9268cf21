//! A Streamable HTTP server as a raw peer: every frame is a POST (with the session id, the
//! protocol version and, in the stateless era, the `Mcp-Method`/`Mcp-Name` headers a
//! client must send), and whatever comes back, a JSON body or an SSE stream, is fed to the
//! connection's incoming queue as it arrives. Each exchange's status and headers are kept
//! for the HTTP checks.
//!
//! Every request carries the headers the server was named with (`--header`, a host entry's
//! `headers`) and what the authorization hook gives (the client commands' OAuth, answering
//! a refusal that comes with a `WWW-Authenticate` challenge, then sending again).

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use ferry::http_client::{AuthChallenge, HttpAuth};
use futures_util::{Stream, StreamExt as _};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use sse_stream::{Sse, SseStream};
use tokio::sync::mpsc;

use super::target::Received;
use crate::client::auth::Gate;

/// The session header.
pub(crate) const SESSION: &str = "mcp-session-id";
/// The protocol version header.
pub(crate) const VERSION: &str = "mcp-protocol-version";
/// What a client accepts on a POST.
const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// How many times one request is sent again after an authorization challenge (a token,
/// then a step-up, then one more), as the HTTP client transport does.
const MAX_CHALLENGES: usize = 3;

/// One POST: what was sent, what came back (headers; the body went to the queue).
#[derive(Clone, Debug)]
pub(crate) struct Exchange {
    pub(crate) method: Option<String>,
    pub(crate) is_request: bool,
    pub(crate) status: StatusCode,
    pub(crate) content_type: String,
    pub(crate) session: Option<String>,
}

/// The HTTP side of a connection.
pub(crate) struct HttpPeer {
    client: reqwest::Client,
    pub(crate) url: String,
    /// The session id the server assigned, once it did.
    pub(crate) session: Option<String>,
    /// The `MCP-Protocol-Version` header for requests without `_meta`.
    pub(crate) version: Option<String>,
    /// Whether requests carry the stateless era's `Mcp-Method` header.
    pub(crate) stateless: bool,
    tx: mpsc::Sender<Received>,
    /// Adds the authorization headers, and answers the server's challenges.
    auth: Arc<Gate>,
    /// How long a JSON body may take.
    timeout: Duration,
    /// Every POST's outcome, in order.
    pub(crate) exchanges: Vec<Exchange>,
}

impl HttpPeer {
    pub(crate) fn new(
        url: &str,
        headers: &[(String, String)],
        auth: Arc<Gate>,
        tx: mpsc::Sender<Received>,
        timeout: Duration,
    ) -> Result<HttpPeer, String> {
        let mut defaults = HeaderMap::new();
        for (name, value) in headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|e| format!("header name {name:?}: {e}"))?;
            let value =
                HeaderValue::try_from(value.as_str()).map_err(|e| format!("header {name}: {e}"))?;
            defaults.append(name, value);
        }
        // The checker's own headers (of each request) replace these ones of the same name.
        let client = reqwest::Client::builder()
            .connect_timeout(timeout)
            .default_headers(defaults)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(HttpPeer {
            client,
            url: url.to_owned(),
            session: None,
            version: None,
            stateless: false,
            tx,
            auth,
            timeout,
            exchanges: Vec::new(),
        })
    }

    /// Send `request` and wait for its response's headers, at most `--timeout`: a server
    /// that never answers (not even with headers) must not hold the checker. The
    /// authorization hook's headers go with it; a refusal with a challenge is handed to the
    /// hook, and the request sent again if the hook overcame it.
    async fn headers_of(
        &self,
        request: reqwest::RequestBuilder,
        method: &str,
    ) -> Result<reqwest::Response, String> {
        let mut challenges = 0;
        loop {
            let sent = self
                .auth
                .headers()
                .await
                .map_err(|e| format!("{method} {}: authorization: {e}", self.url))?;
            let attempt = request
                .try_clone()
                .ok_or_else(|| format!("{method} {}: the request cannot be sent", self.url))?
                .headers(sent.clone());
            let response = match tokio::time::timeout(self.timeout, attempt.send()).await {
                Ok(sent) => sent.map_err(|e| format!("{method} {}: {e}", self.url))?,
                Err(_) => {
                    return Err(format!(
                        "{method} {}: no response within {} s",
                        self.url,
                        self.timeout.as_secs_f64()
                    ));
                }
            };
            let status = response.status().as_u16();
            // Only a refusal with a challenge is authorization's: a 403 without one is the
            // server's answer to what the checker sent (a foreign Origin, say).
            let challenged = response.headers().contains_key(WWW_AUTHENTICATE);
            if !(matches!(status, 401 | 403) && challenged) || challenges == MAX_CHALLENGES {
                return Ok(response);
            }
            let challenge = AuthChallenge {
                status,
                www_authenticate: response
                    .headers()
                    .get_all(WWW_AUTHENTICATE)
                    .iter()
                    .filter_map(|v| v.to_str().ok().map(str::to_owned))
                    .collect(),
                url: response.url().clone(),
                sent,
            };
            if !self.auth.challenged(&challenge).await {
                return Ok(response);
            }
            challenges += 1;
        }
    }

    /// POST one frame; the response's body is read in the background into the queue.
    pub(crate) async fn post(&mut self, frame: &[u8]) -> Result<(), String> {
        let message: Option<Value> = serde_json::from_slice(frame).ok();
        let method = match &message {
            Some(Value::Array(_)) => Some("a batch".to_owned()),
            other => other
                .as_ref()
                .and_then(|m| m.get("method"))
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        let is_request_message = |m: &Value| m.get("method").is_some() && m.get("id").is_some();
        let is_request = match &message {
            Some(Value::Array(entries)) => entries.iter().any(is_request_message),
            Some(m) => is_request_message(m),
            None => false,
        };
        let mut request = self
            .client
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_BOTH)
            .body(frame.to_vec());
        if let Some(session) = &self.session {
            request = request.header(SESSION, session);
        }
        let meta_version = message
            .as_ref()
            .and_then(|m| m.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion"))
            .and_then(Value::as_str);
        if let Some(version) = meta_version.or(self.version.as_deref()) {
            request = request.header(VERSION, version);
        }
        if meta_version.is_some() || self.stateless {
            // The stateless era's request metadata headers.
            let method = message
                .as_ref()
                .and_then(|m| m.get("method"))
                .and_then(Value::as_str);
            if let Some(method) = method {
                request = request.header("mcp-method", method);
            }
            let name = message.as_ref().and_then(|m| {
                m.pointer("/params/name")
                    .or_else(|| m.pointer("/params/uri"))
            });
            if let Some(name) = name.and_then(Value::as_str) {
                request = request.header("mcp-name", header_value(name));
            }
        }
        let response = self.headers_of(request, "POST").await?;
        let exchange = Exchange {
            method,
            is_request,
            status: response.status(),
            content_type: content_type(response.headers()),
            session: response
                .headers()
                .get(SESSION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        };
        if self.session.is_none() && exchange.method.as_deref() == Some("initialize") {
            self.session = exchange.session.clone();
        }
        let sse = exchange.content_type.starts_with("text/event-stream");
        self.exchanges.push(exchange);
        if !sse {
            // Read now, so that responses queue in the order of the POSTs. Error statuses
            // carry JSON-RPC errors; anything else (an HTML error page) is not a message,
            // and not the stdio kind of garbage either.
            let body = tokio::time::timeout(self.timeout, response.bytes()).await;
            if let Ok(Ok(body)) = body
                && let Ok(value) = serde_json::from_slice::<Value>(&body)
            {
                let _ = self.tx.send(Received::Message(value)).await;
            }
            return Ok(());
        }
        // An event stream stays open while the request runs: read it on the side.
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let mut events = SseStream::from_bytes_stream(response.bytes_stream());
            while let Some(Ok(event)) = events.next().await {
                let Some(data) = event.data.filter(|d| !d.is_empty()) else {
                    continue;
                };
                if tx.send(Received::parse(data.as_bytes())).await.is_err() {
                    return;
                }
            }
        });
        Ok(())
    }

    /// A request of the HTTP checks: `method` with extra `headers` (the session's id and
    /// version are added unless `bare`); the status, headers and, unless it is an event
    /// stream (dropped unread), the body.
    pub(crate) async fn raw(
        &self,
        method: Method,
        headers: &[(&str, &str)],
        body: Option<&str>,
        bare: bool,
    ) -> Result<(StatusCode, HeaderMap, String), String> {
        let (status, headers, reply) = self.open(method, headers, body, bare).await?;
        let text = match reply {
            Opened::Body(text) => text,
            Opened::Events(_) => String::new(),
        };
        Ok((status, headers, text))
    }

    /// Like [`HttpPeer::raw`], but an event stream is handed over to be read event by event
    /// (dropping it hangs up).
    pub(crate) async fn open(
        &self,
        method: Method,
        headers: &[(&str, &str)],
        body: Option<&str>,
        bare: bool,
    ) -> Result<(StatusCode, HeaderMap, Opened), String> {
        let mut request = self.client.request(method.clone(), &self.url);
        if !bare {
            if let Some(session) = &self.session {
                request = request.header(SESSION, session);
            }
            if let Some(version) = &self.version {
                request = request.header(VERSION, version);
            }
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            super::target::count_requests(body.as_bytes());
            request = request
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_owned());
        }
        let response = self.headers_of(request, method.as_str()).await?;
        let status = response.status();
        let headers = response.headers().clone();
        if content_type(&headers).starts_with("text/event-stream") {
            let events = Events {
                stream: Box::pin(SseStream::from_bytes_stream(response.bytes_stream())),
            };
            return Ok((status, headers, Opened::Events(events)));
        }
        let text = tokio::time::timeout(self.timeout, response.text())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        Ok((status, headers, Opened::Body(text)))
    }
}

/// What a response of [`HttpPeer::open`] carries.
pub(crate) enum Opened {
    /// A body, read whole (empty when it could not be read in time).
    Body(String),
    /// An event stream, unread.
    Events(Events),
}

/// The events of an SSE response, read one at a time.
pub(crate) struct Events {
    stream: Pin<Box<dyn Stream<Item = Result<Sse, sse_stream::Error>> + Send>>,
}

impl Events {
    /// The next event, waiting at most `within`; `None` when the stream ended, failed or
    /// stayed silent.
    pub(crate) async fn next(&mut self, within: Duration) -> Option<Sse> {
        match tokio::time::timeout(within, self.stream.next()).await {
            Ok(Some(Ok(event))) => Some(event),
            _ => None,
        }
    }
}

/// The media type of a response, lowercased, without parameters.
pub(crate) fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// A header value for `text`: as is when it is plain visible ASCII, otherwise the
/// `=?base64?...?=` sentinel form of the 2026-07-28 transport.
fn header_value(text: &str) -> String {
    use base64::Engine as _;
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !text.starts_with("=?base64?")
        && text.trim() == text;
    if plain {
        text.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text)
        )
    }
}
