//! Transports as the engine sees them: whole frames in, whole frames out, over bounded
//! channels. A frame is one JSON text (a message or a batch) without its newline.
//!
//! Every concrete transport (stdio, a child process, in-memory, an HTTP session) pumps
//! frames into and out of these channels, so the engine knows no I/O.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use ferry_protocol::RequestId;
use ferry_protocol::jsonrpc::Message;
use ferry_protocol::read::Landmarks;

use super::cancel::Cancellation;
use super::incoming::Incoming;
use super::lines::{InlineWrite, LineWriter, write_lines};
use super::related::RelatedSink;

/// One complete JSON text.
pub type Frame = Vec<u8>;

/// What a transport delivers to the engine.
///
/// As small as a [`Frame`] (24 bytes on 64-bit targets): the engine's input channel
/// allocates room for 32 events at once whatever its capacity, and every connection (an
/// idle HTTP session, say) keeps one; so the rare attached frame is boxed.
#[derive(Debug)]
#[non_exhaustive]
pub enum TransportEvent {
    /// A frame.
    Frame(Frame),
    /// A frame with data for the handlers of the requests in it (see [`Attachment`]):
    /// `(frame, attachment)`, boxed (see above); [`TransportEvent::attached`] makes one.
    Attached(Box<(Frame, Attachment)>),
    /// A frame its transport has already read as one valid message (the HTTP session
    /// layer reads each POST to route its answer): the engine takes the message instead of
    /// reading the frame again. Boxed (see above); [`TransportEvent::classified`] makes one.
    Classified(Box<Classified>),
    /// A frame that exceeded the size limit and was discarded.
    Oversized {
        /// Its size in bytes (at least; reading stopped counting at the limit).
        bytes: usize,
        /// Its first bytes (at most [`OVERSIZED_HEAD`]), from which the engine reads its id
        /// (`ferry_protocol::jsonrpc::read_head`) to answer or fail the right request.
        head: Vec<u8>,
    },
    /// The transport could not get the peer's answer to the request it sent with this id
    /// (HTTP: unreachable, refused with a status and no JSON-RPC body, a stream cut
    /// before the response): the request fails with [`CallError::Transport`](super::CallError::Transport).
    /// Boxed (see above).
    Failed(Box<(RequestId, TransportError)>),
}

/// How many first bytes of an oversized frame a transport keeps
/// ([`TransportEvent::Oversized`]).
pub const OVERSIZED_HEAD: usize = 1024;

/// Why a transport could not get the peer's answer to one request (see
/// [`TransportEvent::Failed`]). Its message says what happened on its own.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TransportError {
    /// What happened, where, and what may help.
    pub message: String,
    /// The status the peer answered with, when the transport has statuses (HTTP).
    pub status: Option<u16>,
}

impl TransportEvent {
    /// A frame with an attachment ([`TransportEvent::Attached`]).
    pub fn attached(frame: Frame, attachment: Attachment) -> Self {
        TransportEvent::Attached(Box::new((frame, attachment)))
    }

    /// A frame with what `ferry_protocol::jsonrpc::classify` read from it: one valid
    /// message ([`TransportEvent::Classified`]).
    pub fn classified(frame: Frame, message: Message, attachment: Option<Attachment>) -> Self {
        TransportEvent::Classified(Box::new(Classified {
            frame,
            message,
            attachment,
            landmarks: None,
        }))
    }

    /// A [`classified`](Self::classified) frame whose request's params the transport has
    /// read too: `landmarks` is `ferry_protocol::read::landmarks` of them, which the engine
    /// and the handler then take instead of reading the params again.
    pub fn classified_with_landmarks(
        frame: Frame,
        message: Message,
        attachment: Option<Attachment>,
        landmarks: Landmarks,
    ) -> Self {
        TransportEvent::Classified(Box::new(Classified {
            frame,
            message,
            attachment,
            landmarks: Some(landmarks),
        }))
    }

    /// The frame of a [`Frame`](TransportEvent::Frame), an
    /// [`Attached`](TransportEvent::Attached) or a [`Classified`](TransportEvent::Classified)
    /// event.
    pub fn frame(&self) -> Option<&Frame> {
        match self {
            TransportEvent::Frame(frame) => Some(frame),
            TransportEvent::Attached(attached) => Some(&attached.0),
            TransportEvent::Classified(classified) => Some(&classified.frame),
            TransportEvent::Oversized { .. } | TransportEvent::Failed(_) => None,
        }
    }

    /// The frame of a [`Frame`](TransportEvent::Frame), an
    /// [`Attached`](TransportEvent::Attached) or a [`Classified`](TransportEvent::Classified)
    /// event (the rest is dropped); any other event as it is.
    pub fn into_frame(self) -> Result<Frame, TransportEvent> {
        match self {
            TransportEvent::Frame(frame) => Ok(frame),
            TransportEvent::Attached(attached) => Ok(attached.0),
            TransportEvent::Classified(classified) => Ok(classified.frame),
            other => Err(other),
        }
    }
}

/// A frame and the one valid message read from it (see [`TransportEvent::Classified`]).
#[derive(Debug)]
pub struct Classified {
    /// The frame as it came (what a transport that forwards bytes sends on).
    pub frame: Frame,
    /// What `ferry_protocol::jsonrpc::classify` read from `frame`. The engine trusts it:
    /// a transport must not put another message here.
    pub message: Message,
    /// Data for the handlers of the request, if any (see [`Attachment`]).
    pub attachment: Option<Attachment>,
    /// What `ferry_protocol::read::landmarks` found in the request's params, when the
    /// transport read them (the engine reads them otherwise). The engine trusts it too.
    pub landmarks: Option<Landmarks>,
}

/// Data a transport attaches to one frame for the handlers of the requests it carries:
/// say, the verified identity behind an HTTP request's bearer token. Handlers find it in
/// their [`RequestContext`](super::RequestContext) (servers: `Context::attachment`).
/// Cloning shares it.
#[derive(Clone)]
pub struct Attachment(std::sync::Arc<dyn std::any::Any + Send + Sync>);

impl Attachment {
    /// Attach `value`.
    pub fn new<T: std::any::Any + Send + Sync>(value: T) -> Self {
        Attachment(std::sync::Arc::new(value))
    }

    /// The attached value, if it is a `T`.
    pub fn get<T: std::any::Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

/// The network address of an anonymous client (no other identity attached), which the
/// HTTP server attaches to its frames so that limits "per caller" hold across requests and
/// sessions: the address the connection came from (behind `HttpConfig::trusted_proxies`,
/// the forwarded one), an IPv6 one cut to its /64. A server's `RequestInfo::principal`
/// names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientAddress(pub std::net::IpAddr);

/// Attached to a request a transport sends on the client's behalf to rebuild a session's
/// state on this instance (a shared session adopted from its record: its `initialize`,
/// log level and subscriptions replayed): not a request of the client's. A server answers
/// it without its middleware (no metrics, limits, logs or spans for it), and a replayed
/// `initialize` begins no session for the session hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replayed;

impl std::fmt::Debug for Attachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Attachment(..)")
    }
}

/// The engine's end of a connection. The connection is over when `incoming` ends.
#[derive(Debug)]
pub struct Transport {
    /// Frames from the peer.
    pub incoming: Incoming,
    /// Frames to the peer; bounded, so a slow peer slows the senders (backpressure).
    pub outgoing: mpsc::Sender<Frame>,
    /// The task writing `outgoing` to a byte stream, if any; the engine lets it flush what
    /// is queued before it reports the connection finished.
    pub writer: Option<Writer>,
    /// Told which of the peer's requests each handler-sent frame belongs to (see
    /// [`RelatedSink`]); `None` for transports with one stream.
    pub related: Option<RelatedSink>,
    /// The transport's id for the session this connection serves, if it has one (the
    /// `Mcp-Session-Id` of Streamable HTTP, the `sessionId` of HTTP+SSE): a server reports
    /// it as the session of each request (`RequestInfo::session`, `mcp.session.id`).
    pub session_id: Option<Arc<str>>,
}

/// The task that writes a transport's outgoing frames.
pub struct Writer {
    close: Cancellation,
    task: JoinHandle<()>,
    /// The stream, for the engine's responses written inline (see `lines`).
    inline: Arc<dyn InlineWrite>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

impl Writer {
    /// Write every frame queued so far, accept no more, and wait until it is done (at most
    /// `grace`).
    pub async fn flush_and_close(self, grace: std::time::Duration) {
        self.close.cancel();
        if tokio::time::timeout(grace, self.task).await.is_err() {
            tracing::debug!("the transport writer did not finish within {grace:?}");
        }
    }

    /// The stream, for frames written inline when nothing waits before them.
    pub(crate) fn inline(&self) -> Arc<dyn InlineWrite> {
        self.inline.clone()
    }

    /// Whether the peer's input has more buffered: then nothing is written inline (see
    /// [`InlineWrite::hold`]).
    pub(crate) fn hold_inline(&self, held: bool) {
        self.inline.hold(held);
    }
}

impl Transport {
    /// A transport over two channels (a custom transport pumping frames itself).
    pub fn new(incoming: mpsc::Receiver<TransportEvent>, outgoing: mpsc::Sender<Frame>) -> Self {
        Transport {
            incoming: incoming.into(),
            outgoing,
            writer: None,
            related: None,
            session_id: None,
        }
    }

    /// Tell `sink` which of the peer's requests each frame a handler sends belongs to.
    pub fn with_related(mut self, sink: RelatedSink) -> Self {
        self.related = Some(sink);
        self
    }

    /// Name the session this connection serves (see [`Transport::session_id`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (transport, _peer) = ferry::engine::Transport::pair(8);
    /// let transport = transport.with_session_id("3f2a9c");
    /// assert_eq!(transport.session_id.as_deref(), Some("3f2a9c"));
    /// # }
    /// ```
    pub fn with_session_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// Two connected in-memory transports, for tests and in-process peers.
    pub fn pair(capacity: usize) -> (Transport, Transport) {
        let (a_tx, a_rx) = mpsc::channel(capacity);
        let (b_tx, b_rx) = mpsc::channel(capacity);
        let (a_in_tx, a_in_rx) = mpsc::channel::<TransportEvent>(capacity);
        let (b_in_tx, b_in_rx) = mpsc::channel::<TransportEvent>(capacity);
        tokio::spawn(forward(a_rx, b_in_tx));
        tokio::spawn(forward(b_rx, a_in_tx));
        (Transport::new(a_in_rx, a_tx), Transport::new(b_in_rx, b_tx))
    }

    /// A transport over a byte stream of newline-delimited frames (stdio, a child
    /// process's pipes, a socket). The stream is read where `incoming` is received (no
    /// task in between); a writer task writes `outgoing`.
    ///
    /// Reading enforces `max_frame_bytes` without buffering more than that: an oversized
    /// line is skipped to its newline and reported as [`TransportEvent::Oversized`]. The
    /// writer writes every frame already queued before flushing, so a burst of responses
    /// costs one write. `queue` bounds the frames waiting to be written. An engine on this
    /// transport writes its responses at once, without the writer task, while nothing is
    /// queued before them.
    pub fn lines<R, W>(reader: R, writer: W, max_frame_bytes: usize, queue: usize) -> Transport
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out_tx, out_rx) = mpsc::channel(queue);
        let close = Cancellation::new();
        let line = LineWriter::new(writer);
        let task = tokio::spawn(write_lines(line.clone(), out_rx, close.clone()));
        Transport {
            incoming: Incoming::lines(reader, max_frame_bytes),
            outgoing: out_tx,
            writer: Some(Writer {
                close,
                task,
                inline: line,
            }),
            related: None,
            session_id: None,
        }
    }

    /// [`Transport::lines`] whose writes give up once one has made no progress for
    /// `write_timeout` (see [`EngineConfig::write_timeout`](super::EngineConfig::write_timeout)):
    /// the output is closed and the input ends with it, so an engine on it finishes.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use ferry::engine::Transport;
    ///
    /// let (ours, _theirs) = tokio::io::duplex(4096);
    /// let (reader, writer) = tokio::io::split(ours);
    /// let transport =
    ///     Transport::lines_with_write_timeout(reader, writer, 1 << 20, 64, Duration::from_secs(30));
    /// # drop(transport);
    /// # }
    /// ```
    pub fn lines_with_write_timeout<R, W>(
        reader: R,
        writer: W,
        max_frame_bytes: usize,
        queue: usize,
        write_timeout: Duration,
    ) -> Transport
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Transport::lines_watched(reader, writer, max_frame_bytes, queue, write_timeout).0
    }

    /// [`Transport::lines_with_write_timeout`], and what tells whether the timeout ended it.
    pub(crate) fn lines_watched<R, W>(
        reader: R,
        writer: W,
        max_frame_bytes: usize,
        queue: usize,
        write_timeout: Duration,
    ) -> (Transport, super::stall::OutputWatch)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (reader, writer, watch) = super::stall::split(reader, writer, write_timeout);
        (
            Transport::lines(reader, writer, max_frame_bytes, queue),
            watch,
        )
    }
}

async fn forward(mut rx: mpsc::Receiver<Frame>, tx: mpsc::Sender<TransportEvent>) {
    while let Some(frame) = rx.recv().await {
        if tx.send(TransportEvent::Frame(frame)).await.is_err() {
            break;
        }
    }
}

/// Where a client reads its session id (`Mcp-Session-Id` over HTTP), as it is when asked: the
/// HTTP client transport gives one, the client's middleware read it.
#[cfg(feature = "client")]
pub(crate) type SessionIdSource = std::sync::Arc<dyn Fn() -> Option<String> + Send + Sync>;
