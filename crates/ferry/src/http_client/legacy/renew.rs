//! Starting a new 2024-11-05 session after the event stream ended: a GET and its
//! `endpoint` event, the stored `initialize` replayed (its answer read here, never
//! delivered: the engine initialized once), `notifications/initialized`, then what the
//! caller had set on the old session (the log level, resource subscriptions: `restore.rs`,
//! with ids of the transport's own). At most `max_reconnects` attempts, the first at once,
//! then after `default_retry`, doubling up to 30 s. Requests still awaiting a response of
//! the old session are then sent again or answered with an error (see `legacy.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use ferry_protocol::RequestId;
use reqwest::Url;
use serde_json::{Value, json};

use super::stream::{self, Events};
use super::{Awaiting, open, post, post_bytes};
use crate::http_client::connection::{Failure, Shared};
use crate::http_client::restore::Restorable;
use crate::http_client::sse::End;

/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Start a new session (see the module docs): its event stream, read by the caller from
/// then on. Requests wait (on `reinit`) until it is in use.
pub(crate) async fn renew(shared: &Arc<Shared>) -> Result<Events, String> {
    let one_at_a_time = shared.reinit.lock().await;
    let (initialize, initialized, restorable) = {
        let state = shared.state();
        let Some(initialize) = state.initialize.clone() else {
            return Err("there is no initialize to replay".into());
        };
        (
            initialize,
            state.initialized.clone(),
            state.restorable.clone(),
        )
    };
    let attempts = shared.config.max_reconnects.max(1);
    let mut delay = shared.config.default_retry;
    let mut last = String::new();
    for attempt in 1..=attempts {
        if shared.closed.is_cancelled() {
            return Err("the connection is closed".into());
        }
        match start(shared, &initialize, initialized.as_ref(), &restorable).await {
            Ok((endpoint, events)) => {
                tracing::info!("a new 2024-11-05 session; posting to {endpoint}");
                let generation = {
                    let mut state = shared.state();
                    state.legacy = Some(endpoint);
                    state.generation += 1;
                    state.generation
                };
                shared.legacy.started(generation);
                drop(one_at_a_time);
                // On a task of its own: their responses come on the stream the caller reads.
                tokio::spawn(resend(Arc::clone(shared), generation));
                return Ok(events);
            }
            Err(e) => {
                tracing::debug!("starting a new 2024-11-05 session, attempt {attempt}: {e}");
                last = e;
            }
        }
        if attempt < attempts {
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = shared.closed.cancelled() => return Err("the connection is closed".into()),
            }
            delay = delay.saturating_mul(2).min(MAX_BACKOFF);
        }
    }
    Err(format!("{attempts} attempts failed, the last: {last}"))
}

/// One attempt: a new stream, `initialize`, `notifications/initialized`, the restored
/// settings. The endpoint and the stream.
async fn start(
    shared: &Shared,
    initialize: &Bytes,
    initialized: Option<&Bytes>,
    restorable: &Restorable,
) -> Result<(Url, Events), String> {
    let (endpoint, mut events) = open(shared).await?;
    let id = serde_json::from_slice::<Value>(initialize)
        .ok()
        .and_then(|v| serde_json::from_value::<RequestId>(v.get("id")?.clone()).ok())
        .ok_or("the stored initialize has no id")?;
    let answer = ask(shared, &endpoint, &mut events, initialize, &id).await?;
    if let Some(error) = answer.get("error") {
        return Err(format!("initialize was refused: {error}"));
    }
    if let Some(initialized) = initialized {
        post_bytes(shared, &endpoint, initialized)
            .await
            .map_err(|f| format!("notifications/initialized: {}", f.message))?;
    }
    static NEXT: AtomicU64 = AtomicU64::new(1);
    for (method, params) in restorable.requests() {
        let id = RequestId::String(format!(
            "ferry-restore-{}",
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let frame = Bytes::from(frame.to_string());
        match ask(shared, &endpoint, &mut events, &frame, &id).await {
            Ok(answer) if answer.get("result").is_some() => {
                tracing::debug!("restored {method} {params} on the new session");
            }
            Ok(answer) => tracing::warn!(
                "could not restore {method} {params} on the new session: {}",
                answer.get("error").unwrap_or(&serde_json::Value::Null)
            ),
            Err(e) => tracing::warn!("could not restore {method} {params} on the new session: {e}"),
        }
    }
    Ok((endpoint, events))
}

/// POST the transport's own request `id` and read the stream until its answer (other
/// messages are delivered as usual).
async fn ask(
    shared: &Shared,
    endpoint: &Url,
    events: &mut Events,
    frame: &Bytes,
    id: &RequestId,
) -> Result<Value, String> {
    let read = tokio::time::timeout(
        shared.config.close_timeout * 5,
        stream::read(shared, events, Some(id)),
    );
    tokio::pin!(read);
    let end = tokio::select! {
        posted = post_bytes(shared, endpoint, frame) => {
            posted.map_err(|f| f.message)?;
            read.await
        }
        end = &mut read => end,
    };
    let data = match end {
        Ok(End::Response(data)) => data,
        Ok(End::Closed) => return Err("the new event stream ended".into()),
        Ok(End::Broken(why)) => return Err(format!("the new event stream broke: {why}")),
        Err(_) => return Err(format!("no answer to {id} in time")),
    };
    serde_json::from_slice(&data).map_err(|e| format!("the answer to {id}: {e}"))
}

/// The requests awaiting a response from a session before `generation`'s: sent again on
/// it when safe (once), otherwise answered with an error saying why.
async fn resend(shared: Arc<Shared>, generation: u64) {
    let stale: Vec<(RequestId, Awaiting)> = {
        let mut awaiting = shared.legacy.awaiting();
        let ids: Vec<RequestId> = awaiting
            .iter()
            .filter(|(_, a)| a.generation < generation)
            .map(|(id, _)| id.clone())
            .collect();
        ids.into_iter()
            .filter_map(|id| awaiting.remove_entry(&id))
            .collect()
    };
    let Some(endpoint) = shared.state().legacy.clone() else {
        return;
    };
    for (id, entry) in stale {
        let method = match entry.message.param_str("name") {
            Some(name) if entry.message.method() == "tools/call" => format!("tools/call {name}"),
            _ => entry.message.method().to_owned(),
        };
        let lost = format!(
            "the 2024-11-05 event stream ended before the response to {method} (the server \
             restarted, or expired the session); a new session was started, but"
        );
        if entry.sent_again {
            let why = format!("{lost} {method} was already sent again once");
            shared.fail(&id, Failure::new(why)).await;
            continue;
        }
        if !entry.message.idempotent(&shared.tools()) {
            let why = format!("{lost} {method} was not sent again: it may not be safe to repeat");
            shared.fail(&id, Failure::new(why)).await;
            continue;
        }
        tracing::debug!("sending {method} ({id}) again on the new session");
        let message = entry.message.clone();
        shared.legacy.awaiting().insert(
            id.clone(),
            Awaiting {
                message: entry.message,
                generation,
                sent_again: true,
            },
        );
        if let Err(failure) = post(&shared, &endpoint, &message).await
            && shared.legacy.awaiting().remove(&id).is_some()
        {
            shared.fail(&id, failure).await;
        }
    }
}
