//! The handle for talking to the other side: outgoing requests correlated with their
//! responses (timeouts, cancellation on drop, progress), and notifications.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferry_protocol::RequestId;
use ferry_protocol::jsonrpc::{ErrorObject, Notification, RawJson, Request};
use ferry_protocol::types::{CancelledNotificationParams, ProgressNotificationParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, oneshot};

use super::lines::InlineWrite;
use super::related::RelatedSink;
use super::transport::Frame;

/// Why an outgoing request failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The peer answered with an error.
    #[error("the peer answered with error {}: {}", .0.code, .0.message)]
    Rpc(ErrorObject),
    /// No response within the timeout; the request was cancelled.
    #[error("no response within {0:?}; the request was cancelled")]
    Timeout(Duration),
    /// The connection ended before the response arrived.
    #[error("connection lost before the response arrived")]
    ConnectionClosed,
    /// The params could not be serialized.
    #[error("the params could not be serialized: {0}")]
    Serialize(String),
    /// The result did not have the expected shape.
    #[error("the result did not have the expected shape: {0}")]
    InvalidResult(String),
    /// The transport could not get the peer's answer (see [`TransportEvent::Failed`](super::TransportEvent::Failed)).
    #[error("{0}")]
    Transport(super::TransportError),
}

type Reply = Result<RawJson, CallError>;

/// Progress updates of one outgoing request buffered before the caller reads them.
const PROGRESS_QUEUE: usize = 64;

struct Pending {
    reply: oneshot::Sender<Reply>,
    progress: Option<mpsc::Sender<ProgressNotificationParams>>,
}

pub(crate) struct Shared {
    pub(crate) out: mpsc::Sender<Frame>,
    /// The byte stream behind `out`, written inline while nothing is queued (line
    /// transports; see `engine::lines`).
    inline: Option<Arc<dyn InlineWrite>>,
    /// Told which request a handler-sent frame belongs to (HTTP transports).
    related: Option<RelatedSink>,
    pending: Mutex<super::FastMap<RequestId, Pending>>,
    next_id: AtomicI64,
    pub(crate) default_timeout: Duration,
    /// Set when the connection is gone: later calls fail at once.
    closed: AtomicBool,
}

/// A handle to the peer on the other end of a connection. Cheap to clone.
#[derive(Clone)]
pub struct Peer {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer").finish_non_exhaustive()
    }
}

/// Options of one outgoing request.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Overrides the engine's default request timeout.
    pub timeout: Option<Duration>,
    /// Receives the peer's progress notifications for this request; a progress token is
    /// added to the request's `_meta`. Updates are dropped, not waited for, when the
    /// receiver lags (progress is advisory).
    pub progress: Option<mpsc::Sender<ProgressNotificationParams>>,
    /// Restart the timeout whenever the peer reports progress (a progress token is added
    /// to the request). Default: false.
    pub reset_timeout_on_progress: bool,
    /// The longest the call may take in all, progress or not. Default: no bound beyond the
    /// timeout.
    pub max_total_timeout: Option<Duration>,
}

impl Peer {
    /// A peer writing to `out` only (unit tests).
    #[cfg(test)]
    pub(crate) fn new(
        out: mpsc::Sender<Frame>,
        related: Option<RelatedSink>,
        default_timeout: Duration,
    ) -> Self {
        Self::with_inline(out, None, related, default_timeout)
    }

    /// [`Peer::new`] with the stream behind `out`, written inline when it can be.
    pub(crate) fn with_inline(
        out: mpsc::Sender<Frame>,
        inline: Option<Arc<dyn InlineWrite>>,
        related: Option<RelatedSink>,
        default_timeout: Duration,
    ) -> Self {
        Peer {
            shared: Arc::new(Shared {
                out,
                inline,
                related,
                pending: Mutex::default(),
                next_id: AtomicI64::new(1),
                default_timeout,
                closed: AtomicBool::new(false),
            }),
        }
    }

    /// Send a request and wait for its result, with the default timeout.
    pub async fn request<P, R>(&self, method: &'static str, params: &P) -> Result<R, CallError>
    where
        P: Serialize + ?Sized,
        R: DeserializeOwned,
    {
        let raw = self.call(method, params, CallOptions::default()).await?;
        serde_json::from_str(raw.get()).map_err(|e| CallError::InvalidResult(e.to_string()))
    }

    /// Send a request and wait for its raw result.
    ///
    /// Dropping the returned future cancels the request: the peer is sent
    /// `notifications/cancelled`. So does a timeout.
    pub async fn call<P>(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: &P,
        options: CallOptions,
    ) -> Result<RawJson, CallError>
    where
        P: Serialize + ?Sized,
    {
        self.call_with_id(self.next_request_id(), method, params, options)
            .await
    }

    /// A fresh id for an outgoing request, for a caller that must know it before the call
    /// (a `subscriptions/listen` stream is named by its request's id).
    pub fn next_request_id(&self) -> RequestId {
        RequestId::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// [`Peer::call`] with an id from [`Peer::next_request_id`].
    pub async fn call_with_id<P>(
        &self,
        id: RequestId,
        method: impl Into<Cow<'static, str>>,
        params: &P,
        options: CallOptions,
    ) -> Result<RawJson, CallError>
    where
        P: Serialize + ?Sized,
    {
        let watch_progress = options.progress.is_some() || options.reset_timeout_on_progress;
        let params = if watch_progress {
            with_progress_token(params, &id)
        } else {
            serde_json::value::to_raw_value(params)
        }
        .map_err(|e| CallError::Serialize(e.to_string()))?;
        if !(params.get().starts_with('{') || params.get().starts_with('[')) {
            return Err(CallError::Serialize(
                "params must serialize to a JSON object or array".into(),
            ));
        }
        let frame = serde_json::to_vec(&Request::new(id.clone(), method, params))
            .map_err(|e| CallError::Serialize(e.to_string()))?;
        let (tx, mut rx) = oneshot::channel();
        let (progress_tx, mut progress_rx) = if watch_progress {
            let (tx, rx) = mpsc::channel(PROGRESS_QUEUE);
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        self.lock().insert(
            id.clone(),
            Pending {
                reply: tx,
                progress: progress_tx,
            },
        );
        let guard = CancelOnDrop {
            peer: self,
            id: Some(id),
        };
        // Checked after the insert: `close_all` sets the flag before it drains, so a call
        // either sees the flag or is drained.
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(CallError::ConnectionClosed);
        }
        self.note_related(&frame);
        if self.shared.out.send(frame).await.is_err() {
            return Err(CallError::ConnectionClosed);
        }
        let timeout = options.timeout.unwrap_or(self.shared.default_timeout);
        let started = tokio::time::Instant::now();
        let hard_deadline = options.max_total_timeout.map(|total| started + total);
        let mut deadline = started + timeout;
        loop {
            let until = hard_deadline.map_or(deadline, |hard| hard.min(deadline));
            tokio::select! {
                biased;
                reply = &mut rx => {
                    guard.disarm();
                    // Progress sent before the response is delivered before it returns.
                    if let (Some(updates), Some(user)) = (progress_rx.as_mut(), &options.progress) {
                        while let Ok(update) = updates.try_recv() {
                            let _ = user.try_send(update);
                        }
                    }
                    return reply.unwrap_or(Err(CallError::ConnectionClosed));
                }
                Some(update) = async {
                    match progress_rx.as_mut() {
                        Some(updates) => updates.recv().await,
                        None => std::future::pending().await,
                    }
                } => {
                    if options.reset_timeout_on_progress {
                        deadline = tokio::time::Instant::now() + timeout;
                    }
                    if let Some(user) = &options.progress {
                        let _ = user.try_send(update);
                    }
                }
                // The guard sends the cancellation.
                () = tokio::time::sleep_until(until) => {
                    return Err(CallError::Timeout(started.elapsed()));
                }
            }
        }
    }

    /// Send a notification.
    pub async fn notify<P>(&self, method: &'static str, params: &P) -> Result<(), CallError>
    where
        P: Serialize + ?Sized,
    {
        let frame = serde_json::to_vec(&Notification::new(method, params))
            .map_err(|e| CallError::Serialize(e.to_string()))?;
        self.send_frame(frame).await
    }

    /// Queue a notification without waiting; returns false (and drops it) when the write
    /// queue is full or the connection is gone.
    pub fn try_notify<P>(&self, method: &'static str, params: &P) -> bool
    where
        P: Serialize + ?Sized,
    {
        serde_json::to_vec(&Notification::new(method, params)).is_ok_and(|frame| {
            self.note_related(&frame);
            self.shared.out.try_send(frame).is_ok()
        })
    }

    /// Show a frame about to be queued to the transport's [`RelatedSink`], if any.
    /// Whether frames are shown to a [`RelatedSink`] (then handlers run in a scope naming
    /// their request: see [`related::serving`](super::related::serving)).
    pub(crate) fn has_related(&self) -> bool {
        self.shared.related.is_some()
    }

    fn note_related(&self, frame: &[u8]) {
        if let Some(sink) = &self.shared.related {
            sink.note(frame);
        }
    }

    pub(crate) async fn send_frame(&self, frame: Frame) -> Result<(), CallError> {
        self.note_related(&frame);
        // Written at once when nothing waits before it (no writer task's wake-up).
        let frame = match &self.shared.inline {
            Some(inline) => match inline.write_now(frame, &self.shared.out) {
                Ok(()) => return Ok(()),
                Err(frame) => frame,
            },
            None => frame,
        };
        // A free place taken at once: the waiting `send` (its semaphore future, queue node
        // and waker) only when the queue is full.
        match self.shared.out.try_send(frame) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(frame)) => self
                .shared
                .out
                .send(frame)
                .await
                .map_err(|_| CallError::ConnectionClosed),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(CallError::ConnectionClosed),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, super::FastMap<RequestId, Pending>> {
        // A panic while holding this lock cannot leave the map inconsistent (single
        // inserts and removes), so a poisoned lock is still usable.
        self.shared
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Deliver a response from the peer. Returns false for an id nobody waits for.
    pub(crate) fn resolve(&self, id: &RequestId, reply: Reply) -> bool {
        match self.lock().remove(id) {
            Some(pending) => {
                let _ = pending.reply.send(reply);
                true
            }
            None => false,
        }
    }

    /// Route a progress notification to the request whose token it names.
    pub(crate) fn route_progress(&self, params: ProgressNotificationParams) -> bool {
        let id = match &params.progress_token {
            ferry_protocol::types::ProgressToken::Number(n) => RequestId::Number(*n),
            ferry_protocol::types::ProgressToken::String(s) => RequestId::String(s.clone()),
        };
        let sender = self.lock().get(&id).and_then(|p| p.progress.clone());
        match sender {
            Some(sender) => sender.try_send(params).is_ok(),
            None => false,
        }
    }

    /// Fail every waiting request: the connection is gone.
    pub(crate) fn close_all(&self) {
        self.shared.closed.store(true, Ordering::Release);
        let drained: Vec<_> = self.lock().drain().collect();
        for (_, pending) in drained {
            let _ = pending.reply.send(Err(CallError::ConnectionClosed));
        }
    }

    /// The timeout of a request whose [`CallOptions`] name none.
    pub fn default_timeout(&self) -> Duration {
        self.shared.default_timeout
    }

    /// How many outgoing requests wait for a response.
    pub fn pending_requests(&self) -> usize {
        self.lock().len()
    }
}

fn with_progress_token<P: Serialize + ?Sized>(
    params: &P,
    id: &RequestId,
) -> Result<RawJson, serde_json::Error> {
    let mut value = serde_json::to_value(params)?;
    if let serde_json::Value::Object(map) = &mut value {
        let meta = map
            .entry("_meta")
            .or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let serde_json::Value::Object(meta) = meta {
            meta.insert("progressToken".into(), serde_json::to_value(id)?);
        }
    }
    serde_json::value::to_raw_value(&value)
}

/// Removes a pending request and tells the peer it is cancelled, unless disarmed.
struct CancelOnDrop<'a> {
    peer: &'a Peer,
    id: Option<RequestId>,
}

impl CancelOnDrop<'_> {
    fn disarm(mut self) {
        self.id = None;
    }
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        if self.peer.lock().remove(&id).is_none() {
            return;
        }
        let params = CancelledNotificationParams {
            request_id: Some(id),
            reason: Some("cancelled by the caller".into()),
            meta: None,
        };
        if let Ok(frame) = serde_json::to_vec(&Notification::new("notifications/cancelled", params))
        {
            // Drop cannot wait: a full queue loses the cancellation, and the late response
            // is dropped when it arrives.
            let _ = self.peer.shared.out.try_send(frame);
        }
    }
}
