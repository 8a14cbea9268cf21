//! One session's state: its engine's input, its activity (idle time), and its POST
//! streams' bookkeeping (opening, abandoning, cancelling).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::response::Response;
use ferry_protocol::jsonrpc::{ErrorObject, Message};
use ferry_protocol::read::Landmarks;
use ferry_protocol::{ProtocolVersion, RequestId};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::checks::too_many_streams;
use super::router::{Delivery, PostStream, Routing, frame_key};
use super::stream::{self, StreamRx};
use crate::engine::{Attachment, Frame, TransportEvent};
use crate::http::clients::{ClientKey, ClientSlot};
use crate::http::events::{EventStore, StreamKey};
use crate::http::owner::SessionOwner;
use crate::http::stateless::error_response;

/// One session: its engine's input, its routing and its activity.
pub(super) struct Session {
    pub(super) id: String,
    pub(super) to_engine: Mutex<Option<mpsc::Sender<TransportEvent>>>,
    pub(super) version: OnceLock<ProtocolVersion>,
    pub(super) routing: Mutex<Routing>,
    pub(super) store: Arc<dyn EventStore>,
    /// Cancelled when the session ends: every stream of it ends.
    pub(super) closed: CancellationToken,
    /// Open HTTP exchanges (POSTs awaiting their answer, SSE streams).
    pub(super) busy: AtomicUsize,
    /// Whether the client sent a request after `initialize` (or the session was adopted
    /// for one): a full table evicts sessions that never did first.
    pub(super) used: std::sync::atomic::AtomicBool,
    pub(super) last_active: Mutex<Instant>,
    /// The principal that started the session, if an authentication layer named one.
    pub(super) owner: Option<SessionOwner>,
    /// With a session store: what of the shared record this engine has been given.
    pub(super) replica: Replica,
    /// With a session store: this instance's id, which tags the requests the engine
    /// sends the client (see `shared::tag`).
    pub(super) instance: Option<Arc<str>>,
    /// With a session store: where its streams' events go for other instances.
    pub(super) outbox: Option<super::shared::Outbox>,
    /// The session's place under the per-client limit (none for an adopted session, or a
    /// client that cannot be told); given back when the session leaves the table.
    pub(super) client: Mutex<Option<ClientSlot>>,
    /// The most bytes one of its streams may hold unread
    /// ([`HttpConfig::stream_max_unread_bytes`](crate::http::HttpConfig::stream_max_unread_bytes)).
    pub(super) max_unread: usize,
}

/// What of its shared record a session's local engine has been given (see `shared`).
#[derive(Default)]
pub(super) struct Replica {
    /// The record version the engine reflects.
    pub(super) synced: AtomicU64,
    /// The log level and subscriptions the engine was given; held while catching up.
    pub(super) applied: tokio::sync::Mutex<Applied>,
}

/// The record's changes a session's engine has applied.
#[derive(Default)]
pub(super) struct Applied {
    pub(super) level: Option<String>,
    pub(super) subscriptions: Vec<String>,
}

/// Counts an open HTTP exchange of a session; its end is activity.
pub(super) struct Busy(Arc<Session>);

impl Busy {
    pub(super) fn new(session: &Arc<Session>) -> Busy {
        session.busy.fetch_add(1, Ordering::SeqCst);
        session.touch();
        Busy(Arc::clone(session))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.touch();
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Session {
    pub(super) fn routing(&self) -> std::sync::MutexGuard<'_, Routing> {
        self.routing.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn touch(&self) {
        *self.last_active.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// How long since the session's last activity.
    pub(super) fn idle_for(&self) -> Duration {
        self.last_active
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
    }

    pub(super) fn expired(&self, idle: Duration) -> bool {
        self.busy.load(Ordering::SeqCst) == 0
            && self
                .last_active
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .elapsed()
                > idle
    }

    pub(super) fn version(&self) -> ProtocolVersion {
        self.version
            .get()
            .copied()
            .unwrap_or(ProtocolVersion::V2025_03_26)
    }

    pub(super) fn key(&self, stream: u64) -> StreamKey {
        StreamKey {
            session: self.id.clone(),
            stream,
        }
    }

    /// End the session: its engine's input closes, its streams end, its events go, its
    /// client's slot is given back.
    pub(super) fn close(&self) {
        self.closed.cancel();
        self.drain();
        self.store.forget_session(&self.id);
    }

    /// Close the engine's input only: its streams end when the engine does (`run_router`).
    /// The session has left the table: its client's slot is given back.
    pub(super) fn drain(&self) {
        self.to_engine
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        self.client.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// Whether the session counts against `client`'s limit.
    pub(super) fn belongs_to(&self, client: &ClientKey) -> bool {
        self.client
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|slot| slot.key() == client)
    }

    /// Write a frame into the engine, with the message read from it when the caller has
    /// one (the engine then does not read the frame again).
    pub(super) async fn write(
        &self,
        frame: Frame,
        message: Option<Message>,
        attachment: Option<Attachment>,
        landmarks: Option<Landmarks>,
    ) -> Result<(), ()> {
        let sender = self
            .to_engine
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match sender {
            Some(sender) => sender
                .send(match (message, attachment) {
                    (Some(message), attachment) => match landmarks {
                        Some(found) => TransportEvent::classified_with_landmarks(
                            frame, message, attachment, found,
                        ),
                        None => TransportEvent::classified(frame, message, attachment),
                    },
                    (None, Some(attachment)) => TransportEvent::attached(frame, attachment),
                    (None, None) => TransportEvent::Frame(frame),
                })
                .await
                .map_err(|_| ()),
            None => Err(()),
        }
    }

    /// Open a POST stream for `ids`.
    pub(super) fn open_post_stream(
        &self,
        ids: &[RequestId],
        tokens: Vec<String>,
        limit: usize,
    ) -> Result<(u64, StreamRx), Response> {
        let mut routing = self.routing();
        if let Some(id) = ids.iter().find(|id| routing.requests.contains_key(id)) {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                Some(id.clone()),
                ErrorObject::invalid_request(format!("request id {id} is already in flight")),
            ));
        }
        if routing.open_streams() >= limit {
            return Err(too_many_streams(limit));
        }
        routing.next_stream += 1;
        let stream = routing.next_stream;
        let (tx, rx) = stream::post_stream(self.max_unread);
        for id in ids {
            routing.requests.insert(id.clone(), stream);
        }
        let shared_ids = match &self.outbox {
            Some(_) => ids.iter().map(ToString::to_string).collect(),
            None => Vec::new(),
        };
        for token in &tokens {
            routing.tokens.insert(token.clone(), stream);
        }
        routing.streams.insert(
            stream,
            PostStream {
                outstanding: ids.len(),
                tokens,
                live: Some(tx),
                streaming: false,
                shared_ids,
            },
        );
        Ok((stream, rx))
    }

    /// Forget a POST stream whose body never reached the engine.
    pub(super) fn abandon(&self, stream: u64) {
        let mut routing = self.routing();
        routing.requests.retain(|_, s| *s != stream);
        routing.remove_stream(stream);
    }

    /// The client cancelled `id`: no response will come, so its stream may end.
    pub(super) fn cancelled(&self, id: &RequestId) {
        let mut routing = self.routing();
        let Some(stream) = routing.requests.remove(id) else {
            return;
        };
        let done = routing.streams.get_mut(&stream).is_some_and(|s| {
            s.outstanding = s.outstanding.saturating_sub(1);
            s.outstanding == 0
        });
        if done
            && let Some(s) = routing.remove_stream(stream)
            && let Some(mut live) = s.live
        {
            let _ = live.try_send(Delivery::End);
        }
    }

    /// A request handler is about to queue `frame` while serving the client's `request`:
    /// remember the request's stream for the frame (called on the handler's task, through
    /// the engine's [`RelatedSink`]).
    pub(super) fn note_related(&self, request: &RequestId, frame: &[u8]) {
        let mut routing = self.routing();
        if let Some(&stream) = routing.requests.get(request) {
            routing
                .related
                .entry(frame_key(frame))
                .or_default()
                .push_back(stream);
        }
    }
}
