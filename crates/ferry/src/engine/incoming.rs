//! The receiving side of a transport: a channel that something else fills, or (for
//! line-framed byte streams) the stream itself, read by whoever receives.
//!
//! Reading a byte stream where its frames are received, not in a task of its own, saves a
//! channel and a task wake-up per message: the engine's loop reads stdin itself.

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TryRecvError;

use super::transport::TransportEvent;

/// The most a single read takes in; lines longer than this are read in pieces.
const READ_CHUNK: usize = 64 * 1024;
/// The read buffer's first size: doubled (up to [`READ_CHUNK`]) each time a read fills
/// it, so a peer sending bursts gets large reads, and one sending a message at a time
/// never has the process touch 64 KiB (fresh heap pages are page faults, which slow the
/// start).
const FIRST_READ: usize = 8 * 1024;

/// Frames from the peer (see [`Transport::incoming`](super::Transport::incoming)). Ends
/// when the peer hangs up.
#[derive(Debug)]
pub struct Incoming(Source);

#[derive(Debug)]
enum Source {
    Channel(mpsc::Receiver<TransportEvent>),
    Lines(Box<LineReader>),
}

impl Incoming {
    /// Frames read as newline-delimited lines from `reader`, at most `max_frame_bytes`
    /// each (longer lines are skipped and reported as [`TransportEvent::Oversized`]).
    pub(crate) fn lines(
        reader: impl AsyncRead + Unpin + Send + 'static,
        max_frame_bytes: usize,
    ) -> Incoming {
        Incoming(Source::Lines(Box::new(LineReader {
            reader: Some(Box::new(reader)),
            buf: Vec::with_capacity(FIRST_READ),
            at: 0,
            line: Vec::new(),
            oversized: false,
            seen: 0,
            max: max_frame_bytes,
        })))
    }

    /// The next event; `None` once the peer has hung up. Cancel-safe: if the future is
    /// dropped before it completes, no event is lost.
    pub async fn recv(&mut self) -> Option<TransportEvent> {
        match &mut self.0 {
            Source::Channel(rx) => rx.recv().await,
            Source::Lines(lines) => lines.next().await,
        }
    }

    /// Give back the buffer of a frame that has been read, for the next line (line-framed
    /// streams only: saves an allocation per message; a buffer larger than
    /// [`READ_CHUNK`] is dropped instead of kept).
    pub(crate) fn recycle(&mut self, mut frame: super::Frame) {
        if let Source::Lines(lines) = &mut self.0
            && lines.line.capacity() == 0
            && frame.capacity() <= READ_CHUNK
        {
            frame.clear();
            lines.line = frame;
        }
    }

    /// Whether bytes from the peer are read and not yet consumed (line-framed streams
    /// only): more of a burst is to come without waiting.
    pub(crate) fn has_buffered(&self) -> bool {
        match &self.0 {
            Source::Channel(_) => false,
            Source::Lines(lines) => lines.at < lines.buf.len(),
        }
    }

    /// The next event if one is ready now.
    pub fn try_recv(&mut self) -> Result<TransportEvent, TryRecvError> {
        match &mut self.0 {
            Source::Channel(rx) => rx.try_recv(),
            Source::Lines(lines) => match futures_util::FutureExt::now_or_never(lines.next()) {
                Some(Some(event)) => Ok(event),
                Some(None) => Err(TryRecvError::Disconnected),
                None => Err(TryRecvError::Empty),
            },
        }
    }
}

impl From<mpsc::Receiver<TransportEvent>> for Incoming {
    fn from(rx: mpsc::Receiver<TransportEvent>) -> Self {
        Incoming(Source::Channel(rx))
    }
}

/// Splits a byte stream into frames. Every field lives here, not in [`LineReader::next`]'s
/// future, so that dropping that future loses nothing.
struct LineReader {
    /// `None` once the stream has ended (dropped at once: a child process's transport
    /// closes the child's stdin when its stdout reader is gone).
    reader: Option<Box<dyn AsyncRead + Unpin + Send>>,
    /// Bytes read; `buf[at..]` is not consumed yet. Not tokio's BufReader: it zeroes its
    /// whole buffer up front (a memset and a page fault per 4 KiB at start-up), where
    /// `read_buf` fills only the capacity a read uses.
    buf: Vec<u8>,
    at: usize,
    /// The line so far (empty while an oversized one is skipped).
    line: Vec<u8>,
    oversized: bool,
    /// Bytes of the current line seen so far (counted on while it is skipped).
    seen: usize,
    max: usize,
}

impl std::fmt::Debug for LineReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineReader")
            .field("open", &self.reader.is_some())
            .field("buffered", &(self.buf.len() - self.at))
            .finish()
    }
}

impl LineReader {
    async fn next(&mut self) -> Option<TransportEvent> {
        loop {
            if self.at == self.buf.len() {
                let reader = self.reader.as_mut()?;
                self.buf.clear();
                self.at = 0;
                match reader.read_buf(&mut self.buf).await {
                    Ok(0) => return self.end(),
                    Ok(n) => {
                        let capacity = self.buf.capacity();
                        if n == capacity && capacity < READ_CHUNK {
                            // Full: let the next read take twice as much.
                            self.buf.reserve_exact((2 * capacity).min(READ_CHUNK) - n);
                        }
                    }
                    Err(e) => {
                        tracing::debug!("transport read failed: {e}");
                        return self.end();
                    }
                }
            }
            if let Some(event) = self.take_line() {
                return Some(event);
            }
        }
    }

    /// Consume the buffered bytes up to the next newline; the frame (or oversized report)
    /// if that ended a line worth reporting.
    fn take_line(&mut self) -> Option<TransportEvent> {
        let available = &self.buf[self.at..];
        let (chunk, done) = match ferry_protocol::read::scan::find(b'\n', available) {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        self.seen += chunk.len();
        if !self.oversized {
            if self.line.len() + chunk.len() > self.max {
                self.oversized = true;
                // Its head is kept, for the id (see `TransportEvent::Oversized`).
                let room = super::OVERSIZED_HEAD.saturating_sub(self.line.len());
                self.line.extend_from_slice(&chunk[..room.min(chunk.len())]);
                self.line.truncate(super::OVERSIZED_HEAD);
                self.line.shrink_to_fit();
            } else {
                self.line.extend_from_slice(chunk);
            }
        }
        self.at += done.unwrap_or(available.len());
        done?;
        let seen = std::mem::take(&mut self.seen);
        if std::mem::take(&mut self.oversized) {
            let head = std::mem::take(&mut self.line);
            return Some(TransportEvent::Oversized { bytes: seen, head });
        }
        let mut frame = std::mem::take(&mut self.line);
        if frame.last() == Some(&b'\r') {
            frame.pop();
        }
        if frame.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        Some(TransportEvent::Frame(frame))
    }

    /// The stream ended: drop it, and deliver a last line without a newline, if any.
    fn end(&mut self) -> Option<TransportEvent> {
        self.reader = None;
        let line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.oversized) || line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        Some(TransportEvent::Frame(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_of_a_long_stream_arrive_whole_and_in_order() {
        // Long enough that reads fill the buffer and it grows to its largest size.
        let long = "x".repeat(20_000);
        let mut input = Vec::new();
        for i in 0..20_000 {
            input.extend_from_slice(format!("{{\"n\":{i}}}\n").as_bytes());
        }
        input.extend_from_slice(format!("\"{long}\"\n").as_bytes());
        input.extend_from_slice(b"{\"last\":true}");
        let mut incoming = Incoming::lines(std::io::Cursor::new(input), 1 << 20);
        for i in 0..20_000 {
            let frame = incoming.recv().await.and_then(|e| e.into_frame().ok());
            assert_eq!(frame, Some(format!("{{\"n\":{i}}}").into_bytes()));
        }
        let frame = incoming.recv().await.and_then(|e| e.into_frame().ok());
        assert_eq!(frame, Some(format!("\"{long}\"").into_bytes()));
        let frame = incoming.recv().await.and_then(|e| e.into_frame().ok());
        assert_eq!(frame, Some(b"{\"last\":true}".to_vec()));
        assert!(incoming.recv().await.is_none());
        let Source::Lines(lines) = &incoming.0 else {
            unreachable!()
        };
        assert_eq!(lines.buf.capacity(), READ_CHUNK, "grown from {FIRST_READ}");
    }
}
