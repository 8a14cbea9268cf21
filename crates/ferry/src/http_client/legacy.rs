//! The 2024-11-05 HTTP+SSE transport, as the fallback the 2025-03-26 spec describes
//! ("Backwards Compatibility"): when a POSTed `initialize` is refused with 400, 404 or 405
//! (2025-11-25's list; 2025-03-26 said any 4xx, but a 401 or 403 asks for credentials), GET the
//! URL expecting an SSE stream whose first event is `endpoint`; from then on every
//! message is POSTed to that endpoint and every server message (responses included)
//! arrives on the stream.
//!
//! That transport has no resumption: a session lives as long as its stream. When the
//! stream ends (the server restarted, or expired the idle session), a new session is
//! started the way the session era renews a forgotten one (`renew.rs`): a new GET, its
//! `endpoint` event, the stored `initialize` and `notifications/initialized` replayed, the
//! log level and resource subscriptions restored. Requests whose responses were due on the
//! old stream are sent again on the new session when that is safe (the session era's rule:
//! every request but `tools/call`, and `tools/call` of a read-only or idempotent tool,
//! once), and answered with an error saying so otherwise. A POST refused with 404 (or not
//! delivered) because the session just ended waits for the new session and is sent again:
//! the server never took it. New requests wait while a session is being started. After
//! [`HttpClientConfig::max_reconnects`](super::HttpClientConfig::max_reconnects) failed
//! attempts (with exponential backoff) the connection ends with an error for every request
//! still waiting.
//!
//! The endpoint must have the server URL's origin: a server cannot send our messages (and
//! the configured headers, credentials included) elsewhere.

mod renew;
mod stream;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ferry_protocol::RequestId;
use futures_util::StreamExt;
use reqwest::header::ACCEPT;
use reqwest::{Method, StatusCode, Url};
use tokio::sync::watch;

use super::connection::{Failure, Shared, body, media_type};
use super::outgoing::Outgoing;
pub(crate) use stream::Events;

/// The longest a POST refused because its session ended waits for the new session.
const RENEWAL_WAIT: Duration = Duration::from_secs(120);

/// A request of the engine's whose response is due on the event stream.
#[derive(Debug)]
pub(crate) struct Awaiting {
    pub(crate) message: Outgoing,
    /// The session it was posted to.
    pub(crate) generation: u64,
    /// Whether it was already sent again once after a session ended.
    pub(crate) sent_again: bool,
}

/// What the 2024-11-05 transport tracks across sessions.
pub(crate) struct Tracker {
    /// The engine's requests posted, by id, until their responses arrive on the stream.
    awaiting: Mutex<HashMap<RequestId, Awaiting>>,
    /// The generation of the session in use (mirrors `SessionState::generation`), watched
    /// by requests waiting for a new session.
    generation: watch::Sender<u64>,
}

impl Default for Tracker {
    fn default() -> Self {
        Tracker {
            awaiting: Mutex::default(),
            generation: watch::Sender::new(0),
        }
    }
}

impl Tracker {
    pub(crate) fn awaiting(&self) -> MutexGuard<'_, HashMap<RequestId, Awaiting>> {
        self.awaiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Note that session `generation` is now in use.
    pub(crate) fn started(&self, generation: u64) {
        self.generation.send_replace(generation);
    }
}

/// GET the URL and wait for its `endpoint` event: the endpoint and the rest of the stream.
pub(crate) async fn open(shared: &Shared) -> Result<(Url, Events), String> {
    let response = shared
        .send(|| {
            shared
                .request(Method::GET, &shared.url)
                .header(ACCEPT, "text/event-stream")
        })
        .await
        .map_err(|f| f.message)?;
    if !response.status().is_success() || media_type(&response) != "text/event-stream" {
        return Err(format!("GET answered HTTP {}", response.status()));
    }
    let mut events: Events = Box::pin(super::sse::events(
        response,
        shared.config.max_message_bytes,
    ));
    let endpoint = loop {
        let event = tokio::time::timeout(shared.config.close_timeout * 5, events.next())
            .await
            .map_err(|_| "no endpoint event in time".to_owned())?;
        match event {
            Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                break event.data.unwrap_or_default();
            }
            Some(Ok(event)) if event.data.as_deref().is_none_or(str::is_empty) => continue,
            Some(Ok(event)) => return Err(format!("the first event is {:?}", event.event)),
            Some(Err(e)) => return Err(e.to_string()),
            None => return Err("the stream ended without an endpoint event".into()),
        }
    };
    let endpoint = shared
        .url
        .join(endpoint.trim())
        .map_err(|e| format!("endpoint {endpoint:?}: {e}"))?;
    if endpoint.origin() != shared.url.origin() {
        return Err(format!(
            "the endpoint {endpoint} is not on the server's origin; refused"
        ));
    }
    Ok((endpoint, events))
}

/// GET the URL; on an `endpoint` event, switch the connection to 2024-11-05 and keep
/// reading the stream in the background.
pub(crate) async fn detect(shared: &Arc<Shared>) -> Result<(), String> {
    let (endpoint, events) = open(shared).await?;
    tracing::info!("2024-11-05 HTTP+SSE server; posting to {endpoint}");
    shared.state().legacy = Some(endpoint);
    let task = tokio::spawn(stream::run(Arc::clone(shared), events));
    shared.set_background(Some(task.abort_handle()));
    Ok(())
}

/// Send the engine's request `id` to the endpoint; its response arrives on the stream.
/// A POST the server did not take because its session just ended is sent again, once, on
/// the new session.
pub(crate) async fn request(
    shared: &Arc<Shared>,
    message: &Outgoing,
    id: &RequestId,
) -> Result<(), Failure> {
    // A new session is being started: this request belongs to it.
    drop(shared.reinit.lock().await);
    let mut sent_again = false;
    loop {
        let (endpoint, generation, renewable) = {
            let state = shared.state();
            let Some(endpoint) = state.legacy.clone() else {
                return Err(Failure::new("the 2024-11-05 connection is over"));
            };
            // Noted before the POST (the response may arrive on the stream before the
            // 202), with the state still locked: a new session's start, which changes the
            // generation under that lock, then takes over every request of the old one.
            shared.legacy.awaiting().insert(
                id.clone(),
                Awaiting {
                    message: message.clone(),
                    generation: state.generation,
                    sent_again,
                },
            );
            (endpoint, state.generation, state.initialize.is_some())
        };
        let Err(failure) = post(shared, &endpoint, message).await else {
            return Ok(());
        };
        if shared.legacy.awaiting().remove(id).is_none() {
            // The new session's start took it over (sent it again, or answered it).
            return Ok(());
        }
        let gone = failure.status.is_none_or(|s| s == StatusCode::NOT_FOUND);
        if !gone || !renewable || sent_again || !renewed(shared, generation).await {
            return Err(failure);
        }
        sent_again = true;
    }
}

/// Wait until a session newer than `generation` is in use; false when the connection ends
/// (or none comes within [`RENEWAL_WAIT`]).
async fn renewed(shared: &Shared, generation: u64) -> bool {
    let mut current = shared.legacy.generation.subscribe();
    tokio::select! {
        changed = tokio::time::timeout(RENEWAL_WAIT, current.wait_for(|g| *g != generation)) => {
            matches!(changed, Ok(Ok(_)))
        }
        () = shared.closed.cancelled() => false,
    }
}

/// POST one message to the endpoint; its response (if a request) arrives on the stream.
pub(crate) async fn post(
    shared: &Shared,
    endpoint: &Url,
    message: &Outgoing,
) -> Result<(), Failure> {
    post_bytes(shared, endpoint, &message.body).await
}

/// POST one frame to the endpoint.
pub(crate) async fn post_bytes(
    shared: &Shared,
    endpoint: &Url,
    frame: &bytes::Bytes,
) -> Result<(), Failure> {
    let response = shared.send(|| shared.post(endpoint, frame.clone())).await?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let detail = String::from_utf8_lossy(&body(response, 4096).await.unwrap_or_default())
        .trim()
        .to_owned();
    let mut text = format!("HTTP {status} from {endpoint}");
    if !detail.is_empty() {
        text.push_str(&format!(": {detail}"));
    }
    if status == StatusCode::NOT_FOUND {
        text.push_str(
            " (the 2024-11-05 session is over: its event stream closed, or it expired; \
             connect again)",
        );
    } else if let Some(hint) = super::connection::hint(status) {
        text.push_str(&format!(" ({hint})"));
    }
    Err(Failure::status(status, text))
}

/// An endpoint URL check, separate for testing.
#[cfg(test)]
mod tests {
    #[test]
    fn endpoints_resolve_against_the_server_url() {
        let base = reqwest::Url::parse("http://127.0.0.1:9/sse").unwrap();
        let joined = base.join("/messages?sessionId=abc").unwrap();
        assert_eq!(joined.as_str(), "http://127.0.0.1:9/messages?sessionId=abc");
        assert_eq!(joined.origin(), base.origin());
        let elsewhere = base.join("http://evil.example/messages").unwrap();
        assert_ne!(elsewhere.origin(), base.origin());
    }
}
