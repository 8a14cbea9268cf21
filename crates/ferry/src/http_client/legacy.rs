//! The 2024-11-05 HTTP+SSE transport, as the fallback the 2025-03-26 spec describes
//! ("Backwards Compatibility"): when a POSTed `initialize` is refused with 400, 404 or 405
//! (2025-11-25's list; 2025-03-26 said any 4xx, but a 401 or 403 asks for credentials), GET the
//! URL expecting an SSE stream whose first event is `endpoint`; from then on every
//! message is POSTed to that endpoint and every server message (responses included)
//! arrives on the stream. The connection ends when the stream does (that transport has
//! no resumption).
//!
//! The endpoint must have the server URL's origin: a server cannot send our messages (and
//! the configured headers, credentials included) elsewhere.

use std::sync::Arc;

use futures_util::StreamExt;
use reqwest::header::ACCEPT;
use reqwest::{Method, Url};

use super::outgoing::Outgoing;
use super::shared::{Failure, Shared, body, media_type};
use super::sse::{self, Cursor, End};

/// GET the URL; on an `endpoint` event, switch the connection to 2024-11-05 and keep
/// reading the stream in the background.
pub(crate) async fn detect(shared: &Arc<Shared>) -> Result<(), String> {
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
    let mut events = sse::events(response, shared.config.max_message_bytes);
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
    tracing::info!("2024-11-05 HTTP+SSE server; posting to {endpoint}");
    shared.state().legacy = Some(endpoint);
    let reader = Arc::clone(shared);
    let task = tokio::spawn(async move {
        let mut cursor = Cursor::new(reader.config.default_retry);
        let end = sse::read_events(&reader, events, None, &mut cursor).await;
        if let End::Broken(why) = end {
            tracing::debug!("the 2024-11-05 event stream broke: {why}");
        }
        // No resumption in 2024-11-05: the connection is over.
        reader.closed.cancel();
    });
    shared.set_background(Some(task.abort_handle()));
    Ok(())
}

/// POST one message to the endpoint; its response (if a request) arrives on the stream.
pub(crate) async fn post(
    shared: &Shared,
    endpoint: &Url,
    message: &Outgoing,
) -> Result<(), Failure> {
    let response = shared
        .send(|| shared.post(endpoint, message.body.clone()))
        .await?;
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
    if status == reqwest::StatusCode::NOT_FOUND {
        text.push_str(
            " (the 2024-11-05 session is over: its event stream closed, or it expired; \
             connect again)",
        );
    } else if let Some(hint) = super::shared::hint(status) {
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
