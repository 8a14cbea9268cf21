//! `engine_lines`: a real server (`ferry::server::Server` with two tools) on an in-memory
//! transport, fed arbitrary lines: it never panics, every request with an id gets exactly
//! one response (a request named by a `notifications/cancelled` may get none), every line
//! refused with a reply gets one, and nothing else is answered — no notification, no
//! response, no line refused without a reply. A batch is answered entry by entry, or
//! refused as a whole with one error (whether batches are accepted depends on the
//! revision the input negotiates).
//!
//! What is expected of each line is read with `ferry_protocol::jsonrpc::classify`, as the
//! engine reads it; the `classify` target checks that reading against serde_json.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use ferry::engine::{Transport, TransportEvent};
use ferry::protocol::RequestId;
use ferry::protocol::jsonrpc::{Inbound, Message, classify};
use ferry::server::{Context, Server};
use serde_json::Value;
use tokio::sync::mpsc;

/// The arguments of `echo`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Echo {
    /// Echoed back.
    pub text: String,
}

/// The arguments of `add`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Add {
    /// One term.
    pub a: f64,
    /// The other.
    pub b: f64,
}

/// The server under test (also the `http_router` target's): `echo` and `add`, a resource
/// template.
pub fn server() -> Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            Server::builder("fuzz", "1.0.0")
                .tool(
                    "echo",
                    "Echo the text",
                    |a: Echo, _cx: Context| async move { a.text },
                )
                .tool(
                    "add",
                    "Add two numbers",
                    |a: Add, _cx: Context| async move { (a.a + a.b).to_string() },
                )
                .build()
        })
        .clone()
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("a runtime")
    })
}

/// How many responses an id (or `null`) may get: at least `lo`, at most `hi`.
#[derive(Default, Debug)]
struct Expected {
    lo: usize,
    hi: usize,
}

/// Check every property on `data`, one line per frame (blank lines are skipped, as the
/// line-framed transport skips them; at most 64 lines).
pub fn check(data: &[u8]) {
    let lines: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .take(64)
        .collect();
    let mut ids: HashMap<RequestId, Expected> = HashMap::new();
    let mut null = Expected::default();
    let mut cancelled: Vec<RequestId> = Vec::new();
    for line in &lines {
        let mut expect = |id: Option<RequestId>, definite: bool| {
            let slot = match id {
                Some(id) => ids.entry(id).or_default(),
                None => &mut null,
            };
            slot.lo += usize::from(definite);
            slot.hi += 1;
        };
        match classify(line) {
            Inbound::Single(Message::Request(r)) => expect(Some(r.id), true),
            Inbound::Single(Message::Notification(n)) => {
                if n.method == "notifications/cancelled"
                    && let Some(params) = n.params.as_deref()
                    && let Ok(value) = serde_json::from_str::<Value>(params.get())
                    && let Ok(id) = serde_json::from_value::<RequestId>(value["requestId"].clone())
                {
                    cancelled.push(id);
                }
            }
            Inbound::Single(Message::Response(_)) => {}
            Inbound::Rejected(r) => {
                if r.reply {
                    expect(r.response.id, true);
                }
            }
            Inbound::Batch(entries) => {
                // Refused whole (one `null` error) or answered entry by entry.
                expect(None, false);
                for entry in entries {
                    match entry {
                        Ok(Message::Request(r)) => expect(Some(r.id), false),
                        Err(r) if r.reply => expect(r.response.id, false),
                        _ => {}
                    }
                }
            }
        }
    }
    for id in &cancelled {
        if let Some(slot) = ids.get_mut(id) {
            slot.lo = 0;
        }
    }
    let frames = runtime().block_on(run(&lines));
    let mut got: HashMap<Option<RequestId>, usize> = HashMap::new();
    for frame in &frames {
        let value: Value = serde_json::from_slice(frame)
            .unwrap_or_else(|e| panic!("the server wrote invalid JSON ({e}): {frame:?}"));
        let messages = match value {
            Value::Array(entries) => {
                assert!(!entries.is_empty(), "an empty batch answer");
                entries
            }
            other => vec![other],
        };
        for message in messages {
            assert_eq!(message["jsonrpc"], "2.0", "{message}");
            if message.get("method").is_some() {
                continue; // the server's own request or notification
            }
            assert!(
                message.get("result").is_some() != message.get("error").is_some(),
                "{message}"
            );
            let id = match &message["id"] {
                Value::Null => None,
                id => Some(
                    serde_json::from_value::<RequestId>(id.clone())
                        .unwrap_or_else(|_| panic!("response id {id}")),
                ),
            };
            *got.entry(id).or_default() += 1;
        }
    }
    let input = String::from_utf8_lossy(data);
    for (id, count) in &got {
        let expected = match id {
            Some(id) => ids.get(id).unwrap_or_else(|| {
                panic!("{count} unexpected response(s) for id {id} to {input:?}: {frames:?}")
            }),
            None => &null,
        };
        assert!(
            expected.lo <= *count && *count <= expected.hi,
            "{count} response(s) for id {id:?}, expected {expected:?}, to {input:?}"
        );
    }
    for (id, expected) in &ids {
        assert!(
            expected.lo == 0 || got.contains_key(&Some(id.clone())),
            "no response for id {id} to {input:?}"
        );
    }
    assert!(
        null.lo == 0 || got.contains_key(&None),
        "no null-id error for {input:?}"
    );
}

/// Serve one connection fed `lines`; every frame the server writes until it is idle.
async fn run(lines: &[&[u8]]) -> Vec<Vec<u8>> {
    let (to_server, incoming) = mpsc::channel(lines.len() + 1);
    let (outgoing, mut from_server) = mpsc::channel(4096);
    let handle = server().serve(Transport::new(incoming, outgoing));
    for line in lines {
        to_server
            .send(TransportEvent::Frame(line.to_vec()))
            .await
            .expect("the engine reads");
    }
    let mut frames = Vec::new();
    // Time is paused: a wait ends as soon as nothing is left to run but timers.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(24 * 3600);
    while frames.len() < 10_000 {
        match tokio::time::timeout_at(
            deadline.min(tokio::time::Instant::now() + Duration::from_secs(600)),
            from_server.recv(),
        )
        .await
        {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) | Err(_) => break,
        }
    }
    drop(to_server);
    drop(handle);
    frames
}
