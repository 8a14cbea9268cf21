//! The base protocol: malformed input gets the right JSON-RPC error (or, for what must not
//! be answered, nothing), every request exactly one response, batches per revision.
//!
//! The cases are those of the malformed-input table of `ferry-mcp-protocol`'s tests reduced to
//! what any server can be held to. Each case is followed by a barrier request (see
//! [`Probe::barrier`]): once its response is in (and a short grace has passed), whatever
//! the case deserved has arrived or never will.

use std::time::Duration;

use ferry::protocol::Feature;
use serde_json::{Value, json};

use super::model::{Outcome, Requirement, requirement};
use super::probe::Probe;
use super::target::{Reply, shorten};

requirement!(
    PARSE_ERROR,
    "jsonrpc.parse-error",
    JsonRpc,
    Must,
    "invalid JSON is answered with error -32700 and id null",
    "basic#messages"
);
requirement!(
    INVALID_REQUEST,
    "jsonrpc.invalid-request",
    JsonRpc,
    Must,
    "a message that is not a valid request is answered with error -32600 (id null when it cannot be read)",
    "basic#requests"
);
requirement!(
    NULL_ID,
    "jsonrpc.null-id",
    JsonRpc,
    Should,
    "a request with id null (forbidden by MCP) is refused with error -32600",
    "basic#requests"
);
requirement!(
    METHOD_NOT_FOUND,
    "jsonrpc.method-not-found",
    JsonRpc,
    Must,
    "an unknown method is answered with error -32601 and the request's id",
    "basic#error-responses"
);
requirement!(
    INVALID_PARAMS,
    "jsonrpc.params-not-structured",
    JsonRpc,
    Must,
    "params that are not an object or array are refused with an error (-32600 or -32602)",
    "basic#requests"
);
requirement!(
    NOTIFICATION_UNANSWERED,
    "jsonrpc.notification-unanswered",
    JsonRpc,
    Must,
    "a notification, even an unknown one, is never answered",
    "basic#notifications"
);
requirement!(
    RESPONSE_UNANSWERED,
    "jsonrpc.response-unanswered",
    JsonRpc,
    Should,
    "a response to no request is ignored (not answered)",
    "basic#responses"
);
requirement!(
    STRING_ID,
    "jsonrpc.string-id",
    JsonRpc,
    Must,
    "a request with a string id is answered with that exact id",
    "basic#responses"
);
requirement!(
    ONE_RESPONSE,
    "jsonrpc.one-response-per-request",
    JsonRpc,
    Must,
    "every request gets exactly one response, and nothing else is answered",
    "basic#responses"
);
requirement!(
    RESPONSE_SHAPE,
    "jsonrpc.response-shape",
    JsonRpc,
    Must,
    "responses carry jsonrpc 2.0 and either a result or an error (with an integer code and a string message)",
    "basic#responses"
);
requirement!(
    BATCH_SUPPORTED,
    "jsonrpc.batch-supported",
    JsonRpc,
    Must,
    "a batch of requests is answered with an array of their responses (2025-03-26; over HTTP an SSE stream may carry them one by one)",
    "basic#batching (2025-03-26)"
);
requirement!(
    BATCH_REFUSED,
    "jsonrpc.batch-refused",
    JsonRpc,
    Should,
    "a batch is refused with error -32600 in revisions without batches",
    "basic#messages"
);
requirement!(
    SURVIVES,
    "jsonrpc.survives-malformed-input",
    JsonRpc,
    Must,
    "the server keeps serving after malformed input",
    "basic#messages"
);

/// What a case deserves.
enum Expect {
    /// An error with one of these codes and this id (`null` for unreadable ids).
    Error(&'static [i64], Value),
    /// Nothing at all.
    Nothing,
    /// A result with this id.
    Result(Value),
}

struct Case {
    requirement: &'static Requirement,
    what: &'static str,
    input: String,
    expect: Expect,
}

fn cases(probe: &Probe<'_>) -> Vec<Case> {
    // A valid request of the revision without its envelope: `"method":...,"params":...`.
    let method = probe.barrier_method();
    let params = probe.params(json!({}));
    let body = if params.as_object().is_some_and(|m| !m.is_empty()) {
        format!(r#""method":"{method}","params":{params}"#)
    } else {
        format!(r#""method":"{method}""#)
    };
    // In the stateless era every message that can carry `_meta` does, so the server can
    // tell the era.
    let meta = if probe.stateless() {
        format!(r#","params":{params}"#)
    } else {
        String::new()
    };
    let unknown = format!(
        r#""method":"ferry-check/no-such-method","params":{}"#,
        probe.params(json!({}))
    );
    let case = |requirement, what, input: String, expect| Case {
        requirement,
        what,
        input,
        expect,
    };
    vec![
        case(&PARSE_ERROR, "truncated JSON", format!(r#"{{"jsonrpc":"2.0","id":"m1",{body}"#),
            Expect::Error(&[-32700], Value::Null)),
        case(&PARSE_ERROR, "not JSON at all", "ferry check: not json".into(),
            Expect::Error(&[-32700], Value::Null)),
        case(&INVALID_REQUEST, "a number", "42".into(), Expect::Error(&[-32600], Value::Null)),
        case(&INVALID_REQUEST, "no jsonrpc member", format!(r#"{{"id":"m4",{body}}}"#),
            Expect::Error(&[-32600], json!("m4"))),
        case(&INVALID_REQUEST, "jsonrpc 1.0", format!(r#"{{"jsonrpc":"1.0","id":"m5",{body}}}"#),
            Expect::Error(&[-32600], json!("m5"))),
        case(&INVALID_REQUEST, "method is a number", format!(r#"{{"jsonrpc":"2.0","id":"m6","method":42{meta}}}"#),
            Expect::Error(&[-32600], json!("m6"))),
        case(&INVALID_REQUEST, "id is an object", format!(r#"{{"jsonrpc":"2.0","id":{{"a":1}},{body}}}"#),
            Expect::Error(&[-32600], Value::Null)),
        case(&NULL_ID, "id null", format!(r#"{{"jsonrpc":"2.0","id":null,{body}}}"#),
            Expect::Error(&[-32600], Value::Null)),
        case(&METHOD_NOT_FOUND, "unknown method", format!(r#"{{"jsonrpc":"2.0","id":"m9",{unknown}}}"#),
            Expect::Error(&[-32601], json!("m9"))),
        case(&INVALID_PARAMS, "params is a string",
            format!(r#"{{"jsonrpc":"2.0","id":"m10","method":"{method}","params":"x"}}"#),
            Expect::Error(&[-32600, -32602], json!("m10"))),
        case(&NOTIFICATION_UNANSWERED, "unknown notification",
            r#"{"jsonrpc":"2.0","method":"notifications/ferry-check/unknown"}"#.into(), Expect::Nothing),
        case(&NOTIFICATION_UNANSWERED, "cancellation of an unknown request",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"ferry-check-never-sent"}}"#.into(),
            Expect::Nothing),
        // (Not sent to a stateless HTTP server: clients must not POST responses there.)
        case(&RESPONSE_UNANSWERED, "a response to no request",
            r#"{"jsonrpc":"2.0","id":"m13","result":{}}"#.into(), Expect::Nothing),
        case(&STRING_ID, "string id", format!(r#"{{"jsonrpc":"2.0","id":"m14 ü",{body}}}"#),
            Expect::Result(json!("m14 ü"))),
    ]
}

/// Run the malformed-input cases and the batch rule of the revision.
pub(crate) async fn check(probe: &mut Probe<'_>) {
    let stateless_http = probe.stateless() && probe.conn.http.is_some();
    for (n, case) in cases(probe).into_iter().enumerate() {
        if stateless_http && std::ptr::eq(case.requirement, &RESPONSE_UNANSWERED) {
            continue;
        }
        probe.conn.send_raw(case.input.as_bytes()).await;
        let status = super::http::last_status(probe);
        let barrier = format!("ferry-check-barrier-{n}");
        let barrier_reply = probe.barrier(&barrier).await;
        // What arrived with the barrier's response; a grace period more only when that
        // is not yet what the case deserves (a server may answer out of order).
        let mut seen = probe.conn.drain(Duration::ZERO).await;
        if !satisfied(&case.expect, &seen) {
            let grace = probe.conn.timing.grace;
            seen.extend(probe.conn.drain(grace).await);
        }
        if matches!(barrier_reply, Reply::Nothing) {
            probe.record(
                &SURVIVES,
                Outcome::Fail(format!(
                    "after {} ({}), {} {barrier:?} got no response",
                    case.what,
                    shorten(&case.input, 80),
                    probe.barrier_method()
                )),
            );
            return;
        }
        // Responses to the barrier's id arriving twice are duplicates.
        let mut outcome = judge(&case, &mut seen);
        // Over HTTP an error status is the refusal; the JSON-RPC error in its body is
        // optional (when there is one, its code was judged above).
        if let (Some(status), Outcome::Fail(evidence)) = (status, &outcome) {
            if matches!(case.expect, Expect::Error(..))
                && status.is_client_error()
                && evidence.ends_with("no response")
            {
                outcome = Outcome::Pass;
                // The refusal's body, if it could not name the request.
                seen.retain(|m| !(m.get("id") == Some(&Value::Null) && m.get("error").is_some()));
            } else {
                outcome = Outcome::Fail(format!("{evidence} (HTTP {status})"));
            }
        }
        probe.record(case.requirement, outcome);
        for message in &seen {
            probe.record(
                &ONE_RESPONSE,
                Outcome::Fail(format!(
                    "after {}: unexpected {}",
                    case.what,
                    shorten(&message.to_string(), 160)
                )),
            );
        }
    }
    probe.record(&SURVIVES, Outcome::Pass);
    probe.record(&ONE_RESPONSE, Outcome::Pass);
    batch(probe).await;
}

/// Whether `seen` already holds the response the case deserves (never for "nothing").
fn satisfied(expect: &Expect, seen: &[Value]) -> bool {
    match expect {
        Expect::Nothing => false,
        Expect::Error(_, id) => seen
            .iter()
            .any(|m| m.get("id").unwrap_or(&Value::Null) == id),
        Expect::Result(id) => seen.iter().any(|m| m.get("id") == Some(id)),
    }
}

/// The outcome of one case from what arrived (the matching response is taken out).
fn judge(case: &Case, seen: &mut Vec<Value>) -> Outcome {
    let input = shorten(&case.input, 80);
    match &case.expect {
        Expect::Nothing => {
            if seen.is_empty() {
                Outcome::Pass
            } else {
                let got = seen.remove(0);
                Outcome::Fail(format!(
                    "{} ({input}) was answered: {}",
                    case.what,
                    shorten(&got.to_string(), 160)
                ))
            }
        }
        Expect::Error(codes, id) => {
            let Some(at) = seen
                .iter()
                .position(|m| m.get("id").unwrap_or(&Value::Null) == id)
            else {
                return Outcome::Fail(format!("{} ({input}): no response", case.what));
            };
            let got = seen.remove(at);
            let code = got.pointer("/error/code").and_then(Value::as_i64);
            match code {
                Some(code) if codes.contains(&code) => Outcome::Pass,
                _ => Outcome::Fail(format!(
                    "{} ({input}): expected error {codes:?} with id {id}, got {}",
                    case.what,
                    shorten(&got.to_string(), 160)
                )),
            }
        }
        Expect::Result(id) => {
            let Some(at) = seen.iter().position(|m| m.get("id") == Some(id)) else {
                return Outcome::Fail(format!("{} ({input}): no response with id {id}", case.what));
            };
            let got = seen.remove(at);
            if got.get("result").is_some() {
                Outcome::Pass
            } else {
                Outcome::Fail(format!(
                    "{} ({input}): got {}",
                    case.what,
                    shorten(&got.to_string(), 160)
                ))
            }
        }
    }
}

/// Check the shape of the response to `method`.
pub(crate) fn check_response_shape(probe: &mut Probe<'_>, method: &str, reply: &Reply) {
    let ok = match reply {
        Reply::Error(error) => {
            error.get("code").is_some_and(Value::is_i64)
                && error.get("message").is_some_and(Value::is_string)
        }
        Reply::Malformed(_) => false,
        Reply::Result(_) | Reply::Nothing => true,
    };
    probe.expect(&RESPONSE_SHAPE, ok, || {
        format!("{method} got {}", reply.describe())
    });
}

/// Batches: answered in 2025-03-26, refused elsewhere.
async fn batch(probe: &mut Probe<'_>) {
    let method = probe.barrier_method();
    let params = probe.params(json!({}));
    let one = |id: &str| {
        let mut m = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if params.as_object().is_some_and(|p| !p.is_empty()) {
            m["params"] = params.clone();
        }
        m
    };
    let batch = json!([one("b1"), one("b2")]);
    probe.conn.send(&batch).await;
    let _ = probe.barrier("ferry-check-barrier-batch").await;
    let grace = probe.conn.timing.grace;
    let mut rest = probe.conn.drain(grace).await;
    let is_entry =
        |m: &Value| m.get("id") == Some(&json!("b1")) || m.get("id") == Some(&json!("b2"));
    // The answer: an array, or (over HTTP, where an SSE stream may carry the responses one
    // by one) the single responses to the entries.
    let array = rest
        .iter()
        .position(Value::is_array)
        .map(|at| rest.remove(at));
    let singles: Vec<Value> = if probe.conn.http.is_some() {
        let (singles, others): (Vec<Value>, Vec<Value>) = rest.into_iter().partition(is_entry);
        rest = others;
        singles
    } else {
        Vec::new()
    };
    let error = rest
        .iter()
        .position(|m| m.get("error").is_some() && m.get("id") == Some(&Value::Null))
        .map(|at| rest.remove(at));
    let got = array
        .clone()
        .or_else(|| singles.first().cloned())
        .or_else(|| error.clone());
    let describe = |got: &Option<Value>| match got {
        Some(got) => format!(
            "a batch of two {method} requests got {}",
            shorten(&got.to_string(), 160)
        ),
        None => format!("a batch of two {method} requests: no response"),
    };
    if probe.revision.has(Feature::Batches) {
        let answered: Vec<Value> = match &array {
            Some(Value::Array(entries)) => entries
                .iter()
                .filter_map(|m| m.get("id").cloned())
                .collect(),
            _ => singles
                .iter()
                .filter_map(|m| m.get("id").cloned())
                .collect(),
        };
        let ok = answered.len() == 2
            && answered.contains(&json!("b1"))
            && answered.contains(&json!("b2"));
        probe.expect(&BATCH_SUPPORTED, ok, || describe(&got));
    } else {
        let code = error
            .as_ref()
            .and_then(|e| e.pointer("/error/code"))
            .and_then(Value::as_i64);
        let ok = array.is_none() && singles.is_empty() && code == Some(-32600);
        probe.expect(&BATCH_REFUSED, ok, || describe(&got));
    }
    rest.retain(|m| m.get("id").is_some());
    for message in rest {
        probe.record(
            &ONE_RESPONSE,
            Outcome::Fail(format!(
                "after a batch: unexpected {}",
                shorten(&message.to_string(), 160)
            )),
        );
    }
}
