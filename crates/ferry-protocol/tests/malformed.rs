//! Table-driven tests of the JSON-RPC 2.0 classifier against malformed (and some valid)
//! input: every row states the exact outcome, and every row is also checked for panics,
//! for the shape of the error response it produces, and for a useful error message.

use std::panic;

use ferry_protocol::error_codes::{INVALID_REQUEST, PARSE_ERROR};
use ferry_protocol::jsonrpc::{
    ClassifyLimits, Inbound, Message, Rejected, RequestId, Response, classify, classify_with,
};

#[path = "malformed_table/mod.rs"]
mod table;

use table::*;

fn message_outcome(message: &Message) -> Outcome {
    match message {
        Message::Request(r) => Outcome::Request {
            id: r.id.clone(),
            method: r.method.to_string(),
            params: r.params.as_ref().map(|p| p.get().to_owned()),
        },
        Message::Notification(n) => Outcome::Notification {
            method: n.method.to_string(),
            params: n.params.as_ref().map(|p| p.get().to_owned()),
        },
        Message::Response(Response::Result(r)) => Outcome::Result { id: r.id.clone() },
        Message::Response(Response::Error(e)) => Outcome::ErrorResp {
            id: e.id.clone(),
            code: e.error.code,
        },
    }
}

fn rejected_outcome(rejected: &Rejected) -> Outcome {
    Outcome::Rejected {
        code: rejected.code(),
        id: rejected.response.id.clone(),
        reply: rejected.reply,
    }
}

fn entry_outcome(entry: &Result<Message, Rejected>) -> Outcome {
    match entry {
        Ok(message) => message_outcome(message),
        Err(rejected) => rejected_outcome(rejected),
    }
}

fn inbound_outcome(inbound: &Inbound) -> Outcome {
    match inbound {
        Inbound::Single(message) => message_outcome(message),
        Inbound::Batch(entries) => Outcome::Batch(entries.iter().map(entry_outcome).collect()),
        Inbound::Rejected(rejected) => rejected_outcome(rejected),
    }
}

/// Every rejection in an outcome, top level or inside a batch.
fn rejections(inbound: &Inbound) -> Vec<&Rejected> {
    match inbound {
        Inbound::Single(_) => Vec::new(),
        Inbound::Batch(entries) => entries.iter().filter_map(|e| e.as_ref().err()).collect(),
        Inbound::Rejected(rejected) => vec![rejected],
    }
}

/// Every accepted message in an outcome, top level or inside a batch.
fn accepted(inbound: &Inbound) -> Vec<&Message> {
    match inbound {
        Inbound::Single(message) => vec![message],
        Inbound::Batch(entries) => entries.iter().filter_map(|e| e.as_ref().ok()).collect(),
        Inbound::Rejected(_) => Vec::new(),
    }
}

/// The bare name of a code, which a useful message must go beyond.
fn bare_name(code: i64) -> &'static str {
    match code {
        PARSE_ERROR => "Parse error",
        INVALID_REQUEST => "Invalid Request",
        _ => "",
    }
}

/// Checks that a rejection serializes to a well-formed error response with a useful message.
fn check_rejection(rejected: &Rejected, problems: &mut Vec<String>) {
    let json = match serde_json::to_string(&rejected.response) {
        Ok(json) => json,
        Err(e) => {
            problems.push(format!("error response does not serialize: {e}"));
            return;
        }
    };
    let value: serde_json::Value = match serde_json::from_str(&json) {
        Ok(value) => value,
        Err(e) => {
            problems.push(format!("error response is not valid JSON ({e}): {json}"));
            return;
        }
    };
    if value.get("jsonrpc").and_then(|v| v.as_str()) != Some("2.0") {
        problems.push(format!("no \"jsonrpc\":\"2.0\" in {json}"));
    }
    let expected_id = match &rejected.response.id {
        None => serde_json::Value::Null,
        Some(RequestId::Number(n)) => serde_json::Value::from(*n),
        Some(RequestId::String(s)) => serde_json::Value::from(s.as_str()),
    };
    match value.get("id") {
        Some(id) if *id == expected_id => {}
        other => problems.push(format!("id {other:?}, expected {expected_id} in {json}")),
    }
    let error = value.get("error");
    if error.and_then(|e| e.get("code")).and_then(|c| c.as_i64()) != Some(rejected.code()) {
        problems.push(format!("no integer code {} in {json}", rejected.code()));
    }
    match error
        .and_then(|e| e.get("message"))
        .and_then(|m| m.as_str())
    {
        Some(message) if !message.trim().is_empty() => {
            let rest = message
                .strip_prefix(bare_name(rejected.code()))
                .unwrap_or(message)
                .trim_matches(|c: char| c.is_whitespace() || c == ':' || c == '.');
            if rest.is_empty() {
                problems.push(format!("message {message:?} is only the code's name"));
            }
        }
        _ => problems.push(format!("no non-empty message in {json}")),
    }
}

/// Runs one row; returns the outcome and any problems beyond an outcome mismatch.
fn run(row: &Row) -> Result<(Outcome, Vec<String>), String> {
    let input: &[u8] = &row.input;
    let limits = row.limits;
    let inbound = panic::catch_unwind(|| classify_with(input, &limits))
        .map_err(|_| "classify panicked".to_owned())?;
    let outcome = inbound_outcome(&inbound);
    let mut problems = Vec::new();

    for rejected in rejections(&inbound) {
        check_rejection(rejected, &mut problems);
    }
    if let Some(needle) = row.mentions {
        let messages: Vec<&str> = rejections(&inbound)
            .iter()
            .map(|r| r.response.error.message.as_str())
            .collect();
        if !messages.iter().any(|m| m.contains(needle)) {
            problems.push(format!("no message mentions {needle:?}: {messages:?}"));
        }
    }
    // Every accepted message re-serializes to something that classifies the same way.
    for message in accepted(&inbound) {
        let before = message_outcome(message);
        match serde_json::to_vec(message) {
            Ok(bytes) => {
                let again =
                    panic::catch_unwind(|| inbound_outcome(&classify_with(&bytes, &limits)))
                        .map_err(|_| "classify panicked on re-serialized message".to_owned())?;
                if again != before {
                    problems.push(format!(
                        "re-serialized message classifies as {again:?}, not {before:?}"
                    ));
                }
            }
            Err(e) => problems.push(format!("accepted message does not serialize: {e}")),
        }
    }
    // With default limits, `classify` and `classify_with` agree.
    if row.limits.max_message_bytes == ClassifyLimits::default().max_message_bytes {
        let plain = panic::catch_unwind(|| inbound_outcome(&classify(input)))
            .map_err(|_| "classify panicked".to_owned())?;
        if plain != outcome {
            problems.push(format!(
                "classify gave {plain:?}, classify_with gave {outcome:?}"
            ));
        }
    }
    Ok((outcome, problems))
}

#[test]
fn malformed_input_table() {
    let rows = rows();
    assert!(rows.len() >= 45, "only {} rows", rows.len());
    {
        let mut names: Vec<&str> = rows.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), rows.len(), "row names must be unique");
    }

    let mut failures = Vec::new();
    for row in &rows {
        match run(row) {
            Err(panicked) => failures.push(format!(
                "[{}] {panicked}\n    expected: {:?}",
                row.name, row.expect
            )),
            Ok((actual, problems)) => {
                if actual != row.expect {
                    failures.push(format!(
                        "[{}] outcome mismatch\n    expected: {:?}\n    actual:   {actual:?}",
                        row.name, row.expect
                    ));
                }
                for problem in problems {
                    failures.push(format!("[{}] {problem}", row.name));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} problem(s) in {} rows:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}
