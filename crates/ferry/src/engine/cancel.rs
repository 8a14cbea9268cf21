//! A request's cancellation: set once (the peer cancelled it, or the connection ended),
//! read and awaited by the request's handler.
//!
//! Not tokio-util's `CancellationToken`: that one is a node of a tree of tokens, and every
//! clone, drop and `is_cancelled` locks the node's mutex. A request's token is made, cloned
//! twice (the in-flight table, the handler's context), checked and dropped three times on
//! every call. A request needs no tree: here a clone or drop is one atomic count, a check
//! one atomic load (bench/README "Profile" has the measurement).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Cancelled when a request is cancelled (the peer sent `notifications/cancelled`, or the
/// connection ended past its grace period). Clones share one state: cancelling any of
/// them cancels them all.
///
/// The engine drops a cancelled request's handler at its next `.await`, so a handler
/// awaiting [`cancelled`](Self::cancelled) in a `select!` is dropped before that branch
/// runs: clean-up belongs in a guard's `Drop`. The token is for work the handler's future
/// does not own (a thread, a spawned task), which checks [`is_cancelled`](Self::is_cancelled)
/// or awaits `cancelled`.
#[derive(Clone, Default)]
pub struct Cancellation {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl Cancellation {
    /// A cancellation that is not cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancel: wakes every [`cancelled`](Self::cancelled) waiter. Cancelling again does
    /// nothing.
    pub fn cancel(&self) {
        if !self.inner.cancelled.swap(true, Ordering::SeqCst) {
            self.inner.notify.notify_waiters();
        }
    }

    /// Whether it has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Completes once it is cancelled (at once if it already is).
    pub async fn cancelled(&self) {
        // A `Notified` receives every `notify_waiters` made after it was created, polled
        // or not: made before the check, it cannot miss a `cancel` that follows the check.
        let notified = self.inner.notify.notified();
        if self.is_cancelled() {
            return;
        }
        notified.await;
    }
}

impl fmt::Debug for Cancellation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancellation")
            .field("is_cancelled", &self.is_cancelled())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_waiter_wakes_when_a_clone_is_cancelled() {
        let cancel = Cancellation::new();
        let waiter = tokio::spawn({
            let cancel = cancel.clone();
            async move { cancel.cancelled().await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!waiter.is_finished());
        assert!(!cancel.is_cancelled());
        cancel.clone().cancel();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken")
            .expect("not panicked");
        assert!(cancel.is_cancelled());
    }

    #[tokio::test]
    async fn cancelled_before_waiting_completes_at_once() {
        let cancel = Cancellation::new();
        cancel.cancel();
        cancel.cancel();
        cancel.cancelled().await;
        assert!(cancel.is_cancelled());
    }

    #[test]
    fn a_cancel_between_the_check_and_the_wait_is_not_missed() {
        // On a multi-threaded runtime, cancel races each waiter's check: none may hang.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            for _ in 0..2_000 {
                let cancel = Cancellation::new();
                let waiter = tokio::spawn({
                    let cancel = cancel.clone();
                    async move { cancel.cancelled().await }
                });
                cancel.cancel();
                tokio::time::timeout(Duration::from_secs(5), waiter)
                    .await
                    .expect("woken")
                    .expect("not panicked");
            }
        });
    }
}
