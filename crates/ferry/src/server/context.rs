//! What a tool handler can reach besides its arguments.

use ferry_protocol::ProtocolVersion;
use ferry_protocol::types::RequestMeta;
use tokio_util::sync::CancellationToken;

use crate::engine::{Peer, ProgressReporter};

/// The context of one tool call.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// The revision the caller speaks.
    pub version: ProtocolVersion,
    /// The request's `_meta` (progress token, and in the stateless era the client's
    /// version, capabilities and identity).
    pub meta: RequestMeta,
    /// Cancelled when the client cancels the call or hangs up.
    pub cancel: CancellationToken,
    /// Present when the client asked for progress.
    pub progress: Option<ProgressReporter>,
    /// The client, for notifications and (session era) requests of the tool's own.
    pub peer: Peer,
}
