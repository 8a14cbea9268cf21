//! Reading JSON-RPC bytes: every reader of the message path that does not parse a whole
//! message with serde lives here, beside the classification that reads each message once.
//!
//! - [`classify`] turns a line of untrusted input into a valid message or the error it
//!   deserves; the usual request is read by hand ([`envelope`], its params validated by
//!   [`value_end`]), anything else by serde ([`general`]).
//! - [`read_head`] and [`read_heads`] name the id of a message too large to read.
//! - [`landmarks`] finds, in one scan of a request's validated params, the members the
//!   layers above read (`_meta`'s version, progress token and log level; a tool's name and
//!   raw arguments), and [`tool_call`] reads a `tools/call` from them; [`find_members`] is
//!   the scan.
//! - [`frame_kind`] and [`response_id`] tell what a frame the engine wrote is.
//! - [`scan`] holds the byte searches they share with the framing of lines.
//!
//! Why by hand: each reader replaced a serde reading that was a large share of a short
//! call's work (figures in bench/results/profile.md). Each accepts only what it reads
//! exactly as serde would and declines the rest (`None`), for serde to decide; the fuzz
//! target `classify` compares every one of them with serde_json through this API.

mod call;
mod classify;
mod envelope;
mod frame;
mod head;
mod members;
mod params;
pub mod scan;
mod skim;
pub(crate) mod text;

pub use call::{ToolCall, tool_call};
pub use classify::{
    ClassifyLimits, DEFAULT_CLIENT_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_BYTES, Inbound, Rejected,
    classify, classify_with,
};
pub use frame::{FrameKind, frame_kind, response_id};
pub use head::{Head, read_head, read_heads};
pub use members::{Span, find_members, plain_string};
pub use params::{Landmarks, Member, landmarks};
pub use text::special_byte;

use crate::jsonrpc::{Message, RawJson};

/// The usual request or notification read by hand, or `None` where [`classify`] reads it
/// with serde ([`general`]): another member, an escape in `method` or a string id, a
/// fractional id, params the skim declines, a response, invalid JSON.
///
/// ```
/// use ferry_protocol::jsonrpc::Message;
/// use ferry_protocol::read::envelope;
///
/// let Some(Message::Request(r)) = envelope(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#) else {
///     panic!()
/// };
/// assert_eq!(r.method, "ping");
/// assert!(envelope(r#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":0}"#).is_none());
/// ```
pub fn envelope(text: &str) -> Option<Message> {
    envelope::read(text)
}

/// One message read by serde and checked by JSON-RPC 2.0's rules: what [`classify`] answers
/// for a single message the hand reading declines.
///
/// ```
/// use ferry_protocol::read::general;
///
/// assert!(general(r#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":0}"#).is_ok());
/// assert_eq!(general(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#).unwrap_err().code(), -32600);
/// ```
// `Rejected` is large, as from `classify`: the rare path, moved once.
#[allow(clippy::result_large_err)]
pub fn general(text: &str) -> Result<Message, Rejected> {
    classify::classify_general(text)
}

/// Where the JSON value at the start of `json` ends, as the params skim finds it; `None`
/// for invalid JSON and for valid JSON it leaves to serde (`\u` escapes, control
/// characters, nesting deeper than 128).
///
/// ```
/// use ferry_protocol::read::value_end;
///
/// assert_eq!(value_end(br#"{"a":[1,2]} rest"#), Some(11));
/// assert_eq!(value_end(br#"{"a":"\u0041"}"#), None);
/// assert_eq!(value_end(br#"{"a":}"#), None);
/// ```
pub fn value_end(json: &[u8]) -> Option<usize> {
    skim::value_end(json)
}

/// The object or array at the start of `text`, validated by [`value_end`] and copied out
/// raw without a second reading.
///
/// ```
/// let raw = ferry_protocol::read::structured(r#"[1, {"b": null}] tail"#).unwrap();
/// assert_eq!(raw.get(), r#"[1, {"b": null}]"#);
/// ```
pub fn structured(text: &str) -> Option<RawJson> {
    skim::structured(text)
}
