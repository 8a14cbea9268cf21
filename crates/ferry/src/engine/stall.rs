//! The byte-stream transport whose peer may stop reading ([`Transport::lines_with_write_timeout`]):
//! a write that makes no progress for the timeout fails, and the failure ends the input
//! too, so that the engine finishes instead of reading on for a peer it can no longer
//! answer.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::task::AtomicWaker;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_io_timeout::TimeoutWriter;

/// Set once the output failed; wakes the reader.
struct Gone {
    gone: AtomicBool,
    reader: AtomicWaker,
    /// Set when the failure was the timeout: the peer stopped reading.
    timed_out: AtomicBool,
    timeout: Duration,
}

impl Gone {
    fn mark<T>(&self, result: Poll<std::io::Result<T>>) -> Poll<std::io::Result<T>> {
        if let Poll::Ready(Err(e)) = &result {
            if e.kind() == std::io::ErrorKind::TimedOut
                && !self.timed_out.swap(true, Ordering::AcqRel)
            {
                tracing::warn!(
                    "the peer read nothing for {} s: its output is closed and its input ends",
                    self.timeout.as_secs_f64()
                );
            }
            self.gone.store(true, Ordering::Release);
            self.reader.wake();
        }
        result
    }
}

/// Whether the output of a [`split`] stream was given up because the peer stopped reading
/// (read by the stdio server, to exit with a failure).
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) struct OutputWatch(Arc<Gone>);

impl OutputWatch {
    /// The write timeout, if a write ran into it.
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) fn timed_out(&self) -> Option<Duration> {
        self.0
            .timed_out
            .load(Ordering::Acquire)
            .then_some(self.0.timeout)
    }
}

/// The reader and writer of a stream whose writes time out after `timeout` without
/// progress; the reader ends (EOF) once a write has failed. The watch tells whether the
/// timeout did it.
pub(super) fn split<R, W>(
    reader: R,
    writer: W,
    timeout: Duration,
) -> (EndsWithOutput<R>, FailsSlowly<W>, OutputWatch)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite,
{
    let gone = Arc::new(Gone {
        gone: AtomicBool::new(false),
        reader: AtomicWaker::new(),
        timed_out: AtomicBool::new(false),
        timeout,
    });
    let watch = OutputWatch(Arc::clone(&gone));
    let mut timed = TimeoutWriter::new(writer);
    timed.set_timeout(Some(timeout));
    (
        EndsWithOutput {
            inner: reader,
            gone: Arc::clone(&gone),
        },
        FailsSlowly {
            inner: Box::pin(timed),
            gone,
        },
        watch,
    )
}

/// The input: ends once the output failed.
pub(super) struct EndsWithOutput<R> {
    inner: R,
    gone: Arc<Gone>,
}

impl<R: AsyncRead + Unpin> AsyncRead for EndsWithOutput<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.gone.gone.load(Ordering::Acquire) {
            return Poll::Ready(Ok(()));
        }
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        if read.is_pending() {
            // Registered before the flag is read again, so a failure in between still
            // wakes this read.
            self.gone.reader.register(cx.waker());
            if self.gone.gone.load(Ordering::Acquire) {
                return Poll::Ready(Ok(()));
            }
        }
        read
    }
}

/// The output: each write may wait at most the timeout for progress; a failure is noted
/// for the input.
pub(super) struct FailsSlowly<W> {
    inner: Pin<Box<TimeoutWriter<W>>>,
    gone: Arc<Gone>,
}

impl<W: AsyncWrite> AsyncWrite for FailsSlowly<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let result = self.inner.as_mut().poll_write(cx, buf);
        self.gone.mark(result)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let result = self.inner.as_mut().poll_flush(cx);
        self.gone.mark(result)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.inner.as_mut().poll_shutdown(cx)
    }
}
