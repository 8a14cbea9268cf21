//! The channel from the router to one HTTP stream.
//!
//! Most POST streams carry one message, their response. A tokio `mpsc` channel allocates a
//! block of 32 slots and its shared state up front, and creating, reading and dropping it
//! were a visible share of a session-era request (bench/results/profile.md). So a POST
//! stream starts with a `oneshot`; the first event that
//! is not the stream's last switches it to an `mpsc` channel of [`STREAM_QUEUE`] events,
//! whose receiver goes through the `oneshot`. The standalone (GET) stream is an `mpsc`
//! channel from the start.
//!
//! A queue is bounded by count and by bytes: once more than its byte bound waits unread
//! (`HttpConfig::stream_max_unread_bytes`), the next event is refused and the router
//! drops the stream, as when the count is reached; so a few huge events cannot hold
//! hundreds of megabytes for a client that stopped reading.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{mpsc, oneshot};

use super::STREAM_QUEUE;
use super::router::Delivery;

/// What a `oneshot` stream's receiver gets.
enum First {
    /// The stream's only delivery (its response, or its end).
    Only(Delivery),
    /// More than one delivery: they come on this channel.
    Switch(Queue),
}

/// The receiving end of a stream's queue and the bytes waiting in it (shared with the
/// sending end).
struct Queue(mpsc::Receiver<Delivery>, Arc<AtomicUsize>);

/// The router's end of an HTTP stream, and the most bytes its queue may hold unread.
pub(super) struct StreamTx(Tx, usize);

enum Tx {
    /// Nothing sent yet (`None` once the one delivery is sent).
    Once(Option<oneshot::Sender<First>>),
    /// The queue, and the bytes waiting in it.
    Many(mpsc::Sender<Delivery>, Arc<AtomicUsize>),
}

/// The HTTP response's end of a stream.
pub(super) struct StreamRx(Rx);

enum Rx {
    Once(oneshot::Receiver<First>),
    Many(Queue),
    Ended,
}

/// A POST stream's channel; `max_bytes` bounds its queue once it has one.
pub(super) fn post_stream(max_bytes: usize) -> (StreamTx, StreamRx) {
    let (tx, rx) = oneshot::channel();
    (
        StreamTx(Tx::Once(Some(tx)), max_bytes),
        StreamRx(Rx::Once(rx)),
    )
}

/// A channel for a stream of many events (the standalone stream, a resumed one), at most
/// `max_bytes` of them unread (and one more event).
pub(super) fn many(max_bytes: usize) -> (StreamTx, StreamRx) {
    let (tx, rx) = mpsc::channel(STREAM_QUEUE);
    let queued = Arc::new(AtomicUsize::new(0));
    (
        StreamTx(Tx::Many(tx, queued.clone()), max_bytes),
        StreamRx(Rx::Many(Queue(rx, queued))),
    )
}

impl Delivery {
    /// What it counts against a queue's byte bound.
    fn bytes(&self) -> usize {
        match self {
            Delivery::Event { frame, .. } => frame.len(),
            Delivery::End => 0,
        }
    }
}

impl StreamTx {
    /// Whether the receiving end is gone (the client disconnected).
    pub(super) fn is_closed(&self) -> bool {
        match &self.0 {
            Tx::Once(Some(tx)) => tx.is_closed(),
            Tx::Once(None) => true,
            Tx::Many(tx, _) => tx.is_closed(),
        }
    }

    /// Deliver without waiting; `Err` when the receiver is gone or too far behind (its
    /// queue full, or more than its byte bound unread: an event is taken while the bytes
    /// before it are within the bound, so one larger than the bound still goes through).
    pub(super) fn try_send(&mut self, delivery: Delivery) -> Result<(), ()> {
        match &mut self.0 {
            Tx::Many(tx, queued) => {
                if queued.load(Ordering::Relaxed) > self.1 {
                    return Err(());
                }
                let bytes = delivery.bytes();
                queued.fetch_add(bytes, Ordering::Relaxed);
                tx.try_send(delivery).map_err(|_| {
                    queued.fetch_sub(bytes, Ordering::Relaxed);
                })
            }
            Tx::Once(slot) => {
                let tx = slot.take().ok_or(())?;
                let last = matches!(delivery, Delivery::End | Delivery::Event { last: true, .. });
                if last {
                    return tx.send(First::Only(delivery)).map_err(|_| ());
                }
                let (many, rx) = mpsc::channel(STREAM_QUEUE);
                let queued = Arc::new(AtomicUsize::new(delivery.bytes()));
                // A new channel has room.
                let _ = many.try_send(delivery);
                tx.send(First::Switch(Queue(rx, queued.clone())))
                    .map_err(|_| ())?;
                self.0 = Tx::Many(many, queued);
                Ok(())
            }
        }
    }
}

impl StreamRx {
    /// The next delivery; `None` once the stream has ended. Cancel-safe.
    pub(super) async fn recv(&mut self) -> Option<Delivery> {
        loop {
            match &mut self.0 {
                Rx::Once(rx) => match rx.await {
                    Ok(First::Only(delivery)) => {
                        self.0 = Rx::Ended;
                        return Some(delivery);
                    }
                    Ok(First::Switch(queue)) => self.0 = Rx::Many(queue),
                    Err(_) => {
                        self.0 = Rx::Ended;
                        return None;
                    }
                },
                Rx::Many(Queue(rx, queued)) => {
                    let delivery = rx.recv().await;
                    if let Some(delivery) = &delivery {
                        queued.fetch_sub(delivery.bytes(), Ordering::Relaxed);
                    }
                    return delivery;
                }
                Rx::Ended => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Bytes;

    fn event(seq: u64, last: bool) -> Delivery {
        Delivery::Event {
            seq,
            frame: Bytes::from_static(b"{}"),
            last,
        }
    }

    fn seq(delivery: Option<Delivery>) -> Option<(u64, bool)> {
        match delivery? {
            Delivery::Event { seq, last, .. } => Some((seq, last)),
            Delivery::End => Some((0, true)),
        }
    }

    #[tokio::test]
    async fn one_delivery_then_the_end() {
        let (mut tx, mut rx) = post_stream(usize::MAX);
        assert!(!tx.is_closed());
        tx.try_send(event(0, true)).unwrap();
        assert!(tx.is_closed(), "nothing more can be sent");
        assert!(tx.try_send(event(1, true)).is_err());
        assert_eq!(seq(rx.recv().await), Some((0, true)));
        assert_eq!(seq(rx.recv().await), None);
    }

    #[tokio::test]
    async fn events_before_the_response_switch_to_a_queue() {
        let (mut tx, mut rx) = post_stream(usize::MAX);
        tx.try_send(event(1, false)).unwrap();
        tx.try_send(event(2, false)).unwrap();
        tx.try_send(event(3, true)).unwrap();
        drop(tx);
        for expected in [(1, false), (2, false), (3, true)] {
            assert_eq!(seq(rx.recv().await), Some(expected));
        }
        assert_eq!(seq(rx.recv().await), None);
    }

    #[tokio::test]
    async fn a_dropped_sender_ends_the_stream_and_a_dropped_receiver_closes_it() {
        let (tx, mut rx) = post_stream(usize::MAX);
        drop(tx);
        assert_eq!(seq(rx.recv().await), None);
        let (mut tx, rx) = post_stream(usize::MAX);
        drop(rx);
        assert!(tx.is_closed());
        assert!(tx.try_send(event(1, false)).is_err());
        let (tx, rx) = many(usize::MAX);
        drop(rx);
        assert!(tx.is_closed());
    }

    #[tokio::test]
    async fn recv_is_cancel_safe() {
        let (mut tx, mut rx) = post_stream(usize::MAX);
        // A receive dropped before anything arrives loses nothing.
        assert!(
            futures_util::FutureExt::now_or_never(rx.recv()).is_none(),
            "nothing yet"
        );
        tx.try_send(event(7, false)).unwrap();
        assert_eq!(seq(rx.recv().await), Some((7, false)));
    }

    #[tokio::test]
    async fn a_queue_past_its_byte_bound_refuses_the_next_event() {
        let big = |seq| Delivery::Event {
            seq,
            frame: Bytes::from(vec![b' '; 600]),
            last: false,
        };
        let (mut tx, mut rx) = post_stream(1000);
        tx.try_send(big(1)).unwrap();
        tx.try_send(big(2)).unwrap();
        // 1,200 bytes wait, more than the bound: nothing more until some are read.
        assert!(tx.try_send(event(3, false)).is_err());
        assert_eq!(seq(rx.recv().await), Some((1, false)));
        tx.try_send(big(3)).unwrap();
        assert!(tx.try_send(event(4, false)).is_err());
        // One event larger than the bound goes through an empty queue.
        let (mut tx, mut rx) = many(100);
        tx.try_send(big(1)).unwrap();
        assert!(tx.try_send(event(2, false)).is_err());
        assert_eq!(seq(rx.recv().await), Some((1, false)));
        tx.try_send(event(2, true)).unwrap();
        assert_eq!(seq(rx.recv().await), Some((2, true)));
    }
}
