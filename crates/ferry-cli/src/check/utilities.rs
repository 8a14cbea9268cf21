//! Utilities: ping, cancellation, progress (logging is in [`super::logging`]).

use std::collections::HashMap;
use std::time::Duration;

use ferry::protocol::Feature;
use serde_json::{Value, json};

use super::model::{Outcome, requirement};
use super::probe::Probe;
use super::target::Reply;

requirement!(
    PING,
    "ping.answered-empty",
    Ping,
    Must,
    "ping is answered promptly with an empty result",
    "basic/utilities/ping#behavior-requirements"
);
requirement!(
    CANCEL_UNKNOWN,
    "cancellation.unknown-request-ignored",
    Cancellation,
    Must,
    "notifications/cancelled for a request the server does not know is ignored: no response, the server keeps serving",
    "basic/utilities/cancellation#behavior-requirements"
);
requirement!(
    CANCEL_IN_FLIGHT,
    "cancellation.no-response-after-cancel",
    Cancellation,
    Should,
    "a request cancelled while in progress gets no response",
    "basic/utilities/cancellation#behavior-requirements"
);
requirement!(
    PROGRESS_TOKEN,
    "progress.known-token",
    Progress,
    Must,
    "progress notifications carry only progress tokens the client sent with a request",
    "basic/utilities/progress#behavior-requirements"
);
requirement!(
    PROGRESS_MONOTONIC,
    "progress.increases",
    Progress,
    Must,
    "the progress value increases with each notification for a token",
    "basic/utilities/progress#behavior-requirements"
);
/// Ping (session era).
pub(crate) async fn ping(probe: &mut Probe<'_>) {
    if !probe.revision.has(Feature::Ping) {
        return;
    }
    let reply = probe.call("ping", json!({})).await;
    let ok = match &reply {
        Reply::Result(result) => result
            .as_object()
            .is_some_and(|o| o.keys().all(|k| k == "_meta")),
        _ => false,
    };
    probe.expect(&PING, ok, || format!("ping got {}", reply.describe()));
}

/// Cancellation of a request the server never saw.
pub(crate) async fn cancellation(probe: &mut Probe<'_>) {
    probe
        .conn
        .notify(
            "notifications/cancelled",
            Some(json!({"requestId": "ferry-check-unknown", "reason": "ferry check"})),
        )
        .await;
    let barrier = probe.barrier("ferry-check-after-cancel").await;
    let grace = probe.conn.timing.grace;
    let extra = probe.conn.drain(grace).await;
    let ok = matches!(barrier, Reply::Result(_)) && extra.is_empty();
    let barrier_method = probe.barrier_method();
    probe.expect(&CANCEL_UNKNOWN, ok, || match extra.first() {
        Some(extra) => format!("notifications/cancelled was answered: {extra}"),
        None => format!(
            "after notifications/cancelled, {barrier_method} got {}",
            barrier.describe()
        ),
    });
    in_flight(probe).await;
}

/// Cancel a call of the slow tool once it reported progress: no response may follow.
async fn in_flight(probe: &mut Probe<'_>) {
    if !probe.cancel_in_flight {
        return;
    }
    let Some((name, arguments, took)) = probe.slow_tool.clone() else {
        probe.record(
            &CANCEL_IN_FLIGHT,
            Outcome::Skip(
                "no tool the checker may call was observably slow (at least 1 s, with progress)"
                    .into(),
            ),
        );
        return;
    };
    let id = probe.conn.fresh_id();
    let token = json!("ferry-check-cancel");
    probe.progress_tokens.push(token.clone());
    let params = probe
        .params(json!({"name": &name, "arguments": arguments, "_meta": {"progressToken": &token}}));
    probe
        .conn
        .send(&json!({"jsonrpc": "2.0", "id": &id, "method": "tools/call", "params": params}))
        .await;
    let within = probe.conn.timing.request;
    let started = probe
        .conn
        .notification(within, |n| {
            n.pointer("/params/progressToken") == Some(&token)
        })
        .await;
    if !started {
        probe.record(
            &CANCEL_IN_FLIGHT,
            Outcome::Skip(format!(
                "tools/call {name} reported no progress the second time"
            )),
        );
        return;
    }
    probe
        .conn
        .notify(
            "notifications/cancelled",
            Some(json!({"requestId": &id, "reason": "ferry check"})),
        )
        .await;
    probe.cancel_in_flight = false;
    // Long enough for the call to have finished, had it not been cancelled.
    let reply = probe
        .conn
        .response(&id, took + Duration::from_secs(1))
        .await;
    probe.expect(&CANCEL_IN_FLIGHT, matches!(reply, Reply::Nothing), || {
        format!(
            "tools/call {name} was cancelled after its first progress notification, then got {}",
            reply.describe()
        )
    });
}

/// Judge the progress notifications received.
pub(crate) fn progress(probe: &mut Probe<'_>) {
    let mut last: HashMap<String, f64> = HashMap::new();
    let mut seen = false;
    let notifications: Vec<Value> = probe
        .conn
        .notifications
        .iter()
        .filter(|n| n.get("method") == Some(&json!("notifications/progress")))
        .cloned()
        .collect();
    for notification in notifications {
        seen = true;
        let params = notification.get("params").cloned().unwrap_or(Value::Null);
        let token = params.get("progressToken").cloned().unwrap_or(Value::Null);
        let known = probe.progress_tokens.contains(&token);
        probe.expect(&PROGRESS_TOKEN, known, || {
            format!("progress for token {token}, never sent")
        });
        let Some(value) = params.get("progress").and_then(Value::as_f64) else {
            continue;
        };
        let key = token.to_string();
        if let Some(before) = last.get(&key) {
            let before = *before;
            probe.expect(&PROGRESS_MONOTONIC, value > before, || {
                format!("progress for {token} went from {before} to {value}")
            });
        }
        last.insert(key, value);
    }
    if seen {
        // Held by every token seen (a single notification holds it trivially).
        probe.record(&PROGRESS_TOKEN, Outcome::Pass);
        probe.record(&PROGRESS_MONOTONIC, Outcome::Pass);
    } else {
        let reason =
            "no progress notification was sent (the checker asks for progress on every tool call)";
        probe.record(&PROGRESS_TOKEN, Outcome::Skip(reason.into()));
        probe.record(&PROGRESS_MONOTONIC, Outcome::Skip(reason.into()));
    }
}
