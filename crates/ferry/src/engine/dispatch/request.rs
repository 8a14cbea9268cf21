//! One request: its concurrency slot, cancellation, panics, and its one response.

use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use ferry_protocol::RequestId;
use ferry_protocol::jsonrpc::{ErrorObject, ErrorResponse, Request};
use ferry_protocol::read::{self, Landmarks};
use serde::Deserialize;
use tokio::sync::{Semaphore, SemaphorePermit, mpsc};

use super::{BoxFuture, Loop, Responder, Unsent};
use crate::engine::peer::Peer;
use crate::engine::progress::ProgressReporter;
use crate::engine::transport::Attachment;
use crate::engine::{Cancellation, Handler, RequestContext, ResultJson, related};

/// What the read loop does with a request it has taken (see [`Loop::run_work`]).
pub(super) enum Work {
    /// Finish it before reading on: an answer the engine makes itself (`ping`, a
    /// refusal), or a request the handler wants handled in order.
    Finish(BoxFuture<'static, ()>),
    /// The handler's work: on a single-threaded runtime first polled in place, and then,
    /// if it has to wait, in a task of its own.
    Run(BoxFuture<'static, ()>),
}

impl<H: Handler> Loop<H> {
    /// Take a request: what is left to do is the returned [`Work`].
    pub(super) fn request(
        &self,
        request: Request,
        responder: Responder,
        attachment: Option<Attachment>,
        landmarks: Option<Landmarks>,
    ) -> Work {
        let mut id = request.id.clone();
        if request.method == "ping"
            && self.config.answer_ping
            && self.core.handler.engine_answers_ping(&request)
        {
            let result =
                ResultJson::from_value(&serde_json::json!({})).map_err(ErrorObject::internal_error);
            let peer = self.core.peer.clone();
            return Work::Finish(Box::pin(async move {
                respond_to(&peer, &responder, id, result).await;
            }));
        }
        // A cancellation of its own (no tree of tokens: see `Cancellation`); the shutdown
        // cancels each one in `in_flight`.
        let token = Cancellation::new();
        let refused = {
            let mut in_flight = self
                .core
                .in_flight
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if in_flight.contains_key(&id) {
                Some(ErrorObject::invalid_request(format!(
                    "request id {id} is already in flight"
                )))
            } else if in_flight.len() + self.core.unsent.load(Ordering::Relaxed)
                >= self.config.max_pending_requests
            {
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
            let peer = self.core.peer.clone();
            return Work::Finish(Box::pin(async move {
                respond_to(&peer, &responder, id, Err(error)).await;
            }));
        }
        // The params' landmarks, when the transport read them: the handler takes them too.
        let params = request.params.as_deref().map(|p| p.get());
        let progress = progress_token(params, landmarks.as_ref())
            .map(|t| ProgressReporter::new(t, self.core.peer.clone()));
        let context = RequestContext {
            id: id.clone(),
            cancel: token.clone(),
            closing: self.closing.clone(),
            progress: progress.clone(),
            peer: self.core.peer.clone(),
            attachment,
            landmarks: landmarks.map(Box::new),
        };
        let ordered = self.core.handler.in_order(&request.method);
        let needs_slot = !self.core.handler.long_lived(&request.method);
        let core = Arc::clone(&self.core);
        let related = self.core.peer.has_related();
        let work: BoxFuture<'static, ()> = Box::pin(async move {
            let method = request.method.clone();
            // The handler's future is polled where it is pinned, by one poll function that
            // checks the token, guards against panics and enters the related-request scope
            // (see `run_handler`): no wrapper future per concern to move it through.
            let outcome = 'outcome: {
                // A free slot is taken without the waiting future (its queue node and
                // release are most of a semaphore's cost per request).
                let _slot = if !needs_slot {
                    None
                } else if let Ok(permit) = core.slots.try_acquire() {
                    Some(permit)
                } else {
                    match Box::pin(wait_for_slot(&core.slots, &token)).await {
                        Some(permit) => permit,
                        None => break 'outcome None,
                    }
                };
                // Not routed at all once cancelled (as no output is taken after it).
                if token.is_cancelled() {
                    break 'outcome None;
                }
                let routed = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    core.handler.request(request, context)
                }));
                let future = match routed {
                    Ok(future) => std::pin::pin!(future),
                    Err(panic) => break 'outcome Some(Err(panic)),
                };
                run_handler(&token, future, related.then_some(&mut id)).await
            };
            // Counted as unsent before it leaves `in_flight`, so that it is never out of
            // both while its response waits for the transport.
            core.unsent.fetch_add(1, Ordering::Relaxed);
            let _unsent = Unsent(&core.unsent, 1);
            core.in_flight
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
            if let Some(progress) = &progress {
                // Boxed: the lock it waits for would widen every request's future.
                Box::pin(progress.deactivate()).await;
            }
            let result = match outcome {
                None => return cancelled(&id, &method, &responder),
                Some(Ok(result)) => result,
                Some(Err(panic)) => Err(panicked(&id, &method, panic)),
            };
            respond_to(&core.peer, &responder, id, result).await;
        });
        if ordered {
            Work::Finish(work)
        } else {
            Work::Run(work)
        }
    }

    /// Do what is left of a request before the next message is read.
    pub(super) async fn run_work(&self, work: Work) {
        match work {
            Work::Finish(work) => work.await,
            // On a single-threaded runtime a handler that is ready at once (most tools) is
            // answered here, without a task of its own (its spawn, scheduling and wake-up
            // cost more than the handler). One poll only: whatever waits goes on in its own
            // task, so the next message is read at once. A multi-threaded runtime always
            // spawns, so that handlers keep running in parallel.
            Work::Run(mut work) => {
                if self.inline {
                    let polled =
                        std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
                    if polled.is_ready() {
                        return;
                    }
                }
                self.tracker.spawn(work);
            }
        }
    }
}

/// A request's handler run to its end: its output (`Err` if it panicked), or `None` once
/// `token` is cancelled (checked first at every poll: no output is taken after a
/// cancellation). Each poll runs in the scope of the request `serving` (see
/// [`related::serving`]). The handler waits on `token.cancelled()` only once it waits at
/// all (boxed then, which keeps every request's future small): a handler that is ready at
/// its first poll (most tools) never registers with the token.
fn run_handler<'a, F: Future>(
    token: &'a Cancellation,
    mut future: Pin<&'a mut F>,
    mut serving: Option<&'a mut RequestId>,
) -> impl Future<Output = Option<std::thread::Result<F::Output>>> + 'a {
    let mut cancelled = None;
    std::future::poll_fn(move |cx| {
        if token.is_cancelled() {
            return Poll::Ready(None);
        }
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
            related::serving(serving.as_deref_mut(), || future.as_mut().poll(cx))
        }));
        match polled {
            Ok(Poll::Ready(output)) => return Poll::Ready(Some(Ok(output))),
            Err(panic) => return Poll::Ready(Some(Err(panic))),
            Ok(Poll::Pending) => {}
        }
        let cancelled = cancelled.get_or_insert_with(|| Box::pin(token.cancelled()));
        cancelled.as_mut().poll(cx).map(|()| None)
    })
}

/// A concurrency slot, waited for (all were taken); `None` if `token` is cancelled first.
/// Boxed where it is awaited: the semaphore's waiting future would widen every request's.
async fn wait_for_slot<'a>(
    slots: &'a Semaphore,
    token: &Cancellation,
) -> Option<Option<SemaphorePermit<'a>>> {
    tokio::select! {
        biased;
        () = token.cancelled() => None,
        permit = slots.acquire() => Some(permit.ok()),
    }
}

async fn respond_to(
    peer: &Peer,
    responder: &Responder,
    id: RequestId,
    result: Result<ResultJson, ErrorObject>,
) {
    let frame = match result {
        Ok(json) => json.into_response(&id),
        Err(error) => match error_frame(id, error) {
            Some(frame) => frame,
            None => return,
        },
    };
    match responder {
        Responder::Direct => {
            let _ = peer.send_frame(frame).await;
        }
        Responder::Batch(tx) => reply_in_batch(tx, &frame),
    }
}

/// An error response's frame. Out of line, as is [`reply_in_batch`]: the rare paths' code
/// kept apart from what every response runs.
#[cold]
#[inline(never)]
fn error_frame(id: RequestId, error: ErrorObject) -> Option<Vec<u8>> {
    let mut frame = Vec::with_capacity(128);
    serde_json::to_writer(&mut frame, &ErrorResponse::new(Some(id), error)).ok()?;
    Some(frame)
}

/// A response handed to the batch it belongs to. Never full: the channel has room for one
/// reply per entry of the batch.
#[cold]
#[inline(never)]
fn reply_in_batch(tx: &mpsc::Sender<Option<serde_json::Value>>, frame: &[u8]) {
    let _ = tx.try_send(serde_json::from_slice(frame).ok());
}

/// `_meta.progressToken` of the params: from their landmarks when the transport found them;
/// else read by serde, only when the key may be there. A search rather than the landmarks
/// here: carried to the handler from the engine, they made a stdio call dearer
/// (measured: bench/results/profile.md#the-params-landmarks).
fn progress_token(
    params: Option<&str>,
    landmarks: Option<&Landmarks>,
) -> Option<ferry_protocol::types::ProgressToken> {
    let params = params?;
    match landmarks {
        Some(found) => found
            .progress_token
            .and_then(|token| serde_json::from_str(token.text(params)).ok()),
        // Most requests carry no token: no parse when the key cannot be there (a JSON
        // string can spell a letter of it differently only with an escape).
        None if read::scan::may_hold(params.as_bytes(), b"progress", b"oken") => {
            progress_token_by_serde(params)
        }
        None => None,
    }
}

#[cold]
#[inline(never)]
fn progress_token_by_serde(params: &str) -> Option<ferry_protocol::types::ProgressToken> {
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
    serde_json::from_str::<Probe>(params)
        .ok()?
        .meta?
        .progress_token
}

/// A request cancelled before it was answered: no response (a batch counts it answered).
/// Out of line, as are [`panicked`]'s, so that the rare paths do not spread the code every
/// request runs over more cache lines.
#[cold]
#[inline(never)]
fn cancelled(id: &RequestId, method: &str, responder: &Responder) {
    tracing::debug!(%id, %method, "request cancelled; no response");
    if let Responder::Batch(tx) = responder {
        let _ = tx.try_send(None);
    }
}

/// The error answering a request whose handler panicked.
#[cold]
#[inline(never)]
fn panicked(id: &RequestId, method: &str, panic: Box<dyn std::any::Any + Send>) -> ErrorObject {
    let what = panic_message(&*panic);
    tracing::error!(%id, %method, "handler panicked: {what}");
    ErrorObject::internal_error(format!(
        "the handler of {method} (request {id}) panicked: {what}"
    ))
    .with_data(serde_json::json!({"method": method, "id": id.to_string()}))
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
