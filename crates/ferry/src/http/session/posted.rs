//! What a session-era POST carries, read once: its shape (`initialize`, one message, a
//! batch), the requests it opens a stream for (ids, progress tokens), the cancellations it
//! announces, and what makes it refused.
//!
//! The usual POST (one valid message, no stateless-era sign) is read by [`Posted::classified`]
//! from the JSON-RPC classification alone, plus a skim of its `params` for `_meta` and
//! `requestId`: no `serde_json::Value` is built. Everything else (batches, invalid
//! messages, bodies the skim cannot read exactly) goes through [`claims`](super::claims)
//! and [`Posted::from_value`], which read the whole body as a `Value`.

use axum::http::HeaderMap;
use ferry_protocol::jsonrpc::{self, Inbound, Message, Rejected};
use ferry_protocol::read::{self, Landmarks};
use ferry_protocol::{Era, ProtocolVersion, RequestId};
use serde_json::Value;
use serde_json::value::RawValue;

use super::SESSION_ID;
use crate::http::headers;

/// What the session layer needs of a POSTed body.
pub(crate) struct Posted {
    pub(super) shape: Shape,
    /// The requests' ids (each gets its response on the POST stream).
    pub(super) ids: Vec<RequestId>,
    /// The requests' progress tokens (as JSON text).
    pub(super) tokens: Vec<String>,
    /// The ids `notifications/cancelled` names.
    pub(super) cancelled: Vec<RequestId>,
    /// Why an entry cannot be accepted (the first one: an `initialize` in a batch, an
    /// invalid request id).
    pub(super) refused: Option<String>,
    /// The one valid message, when [`Posted::classified`] read it (handed to the engine,
    /// which then does not read the body again).
    pub(super) message: Option<Message>,
    /// What the scan of that message's params found (handed on with it).
    pub(super) landmarks: Option<Landmarks>,
}

/// The body's shape.
pub(super) enum Shape {
    /// `initialize`, with its id when it is a request with a valid one.
    Initialize(Option<RequestId>),
    /// One message; `Some` when it is not a valid one (the error response it deserves).
    Single(Option<Rejected>),
    /// A batch (of this many entries).
    Batch(usize),
}

impl Posted {
    fn new(shape: Shape) -> Posted {
        Posted {
            shape,
            ids: Vec::new(),
            tokens: Vec::new(),
            cancelled: Vec::new(),
            refused: None,
            message: None,
            landmarks: None,
        }
    }

    /// The usual session-era POST, read from its classification (one valid message):
    /// `Ok` when [`claims`](super::claims) would give it the session era; the message back
    /// when it has a stateless-era sign or a `params` the skim cannot read exactly (the
    /// caller tries the stateless era's probe, then reads the body as a `Value`).
    pub(crate) fn classified(
        headers: &HeaderMap,
        message: Message,
        landmarks: Option<Landmarks>,
    ) -> Result<Posted, Message> {
        if stateless_header(headers) {
            return Err(message);
        }
        let (method, id, params) = match &message {
            Message::Response(_) => {
                let mut posted = Posted::new(Shape::Single(None));
                posted.message = Some(message);
                return Ok(posted);
            }
            Message::Request(r) => (&*r.method, Some(&r.id), r.params.as_deref()),
            Message::Notification(n) => (&*n.method, None, n.params.as_deref()),
        };
        if method == "server/discover" || (id.is_none() && !headers.contains_key(SESSION_ID)) {
            return Err(message);
        }
        let Some(params) = landmarks
            .and_then(|found| Skim::of(params, &found))
            .filter(|p| !p.stateless)
        else {
            return Err(message);
        };
        let mut posted = if method == "initialize" {
            Posted::new(Shape::Initialize(id.cloned()))
        } else {
            let mut posted = Posted::new(Shape::Single(None));
            if method == "notifications/cancelled"
                && let Some(cancelled) = params.request_id
            {
                posted.cancelled.push(cancelled);
            }
            if let Some(id) = id {
                posted.ids.push(id.clone());
                posted.tokens.extend(params.progress_token);
            }
            posted
        };
        posted.message = Some(message);
        posted.landmarks = landmarks;
        Ok(posted)
    }

    /// Any body [`claims`](super::claims) gave the session era, read as a `Value`.
    pub(crate) fn from_value(message: &Value, bytes: &[u8]) -> Posted {
        if let Value::Object(object) = message
            && object.get("method").and_then(Value::as_str) == Some("initialize")
        {
            let id = object
                .get("id")
                .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
            return Posted::new(Shape::Initialize(id));
        }
        let (shape, entries): (Shape, Vec<&Value>) = match message {
            Value::Array(entries) => (Shape::Batch(entries.len()), entries.iter().collect()),
            // A single message the server cannot accept (not a valid request, notification
            // or response) gets an HTTP error status with its JSON-RPC error.
            other => match jsonrpc::classify(bytes) {
                Inbound::Rejected(rejected) => (Shape::Single(Some(rejected)), vec![other]),
                _ => (Shape::Single(None), vec![other]),
            },
        };
        let mut posted = Posted::new(shape);
        for entry in entries {
            let method = entry.get("method").and_then(Value::as_str);
            if method == Some("initialize") {
                posted.refused = Some("initialize cannot be part of a batch".to_owned());
                break;
            }
            if method == Some("notifications/cancelled")
                && let Some(id) = entry
                    .pointer("/params/requestId")
                    .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
            {
                posted.cancelled.push(id);
            }
            let (Some(_), Some(id)) = (method, entry.get("id")) else {
                continue;
            };
            match serde_json::from_value::<RequestId>(id.clone()) {
                Ok(id) => posted.ids.push(id),
                Err(e) => {
                    posted.refused = Some(format!("invalid request id: {e}"));
                    break;
                }
            }
            if let Some(token) = entry.pointer("/params/_meta/progressToken") {
                posted.tokens.push(token.to_string());
            }
        }
        posted
    }
}

/// Whether `MCP-Protocol-Version` names a stateless-era revision.
pub(super) fn stateless_header(headers: &HeaderMap) -> bool {
    headers
        .get(headers::PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<ProtocolVersion>().ok())
        .is_some_and(|v| v.era() == Era::Stateless)
}

/// The landmarks of a message's params (see `ferry_protocol::read::landmarks`): the one
/// reading of them the session layer, the stateless checks, the engine and the server
/// share. `None` where the scan declined (serde then reads the body).
pub(crate) fn landmarks_of(message: &Message) -> Option<Landmarks> {
    let params = match message {
        Message::Request(r) => r.params.as_deref(),
        Message::Notification(n) => n.params.as_deref(),
        Message::Response(_) => None,
    };
    read::landmarks(params.map(|p| p.get()))
}

/// What a valid message's `params` says to the session layer, read as `Value` would read
/// it (`None` from [`Skim::of`] when a member cannot be read exactly: a progress token
/// nested beyond serde_json's limit).
#[derive(Default)]
struct Skim {
    /// `_meta` names a protocol version (a stateless-era request).
    stateless: bool,
    /// `_meta.progressToken`, as compact JSON text.
    progress_token: Option<String>,
    /// `requestId`, when it is a valid request id.
    request_id: Option<RequestId>,
}

impl Skim {
    fn of(params: Option<&RawValue>, found: &Landmarks) -> Option<Skim> {
        let Some(params) = params else {
            return Some(Skim::default());
        };
        let params = params.get();
        let mut skim = Skim {
            stateless: found.protocol_version.is_some(),
            request_id: found
                .request_id
                .and_then(|id| serde_json::from_str(id.text(params)).ok()),
            ..Skim::default()
        };
        if let Some(token) = found.progress_token {
            skim.progress_token = Some(
                serde_json::from_str::<Value>(token.text(params))
                    .ok()?
                    .to_string(),
            );
        }
        Some(skim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn summary(posted: &Posted) -> String {
        let shape = match &posted.shape {
            Shape::Initialize(id) => format!("initialize {id:?}"),
            Shape::Single(rejected) => format!("single {:?}", rejected.as_ref().map(|r| r.code())),
            Shape::Batch(n) => format!("batch {n}"),
        };
        format!(
            "{shape} ids {:?} tokens {:?} cancelled {:?} refused {:?}",
            posted.ids, posted.tokens, posted.cancelled, posted.refused
        )
    }

    /// Whatever the classification reads, it reads as `claims` and `from_value` do.
    #[test]
    fn the_classified_reading_agrees_with_the_value_reading() {
        let bodies = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"_meta":{"progressToken": 7 }}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"x","params":{"_meta":{"progressToken":null}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"x","params":{"_meta":{"progressToken":{"b":1, "a":[1, 2]}}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":null}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"x","params":{"_meta":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"x","params":{"_meta":1}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"x","params":[{"_meta":{"progressToken":1}}]}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"x","params":{"_meta":{},"_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":1,"a":2}}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"initialize"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"server/discover"}"#,
            r#"{"jsonrpc":"2.0","id":8,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":8,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
            r#"{"id":1,"method":"x"}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#,
            r#"[]"#,
            r#"5"#,
        ];
        let plain = HeaderMap::new();
        let mut with_session = HeaderMap::new();
        with_session.insert(SESSION_ID, HeaderValue::from_static("abc"));
        let mut stateless = with_session.clone();
        stateless.insert(
            headers::PROTOCOL_VERSION,
            HeaderValue::from_static("2026-07-28"),
        );
        let mut read = 0;
        for body in bodies {
            for headers in [&plain, &with_session, &stateless] {
                let value: Value = serde_json::from_str(body).expect("valid JSON");
                let Inbound::Single(message) = jsonrpc::classify(body.as_bytes()) else {
                    continue;
                };
                let found = landmarks_of(&message);
                let Ok(fast) = Posted::classified(headers, message, found) else {
                    continue;
                };
                read += 1;
                assert!(super::super::claims(headers, &value), "{body}");
                let slow = Posted::from_value(&value, body.as_bytes());
                assert_eq!(summary(&fast), summary(&slow), "{body}");
            }
        }
        // The usual messages are read without a Value.
        assert!(read >= 20, "{read}");
    }
}
