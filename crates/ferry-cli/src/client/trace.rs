//! `-v`: every frame on stderr as it passes, `--> ` sent and `<-- ` received, by two small
//! tasks forwarding between the engine and the real transport.

use ferry::engine::{Frame, Transport, TransportEvent};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::output;

/// Put a tracing relay between the engine and `inner`. Returns the engine's transport and
/// the task relaying outgoing frames, which ends once the engine's senders are gone (after
/// the client is dropped), so awaiting it makes sure a last `notifications/cancelled` went
/// through before the connection is closed.
pub(crate) fn wrap(inner: Transport) -> (Transport, JoinHandle<()>) {
    let Transport {
        mut incoming,
        outgoing,
        writer,
        ..
    } = inner;
    let (to_engine, engine_incoming) = mpsc::channel::<TransportEvent>(64);
    let (engine_outgoing, mut from_engine) = mpsc::channel::<Frame>(64);
    tokio::spawn(async move {
        while let Some(event) = incoming.recv().await {
            if let Some(frame) = event.frame() {
                output::note(&format!("<-- {}", String::from_utf8_lossy(frame)));
            } else if let TransportEvent::Oversized { bytes, .. } = &event {
                output::note(&format!("<-- (a frame of {bytes} bytes, over the limit)"));
            } else {
                output::note("<-- (an event this tracer does not know)");
            }
            if to_engine.send(event).await.is_err() {
                break;
            }
        }
    });
    let relay = tokio::spawn(async move {
        while let Some(frame) = from_engine.recv().await {
            output::note(&format!("--> {}", String::from_utf8_lossy(&frame)));
            if outgoing.send(frame).await.is_err() {
                break;
            }
        }
    });
    let mut transport = Transport::new(engine_incoming, engine_outgoing);
    transport.writer = writer;
    (transport, relay)
}
