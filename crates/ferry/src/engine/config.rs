//! Engine limits, each with a documented default.

use std::time::Duration;

use ferry_protocol::jsonrpc::DEFAULT_MAX_MESSAGE_BYTES;

/// Limits and timeouts of one peer engine.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Largest incoming message in bytes; larger ones are answered `-32600` and skipped.
    /// Default: 4 MiB ([`DEFAULT_MAX_MESSAGE_BYTES`]).
    pub max_message_bytes: usize,
    /// Incoming requests whose handlers run at the same time. Default: 64.
    pub max_concurrent_requests: usize,
    /// Incoming requests accepted but not finished (running, waiting for a slot, or
    /// answered with the answer not yet taken by the transport); beyond it a request is
    /// answered at once with `-32603` "too many requests in flight". So a peer that sends
    /// but stops reading holds at most this many answers (plus `write_queue` frames) in
    /// memory, and then the engine stops reading it. Default: 1024.
    pub max_pending_requests: usize,
    /// Frames waiting to be written; a full queue makes senders wait (backpressure).
    /// Default: 256.
    pub write_queue: usize,
    /// Timeout of an outgoing request unless the call sets its own. Default: 60 s.
    pub request_timeout: Duration,
    /// How long in-flight handlers may finish after the peer hangs up before they are
    /// cancelled. Default: 5 s.
    pub shutdown_grace: Duration,
    /// Answer `ping` in the engine, at any time, without reaching the handler.
    /// Default: true.
    pub answer_ping: bool,
    /// How long a write to a byte-stream peer ([`stdio_with`](super::stdio_with)) may make
    /// no progress before the peer is taken for dead: its output and input are then closed
    /// and the engine finishes as when the peer hangs up. A peer that stops reading could
    /// otherwise hold the engine (and its shutdown) for good. `None`: no limit.
    /// Default: 60 s.
    pub write_timeout: Option<Duration>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_concurrent_requests: 64,
            max_pending_requests: 1024,
            write_queue: 256,
            request_timeout: Duration::from_secs(60),
            shutdown_grace: Duration::from_secs(5),
            answer_ping: true,
            write_timeout: Some(Duration::from_secs(60)),
        }
    }
}
