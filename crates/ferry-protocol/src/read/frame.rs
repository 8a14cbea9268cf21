//! What a frame the engine wrote is, read no further than needed: [`frame_kind`] (a
//! notification, a request of the server's, or a response with its id and error code) and
//! [`response_id`] (a response's id from the frame's first bytes).
//!
//! The engine writes `jsonrpc`, then `id`, then `result` or `error`: once `result` follows
//! an id, the rest (the whole result, which a derived struct would skim to its end) is not
//! read: a derived `{id, method, error}` struct spent most of its work skimming the result
//! (bench/results/profile.md). Any other order is read to the end and answers the same.

use std::fmt;

use crate::jsonrpc::RequestId;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

/// What a frame from the engine is.
#[derive(Debug, PartialEq)]
pub enum FrameKind {
    /// A notification (a `method`, no `id`).
    Notification,
    /// A request of the server's (a `method` and an `id`).
    Request(RequestId),
    /// A response: its id, and its error code when it is an error.
    Response(RequestId, Option<i64>),
    /// Not a JSON-RPC message the engine would write.
    Other,
}

/// What `frame` is.
///
/// ```
/// use ferry_protocol::jsonrpc::RequestId;
/// use ferry_protocol::read::{FrameKind, frame_kind};
///
/// let frame = br#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}"#;
/// assert_eq!(frame_kind(frame), FrameKind::Response(RequestId::Number(4), Some(-32601)));
/// assert_eq!(frame_kind(br#"{"jsonrpc":"2.0","method":"ping"}"#), FrameKind::Notification);
/// ```
pub fn frame_kind(frame: &[u8]) -> FrameKind {
    let mut kind = FrameKind::Other;
    let mut reader = serde_json::Deserializer::from_slice(frame);
    // Stopping after `result` leaves the object unfinished, which serde_json reports as an
    // error: the answer is what the visitor wrote.
    let _ = Sniff(&mut kind).deserialize(&mut reader);
    kind
}

/// The id of a response as the engine writes it — `{"jsonrpc":"2.0","id":ID,"result":`
/// (or `"error":`) and the rest — read from the frame's head; `None` for any other shape,
/// which a general reading then decides. A general reading parses the whole frame
/// (skimming the result), a visible share of a session-era request; this reads the first
/// few bytes. Not a JSON parser: the id's bytes (a number, or a string without escapes)
/// go to serde.
///
/// ```
/// use ferry_protocol::jsonrpc::RequestId;
/// use ferry_protocol::read::response_id;
///
/// assert_eq!(response_id(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#), Some(RequestId::Number(7)));
/// assert_eq!(response_id(br#"{"jsonrpc":"2.0","id":"a-1","error":{}}"#), Some(RequestId::from("a-1")));
/// assert_eq!(response_id(br#"{"jsonrpc":"2.0","id":"a\"b","result":{}}"#), None);
/// assert_eq!(response_id(br#"{"jsonrpc":"2.0","id":3,"method":"x"}"#), None);
/// ```
#[inline]
pub fn response_id(frame: &[u8]) -> Option<RequestId> {
    let rest = frame.strip_prefix(br#"{"jsonrpc":"2.0","id":"#)?;
    let end = if rest.first() == Some(&b'"') {
        let close = 1 + rest[1..].iter().position(|&b| b == b'"' || b == b'\\')?;
        if rest[close] != b'"' {
            return None;
        }
        close + 1
    } else {
        rest.iter().position(|&b| b == b',')?
    };
    let (id, after) = rest.split_at(end);
    if !(after.starts_with(br#","result":"#) || after.starts_with(br#","error":"#)) {
        return None;
    }
    serde_json::from_slice(id).ok()
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Id,
    Method,
    Result,
    Error,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct ErrorCode {
    code: i64,
}

/// Reads a frame's members into its slot, stopping once the kind is known.
struct Sniff<'k>(&'k mut FrameKind);

impl<'de> DeserializeSeed<'de> for Sniff<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Sniff<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut id = None;
        let mut method = false;
        let mut outcome = None;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Id => id = Some(map.next_value::<RequestId>()?),
                Key::Method => {
                    map.next_value::<IgnoredAny>()?;
                    method = true;
                }
                Key::Result => {
                    if let Some(id) = id.take() {
                        *self.0 = FrameKind::Response(id, None);
                        return Ok(());
                    }
                    map.next_value::<IgnoredAny>()?;
                    outcome = Some(None);
                }
                Key::Error => outcome = Some(Some(map.next_value::<ErrorCode>()?.code)),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        *self.0 = match (method, id, outcome) {
            (true, None, None) => FrameKind::Notification,
            (true, Some(id), None) => FrameKind::Request(id),
            (false, Some(id), Some(code)) => FrameKind::Response(id, code),
            _ => FrameKind::Other,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_kind_in_any_member_order() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}"#,
                FrameKind::Response(RequestId::Number(7), None),
            ),
            (
                r#"{"result":{},"jsonrpc":"2.0","id":"a"}"#,
                FrameKind::Response(RequestId::String("a".into()), None),
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"m"}}"#,
                FrameKind::Response(RequestId::Number(3), Some(-32602)),
            ),
            (
                r#"{"error":{"message":"m","code":-32601},"id":4,"jsonrpc":"2.0"}"#,
                FrameKind::Response(RequestId::Number(4), Some(-32601)),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
                FrameKind::Notification,
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{}}"#,
                FrameKind::Request(RequestId::Number(9)),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"roots/list","id":10}"#,
                FrameKind::Request(RequestId::Number(10)),
            ),
            (r#"{"jsonrpc":"2.0","id":1}"#, FrameKind::Other),
            (r#"{"jsonrpc":"2.0","result":{}}"#, FrameKind::Other),
            (r#"[1,2]"#, FrameKind::Other),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}"#,
                FrameKind::Other,
            ),
        ];
        for (frame, kind) in cases {
            assert_eq!(frame_kind(frame.as_bytes()), kind, "{frame}");
        }
    }
}
