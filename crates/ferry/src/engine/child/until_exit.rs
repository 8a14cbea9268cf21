//! Reading a pipe of the child until it has exited and the pipe is drained.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::time::Sleep;
use tokio_util::sync::{CancellationToken, DropGuard, WaitForCancellationFutureOwned};

use super::LINGER;

/// A pipe from the child that reaches end of file when the child closes it, or once the
/// child has exited and the pipe has nothing more to read for [`LINGER`] after the exit
/// (a grandchild may hold the pipe open forever).
pub(super) struct UntilExit<R> {
    inner: R,
    exited: Pin<Box<WaitForCancellationFutureOwned>>,
    linger: Option<Pin<Box<Sleep>>>,
    done: bool,
    /// Cancels a token when the pipe is dropped (the transport's reader has finished).
    pub(super) on_drop: Option<DropGuard>,
}

impl<R> UntilExit<R> {
    pub(super) fn new(inner: R, exited: &CancellationToken) -> Self {
        UntilExit {
            inner,
            exited: Box::pin(exited.clone().cancelled_owned()),
            linger: None,
            done: false,
            on_drop: None,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for UntilExit<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(Ok(()));
        }
        if let Poll::Ready(read) = Pin::new(&mut this.inner).poll_read(cx, buf) {
            return Poll::Ready(read);
        }
        // Nothing to read for now.
        if this.linger.is_none() {
            if this.exited.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.linger = Some(Box::pin(tokio::time::sleep(LINGER)));
        }
        match this.linger.as_mut().map(|linger| linger.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => {
                this.done = true;
                Poll::Ready(Ok(()))
            }
            _ => Poll::Pending,
        }
    }
}
