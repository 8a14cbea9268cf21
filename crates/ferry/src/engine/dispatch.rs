//! The read loop: classification, routing, concurrency, cancellation and responses.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use ferry_protocol::RequestId;
use ferry_protocol::jsonrpc::{
    ClassifyLimits, ErrorObject, ErrorResponse, Inbound, Message, Notification, RawJson, Request,
    Response, ResultResponse, classify_with,
};
use ferry_protocol::types::{CancelledNotificationParams, ProgressNotificationParams};
use futures_util::FutureExt;
use serde::Deserialize;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};
use tokio_util::task::TaskTracker;

use super::config::EngineConfig;
use super::peer::{CallError, Peer};
use super::progress::ProgressReporter;
use super::related;
use super::transport::{Transport, TransportEvent};
use super::{Handler, RequestContext};

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

type InFlight = Arc<Mutex<HashMap<RequestId, CancellationToken>>>;

struct Loop<H> {
    handler: Arc<H>,
    peer: Peer,
    config: EngineConfig,
    in_flight: InFlight,
    slots: Arc<Semaphore>,
    tracker: TaskTracker,
    closing: CancellationToken,
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
        let peer = Peer::new(
            transport.outgoing,
            transport.related,
            config.request_timeout,
        );
        let state = Loop {
            handler: Arc::new(handler),
            peer: peer.clone(),
            slots: Arc::new(Semaphore::new(config.max_concurrent_requests)),
            config,
            in_flight: Arc::default(),
            tracker: TaskTracker::new(),
            closing: CancellationToken::new(),
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

impl<H: Handler> Loop<H> {
    async fn run(
        self,
        mut incoming: mpsc::Receiver<TransportEvent>,
        writer: Option<super::transport::Writer>,
    ) {
        let limits = ClassifyLimits {
            max_message_bytes: self.config.max_message_bytes,
        };
        while let Some(event) = incoming.recv().await {
            match event {
                TransportEvent::Oversized { bytes } => {
                    let error = ErrorObject::invalid_request(format!(
                        "message of at least {bytes} bytes exceeds the limit of {} bytes",
                        self.config.max_message_bytes
                    ));
                    self.write(&ErrorResponse::new(None, error)).await;
                }
                TransportEvent::Frame(frame) => self.frame(&frame, &limits, None).await,
                TransportEvent::Attached(frame, attachment) => {
                    self.frame(&frame, &limits, Some(attachment)).await;
                }
            }
        }
        let grace = self.config.shutdown_grace;
        self.finish().await;
        if let Some(writer) = writer {
            writer.flush_and_close(grace).await;
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
            let tokens: Vec<CancellationToken> = self
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
        self.peer.close_all();
    }

    async fn frame(
        &self,
        frame: &[u8],
        limits: &ClassifyLimits,
        attachment: Option<super::transport::Attachment>,
    ) {
        match classify_with(frame, limits) {
            Inbound::Single(message) => {
                self.message(message, Responder::Direct, attachment).await;
            }
            Inbound::Batch(entries) => self.batch(entries, attachment).await,
            Inbound::Rejected(rejected) if rejected.reply => {
                self.write(&rejected.response).await;
            }
            Inbound::Rejected(rejected) => tracing::debug!(
                "dropped an invalid response: {}",
                rejected.response.error.message
            ),
        }
    }

    async fn message(
        &self,
        message: Message,
        responder: Responder,
        attachment: Option<super::transport::Attachment>,
    ) {
        match message {
            Message::Request(request) => self.request(request, responder, attachment).await,
            Message::Notification(notification) => {
                if let Responder::Batch(tx) = responder {
                    let _ = tx.send(None).await;
                }
                self.notification(notification).await;
            }
            Message::Response(response) => {
                if let Responder::Batch(tx) = responder {
                    let _ = tx.send(None).await;
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
        if !self.handler.accepts_batches() {
            let error = ErrorObject::invalid_request("JSON-RPC batches are not accepted here");
            self.write(&ErrorResponse::new(None, error)).await;
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
                    let _ = tx.send(reply).await;
                }
            }
        }
        drop(tx);
        let peer = self.peer.clone();
        self.tracker.spawn(async move {
            let mut replies = Vec::with_capacity(expected);
            while let Some(reply) = rx.recv().await {
                replies.extend(reply);
            }
            // A batch of notifications only gets no reply at all.
            if !replies.is_empty()
                && let Ok(frame) = serde_json::to_vec(&replies)
            {
                let _ = peer.send_frame(frame).await;
            }
        });
    }

    async fn request(
        &self,
        request: Request,
        responder: Responder,
        attachment: Option<super::transport::Attachment>,
    ) {
        let id = request.id.clone();
        if request.method == "ping"
            && self.config.answer_ping
            && self.handler.engine_answers_ping(&request)
        {
            let result = serde_json::value::to_raw_value(&serde_json::json!({}))
                .map_err(ErrorObject::internal_error);
            self.respond(&responder, id, result).await;
            return;
        }
        // A token of its own, not a child of a connection-wide one: children cost a lock
        // of the shared parent on creation and on drop. The shutdown cancels each token
        // in `in_flight` instead.
        let token = CancellationToken::new();
        let refused = {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if in_flight.contains_key(&id) {
                Some(ErrorObject::invalid_request(format!(
                    "request id {id} is already in flight"
                )))
            } else if in_flight.len() >= self.config.max_pending_requests {
                Some(ErrorObject::internal_error(format!(
                    "too many requests in flight (limit {})",
                    self.config.max_pending_requests
                )))
            } else {
                in_flight.insert(id.clone(), token.clone());
                None
            }
        };
        if let Some(error) = refused {
            self.respond(&responder, id, Err(error)).await;
            return;
        }
        let progress = progress_token(request.params.as_deref())
            .map(|t| ProgressReporter::new(t, self.peer.clone()));
        let context = RequestContext {
            id: id.clone(),
            cancel: token.clone(),
            closing: self.closing.clone(),
            progress: progress.clone(),
            peer: self.peer.clone(),
            attachment,
        };
        let ordered = self.handler.in_order(&request.method);
        let needs_slot = !self.handler.long_lived(&request.method);
        let handler = Arc::clone(&self.handler);
        let slots = Arc::clone(&self.slots);
        let in_flight = Arc::clone(&self.in_flight);
        let peer = self.peer.clone();
        let mut work: BoxFuture<'static, ()> = Box::pin(async move {
            let method = request.method.clone();
            // Pinned where they are made, and the handler's future built inside the awaited
            // expression: a future bound to a local and then moved into another would be
            // stored twice in this one (it was ~7 KiB, allocated and copied per request).
            let outcome = {
                let run = std::pin::pin!(async {
                    let _slot = if needs_slot {
                        Some(slots.acquire_owned().await)
                    } else {
                        None
                    };
                    AssertUnwindSafe(related::serving(
                        id.clone(),
                        handler.request(request, context),
                    ))
                    .catch_unwind()
                    .await
                });
                let cancelled = std::pin::pin!(token.cancelled());
                until_cancelled(&token, run, cancelled).await
            };
            in_flight
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
            if let Some(progress) = &progress {
                progress.deactivate().await;
            }
            let result = match outcome {
                None => {
                    tracing::debug!(%id, %method, "request cancelled; no response");
                    if let Responder::Batch(tx) = &responder {
                        let _ = tx.send(None).await;
                    }
                    return;
                }
                Some(Ok(result)) => result,
                Some(Err(panic)) => {
                    let what = panic_message(&*panic);
                    tracing::error!(%id, %method, "handler panicked: {what}");
                    Err(ErrorObject::internal_error(format!(
                        "the handler of {method} (request {id}) panicked: {what}"
                    ))
                    .with_data(serde_json::json!({"method": method, "id": id.to_string()})))
                }
            };
            respond_to(&peer, &responder, id, result).await;
        });
        if ordered {
            work.await;
            return;
        }
        // On a single-threaded runtime a handler that is ready at once (most tools) is
        // answered here, without a task of its own (its spawn, scheduling and wake-up cost
        // more than the handler). One poll only: whatever waits goes on in its own task,
        // so the next message is read at once. A multi-threaded runtime always spawns, so
        // that handlers keep running in parallel.
        if self.inline {
            let polled = std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
            if polled.is_ready() {
                return;
            }
        }
        self.tracker.spawn(work);
    }

    async fn respond(
        &self,
        responder: &Responder,
        id: RequestId,
        result: Result<RawJson, ErrorObject>,
    ) {
        respond_to(&self.peer, responder, id, result).await;
    }

    async fn notification(&self, notification: Notification) {
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
                self.handler.notification(notification, &self.peer).await;
            }
            "notifications/progress" => {
                let params: Result<ProgressNotificationParams, _> =
                    ferry_protocol::jsonrpc::parse_params(notification.params.as_deref());
                let routed = params.is_ok_and(|p| self.peer.route_progress(p));
                if !routed {
                    self.handler.notification(notification, &self.peer).await;
                }
            }
            _ => self.handler.notification(notification, &self.peer).await,
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
        if !self.peer.resolve(&id, reply) {
            tracing::debug!(%id, "late or unknown response dropped");
        }
    }

    async fn write<T: serde::Serialize>(&self, message: &T) {
        if let Ok(frame) = serde_json::to_vec(message) {
            let _ = self.peer.send_frame(frame).await;
        }
    }
}

/// `future`'s output, or `None` once `token` is cancelled (checked first at every poll:
/// no output is taken after a cancellation); `cancelled` is `token.cancelled()`. Unlike a
/// `select!` on it, a future that is ready at its first poll never registers with the
/// token.
fn until_cancelled<'a, 'b: 'a, F: Future>(
    token: &'a CancellationToken,
    mut future: std::pin::Pin<&'a mut F>,
    mut cancelled: std::pin::Pin<&'a mut WaitForCancellationFuture<'b>>,
) -> impl Future<Output = Option<F::Output>> + 'a {
    std::future::poll_fn(move |cx| {
        if token.is_cancelled() {
            return Poll::Ready(None);
        }
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        match cancelled.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    })
}

async fn respond_to(
    peer: &Peer,
    responder: &Responder,
    id: RequestId,
    result: Result<RawJson, ErrorObject>,
) {
    // Sized for the result and the envelope at once (growing from empty reallocated the
    // frame several times per response).
    let mut frame = Vec::with_capacity(result.as_ref().map_or(128, |raw| raw.get().len() + 64));
    let written = match result {
        Ok(raw) => serde_json::to_writer(&mut frame, &ResultResponse::new(id, raw)),
        Err(error) => serde_json::to_writer(&mut frame, &ErrorResponse::new(Some(id), error)),
    };
    if written.is_err() {
        return;
    }
    match responder {
        Responder::Direct => {
            let _ = peer.send_frame(frame).await;
        }
        Responder::Batch(tx) => {
            let _ = tx.send(serde_json::from_slice(&frame).ok()).await;
        }
    }
}

fn progress_token(
    params: Option<&serde_json::value::RawValue>,
) -> Option<ferry_protocol::types::ProgressToken> {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(rename = "_meta", default)]
        meta: Option<MetaProbe>,
    }
    #[derive(Deserialize)]
    struct MetaProbe {
        #[serde(rename = "progressToken", default)]
        progress_token: Option<ferry_protocol::types::ProgressToken>,
    }
    let params = params?.get();
    // Most requests carry no token: skip the parse when the key cannot be there (a JSON
    // string can spell a letter of it differently only with a `\u` escape).
    if !params.contains("progressToken") && !params.contains("\\u") {
        return None;
    }
    serde_json::from_str::<Probe>(params)
        .ok()?
        .meta?
        .progress_token
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string panic payload".to_owned()
    }
}
