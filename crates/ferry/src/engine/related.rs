//! Which of the peer's requests a message belongs to, for transports that route messages
//! per request (Streamable HTTP sends what a handler sends on its request's stream).
//!
//! The engine runs each request handler inside a scope naming that request's id. When a
//! transport carries a [`RelatedSink`], every frame the handler queues (a request to the
//! peer, a log message, progress) is first shown to the sink together with that id, so the
//! transport can tell where the frame belongs when it comes out of `outgoing`. Frames sent
//! from tasks the handler spawned itself are outside the scope and are not shown.

use std::cell::RefCell;
use std::sync::Arc;

use ferry_protocol::RequestId;

thread_local! {
    /// The request whose handler this thread is polling, while [`serving`] polls it.
    static SERVING: RefCell<Option<RequestId>> = const { RefCell::new(None) };
}

/// Call `poll` (one poll of the handler of the peer's request `id`) inside the request's
/// scope; outside any scope when `id` is `None` (a transport without a [`RelatedSink`] has
/// no use for it). The id is moved into the thread's slot for the poll and back after it,
/// also when the poll panics: scopes nest, and nothing is cloned.
///
/// A function around one poll rather than a future around the handler's: the engine polls
/// the handler in its own loop (with its cancellation check and panic guard), where a
/// wrapper future per concern moved the handler's future into each, on every request.
pub(crate) fn serving<R>(id: Option<&mut RequestId>, poll: impl FnOnce() -> R) -> R {
    let Some(id) = id else {
        return poll();
    };
    /// Gives the id back to the request and the slot back to the outer scope.
    struct Restore<'a> {
        id: &'a mut RequestId,
        outer: Option<RequestId>,
    }
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let outer = self.outer.take();
            if let Some(mine) =
                SERVING.with(|slot| std::mem::replace(&mut *slot.borrow_mut(), outer))
            {
                *self.id = mine;
            }
        }
    }
    let mine = std::mem::replace(id, RequestId::Number(0));
    let outer = SERVING.with(|slot| slot.borrow_mut().replace(mine));
    let _restore = Restore { id, outer };
    poll()
}

/// Told about each frame a request handler queues, just before it is queued: the id of the
/// peer's request the handler serves, and the frame.
#[derive(Clone)]
pub struct RelatedSink(Arc<Note>);

/// What a [`RelatedSink`] calls: `(request id, frame)`.
type Note = dyn Fn(&RequestId, &[u8]) + Send + Sync;

impl RelatedSink {
    /// A sink calling `note(request id, frame)`. It runs on the handler's task, before the
    /// frame is queued: it must be quick and must not block.
    pub fn new(note: impl Fn(&RequestId, &[u8]) + Send + Sync + 'static) -> Self {
        RelatedSink(Arc::new(note))
    }

    /// Show `frame` to the sink when the current task is a request handler.
    pub(crate) fn note(&self, frame: &[u8]) {
        let _ = SERVING.try_with(|slot| {
            if let Some(id) = &*slot.borrow() {
                (self.0)(id, frame);
            }
        });
    }
}

impl std::fmt::Debug for RelatedSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RelatedSink")
    }
}
