//! The writer of a newline-delimited byte stream: a task writing the frames queued on the
//! transport's channel, and a way for the engine's own responses to be written at once,
//! from the task that made them, while that task is idle.
//!
//! Why both: a response queued on the channel wakes the writer task, which is scheduled
//! and polled to write it, where the response could have been written where it was made:
//! written inline, a sequential `tools/call` skips the writer task's wake-up and poll (the
//! system calls are the same; bench/results/profile.md has the figures).
//! [`LineWriter::write_now`] does that when nothing else is waiting to be written (no
//! frame queued, the task not busy): a non-blocking write; a frame the stream does not take
//! whole is finished by the task before anything after it.
//!
//! Not while more of the peer's input is buffered (the read loop says so through
//! [`InlineWrite::hold`]): a burst of requests read at once is answered by one write of
//! the task, where writing each response inline would be a system call per response, which
//! slows a pipelined client down (measured:
//! bench/results/profile.md#inline-writes-wait-for-the-end-of-a-burst).
//!
//! Order: senders of the channel never write themselves; a frame is written inline only if
//! the channel is empty and the task holds nothing unwritten, both checked under the lock
//! the task takes frames from the channel under. So a sender's frames keep their order
//! whichever way each goes.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::io::AsyncWrite;
use tokio::sync::mpsc;

use super::cancel::Cancellation;
use super::transport::Frame;

/// A line writer as [`Peer`](super::Peer) sees it: written to inline, when it can be.
pub(crate) trait InlineWrite: Send + Sync {
    /// Write `frame` and its newline now, if nothing is waiting to be written before it
    /// (`out` is the channel the writer task reads): `Err(frame)` when it must be queued.
    fn write_now(&self, frame: Frame, out: &mpsc::Sender<Frame>) -> Result<(), Frame>;

    /// While `held`, nothing is written inline: the peer's input has more buffered, whose
    /// responses should go out together with this one.
    fn hold(&self, held: bool);
}

/// The stream and what the writer task and inline writers share about it.
pub(crate) struct LineWriter<W> {
    state: Mutex<State<W>>,
    /// See [`InlineWrite::hold`]; outside the lock, as it is set for every message read.
    held: AtomicBool,
}

struct State<W> {
    stream: W,
    /// The writer task holds bytes not yet written (or a flush not yet done).
    busy: bool,
    /// The rest of a frame written in part inline, for the task to write first.
    backlog: Vec<u8>,
    /// An inline write's flush did not finish: the task finishes it.
    flush: bool,
    /// Closing or closed: nothing more is written inline.
    closed: bool,
    /// The writer task, when it waits for frames (woken for a backlog).
    waker: Option<Waker>,
}

impl<W: AsyncWrite + Unpin + Send> LineWriter<W> {
    pub(crate) fn new(stream: W) -> Arc<Self> {
        Arc::new(LineWriter {
            state: Mutex::new(State {
                stream,
                busy: false,
                backlog: Vec::new(),
                flush: false,
                closed: false,
                waker: None,
            }),
            held: AtomicBool::new(false),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State<W>> {
        // Every update leaves the state whole, so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes what is to be written next into `buf`: the backlog, else every frame queued
    /// (waiting for one). `false` once the channel is closed and empty.
    fn poll_take(
        &self,
        cx: &mut Context<'_>,
        rx: &mut mpsc::Receiver<Frame>,
        frames: &mut Vec<Frame>,
        buf: &mut Vec<u8>,
    ) -> Poll<bool> {
        let mut state = self.lock();
        buf.clear();
        if !state.backlog.is_empty() || state.flush {
            buf.append(&mut state.backlog);
            state.flush = false;
            state.busy = true;
            return Poll::Ready(true);
        }
        let limit = rx.max_capacity();
        match rx.poll_recv_many(cx, frames, limit) {
            Poll::Ready(0) => Poll::Ready(false),
            Poll::Ready(_) => {
                state.busy = true;
                drop(state);
                for frame in frames.drain(..) {
                    buf.extend_from_slice(&frame);
                    buf.push(b'\n');
                }
                Poll::Ready(true)
            }
            Poll::Pending => {
                if !state
                    .waker
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
                    state.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }

    /// Writes `buf[*written..]` and flushes; the task is idle again once it is done.
    fn poll_write_all(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        written: &mut usize,
    ) -> Poll<io::Result<()>> {
        let mut state = self.lock();
        while *written < buf.len() {
            match Pin::new(&mut state.stream).poll_write(cx, &buf[*written..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => *written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        match Pin::new(&mut state.stream).poll_flush(cx) {
            Poll::Ready(Ok(())) => {
                state.busy = false;
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }

    fn close(&self) {
        self.lock().closed = true;
    }
}

impl<W: AsyncWrite + Unpin + Send> InlineWrite for LineWriter<W> {
    fn write_now(&self, mut frame: Frame, out: &mpsc::Sender<Frame>) -> Result<(), Frame> {
        if self.held.load(Ordering::Relaxed) {
            return Err(frame);
        }
        let mut state = self.lock();
        if state.busy || state.closed || out.capacity() != out.max_capacity() {
            return Err(frame);
        }
        frame.push(b'\n');
        // Nobody to wake: what is not written now is handed to the task, which polls the
        // stream again with its own waker.
        let mut cx = Context::from_waker(Waker::noop());
        let mut written = 0;
        while written < frame.len() {
            match Pin::new(&mut state.stream).poll_write(&mut cx, &frame[written..]) {
                Poll::Ready(Ok(n)) if n > 0 => written += n,
                _ if written == 0 => {
                    frame.pop();
                    return Err(frame);
                }
                // The rest (or the error again) is the task's.
                _ => break,
            }
        }
        let rest = written < frame.len();
        if rest {
            state.backlog.extend_from_slice(&frame[written..]);
        } else if Pin::new(&mut state.stream).poll_flush(&mut cx).is_pending() {
            state.flush = true;
        }
        if rest || state.flush {
            state.busy = true;
            if let Some(waker) = state.waker.take() {
                waker.wake();
            }
        }
        Ok(())
    }

    fn hold(&self, held: bool) {
        self.held.store(held, Ordering::Relaxed);
    }
}

/// The writer task: writes every frame queued at once (one write for a burst), after any
/// rest an inline write left, until the channel is closed and empty.
pub(crate) async fn write_lines<W: AsyncWrite + Unpin + Send>(
    line: Arc<LineWriter<W>>,
    mut rx: mpsc::Receiver<Frame>,
    close: Cancellation,
) {
    // Grows to the largest burst written at once, and is kept: a large buffer up front would
    // be heap pages every process touches at start-up, for writes mostly of one small frame.
    let mut buf = Vec::with_capacity(4 * 1024);
    // Every frame queued is taken at once: `recv_many` gives the queue's places back in
    // one go, where a `recv` per frame took the channel semaphore's lock for each.
    let mut frames = Vec::new();
    let closing = close.cancelled();
    tokio::pin!(closing);
    loop {
        let more = tokio::select! {
            biased;
            more = poll_fn(|cx| line.poll_take(cx, &mut rx, &mut frames, &mut buf)) => more,
            () = &mut closing, if !rx.is_closed() => {
                // Refuse new frames; the ones already queued are still written.
                line.close();
                rx.close();
                continue;
            }
        };
        if !more {
            break;
        }
        let mut written = 0;
        if let Err(e) = poll_fn(|cx| line.poll_write_all(cx, &buf, &mut written)).await {
            tracing::debug!("transport write failed: {e}");
            break;
        }
    }
    line.close();
    let _ = poll_fn(|cx| Pin::new(&mut line.lock().stream).poll_shutdown(cx)).await;
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    /// Two senders, each mixing inline writes and the channel, over a stream that takes 16
    /// bytes at a time (so inline writes are cut short and finished by the task): every
    /// line arrives whole, each sender's in its order, and some went inline. (An inline
    /// write while the task waits to write would take the task's place as the stream's
    /// waiter and stall it: the time limit turns that into a failure.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn frames_keep_their_order_and_stay_whole() {
        tokio::time::timeout(std::time::Duration::from_secs(30), order_and_whole())
            .await
            .expect("the writer stalled");
    }

    async fn order_and_whole() {
        let (ours, mut theirs) = tokio::io::duplex(16);
        let line = LineWriter::new(ours);
        let (tx, rx) = mpsc::channel(4);
        let close = Cancellation::new();
        let task = tokio::spawn(write_lines(line.clone(), rx, close.clone()));
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            theirs.read_to_end(&mut all).await.expect("read");
            all
        });
        let sender = |who: usize| {
            let (line, tx) = (line.clone(), tx.clone());
            tokio::spawn(async move {
                let mut inline = 0;
                for n in 0..300 {
                    let frame = format!("{who} {n} {}", "x".repeat(n % 40)).into_bytes();
                    if n % 3 == 0 {
                        tx.send(frame).await.expect("send");
                    } else {
                        match line.write_now(frame, &tx) {
                            Ok(()) => inline += 1,
                            Err(frame) => tx.send(frame).await.expect("send"),
                        }
                    }
                    if n % 7 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
                inline
            })
        };
        let (a, b) = (sender(0), sender(1));
        let inline = a.await.expect("sender") + b.await.expect("sender");
        drop(tx);
        close.cancel();
        task.await.expect("writer");
        let all = String::from_utf8(reader.await.expect("reader")).expect("utf-8");
        let mut next = [0; 2];
        for text in all.lines() {
            let mut parts = text.split(' ');
            let who: usize = parts.next().and_then(|p| p.parse().ok()).expect(text);
            let n: usize = parts.next().and_then(|p| p.parse().ok()).expect(text);
            assert_eq!(n, next[who], "{text}");
            assert_eq!(parts.next(), Some("x".repeat(n % 40).as_str()), "{text}");
            next[who] += 1;
        }
        assert_eq!(next, [300, 300]);
        assert!(inline > 0, "nothing was written inline");
    }

    /// A closed writer writes nothing inline: the frame is handed back.
    #[tokio::test]
    async fn nothing_is_written_inline_after_close() {
        let (ours, _theirs) = tokio::io::duplex(1024);
        let line = LineWriter::new(ours);
        let (tx, _rx) = mpsc::channel(4);
        assert!(line.write_now(b"first".to_vec(), &tx).is_ok());
        line.close();
        assert_eq!(
            line.write_now(b"second".to_vec(), &tx),
            Err(b"second".to_vec())
        );
    }

    /// A held writer writes nothing inline until released.
    #[tokio::test]
    async fn nothing_is_written_inline_while_held() {
        let (ours, _theirs) = tokio::io::duplex(1024);
        let line = LineWriter::new(ours);
        let (tx, _rx) = mpsc::channel(4);
        line.hold(true);
        assert_eq!(line.write_now(b"held".to_vec(), &tx), Err(b"held".to_vec()));
        line.hold(false);
        assert!(line.write_now(b"free".to_vec(), &tx).is_ok());
    }
}
