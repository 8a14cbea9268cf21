//! Resumability (session era): a request answered on an SSE stream whose events carry ids
//! is cut after the first id, then resumed with `GET` and `Last-Event-ID`. The resumed
//! stream must carry only that request's messages, and together with what came before
//! the cut every message once: the response, and as many progress notifications as the
//! same call sent uninterrupted. While the stream is cut, another request runs on a
//! stream of its own: nothing of it may come on the resumed one. Without a request
//! answered on a stream, the standalone GET stream is cut and resumed instead (at its
//! priming event's id). A server that puts no ids on its events does not offer
//! resumption (skipped, with the reason).

use reqwest::Method;
use serde_json::{Value, json};

use super::http_peer::{Events, Opened};
use super::model::{Outcome, requirement};
use super::probe::Probe;
use super::target::shorten;

requirement!(
    RESUMABLE,
    "http.resumability",
    Http,
    Should,
    "a stream with event ids, cut and resumed with GET and Last-Event-ID, delivers every later message once: none lost, none repeated",
    "basic/transports#resumability-and-redelivery"
);
requirement!(
    SAME_STREAM,
    "http.resume-same-stream",
    Http,
    Must,
    "a resumed stream replays no message that belongs to another stream",
    "basic/transports#resumability-and-redelivery"
);

const ID: &str = "ferry-check-resume";
/// Another request, sent while the stream is cut.
const OTHER: &str = "ferry-check-resume-other";

/// One event's message, if its data is one.
fn message(data: Option<&str>) -> Option<Value> {
    let data = data?.trim();
    (!data.is_empty())
        .then(|| serde_json::from_str(data).ok())
        .flatten()
}

fn is_ours(message: &Value) -> bool {
    message.get("id") == Some(&json!(ID)) && message.get("method").is_none()
}

fn is_our_progress(message: &Value) -> bool {
    message.get("method") == Some(&json!("notifications/progress"))
        && message.pointer("/params/progressToken") == Some(&json!(ID))
}

fn skip(probe: &mut Probe<'_>, reason: &str) {
    probe.record(&RESUMABLE, Outcome::Skip(reason.to_owned()));
    probe.record(&SAME_STREAM, Outcome::Skip(reason.to_owned()));
}

/// Cut a stream and resume it (HTTP, session era).
pub(crate) async fn check(probe: &mut Probe<'_>) {
    let Some(http) = &probe.conn.http else { return };
    // A call that reported progress (it has messages before its response), else ping
    // with a progress token: a server answers either on a stream if it likes.
    let (method, params, expected) = match probe.resumable_call.clone() {
        Some((name, arguments, progress)) => (
            format!("tools/call {name}"),
            json!({"name": name, "arguments": arguments, "_meta": {"progressToken": ID}}),
            Some(progress),
        ),
        None => (
            "ping".to_owned(),
            json!({"_meta": {"progressToken": ID}}),
            None,
        ),
    };
    let wire = method.split(' ').next().unwrap_or("ping");
    let body = json!({"jsonrpc": "2.0", "id": ID, "method": wire, "params": params}).to_string();
    let accept = [("accept", "application/json, text/event-stream")];
    let opened = http.open(Method::POST, &accept, Some(&body), false).await;
    let within = probe.conn.timing.request;
    let mut events = match opened {
        Ok((_, _, Opened::Events(events))) => events,
        Ok((status, _, Opened::Body(_))) => {
            let reason = format!(
                "{method} was answered with a JSON body ({status}), not a stream to resume"
            );
            return standalone(probe, &reason).await;
        }
        Err(e) => {
            probe.record(&RESUMABLE, Outcome::Fail(format!("POST {method}: {e}")));
            return;
        }
    };
    let mut before = Vec::new();
    let mut cut = None;
    while let Some(event) = events.next(within).await {
        if let Some(message) = message(event.data.as_deref()) {
            before.push(message);
        }
        if let Some(id) = event.id.filter(|id| !id.is_empty()) {
            cut = Some(id);
            break;
        }
    }
    drop(events); // hang up
    let Some(cut) = cut else {
        let reason = format!(
            "the stream answering {method} carried no event ids: the server does not offer resumption"
        );
        return standalone(probe, &reason).await;
    };
    if before.iter().any(is_ours) {
        let reason = format!(
            "the response to {method} came before the first event id: nothing was left to resume"
        );
        return skip(probe, &reason);
    }
    let Some(http) = &probe.conn.http else { return };
    // Another request on a stream of its own meanwhile: none of its messages may come
    // on the resumed stream.
    let other = json!({"jsonrpc": "2.0", "id": OTHER, "method": "ping",
        "params": {"_meta": {"progressToken": OTHER}}})
    .to_string();
    if let Ok((_, _, Opened::Events(events))) =
        http.open(Method::POST, &accept, Some(&other), false).await
    {
        let _ = read_until_response(events, within, OTHER).await;
    }
    let resumed = http
        .open(
            Method::GET,
            &[
                ("accept", "text/event-stream"),
                ("last-event-id", cut.as_str()),
            ],
            None,
            false,
        )
        .await;
    let what = format!("{method} cut after event {cut:?}, then GET with Last-Event-ID {cut:?}");
    let after = match resumed {
        Ok((_, _, Opened::Events(events))) => read_until_response(events, within, ID).await,
        Ok((status, _, Opened::Body(text))) => {
            let evidence = format!("{what}: {status} {}", shorten(&text, 120));
            probe.record(&RESUMABLE, Outcome::Fail(evidence));
            probe.record(
                &SAME_STREAM,
                Outcome::Skip("the stream was not resumed".into()),
            );
            return;
        }
        Err(e) => {
            probe.record(&RESUMABLE, Outcome::Fail(format!("{what}: {e}")));
            probe.record(
                &SAME_STREAM,
                Outcome::Skip("the stream was not resumed".into()),
            );
            return;
        }
    };
    judge(probe, &what, &before, &after, expected);
}

/// The messages of a stream, up to the response to `id` (or its end, or silence).
async fn read_until_response(
    mut events: Events,
    within: std::time::Duration,
    id: &str,
) -> Vec<Value> {
    let mut after = Vec::new();
    while let Some(event) = events.next(within).await {
        if let Some(message) = message(event.data.as_deref()) {
            let done = message.get("id") == Some(&json!(id)) && message.get("method").is_none();
            after.push(message);
            if done {
                break;
            }
        }
    }
    after
}

fn judge(
    probe: &mut Probe<'_>,
    what: &str,
    before: &[Value],
    after: &[Value],
    expected: Option<usize>,
) {
    let foreign = after.iter().find(|m| {
        let other_response = m.get("method").is_none() && m.get("id").is_some() && !is_ours(m);
        let other_progress =
            m.get("method") == Some(&json!("notifications/progress")) && !is_our_progress(m);
        other_response || other_progress
    });
    probe.expect(&SAME_STREAM, foreign.is_none(), || {
        format!(
            "{what}: the resumed stream carried {}",
            shorten(&foreign.map(Value::to_string).unwrap_or_default(), 160)
        )
    });
    let mut problems = Vec::new();
    if let Some(repeated) = after.iter().find(|m| before.contains(m)) {
        problems.push(format!(
            "repeated a message from before the cut: {}",
            shorten(&repeated.to_string(), 120)
        ));
    }
    if let Some(odd) = after.iter().find(|m| m.get("jsonrpc").is_none()) {
        problems.push(format!(
            "sent an event whose data is no JSON-RPC message: {odd}"
        ));
    }
    let all: Vec<&Value> = before.iter().chain(after).collect();
    let responses = all.iter().filter(|m| is_ours(m)).count();
    match responses {
        1 => {}
        0 => problems.push("the response never came (lost)".into()),
        n => problems.push(format!("the response came {n} times")),
    }
    let progress: Vec<f64> = all
        .iter()
        .filter(|m| is_our_progress(m))
        .filter_map(|m| m.pointer("/params/progress").and_then(Value::as_f64))
        .collect();
    if progress.windows(2).any(|w| w[1] <= w[0]) {
        problems.push(format!("progress went {progress:?} across the cut"));
    }
    if let Some(expected) = expected
        && progress.len() != expected
    {
        problems.push(format!(
            "{} progress notification(s) in all; the same call uninterrupted sent {expected}",
            progress.len()
        ));
    }
    let outcome = if problems.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(format!("{what}: {}", problems.join("; ")))
    };
    probe.record(&RESUMABLE, outcome);
}

/// Without a request's stream to cut, the standalone GET stream: cut after its first event
/// id (a priming event, from 2025-11-25), resumed with `Last-Event-ID`. The resumption
/// must be accepted, and carry no response (none belongs to the standalone stream).
async fn standalone(probe: &mut Probe<'_>, why_not_post: &str) {
    let Some(http) = &probe.conn.http else { return };
    let accept = [("accept", "text/event-stream")];
    let grace = probe.conn.timing.grace;
    // A standalone stream the checker opened (and dropped) before may still count as open
    // for a moment: 409 Conflict is asked again, a few times.
    let mut opened = http.open(Method::GET, &accept, None, false).await;
    for _ in 0..3 {
        if !matches!(&opened, Ok((status, _, _)) if *status == reqwest::StatusCode::CONFLICT) {
            break;
        }
        tokio::time::sleep(grace).await;
        opened = http.open(Method::GET, &accept, None, false).await;
    }
    let cut = match opened {
        Ok((_, _, Opened::Events(mut events))) => {
            let mut cut = None;
            while let Some(event) = events.next(grace).await {
                if let Some(id) = event.id.filter(|id| !id.is_empty()) {
                    cut = Some(id);
                    break;
                }
            }
            cut
        }
        _ => None,
    };
    let Some(cut) = cut else {
        let reason = format!("{why_not_post}; the GET stream carried no event id either");
        return skip(probe, &reason);
    };
    let headers = [
        ("accept", "text/event-stream"),
        ("last-event-id", cut.as_str()),
    ];
    let what =
        format!("the GET stream cut after event {cut:?}, then GET with Last-Event-ID {cut:?}");
    match http.open(Method::GET, &headers, None, false).await {
        Ok((_, _, Opened::Events(mut events))) => {
            probe.record(&RESUMABLE, Outcome::Pass);
            let mut responses = Vec::new();
            while let Some(event) = events.next(grace).await {
                if let Some(m) = message(event.data.as_deref())
                    && m.get("method").is_none()
                    && m.get("id").is_some()
                {
                    responses.push(m);
                }
            }
            probe.expect(&SAME_STREAM, responses.is_empty(), || {
                format!(
                    "{what}: the resumed standalone stream carried the response {}",
                    responses[0]
                )
            });
        }
        Ok((status, _, Opened::Body(text))) => {
            let evidence = format!("{what}: {status} {}", shorten(&text, 120));
            probe.record(&RESUMABLE, Outcome::Fail(evidence));
            probe.record(
                &SAME_STREAM,
                Outcome::Skip("the stream was not resumed".into()),
            );
        }
        Err(e) => {
            probe.record(&RESUMABLE, Outcome::Fail(format!("{what}: {e}")));
            probe.record(
                &SAME_STREAM,
                Outcome::Skip("the stream was not resumed".into()),
            );
        }
    }
}
