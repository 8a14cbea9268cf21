//! What the caller set on a session that lives on the server, so a new session can be
//! told again after the old one was forgotten (404): resource subscriptions
//! (`resources/subscribe`, less `resources/unsubscribe`) and the log level
//! (`logging/setLevel`). Each is noted when the server accepted it and replayed, in that
//! order (level first, then subscriptions), right after the replayed
//! `notifications/initialized`. The replayed requests carry ids of the transport's own
//! (`ferry-restore-N`); their answers are read here, never delivered to the engine, while
//! anything else on their streams is.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ferry_protocol::RequestId;
use serde_json::{Value, json};

use super::connection::{SessionState, Shared, body, media_type};
use super::outgoing::Outgoing;
use super::sse;

/// Session state the server keeps for the caller.
#[derive(Clone, Debug, Default)]
pub(crate) struct Restorable {
    /// URIs subscribed to (and not unsubscribed from).
    pub(crate) subscriptions: BTreeSet<String>,
    /// The level last set with `logging/setLevel`.
    pub(crate) log_level: Option<Value>,
}

impl Restorable {
    /// Whether `method` changes what is kept here (then its answer is looked at).
    pub(crate) fn tracks(method: &str) -> bool {
        matches!(
            method,
            "resources/subscribe" | "resources/unsubscribe" | "logging/setLevel"
        )
    }

    /// Note `message`, which the server answered with a result.
    pub(crate) fn accepted(&mut self, message: &Outgoing) {
        match message.method() {
            "resources/subscribe" => {
                if let Some(uri) = message.param_str("uri") {
                    self.subscriptions.insert(uri.to_owned());
                }
            }
            "resources/unsubscribe" => {
                if let Some(uri) = message.param_str("uri") {
                    self.subscriptions.remove(uri);
                }
            }
            "logging/setLevel" => {
                if let Some(level) = message.params.as_ref().and_then(|p| p.get("level")) {
                    self.log_level = Some(level.clone());
                }
            }
            _ => {}
        }
    }

    /// The requests that set it all again.
    pub(crate) fn requests(&self) -> Vec<(&'static str, Value)> {
        let level = self
            .log_level
            .iter()
            .map(|level| ("logging/setLevel", json!({"level": level})));
        let subscriptions = self
            .subscriptions
            .iter()
            .map(|uri| ("resources/subscribe", json!({"uri": uri})));
        level.chain(subscriptions).collect()
    }
}

/// Tell the new session of `state` what the caller had set on the old one. Failures are
/// logged (the server may no longer offer a resource): the session goes on without it.
pub(crate) async fn replay(shared: &Arc<Shared>, state: &SessionState) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    for (method, params) in state.restorable.requests() {
        let id = RequestId::String(format!(
            "ferry-restore-{}",
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let bytes = bytes::Bytes::from(frame.to_string());
        match request(shared, state, bytes, &id).await {
            Ok(()) => tracing::debug!("restored {method} {params} on the new session"),
            Err(e) => tracing::warn!("could not restore {method} {params} on the new session: {e}"),
        }
    }
}

async fn request(
    shared: &Arc<Shared>,
    state: &SessionState,
    frame: bytes::Bytes,
    id: &RequestId,
) -> Result<(), String> {
    let response = shared
        .send(|| Shared::with_session(shared.post(&shared.url, frame.clone()), state))
        .await
        .map_err(|f| f.message)?;
    let status = response.status();
    let answer = if status.is_success() && media_type(&response) == "text/event-stream" {
        sse::follow(shared, response, id, true)
            .await
            .map_err(|f| f.message)?
    } else {
        body(response, shared.config.max_message_bytes)
            .await
            .map_err(|f| f.message)?
    };
    let answer: Value = serde_json::from_slice(&answer)
        .map_err(|_| format!("HTTP {status} without a JSON-RPC response"))?;
    match answer.get("error") {
        Some(error) => Err(format!("refused: {error}")),
        None if answer.get("result").is_some() => Ok(()),
        None => Err(format!("HTTP {status} without a JSON-RPC response")),
    }
}
