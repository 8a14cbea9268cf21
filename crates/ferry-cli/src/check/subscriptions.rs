//! Resource subscriptions, honest to the declared `resources.subscribe` capability: in the
//! session era `resources/subscribe` and `resources/unsubscribe` of a listed resource
//! answer with results when it is declared and with errors when it is not; in the
//! stateless era `subscriptions/listen` is acknowledged first, with only what the
//! capabilities declare. (Whether `notifications/resources/updated` follows a change
//! cannot be checked: the checker cannot change a resource.)

use serde_json::{Value, json};

use super::capabilities::Inventory;
use super::model::{Outcome, requirement};
use super::probe::Probe;
use super::shapes;
use super::target::Reply;

requirement!(
    SUBSCRIBE_HONEST,
    "capabilities.subscribe-honest",
    Capabilities,
    Must,
    "resources/subscribe and resources/unsubscribe of a listed resource answer with results when resources.subscribe is declared, with errors when it is not",
    "server/resources#subscriptions"
);
requirement!(
    LISTEN_ACKNOWLEDGED,
    "stateless.listen-acknowledged",
    Stateless,
    Must,
    "subscriptions/listen is acknowledged first (notifications/subscriptions/acknowledged), with only notification types the capabilities declare (2026-07-28)",
    "basic/patterns/subscriptions"
);

/// Check subscriptions (when the server declares resources).
pub(crate) async fn check(probe: &mut Probe<'_>, inventory: &Inventory) {
    if !probe.declares("resources") {
        return;
    }
    let uri = inventory
        .resources
        .first()
        .and_then(|r| r.get("uri"))
        .cloned();
    if probe.stateless() {
        return listen(probe, uri).await;
    }
    let Some(uri) = uri else {
        let reason = "the server lists no resource to subscribe to";
        probe.record(&SUBSCRIBE_HONEST, Outcome::Skip(reason.into()));
        return;
    };
    let declared = probe.capabilities.pointer("/resources/subscribe") == Some(&json!(true));
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        let reply = probe.call(method, json!({"uri": &uri})).await;
        let outcome = match (&reply, declared) {
            (Reply::Result(result), true) => {
                probe.check_shape(&shapes::RESULT_SHAPE, "EmptyResult", method, result);
                Outcome::Pass
            }
            (Reply::Error(_), false) => Outcome::Pass,
            (other, true) => Outcome::Fail(format!(
                "resources.subscribe is declared; {method} {uri} got {}",
                other.describe()
            )),
            (other, false) => Outcome::Fail(format!(
                "resources.subscribe is not declared; {method} {uri} got {}",
                other.describe()
            )),
        };
        probe.record(&SUBSCRIBE_HONEST, outcome);
    }
}

/// `subscriptions/listen` for everything, then cancelled.
async fn listen(probe: &mut Probe<'_>, uri: Option<Value>) {
    let declared = |path: &str| probe.capabilities.pointer(path) == Some(&json!(true));
    // (filter field, the capability that allows it)
    let wanted = [
        ("toolsListChanged", declared("/tools/listChanged")),
        ("promptsListChanged", declared("/prompts/listChanged")),
        ("resourcesListChanged", declared("/resources/listChanged")),
        ("resourceSubscriptions", declared("/resources/subscribe")),
    ];
    let mut filter =
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true});
    if let Some(uri) = &uri {
        filter["resourceSubscriptions"] = json!([uri]);
    }
    let id = probe.conn.fresh_id();
    let params = probe.params(json!({"notifications": filter}));
    let message =
        json!({"jsonrpc": "2.0", "id": &id, "method": "subscriptions/listen", "params": params});
    probe.conn.send(&message).await;
    let within = probe.conn.timing.request;
    let acknowledged = probe
        .conn
        .notification(within, |n| {
            n.get("method") == Some(&json!("notifications/subscriptions/acknowledged"))
        })
        .await;
    let outcome = if acknowledged {
        let ack = probe.conn.notifications.last().cloned().unwrap_or_default();
        let granted = ack
            .pointer("/params/notifications")
            .cloned()
            .unwrap_or_default();
        let dishonest: Vec<&str> = wanted
            .iter()
            .filter(|(field, allowed)| {
                let given = granted.get(*field).is_some_and(|v| v != &json!(false));
                given && !allowed
            })
            .map(|(field, _)| *field)
            .collect();
        if dishonest.is_empty() {
            Outcome::Pass
        } else {
            Outcome::Fail(format!(
                "subscriptions/listen was acknowledged with {} although the capabilities do not declare it: {granted}",
                dishonest.join(", ")
            ))
        }
    } else {
        let grace = probe.conn.timing.grace;
        let reply = probe.conn.response(&id, grace).await;
        let any_declared = wanted.iter().any(|(_, allowed)| *allowed);
        match reply {
            Reply::Error(_) if !any_declared => Outcome::Skip(
                "the server declares no listChanged nor subscribe, and refuses subscriptions/listen"
                    .into(),
            ),
            other => Outcome::Fail(format!(
                "subscriptions/listen got no notifications/subscriptions/acknowledged within {} s (then {})",
                within.as_secs_f64(),
                other.describe()
            )),
        }
    };
    probe.record(&LISTEN_ACKNOWLEDGED, outcome);
    // End it: on stdio by cancelling; over HTTP the stream ends with the connection.
    if probe.conn.http.is_none() {
        probe
            .conn
            .notify(
                "notifications/cancelled",
                Some(json!({"requestId": &id, "reason": "ferry check"})),
            )
            .await;
    }
    let grace = probe.conn.timing.grace;
    let _ = probe.conn.response(&id, grace).await;
}
