//! The JSON-RPC 2.0 core: ids, messages, batches, and classification of untrusted input.

mod classify;
mod head;
mod id;
mod message;

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use classify::fuzzing;
pub use classify::{
    ClassifyLimits, DEFAULT_CLIENT_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_BYTES, Inbound, Rejected,
    classify, classify_with,
};
pub use head::{Head, read_head, read_heads};
pub use id::RequestId;
pub use message::{
    ENVELOPE_ROOM, ErrorObject, ErrorResponse, JsonRpcVersion, Message, Notification,
    QUOTED_MAX_BYTES, RawJson, Request, Response, ResultResponse, parse_params, quoted,
};
