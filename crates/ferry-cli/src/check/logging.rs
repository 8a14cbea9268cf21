//! Logging: the capability is declared when messages are sent; `logging/setLevel` (or, in
//! the stateless era, a request's `_meta` logLevel) is honoured: passively, for every log
//! message of the run, and actively, with a tool the checker saw logging during its call
//! (discovered, never named): called at `debug`, then at a level in the middle of what it
//! logged, nothing below that level may come; in the stateless era, called without a
//! level, nothing at all.

use ferry::protocol::Feature;
use ferry::protocol::types::keys;
use serde_json::{Value, json};

use super::model::{Outcome, requirement};
use super::probe::Probe;

requirement!(
    LOG_LEVEL_INVALID,
    "logging.invalid-level",
    Logging,
    Should,
    "logging/setLevel with an unknown level is refused with error -32602",
    "server/utilities/logging#error-handling"
);
requirement!(
    LOG_FILTERED,
    "logging.level-honoured",
    Logging,
    Should,
    "after logging/setLevel, no log message below that level is sent",
    "server/utilities/logging#setting-log-level"
);
requirement!(
    LOG_DECLARED,
    "logging.capability-declared",
    Logging,
    Must,
    "a server that sends log messages declares the logging capability",
    "server/utilities/logging#capabilities"
);

requirement!(
    SET_LEVEL_FILTERS,
    "logging.level-filters-a-logging-tool",
    Logging,
    Should,
    "a tool that logs at several levels, called again at a higher level, sends nothing below that level",
    "server/utilities/logging"
);
requirement!(
    NO_LEVEL_NO_MESSAGES,
    "logging.no-level-no-messages",
    Logging,
    Must,
    "no log message is sent for a request without a _meta logLevel (2026-07-28)",
    "server/utilities/logging#per-request-log-level"
);

/// Syslog severities, least severe first.
pub(crate) const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// An invalid level (session era, when declared).
pub(crate) async fn invalid_level(probe: &mut Probe<'_>) {
    if !probe.revision.has(Feature::SetLevel) || !probe.declares("logging") {
        return;
    }
    let reply = probe
        .call("logging/setLevel", json!({"level": "ferry-check"}))
        .await;
    probe.expect(&LOG_LEVEL_INVALID, reply.code() == Some(-32602), || {
        format!("logging/setLevel ferry-check got {}", reply.describe())
    });
    // Back to the level the checker set at the start.
    let _ = probe
        .call("logging/setLevel", json!({"level": "warning"}))
        .await;
}

/// Judge the log messages received: the checker set `warning` right after the handshake
/// (session era with logging declared; in the stateless era every tool call asks for
/// `warning`), so nothing below it may come.
pub(crate) fn messages(probe: &mut Probe<'_>) {
    let messages: Vec<Value> = probe
        .conn
        .notifications
        .iter()
        .filter(|n| n.get("method") == Some(&json!("notifications/message")))
        .cloned()
        .collect();
    if messages.is_empty() {
        let reason = "no log message was sent";
        probe.record(&LOG_FILTERED, Outcome::Skip(reason.into()));
        probe.record(&LOG_DECLARED, Outcome::Skip(reason.into()));
        return;
    }
    let declared = probe.declares("logging");
    probe.expect(&LOG_DECLARED, declared, || {
        format!(
            "{} log message(s) sent, logging not declared",
            messages.len()
        )
    });
    if !probe.stateless() && (!probe.revision.has(Feature::SetLevel) || !declared) {
        probe.record(
            &LOG_FILTERED,
            Outcome::Skip("no logging/setLevel in this revision".into()),
        );
        return;
    }
    let Some(set_at) = probe.level_set_at else {
        probe.record(
            &LOG_FILTERED,
            Outcome::Skip("logging/setLevel was not accepted".into()),
        );
        return;
    };
    let messages = &messages_after(probe, set_at);
    let floor = LEVELS.iter().position(|l| *l == "warning").unwrap_or(0);
    for message in messages.iter() {
        let level = message
            .pointer("/params/level")
            .and_then(Value::as_str)
            .unwrap_or("?");
        let rank = LEVELS.iter().position(|l| *l == level);
        probe.expect(&LOG_FILTERED, rank.is_some_and(|r| r >= floor), || {
            format!("level warning was set, yet a {level} message came")
        });
    }
    probe.record(
        &LOG_FILTERED,
        Outcome::Skip("no log message came after logging/setLevel".into()),
    );
}

/// The log messages received after the first `at` notifications.
fn messages_after(probe: &Probe<'_>, at: usize) -> Vec<Value> {
    probe.conn.notifications[at.min(probe.conn.notifications.len())..]
        .iter()
        .filter(|n| n.get("method") == Some(&json!("notifications/message")))
        .cloned()
        .collect()
}

/// The levels of the log messages `name` sends when called at `level` (none: no level
/// asked in the stateless era; the session level stays as it is).
async fn levels_of_call(
    probe: &mut Probe<'_>,
    name: &str,
    arguments: &Value,
    level: Option<&str>,
) -> Vec<String> {
    let mut params = json!({"name": name, "arguments": arguments});
    if let Some(level) = level {
        if probe.stateless() {
            params["_meta"] = json!({keys::LOG_LEVEL: level});
        } else {
            let _ = probe
                .call("logging/setLevel", json!({"level": level}))
                .await;
        }
    }
    let before = probe.conn.notifications.len();
    let _ = probe.call("tools/call", params).await;
    let grace = probe.conn.timing.grace;
    let _ = probe.conn.drain(grace).await;
    probe.conn.notifications[before..]
        .iter()
        .filter(|n| n.get("method") == Some(&json!("notifications/message")))
        .map(|n| {
            let level = n.pointer("/params/level").and_then(Value::as_str);
            level.unwrap_or("?").to_owned()
        })
        .collect()
}

fn rank(level: &str) -> Option<usize> {
    LEVELS.iter().position(|l| *l == level)
}

/// The active check with the logging tool, if the checker found one (run after the
/// passive judgement: it changes the level).
pub(crate) async fn filtering(probe: &mut Probe<'_>) {
    if !probe.declares("logging") {
        let reason = "the server does not declare logging";
        probe.record(&SET_LEVEL_FILTERS, Outcome::Skip(reason.into()));
        return;
    }
    if !probe.stateless() && !probe.revision.has(Feature::SetLevel) {
        return;
    }
    let Some((name, arguments)) = probe.logging_tool.clone() else {
        let reason = "no tool the checker may call logged during its call (at warning or above, the level it asks for)";
        probe.record(&SET_LEVEL_FILTERS, Outcome::Skip(reason.into()));
        return;
    };
    let all = levels_of_call(probe, &name, &arguments, Some("debug")).await;
    let mut distinct: Vec<usize> = all.iter().filter_map(|l| rank(l)).collect();
    distinct.sort_unstable();
    distinct.dedup();
    // A level in the middle of what it logs, or above the only one.
    let threshold = match distinct.as_slice() {
        [] => None,
        [only] => LEVELS.get(only + 1).copied(),
        several => Some(LEVELS[several[several.len() / 2]]),
    };
    let Some(threshold) = threshold else {
        let reason =
            format!("at level debug, {name} logged {all:?}: no level left above it to filter by");
        probe.record(&SET_LEVEL_FILTERS, Outcome::Skip(reason));
        return;
    };
    let seen = levels_of_call(probe, &name, &arguments, Some(threshold)).await;
    let floor = rank(threshold).unwrap_or(0);
    let below: Vec<&String> = seen
        .iter()
        .filter(|l| rank(l).is_none_or(|r| r < floor))
        .collect();
    probe.expect(&SET_LEVEL_FILTERS, below.is_empty(), || {
        format!(
            "at level debug, {name} logged {all:?}; at level {threshold} it still logged {below:?}"
        )
    });
    if probe.stateless() {
        let seen = levels_of_call(probe, &name, &arguments, None).await;
        probe.expect(&NO_LEVEL_NO_MESSAGES, seen.is_empty(), || {
            format!("tools/call {name} without a logLevel was followed by log messages at {seen:?}")
        });
    } else {
        let _ = probe
            .call("logging/setLevel", json!({"level": "warning"}))
            .await;
    }
}
