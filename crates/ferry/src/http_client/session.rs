//! The session era's connection-wide parts: the standalone GET stream (reconnected with
//! `Last-Event-ID`), resuming a POST's stream, starting a new session when the server
//! forgot ours (404), and the DELETE that ends it.
//!
//! **Re-initialization.** When a request carrying our `MCP-Session-Id` gets 404, the
//! session is gone (expired, or the server restarted). The transport replays the stored
//! `initialize` request and `notifications/initialized` (the engine never sees that
//! second `initialize` response), adopts the new session id, reopens the GET stream, and
//! sends the failed request again when that is safe: every request but `tools/call`, and
//! `tools/call` of a tool whose `tools/list` entry says `readOnlyHint` or `idempotentHint`
//! (the protocol's only signal that a second call does no harm). Other calls are answered
//! with an error saying so. Before that, the new session is told what the caller had set
//! on the old one — the log level, resource subscriptions (`restore.rs`) — and its GET
//! stream is opened, so updates flow as before.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::ACCEPT;
use reqwest::{Method, Response, StatusCode};

use super::connection::{Failure, Shared, body, media_type};
use super::sse::{self, Cursor, End};

/// The longest wait between reconnection attempts of the GET stream.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// A GET on the endpoint for an SSE stream, with the session headers and `Last-Event-ID`.
async fn get(shared: &Shared, last_event_id: Option<&str>) -> Result<Response, Failure> {
    let state = shared.state().clone();
    shared
        .send(|| {
            let mut builder = Shared::with_session(
                shared
                    .request(Method::GET, &shared.url)
                    .header(ACCEPT, "text/event-stream"),
                &state,
            );
            if let Some(id) = last_event_id {
                builder = builder.header("last-event-id", id);
            }
            builder
        })
        .await
}

/// Resume a stream after event `last`. The error says whether trying again may help.
pub(crate) async fn resume(shared: &Shared, last: &str) -> Result<Response, (Failure, bool)> {
    let response = get(shared, Some(last)).await.map_err(|f| (f, true))?;
    let status = response.status();
    if status.is_success() && media_type(&response) == "text/event-stream" {
        return Ok(response);
    }
    let retry = status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS;
    let detail = String::from_utf8_lossy(&body(response, 4096).await.unwrap_or_default())
        .trim()
        .to_owned();
    Err((
        Failure::status(
            status,
            if detail.is_empty() {
                format!("resuming the stream: HTTP {status} from {}", shared.url)
            } else {
                format!(
                    "resuming the stream: HTTP {status} from {}: {detail}",
                    shared.url
                )
            },
        ),
        retry,
    ))
}

/// Open the standalone GET stream for the current session (replacing any previous one).
pub(crate) fn open_standalone(shared: &Arc<Shared>) {
    if !shared.config.standalone_stream || shared.state().legacy.is_some() {
        return;
    }
    let generation = shared.state().generation;
    let task = tokio::spawn(standalone(Arc::clone(shared), generation));
    shared.set_background(Some(task.abort_handle()));
}

async fn standalone(shared: Arc<Shared>, generation: u64) {
    let mut cursor = Cursor::new(shared.config.default_retry);
    let mut failures = 0u32;
    loop {
        match get(&shared, cursor.last_id.as_deref()).await {
            Ok(response) if response.status() == StatusCode::METHOD_NOT_ALLOWED => {
                tracing::debug!("the server offers no standalone stream (405)");
                return;
            }
            Ok(response)
                if response.status() == StatusCode::NOT_FOUND && shared.state().id.is_none() =>
            {
                // No session to have expired: a server without sessions and without a
                // GET handler (404 instead of 405) offers no standalone stream.
                tracing::debug!("the server offers no standalone stream (404, no session)");
                return;
            }
            Ok(response)
                if response.status() == StatusCode::NOT_FOUND
                    && shared.state().initialize.is_none() =>
            {
                // A session taken up (`resume`) and gone: nothing to renew it with; the
                // requests say so.
                tracing::debug!("the server does not know the session taken up (404)");
                return;
            }
            Ok(response) if response.status() == StatusCode::NOT_FOUND => {
                // On a task of its own: the new session's GET stream replaces this task
                // (aborting it) before the session's state is restored.
                tokio::spawn(async move {
                    if let Err(e) = reinitialize(&shared, generation).await {
                        tracing::warn!("the session expired and could not be renewed: {e}");
                    }
                });
                return;
            }
            Ok(response)
                if response.status().is_success()
                    && media_type(&response) == "text/event-stream" =>
            {
                let before = cursor.last_id.clone();
                match sse::read(&shared, response, None, &mut cursor).await {
                    End::Broken(why) => tracing::debug!("the GET stream broke: {why}"),
                    End::Closed | End::Response(_) => {}
                }
                if cursor.last_id != before {
                    failures = 0;
                }
            }
            Ok(response) => {
                tracing::debug!("the GET stream was refused: HTTP {}", response.status());
                failures += 1;
            }
            Err(failure) => {
                tracing::debug!("the GET stream failed: {}", failure.message);
                failures += 1;
            }
        }
        if failures > shared.config.max_reconnects || shared.closed.is_cancelled() {
            return;
        }
        let delay = cursor
            .retry
            .saturating_mul(1 << failures.min(5))
            .min(MAX_BACKOFF);
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = shared.closed.cancelled() => return,
        }
    }
}

/// Start a new session after `failed_generation`'s was refused with 404, unless another
/// task already did. The replayed `initialize`'s response is read here, not delivered.
pub(crate) async fn reinitialize(
    shared: &Arc<Shared>,
    failed_generation: u64,
) -> Result<(), String> {
    let _one_at_a_time = shared.reinit.lock().await;
    if shared.closed.is_cancelled() {
        return Err("the connection is closed".into());
    }
    let (initialize, initialized) = {
        let state = shared.state();
        if state.generation != failed_generation {
            return Ok(());
        }
        // The old id stays until the new one replaces it: should this attempt fail, the
        // next request meets a 404 again and tries again (without an id it would be
        // refused for the missing header, and nothing would try again).
        match (&state.initialize, &state.initialized) {
            (Some(init), done) => (init.clone(), done.clone()),
            (None, _) => return Err("there is no initialize to replay".into()),
        }
    };
    tracing::info!("the server forgot the session; starting a new one");
    let response = shared
        .send(|| shared.post(&shared.url, initialize.clone()))
        .await
        .map_err(|f| f.message)?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("initialize got HTTP {status}"));
    }
    let session = response
        .headers()
        .get(super::connection::SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let id = serde_json::from_slice::<serde_json::Value>(&initialize)
        .ok()
        .and_then(|v| serde_json::from_value(v.get("id")?.clone()).ok())
        .ok_or("the stored initialize has no id")?;
    let answer = if media_type(&response) == "text/event-stream" {
        sse::follow(shared, response, &id, false)
            .await
            .map_err(|f| f.message)?
    } else {
        body(response, shared.config.max_message_bytes)
            .await
            .map_err(|f| f.message)?
    };
    let answer: serde_json::Value =
        serde_json::from_slice(&answer).map_err(|e| format!("initialize's answer: {e}"))?;
    if let Some(error) = answer.get("error") {
        return Err(format!("initialize was refused: {error}"));
    }
    let state = {
        let mut state = shared.state();
        state.id = session;
        state.generation += 1;
        state.clone()
    };
    if let Some(initialized) = initialized {
        let response = shared
            .send(|| Shared::with_session(shared.post(&shared.url, initialized.clone()), &state))
            .await
            .map_err(|f| f.message)?;
        if !response.status().is_success() {
            return Err(format!(
                "notifications/initialized got HTTP {}",
                response.status()
            ));
        }
    }
    // The GET stream first, so that updates of the subscriptions restored next have
    // a stream to take.
    open_standalone(shared);
    super::restore::replay(shared, &state).await;
    Ok(())
}

/// End the session: DELETE with its id (a 405 means the server does not allow it), unless
/// the caller keeps it ([`super::HttpConnection::keep_session`]).
pub(crate) async fn delete(shared: &Shared) {
    let state = shared.state().clone();
    if state.id.is_none() || state.legacy.is_some() || state.keep {
        return;
    }
    let request =
        shared.send(|| Shared::with_session(shared.request(Method::DELETE, &shared.url), &state));
    match tokio::time::timeout(shared.config.close_timeout, request).await {
        Ok(Ok(response)) => tracing::debug!("DELETE of the session: HTTP {}", response.status()),
        Ok(Err(failure)) => tracing::debug!("DELETE of the session failed: {}", failure.message),
        Err(_) => tracing::debug!("DELETE of the session timed out"),
    }
}
