//! Reading the 2024-11-05 event stream: every `message` event goes to the engine, except
//! the answers to the transport's own requests (a replayed `initialize`, a restored
//! subscription), which the caller awaiting them takes. A response ends its request's wait
//! ([`super::Tracker`]); what it accepted (`initialize`, the log level, subscriptions) and
//! what `tools/list` says of each tool are noted for a later session. When the stream
//! ends, a new session is started (`renew.rs`).

use std::pin::Pin;
use std::sync::Arc;

use ferry_protocol::RequestId;
use futures_util::Stream;
use serde_json::Value;
use sse_stream::Sse;

use super::Awaiting;
use crate::http_client::connection::{Failure, Shared};
use crate::http_client::outgoing::read_tools;
use crate::http_client::restore::Restorable;
use crate::http_client::sse::{End, message_data, next_event, response_id};

/// An open event stream (after its `endpoint` event).
pub(crate) type Events = Pin<Box<dyn Stream<Item = Result<Sse, sse_stream::Error>> + Send>>;

/// Read the stream of the connection, starting a new session each time one ends, until
/// the connection closes or no new session can be started.
pub(crate) async fn run(shared: Arc<Shared>, mut events: Events) {
    loop {
        let end = read(&shared, &mut events, None).await;
        if shared.closed.is_cancelled() {
            return;
        }
        let why = match end {
            End::Broken(why) => format!("the 2024-11-05 event stream broke: {why}"),
            End::Closed | End::Response(_) => "the server ended the 2024-11-05 event stream".into(),
        };
        tracing::info!("{why}; starting a new session");
        if shared.state().initialize.is_none() {
            // Nothing to start again with: `initialize` was never answered.
            fail_all(
                &shared,
                &format!("{why} before the session was initialized"),
            )
            .await;
            shared.closed.cancel();
            return;
        }
        match super::renew::renew(&shared).await {
            Ok(next) => events = next,
            Err(e) => {
                let why = format!("{why}, and a new session could not be started: {e}");
                tracing::warn!("{why}");
                fail_all(&shared, &why).await;
                shared.closed.cancel();
                return;
            }
        }
    }
}

/// Answer every request still awaiting its response with `why`.
async fn fail_all(shared: &Shared, why: &str) {
    let waiting: Vec<RequestId> = shared.legacy.awaiting().drain().map(|(id, _)| id).collect();
    for id in waiting {
        shared.fail(&id, Failure::new(why)).await;
    }
}

/// Read `events`, delivering each message, until the stream ends or (with `awaited`) the
/// response to that request of the transport's own arrives (returned, not delivered).
pub(crate) async fn read(shared: &Shared, events: &mut Events, awaited: Option<&RequestId>) -> End {
    loop {
        let event = match next_event(shared, events).await {
            Ok(event) => event,
            Err(end) => return end,
        };
        let Some(data) = message_data(event) else {
            continue;
        };
        let Some(id) = response_id(&data) else {
            shared.deliver(data).await;
            continue;
        };
        if awaited == Some(&id) {
            return End::Response(data);
        }
        let answered = shared.legacy.awaiting().remove(&id);
        if let Some(answered) = answered {
            note(shared, &answered, &data);
        }
        shared.deliver(data).await;
    }
}

/// Note what `answer` (a response to `request`) means for later sessions.
fn note(shared: &Shared, request: &Awaiting, answer: &[u8]) {
    let method = request.message.method();
    if !matches!(method, "initialize" | "tools/list") && !Restorable::tracks(method) {
        return;
    }
    let Ok(value) = serde_json::from_slice::<Value>(answer) else {
        return;
    };
    let Some(result) = value.get("result") else {
        return;
    };
    match method {
        "initialize" => {
            let generation = {
                let mut state = shared.state();
                state.initialize = Some(request.message.body.clone());
                state.generation += 1;
                state.restorable = Restorable::default();
                state.generation
            };
            shared.legacy.started(generation);
        }
        "tools/list" => {
            let (valid, _) = read_tools(result);
            shared.tools().extend(valid);
        }
        _ => shared.state().restorable.accepted(&request.message),
    }
}
