//! The channel from the router to one HTTP stream.
//!
//! Most POST streams carry one message, their response. A tokio `mpsc` channel allocates a
//! block of 32 slots and its shared state up front, and creating, reading and dropping it
//! were a visible share of a session-era request (bench/results/profile.md). So a POST
//! stream starts with a `oneshot`; the first event that
//! is not the stream's last switches it to an `mpsc` channel of [`STREAM_QUEUE`] events,
//! whose receiver goes through the `oneshot`. The standalone (GET) stream is an `mpsc`
//! channel from the start.

use tokio::sync::{mpsc, oneshot};

use super::STREAM_QUEUE;
use super::router::Delivery;

/// What a `oneshot` stream's receiver gets.
enum First {
    /// The stream's only delivery (its response, or its end).
    Only(Delivery),
    /// More than one delivery: they come on this channel.
    Switch(mpsc::Receiver<Delivery>),
}

/// The router's end of an HTTP stream.
pub(super) struct StreamTx(Tx);

enum Tx {
    /// Nothing sent yet (`None` once the one delivery is sent).
    Once(Option<oneshot::Sender<First>>),
    Many(mpsc::Sender<Delivery>),
}

/// The HTTP response's end of a stream.
pub(super) struct StreamRx(Rx);

enum Rx {
    Once(oneshot::Receiver<First>),
    Many(mpsc::Receiver<Delivery>),
    Ended,
}

/// A POST stream's channel.
pub(super) fn post_stream() -> (StreamTx, StreamRx) {
    let (tx, rx) = oneshot::channel();
    (StreamTx(Tx::Once(Some(tx))), StreamRx(Rx::Once(rx)))
}

/// A channel for a stream of many events (the standalone stream, a resumed one).
pub(super) fn many() -> (StreamTx, StreamRx) {
    let (tx, rx) = mpsc::channel(STREAM_QUEUE);
    (StreamTx(Tx::Many(tx)), StreamRx(Rx::Many(rx)))
}

impl StreamTx {
    /// Whether the receiving end is gone (the client disconnected).
    pub(super) fn is_closed(&self) -> bool {
        match &self.0 {
            Tx::Once(Some(tx)) => tx.is_closed(),
            Tx::Once(None) => true,
            Tx::Many(tx) => tx.is_closed(),
        }
    }

    /// Deliver without waiting; `Err` when the receiver is gone or too far behind.
    pub(super) fn try_send(&mut self, delivery: Delivery) -> Result<(), ()> {
        match &mut self.0 {
            Tx::Many(tx) => tx.try_send(delivery).map_err(|_| ()),
            Tx::Once(slot) => {
                let tx = slot.take().ok_or(())?;
                let last = matches!(delivery, Delivery::End | Delivery::Event { last: true, .. });
                if last {
                    return tx.send(First::Only(delivery)).map_err(|_| ());
                }
                let (many, rx) = mpsc::channel(STREAM_QUEUE);
                // A new channel has room.
                let _ = many.try_send(delivery);
                tx.send(First::Switch(rx)).map_err(|_| ())?;
                self.0 = Tx::Many(many);
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
                    Ok(First::Switch(many)) => self.0 = Rx::Many(many),
                    Err(_) => {
                        self.0 = Rx::Ended;
                        return None;
                    }
                },
                Rx::Many(rx) => return rx.recv().await,
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
        let (mut tx, mut rx) = post_stream();
        assert!(!tx.is_closed());
        tx.try_send(event(0, true)).unwrap();
        assert!(tx.is_closed(), "nothing more can be sent");
        assert!(tx.try_send(event(1, true)).is_err());
        assert_eq!(seq(rx.recv().await), Some((0, true)));
        assert_eq!(seq(rx.recv().await), None);
    }

    #[tokio::test]
    async fn events_before_the_response_switch_to_a_queue() {
        let (mut tx, mut rx) = post_stream();
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
        let (tx, mut rx) = post_stream();
        drop(tx);
        assert_eq!(seq(rx.recv().await), None);
        let (mut tx, rx) = post_stream();
        drop(rx);
        assert!(tx.is_closed());
        assert!(tx.try_send(event(1, false)).is_err());
        let (tx, rx) = many();
        drop(rx);
        assert!(tx.is_closed());
    }

    #[tokio::test]
    async fn recv_is_cancel_safe() {
        let (mut tx, mut rx) = post_stream();
        // A receive dropped before anything arrives loses nothing.
        assert!(
            futures_util::FutureExt::now_or_never(rx.recv()).is_none(),
            "nothing yet"
        );
        tx.try_send(event(7, false)).unwrap();
        assert_eq!(seq(rx.recv().await), Some((7, false)));
    }
}
