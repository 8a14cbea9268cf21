//! The read loop: classification, routing, notifications and batches (one request's
//! handling, its concurrency, cancellation and response: `request`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ferry_protocol::RequestId;
use ferry_protocol::jsonrpc::{
    ClassifyLimits, ErrorObject, ErrorResponse, Inbound, Message, Notification, Response,
    classify_with,
};
use ferry_protocol::read::Landmarks;
use ferry_protocol::types::{CancelledNotificationParams, ProgressNotificationParams};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio_util::task::TaskTracker;

use super::config::EngineConfig;
use super::peer::{CallError, Peer};
use super::transport::{Classified, Transport, TransportEvent};
use super::{Cancellation, Handler};

mod request;

use request::Work;

/// Starts engines.
#[derive(Debug)]
pub struct Engine;

/// A running engine: its [`Peer`] and the task that ends when the connection does.
#[derive(Debug)]
pub struct EngineHandle {
    /// The other side.
    pub peer: Peer,
    /// Ends when the peer hangs up and in-flight work has finished or been cancelled.
    pub task: JoinHandle<()>,
}

type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// What every request's future shares with the read loop, behind one `Arc`: one clone per
/// request, where a handle of each was four (each an atomic increment and decrement).
struct Core<H> {
    handler: H,
    /// The concurrency slots (`max_concurrent_requests`).
    slots: Semaphore,
    /// The requests being answered, by id: how each is cancelled.
    in_flight: Mutex<super::FastMap<RequestId, Cancellation>>,
    /// Responses made but not yet taken by the transport (out of `in_flight`, so that
    /// their ids are free again, but still counted against `max_pending_requests`): a
    /// peer that stops reading cannot have answers pile up behind its stalled writer.
    unsent: AtomicUsize,
    peer: Peer,
}

impl<H> Core<H> {
    fn new(handler: H, peer: Peer, slots: usize) -> Arc<Self> {
        Arc::new(Core {
            handler,
            slots: Semaphore::new(slots),
            in_flight: Mutex::default(),
            unsent: AtomicUsize::new(0),
            peer,
        })
    }
}

struct Loop<H> {
    core: Arc<Core<H>>,
    config: EngineConfig,
    tracker: TaskTracker,
    closing: Cancellation,
    /// Whether a request's handler is first polled on the read loop (single-threaded
    /// runtimes); see [`Loop::request`].
    inline: bool,
}

impl Engine {
    /// Run `handler` on `transport` until the peer hangs up.
    pub fn start<H: Handler>(
        transport: Transport,
        handler: H,
        config: EngineConfig,
    ) -> EngineHandle {
        let peer = Peer::with_inline(
            transport.outgoing,
            transport
                .writer
                .as_ref()
                .map(super::transport::Writer::inline),
            transport.related,
            config.request_timeout,
        );
        let state = Loop {
            core: Core::new(handler, peer.clone(), config.max_concurrent_requests),
            config,
            tracker: TaskTracker::new(),
            closing: Cancellation::new(),
            inline: tokio::runtime::Handle::current().runtime_flavor()
                == tokio::runtime::RuntimeFlavor::CurrentThread,
        };
        let task = tokio::spawn(state.run(transport.incoming, transport.writer));
        EngineHandle { peer, task }
    }
}

/// Where one request's response goes: straight out, or into a batch being collected.
#[derive(Clone)]
enum Responder {
    Direct,
    Batch(mpsc::Sender<Option<serde_json::Value>>),
}

/// What is left to do for one event once the read loop has taken it.
enum Step<'a> {
    /// Nothing.
    Done,
    /// A request's [`Work`].
    Request(Work),
    /// The handler's part of a notification.
    Notify(Notification),
    /// A batch, or a refusal to send: rare, boxed.
    Rare(BoxFuture<'a, ()>),
}

impl<H: Handler> Loop<H> {
    /// The read loop. Its future is the engine's task, kept by every connection for as
    /// long as it lives, and sized by the largest state of any await in it (nested async
    /// functions add up): so the usual messages take only small awaits here (a request's
    /// handler is a boxed future of its own, the engine's part of a notification is
    /// synchronous), and rare paths (batches, refusals, the shutdown) are boxed. That keeps
    /// it at a few hundred bytes, which idle HTTP sessions add up (the test
    /// `the_futures_a_connection_keeps_stay_small` holds the bound).
    ///
    /// A function returning an `async move` block rather than an `async fn`: an async
    /// function's future keeps its arguments twice (as arguments, and moved into its body),
    /// an async block's captures are used in place.
    #[allow(clippy::manual_async_fn)]
    fn run(
        self,
        mut incoming: super::Incoming,
        writer: Option<super::transport::Writer>,
    ) -> impl Future<Output = ()> + Send {
        async move {
            let limits = ClassifyLimits {
                max_message_bytes: self.config.max_message_bytes,
            };
            while let Some(event) = incoming.recv().await {
                // Responses to a burst read at once go out in one write.
                if let Some(writer) = &writer {
                    writer.hold_inline(incoming.has_buffered());
                }
                // Taken synchronously; only then awaited (a match awaiting in its arms
                // would keep the whole event in this future's state).
                match self.take(event, &limits, &mut incoming) {
                    Step::Done => {}
                    Step::Request(work) => self.run_work(work).await,
                    Step::Notify(notification) => {
                        self.core
                            .handler
                            .notification(notification, &self.core.peer)
                            .await;
                    }
                    Step::Rare(rare) => rare.await,
                }
            }
            let grace = self.config.shutdown_grace;
            // Once per connection; boxed so that the timers' state does not widen the
            // loop's.
            Box::pin(self.finish()).await;
            if let Some(writer) = writer {
                Box::pin(writer.flush_and_close(grace)).await;
            }
        }
    }

    /// What the read loop does with one event from the transport (a frame's buffer goes
    /// back to `incoming` once it is read).
    fn take(
        &self,
        event: TransportEvent,
        limits: &ClassifyLimits,
        incoming: &mut super::Incoming,
    ) -> Step<'_> {
        let (frame, attachment) = match event {
            TransportEvent::Frame(frame) => (frame, None),
            TransportEvent::Attached(attached) => {
                let (frame, attachment) = *attached;
                (frame, Some(attachment))
            }
            // Read by the transport already (the same classification): not again, unless
            // it is over this engine's size limit (then refused as a frame would be).
            TransportEvent::Classified(classified) => {
                let Classified {
                    frame,
                    message,
                    attachment,
                    landmarks,
                } = *classified;
                if frame.len() <= limits.max_message_bytes {
                    return self.take_message(message, attachment, landmarks);
                }
                (frame, attachment)
            }
            TransportEvent::Failed(failed) => {
                let (id, error) = *failed;
                if !self
                    .core
                    .peer
                    .resolve(&id, Err(CallError::Transport(error)))
                {
                    tracing::debug!(%id, "a transport failure for a request nobody waits for");
                }
                return Step::Done;
            }
            TransportEvent::Oversized { bytes, head } => {
                let limit = self.config.max_message_bytes;
                // Its head tells whose it is: an answer to one of our requests fails that
                // call at once; a request is refused under its own id.
                let head = ferry_protocol::jsonrpc::read_head(&head);
                if let Some(id) = head.id.clone().filter(|_| head.response && !head.method) {
                    let error = super::TransportError {
                        message: format!(
                            "the answer of at least {bytes} bytes exceeds this side's message \
                             limit of {limit} bytes (max_message_bytes)"
                        ),
                        status: None,
                    };
                    if !self
                        .core
                        .peer
                        .resolve(&id, Err(CallError::Transport(error)))
                    {
                        tracing::debug!(%id, "an oversized answer for a request nobody waits for");
                    }
                    return Step::Done;
                }
                let error = ErrorObject::invalid_request(format!(
                    "message of at least {bytes} bytes exceeds the limit of {limit} bytes"
                ));
                let id = head.id.filter(|_| head.method);
                let response = ErrorResponse::new(id, error);
                return Step::Rare(Box::pin(self.write_frame(serde_json::to_vec(&response))));
            }
        };
        let inbound = classify_with(&frame, limits);
        incoming.recycle(frame);
        match inbound {
            Inbound::Single(message) => self.take_message(message, attachment, None),
            Inbound::Batch(entries) => Step::Rare(Box::pin(self.batch(entries, attachment))),
            Inbound::Rejected(rejected) if rejected.reply => Step::Rare(Box::pin(
                self.write_frame(serde_json::to_vec(&rejected.response)),
            )),
            Inbound::Rejected(rejected) => {
                tracing::debug!(
                    "dropped an invalid response: {}",
                    rejected.response.error.message
                );
                Step::Done
            }
        }
    }

    /// What the read loop does with one message (not part of a batch).
    fn take_message(
        &self,
        message: Message,
        attachment: Option<super::transport::Attachment>,
        landmarks: Option<Landmarks>,
    ) -> Step<'_> {
        match message {
            Message::Request(request) => {
                Step::Request(self.request(request, Responder::Direct, attachment, landmarks))
            }
            Message::Notification(notification) => {
                if self.notification(&notification) {
                    Step::Notify(notification)
                } else {
                    Step::Done
                }
            }
            Message::Response(response) => {
                self.response(response);
                Step::Done
            }
        }
    }

    /// The peer hung up: let in-flight handlers finish within the grace period, then
    /// cancel them; fail outgoing requests.
    async fn finish(self) {
        self.closing.cancel();
        self.tracker.close();
        let graceful = tokio::time::timeout(self.config.shutdown_grace, self.tracker.wait()).await;
        if graceful.is_err() {
            // Every running or waiting handler has its token in `in_flight`.
            let tokens: Vec<Cancellation> = self
                .core
                .in_flight
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .values()
                .cloned()
                .collect();
            for token in tokens {
                token.cancel();
            }
            self.tracker.wait().await;
        }
        self.core.peer.close_all();
    }

    async fn message(
        &self,
        message: Message,
        responder: Responder,
        attachment: Option<super::transport::Attachment>,
    ) {
        match message {
            Message::Request(request) => {
                let work = self.request(request, responder, attachment, None);
                self.run_work(work).await;
            }
            Message::Notification(notification) => {
                if let Responder::Batch(tx) = responder {
                    let _ = tx.try_send(None);
                }
                if self.notification(&notification) {
                    self.core
                        .handler
                        .notification(notification, &self.core.peer)
                        .await;
                }
            }
            Message::Response(response) => {
                if let Responder::Batch(tx) = responder {
                    let _ = tx.try_send(None);
                }
                self.response(response);
            }
        }
    }

    async fn batch(
        &self,
        entries: Vec<Result<Message, ferry_protocol::jsonrpc::Rejected>>,
        attachment: Option<super::transport::Attachment>,
    ) {
        if !self.core.handler.accepts_batches() {
            let error = ErrorObject::invalid_request("JSON-RPC batches are not accepted here");
            self.write_error(error).await;
            return;
        }
        let (tx, mut rx) = mpsc::channel(entries.len().max(1));
        let expected = entries.len();
        for entry in entries {
            match entry {
                Ok(message) => {
                    let responder = Responder::Batch(tx.clone());
                    self.message(message, responder, attachment.clone()).await;
                }
                Err(rejected) => {
                    let reply = rejected
                        .reply
                        .then(|| serde_json::to_value(&rejected.response).ok())
                        .flatten();
                    let _ = tx.try_send(reply);
                }
            }
        }
        drop(tx);
        let core = Arc::clone(&self.core);
        // The batch's replies count against the pending limit until its frame is taken
        // (its requests are still in flight here, so this counts them twice for a while:
        // on the safe side).
        core.unsent.fetch_add(expected, Ordering::Relaxed);
        self.tracker.spawn(async move {
            let _unsent = Unsent(&core.unsent, expected);
            let mut replies = Vec::with_capacity(expected);
            while let Some(reply) = rx.recv().await {
                replies.extend(reply);
            }
            // A batch of notifications only gets no reply at all.
            if !replies.is_empty()
                && let Ok(frame) = serde_json::to_vec(&replies)
            {
                let _ = core.peer.send_frame(frame).await;
            }
        });
    }

    /// The engine's part of a notification; whether the handler gets it too.
    fn notification(&self, notification: &Notification) -> bool {
        match &*notification.method {
            "notifications/cancelled" => {
                let params: Result<CancelledNotificationParams, _> =
                    ferry_protocol::jsonrpc::parse_params(notification.params.as_deref());
                if let Ok(CancelledNotificationParams {
                    request_id: Some(id),
                    ..
                }) = params
                {
                    let token = self
                        .core
                        .in_flight
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get(&id)
                        .cloned();
                    match token {
                        Some(token) => token.cancel(),
                        None => tracing::debug!(%id, "cancellation of a request not in flight"),
                    }
                }
                true
            }
            "notifications/progress" => {
                let params: Result<ProgressNotificationParams, _> =
                    ferry_protocol::jsonrpc::parse_params(notification.params.as_deref());
                // Progress of one of our own requests is the engine's alone.
                !params.is_ok_and(|p| self.core.peer.route_progress(p))
            }
            _ => true,
        }
    }

    fn response(&self, response: Response) {
        let (id, reply) = match response {
            Response::Result(r) => (r.id, Ok(r.result)),
            Response::Error(ErrorResponse {
                id: Some(id),
                error,
            }) => (id, Err(CallError::Rpc(error))),
            Response::Error(ErrorResponse { id: None, error }) => {
                tracing::debug!("peer reported an error without an id: {}", error.message);
                return;
            }
        };
        if !self.core.peer.resolve(&id, reply) {
            tracing::debug!(%id, "late or unknown response dropped");
        }
    }

    /// Send an error without an id (for a message the engine could not take).
    async fn write_error(&self, error: ErrorObject) {
        self.write_frame(serde_json::to_vec(&ErrorResponse::new(None, error)))
            .await;
    }

    /// Send a frame the engine made itself (a refusal).
    async fn write_frame(&self, frame: serde_json::Result<Vec<u8>>) {
        if let Ok(frame) = frame {
            let _ = self.core.peer.send_frame(frame).await;
        }
    }
}

/// Responses counted in [`Core::unsent`], uncounted when dropped (sent, or abandoned).
struct Unsent<'a>(&'a AtomicUsize, usize);

impl Drop for Unsent<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(self.1, Ordering::Relaxed);
    }
}

/// A read loop's state for `handler`, for the size tests below.
#[cfg(all(test, feature = "server"))]
fn test_loop<H: Handler>(handler: H) -> Loop<H> {
    let (outgoing, _rx) = mpsc::channel(1);
    let peer = Peer::new(outgoing, None, std::time::Duration::from_secs(1));
    Loop {
        core: Core::new(handler, peer, 1),
        config: EngineConfig::default(),
        tracker: TaskTracker::new(),
        closing: Cancellation::new(),
        inline: true,
    }
}

/// The size of the read loop's future for `handler`: what every connection keeps for as
/// long as it lives (see [`Loop::run`]).
#[cfg(all(test, feature = "server"))]
pub(crate) fn run_future_size<H: Handler>(handler: H) -> usize {
    let (_tx, incoming) = mpsc::channel::<TransportEvent>(1);
    std::mem::size_of_val(&test_loop(handler).run(incoming.into(), None))
}

/// The size of the boxed future `handler`'s engine makes for `request` (see
/// [`Loop::request`]): allocated and freed once per request.
#[cfg(all(test, feature = "server"))]
pub(crate) fn request_future_size<H: Handler>(
    handler: H,
    request: ferry_protocol::jsonrpc::Request,
) -> usize {
    match test_loop(handler).request(request, Responder::Direct, None, None) {
        request::Work::Finish(work) | request::Work::Run(work) => std::mem::size_of_val(&*work),
    }
}
