//! The JSON-RPC 2.0 core: ids, messages, batches, and classification of untrusted input.
//!
//! The classification and the other readers of raw bytes live in [`crate::read`]; the
//! classification is re-exported here, beside the messages it yields.

mod id;
mod message;

pub use crate::read::{
    ClassifyLimits, DEFAULT_CLIENT_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_BYTES, Head, Inbound,
    Rejected, classify, classify_with, read_head, read_heads,
};
pub use id::RequestId;
pub use message::{
    ENVELOPE_ROOM, ErrorObject, ErrorResponse, JsonRpcVersion, Message, Notification,
    QUOTED_MAX_BYTES, RawJson, Request, Response, ResultResponse, parse_params, quoted,
};
