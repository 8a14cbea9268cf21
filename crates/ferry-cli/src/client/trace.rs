//! `-v`: every frame on stderr as it passes, `--> ` sent and `<-- ` received, by two small
//! tasks forwarding between the engine and the real transport. The same relay, given
//! another observer, feeds `ferry inspect`'s wire panel.

use ferry::engine::{Frame, Transport, TransportEvent};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::output;

/// Which way a frame went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// From the client to the server.
    Sent,
    /// From the server to the client.
    Received,
}

/// What the relay saw pass.
pub(crate) enum Seen<'a> {
    /// A whole frame.
    Frame(&'a [u8]),
    /// A received frame over the size limit, dropped by the transport.
    Oversized(usize),
    /// A transport event that is no frame.
    Other,
}

/// Put a tracing relay between the engine and `inner`. Returns the engine's transport and
/// the task relaying outgoing frames, which ends once the engine's senders are gone (after
/// the client is dropped), so awaiting it makes sure a last `notifications/cancelled` went
/// through before the connection is closed.
pub(crate) fn wrap(inner: Transport) -> (Transport, JoinHandle<()>) {
    tap(inner, |direction, seen| {
        let arrow = match direction {
            Direction::Sent => "-->",
            Direction::Received => "<--",
        };
        match seen {
            Seen::Frame(frame) => {
                output::note(&format!("{arrow} {}", String::from_utf8_lossy(frame)));
            }
            Seen::Oversized(bytes) => {
                output::note(&format!(
                    "{arrow} (a frame of {bytes} bytes, over the limit)"
                ));
            }
            Seen::Other => output::note(&format!("{arrow} (an event this tracer does not know)")),
        }
    })
}

/// [`wrap`] with `observe` told of every frame as it passes, before it is passed on.
pub(crate) fn tap(
    inner: Transport,
    observe: impl Fn(Direction, Seen<'_>) + Send + Sync + 'static,
) -> (Transport, JoinHandle<()>) {
    let Transport {
        mut incoming,
        outgoing,
        writer,
        ..
    } = inner;
    let observe = std::sync::Arc::new(observe);
    let observe_sent = observe.clone();
    let (to_engine, engine_incoming) = mpsc::channel::<TransportEvent>(64);
    let (engine_outgoing, mut from_engine) = mpsc::channel::<Frame>(64);
    tokio::spawn(async move {
        while let Some(event) = incoming.recv().await {
            let seen = match (&event, event.frame()) {
                (_, Some(frame)) => Seen::Frame(frame),
                (TransportEvent::Oversized { bytes, .. }, None) => Seen::Oversized(*bytes),
                _ => Seen::Other,
            };
            observe(Direction::Received, seen);
            if to_engine.send(event).await.is_err() {
                break;
            }
        }
    });
    let relay = tokio::spawn(async move {
        while let Some(frame) = from_engine.recv().await {
            observe_sent(Direction::Sent, Seen::Frame(&frame));
            if outgoing.send(frame).await.is_err() {
                break;
            }
        }
    });
    let mut transport = Transport::new(engine_incoming, engine_outgoing);
    transport.writer = writer;
    (transport, relay)
}
