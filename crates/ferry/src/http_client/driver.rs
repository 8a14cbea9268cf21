//! The transport's main loop: take each frame the engine sends and do what its era asks.
//!
//! - a request: its own task (`exchange.rs`), tracked by id so a cancellation can close it;
//! - `notifications/cancelled`: the named request's HTTP exchange is closed (the
//!   stateless era's cancellation signal); in the session era the notification is also
//!   POSTed (there closing a stream does not cancel);
//! - other notifications and responses to the server's requests (session era, 2024-11-05):
//!   POSTed in order, before the next frame is taken, so `notifications/initialized`
//!   reaches the server before the requests that follow it. The stateless era has no
//!   client notifications over HTTP; they are dropped.
//!
//! When the engine hangs up (or [`super::HttpConnection::close`]), requests in flight are
//! aborted, the background stream stops and the session is DELETEd.

use std::sync::Arc;

use reqwest::StatusCode;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::connection::Shared;
use super::exchange;
use super::outgoing::{Kind, Outgoing};
use super::session;
use crate::engine::Frame;

/// Run the connection until the engine hangs up, `shutdown` fires, or the connection ends.
pub(crate) async fn run(
    shared: Arc<Shared>,
    mut outgoing: mpsc::Receiver<Frame>,
    shutdown: CancellationToken,
) {
    loop {
        let frame = tokio::select! {
            frame = outgoing.recv() => frame,
            () = shutdown.cancelled() => None,
            () = shared.closed.cancelled() => None,
        };
        let Some(frame) = frame else { break };
        let message = Outgoing::parse(frame);
        match &message.kind {
            Kind::Request(id) => {
                let id = id.clone();
                let task =
                    tokio::spawn(exchange::request(Arc::clone(&shared), message, id.clone()));
                let mut in_flight = shared.in_flight();
                if in_flight.len() >= 64 {
                    in_flight.retain(|_, task| !task.is_finished());
                }
                in_flight.insert(id, task.abort_handle());
            }
            Kind::Notification if message.method() == "notifications/cancelled" => {
                if let Some(id) = message.cancelled_id() {
                    if let Some(task) = shared.in_flight().remove(&id) {
                        task.abort();
                    }
                    // 2024-11-05: no response will come, and it is not to be sent again.
                    shared.legacy.awaiting().remove(&id);
                }
                if shared.state().session_era() {
                    post_in_order(&shared, &message).await;
                }
            }
            _ if shared.state().session_era() => {
                post_in_order(&shared, &message).await;
                if message.method() == "notifications/initialized" {
                    shared.state().initialized = Some(message.body.clone());
                    session::open_standalone(&shared);
                }
            }
            _ => tracing::debug!(
                "stateless era: {} is not sent over HTTP",
                message.method.as_deref().unwrap_or("a response")
            ),
        }
    }
    let tasks: Vec<_> = shared.in_flight().drain().map(|(_, task)| task).collect();
    for task in tasks {
        task.abort();
    }
    shared.set_background(None);
    // A renewal under way (one the GET stream started runs on a task of its own) ends
    // first (within the close timeout), so the session deleted is the latest; one not yet
    // started then sees the connection closed and starts none.
    let renewing = tokio::time::timeout(shared.config.close_timeout, shared.reinit.lock())
        .await
        .ok();
    session::delete(&shared).await;
    shared.closed.cancel();
    drop(renewing);
}

/// POST a notification or a response (session era, 2024-11-05); the server answers 202.
async fn post_in_order(shared: &Arc<Shared>, message: &Outgoing) {
    if shared.state().legacy.is_some() {
        // A new 2024-11-05 session is being started: this message is for it.
        drop(shared.reinit.lock().await);
    }
    let state = shared.state().clone();
    let url = state.legacy.clone().unwrap_or_else(|| shared.url.clone());
    let sent = shared
        .send(|| Shared::with_session(shared.post(&url, message.body.clone()), &state))
        .await;
    match sent {
        Ok(response) if response.status().is_success() => {}
        Ok(response) if response.status() == StatusCode::NOT_FOUND && state.id.is_some() => {
            // The session is gone: start a new one; this message belonged to the old.
            if let Err(e) = session::reinitialize(shared, state.generation).await {
                tracing::warn!("the session expired and could not be renewed: {e}");
            }
        }
        Ok(response) => tracing::warn!(
            "the server refused {}: HTTP {}",
            message.method.as_deref().unwrap_or("a response"),
            response.status()
        ),
        Err(failure) => tracing::warn!(
            "sending {} failed: {}",
            message.method.as_deref().unwrap_or("a response"),
            failure.message
        ),
    }
}
