//! Which of the peer's requests a message belongs to, for transports that route messages
//! per request (Streamable HTTP sends what a handler sends on its request's stream).
//!
//! The engine runs each request handler inside a scope naming that request's id. When a
//! transport carries a [`RelatedSink`], every frame the handler queues (a request to the
//! peer, a log message, progress) is first shown to the sink together with that id, so the
//! transport can tell where the frame belongs when it comes out of `outgoing`. Frames sent
//! from tasks the handler spawned itself are outside the scope and are not shown.

use std::sync::Arc;

use ferry_protocol::RequestId;
use futures_util::future::Either;

tokio::task_local! {
    static SERVING: RequestId;
}

/// Run `future` as the handler of the peer's request `id`; outside any scope when `id` is
/// `None` (a transport without a [`RelatedSink`] has no use for it, and entering a task-local
/// scope costs a swap on every poll).
pub(crate) fn serving<F: Future>(
    id: Option<RequestId>,
    future: F,
) -> impl Future<Output = F::Output> {
    scope_if(&SERVING, id, future)
}

/// Run `future` with the task-local `key` set to `value`, or outside any scope when there
/// is no value. Not an `async fn`: that would hold `future` twice (as its argument and in
/// the scope).
pub(crate) fn scope_if<T: 'static, F: Future>(
    key: &'static tokio::task::LocalKey<T>,
    value: Option<T>,
    future: F,
) -> impl Future<Output = F::Output> {
    match value {
        Some(value) => Either::Left(key.scope(value, future)),
        None => Either::Right(future),
    }
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
        let _ = SERVING.try_with(|id| (self.0)(id, frame));
    }
}

impl std::fmt::Debug for RelatedSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RelatedSink")
    }
}
