//! Which stream a message takes: the router task delivers every frame the engine sends to
//! exactly one HTTP stream (the rules are in the parent module's docs).

use std::collections::VecDeque;
use std::sync::Arc;

use axum::body::Bytes;
use ferry_protocol::RequestId;
use ferry_protocol::read::response_id;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::state::Session;
use super::stream::StreamTx;
use crate::engine::{FastMap, Frame};

/// Where the session's messages go.
#[derive(Default)]
pub(super) struct Routing {
    /// The standalone (GET) stream's number; POST streams count up from it. 0 for a
    /// session of this instance alone; a random base for a shared session, so event ids
    /// of two instances' streams never name each other's (see `store`).
    pub(super) get_stream: u64,
    pub(super) next_stream: u64,
    /// Requests in flight, by id: their POST stream.
    pub(super) requests: FastMap<RequestId, u64>,
    /// Progress tokens (as JSON text) of requests in flight: their POST stream.
    pub(super) tokens: FastMap<String, u64>,
    /// POST streams whose requests are not all answered.
    pub(super) streams: FastMap<u64, PostStream>,
    /// The standalone stream's connection.
    pub(super) standalone: Option<StreamTx>,
    /// Frames request handlers queued and the engine has not yet sent, by a hash of their
    /// bytes: the POST streams of the requests they belong to, in order (see
    /// `Session::note_related`).
    pub(super) related: FastMap<u64, VecDeque<u64>>,
}

pub(super) struct PostStream {
    pub(super) outstanding: usize,
    pub(super) tokens: Vec<String>,
    pub(super) live: Option<StreamTx>,
    /// Whether an event was sent before the response: then the answer is SSE (resumable,
    /// so the response is stored too); else it is one JSON object, never stored.
    pub(super) streaming: bool,
    /// A shared session's: the stream's request ids (JSON), written for other instances
    /// with its first event (a stream answered as JSON has none to resume).
    pub(super) shared_ids: Vec<String>,
}

/// What an HTTP stream gets from the router.
pub(super) enum Delivery {
    /// An event of the stream; `last` after its final response.
    Event { seq: u64, frame: Bytes, last: bool },
    /// The stream ends without a response (its requests were cancelled).
    End,
}

pub(super) fn live(sender: &Option<StreamTx>) -> bool {
    sender.as_ref().is_some_and(|s| !s.is_closed())
}

pub(super) fn frame_key(frame: &[u8]) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(frame)
}

impl Routing {
    /// The stream of the request whose handler queued `frame`, if one did.
    pub(super) fn take_related(&mut self, frame: &[u8]) -> Option<u64> {
        if self.related.is_empty() {
            return None;
        }
        let key = frame_key(frame);
        let queue = self.related.get_mut(&key)?;
        let stream = queue.pop_front();
        if queue.is_empty() {
            self.related.remove(&key);
        }
        stream.filter(|s| self.streams.contains_key(s))
    }

    /// Remove a POST stream (its requests are answered or cancelled).
    pub(super) fn remove_stream(&mut self, stream: u64) -> Option<PostStream> {
        let removed = self.streams.remove(&stream)?;
        for token in &removed.tokens {
            self.tokens.remove(token);
        }
        if !self.related.is_empty() {
            self.related.retain(|_, queue| {
                queue.retain(|s| *s != stream);
                !queue.is_empty()
            });
        }
        Some(removed)
    }

    /// Free the tables' memory when nothing is in flight (after `initialize`: its stream
    /// grew them, and an idle session would keep that capacity for as long as it lives).
    pub(super) fn release_idle(&mut self) {
        if self.requests.is_empty() {
            self.requests.shrink_to_fit();
        }
        if self.streams.is_empty() {
            self.streams.shrink_to_fit();
        }
    }

    pub(super) fn open_streams(&self) -> usize {
        self.streams.values().filter(|s| live(&s.live)).count()
            + usize::from(live(&self.standalone))
    }
}

/// What a frame from the engine is, for routing.
pub(super) enum Kind {
    Responses(Vec<RequestId>),
    Progress(String),
    /// A request (`true`: it gets an answer) or a log message a handler sends.
    FromHandler(bool),
    Other,
}

pub(super) fn classify(frame: &[u8]) -> Kind {
    if let Some(id) = response_id(frame) {
        return Kind::Responses(vec![id]);
    }
    #[derive(Deserialize)]
    struct IdProbe {
        id: Option<RequestId>,
    }
    #[derive(Deserialize)]
    struct Probe {
        id: Option<RequestId>,
        method: Option<String>,
        params: Option<ParamsProbe>,
    }
    #[derive(Deserialize)]
    struct ParamsProbe {
        #[serde(rename = "progressToken")]
        progress_token: Option<Value>,
    }
    if frame.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        let ids = serde_json::from_slice::<Vec<IdProbe>>(frame)
            .map(|entries| entries.into_iter().filter_map(|e| e.id).collect())
            .unwrap_or_default();
        return Kind::Responses(ids);
    }
    let Ok(probe) = serde_json::from_slice::<Probe>(frame) else {
        return Kind::Other;
    };
    match (probe.method.as_deref(), probe.id) {
        (None, Some(id)) => Kind::Responses(vec![id]),
        (Some("notifications/progress"), None) => {
            match probe.params.and_then(|p| p.progress_token) {
                Some(token) => Kind::Progress(token.to_string()),
                None => Kind::Other,
            }
        }
        (Some("notifications/message"), None) => Kind::FromHandler(false),
        (Some(_), Some(_)) => Kind::FromHandler(true),
        _ => Kind::Other,
    }
}

impl Session {
    /// Keep `frame` as the next event of `stream`, for a resumption; nothing once the
    /// session has ended: its events were forgotten, and one kept after that (a call
    /// still running when its client deleted the session) would stay in the store for
    /// good, an entry nobody can resume.
    fn keep(&self, stream: u64, frame: &Bytes) -> u64 {
        if self.closed.is_cancelled() {
            return 0;
        }
        self.store.append(&self.key(stream), frame.clone())
    }

    /// With a session store: an event kept for resumption on another instance too.
    fn share(&self, stream: u64, seq: u64, frame: &Bytes, last: bool) {
        if let Some(outbox) = &self.outbox {
            let event = crate::http::store::StreamEntry::Event {
                seq,
                frame: String::from_utf8_lossy(frame).into_owned(),
                last,
            };
            outbox.send(&self.id, stream, event);
        }
    }

    /// With a session store: a POST stream's first event is coming; other instances
    /// learn which instance runs its requests, and their ids.
    fn share_opened(&self, stream: u64, ids: Vec<String>) {
        if let (Some(outbox), Some(instance)) = (&self.outbox, &self.instance) {
            let opened = crate::http::store::StreamEntry::Opened {
                instance: instance.to_string(),
                ids,
            };
            outbox.send(&self.id, stream, opened);
        }
    }

    /// A POST stream answered with only its priming event (the client will poll): other
    /// instances must know it too, or a resumption there would find nothing.
    pub(super) fn share_primed(&self, stream: u64) {
        if self.outbox.is_none() {
            return;
        }
        let ids = self
            .routing()
            .streams
            .get_mut(&stream)
            .map(|s| std::mem::take(&mut s.shared_ids))
            .unwrap_or_default();
        if !ids.is_empty() {
            self.share_opened(stream, ids);
        }
    }

    /// Deliver one frame from the engine to exactly one stream.
    pub(super) fn route(&self, frame: Frame) {
        let kind = classify(&frame);
        let frame = Bytes::from(frame);
        let mut routing = self.routing();
        let related = match kind {
            Kind::Responses(_) => None,
            _ => routing.take_related(&frame),
        };
        // A shared session's requests to the client carry this instance's id.
        let frame = match (&kind, &self.instance) {
            (Kind::FromHandler(true), Some(instance)) => super::shared::tag(instance, frame),
            _ => frame,
        };
        let target = match kind {
            Kind::Responses(ids) => {
                let mut stream = None;
                let mut answered = 0;
                for id in &ids {
                    if let Some(s) = routing.requests.remove(id) {
                        stream = Some(s);
                        answered += 1;
                    }
                }
                let Some(stream) = stream else {
                    tracing::debug!(session = %self.id, "a response for no request in flight dropped");
                    return;
                };
                let done = routing.streams.get_mut(&stream).is_none_or(|s| {
                    s.outstanding = s.outstanding.saturating_sub(answered);
                    s.outstanding == 0
                });
                if done {
                    let Some(s) = routing.remove_stream(stream) else {
                        return;
                    };
                    // A response that is the stream's only message is answered as JSON,
                    // which has no event id to resume from: keep it out of the store.
                    let seq = if s.streaming {
                        let seq = self.keep(stream, &frame);
                        self.share(stream, seq, &frame, true);
                        seq
                    } else {
                        0
                    };
                    if let Some(mut live) = s.live {
                        let _ = live.try_send(Delivery::Event {
                            seq,
                            frame,
                            last: true,
                        });
                    }
                    return;
                }
                stream
            }
            Kind::Progress(token) => match routing.tokens.get(&token) {
                Some(stream) => *stream,
                None => related.unwrap_or_else(|| fallback(&routing)),
            },
            Kind::FromHandler(_) => related.unwrap_or_else(|| {
                let mut busy = routing.streams.iter().filter(|(_, s)| s.outstanding > 0);
                match (busy.next(), busy.next()) {
                    (Some((stream, _)), None) => *stream,
                    _ => fallback(&routing),
                }
            }),
            Kind::Other => related.unwrap_or_else(|| fallback(&routing)),
        };
        if let Some(s) = routing.streams.get_mut(&target)
            && !s.streaming
            && !s.shared_ids.is_empty()
        {
            self.share_opened(target, std::mem::take(&mut s.shared_ids));
        }
        let seq = self.keep(target, &frame);
        self.share(target, seq, &frame, false);
        let delivery = Delivery::Event {
            seq,
            frame,
            last: false,
        };
        let slot = if target == routing.get_stream {
            &mut routing.standalone
        } else {
            match routing.streams.get_mut(&target) {
                Some(s) => {
                    s.streaming = true;
                    &mut s.live
                }
                None => return,
            }
        };
        if let Some(live) = slot
            && live.try_send(delivery).is_err()
        {
            // Gone or too far behind: the client may resume from the store.
            *slot = None;
        }
    }
}

/// Rule 4: the GET stream if connected, else the newest connected POST stream, else the
/// GET stream's log.
pub(super) fn fallback(routing: &Routing) -> u64 {
    if live(&routing.standalone) {
        return routing.get_stream;
    }
    routing
        .streams
        .iter()
        .filter(|(_, s)| live(&s.live))
        .map(|(n, _)| *n)
        .max()
        .unwrap_or(routing.get_stream)
}

/// The router task: every frame the engine sends, to its stream; when the engine ends, the
/// session's streams end.
pub(super) async fn run_router(session: Arc<Session>, mut from_engine: mpsc::Receiver<Frame>) {
    while let Some(frame) = from_engine.recv().await {
        session.route(frame);
    }
    session.closed.cancel();
    let mut routing = session.routing();
    routing.streams.clear();
    routing.related.clear();
    routing.standalone = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(kind: Kind) -> Option<Vec<RequestId>> {
        match kind {
            Kind::Responses(ids) => Some(ids),
            _ => None,
        }
    }

    #[test]
    fn responses_read_from_the_head_as_the_general_probe_reads_them() {
        let frames: &[&[u8]] = &[
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#,
            br#"{"jsonrpc":"2.0","id":-3,"error":{"code":-32601,"message":"x"}}"#,
            br#"{"jsonrpc":"2.0","id":"a-1","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":"a\"b","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}"#,
            br#"{"id":4,"jsonrpc":"2.0","result":{}}"#,
            br#"[{"jsonrpc":"2.0","id":5,"result":{}}]"#,
        ];
        for frame in frames {
            let fast = response_id(frame);
            let general = {
                // The general probe alone: a frame the fast path does not take.
                let mut spaced = b" ".to_vec();
                spaced.extend_from_slice(frame);
                ids(classify(&spaced))
            };
            if let Some(id) = fast {
                assert_eq!(
                    Some(vec![id]),
                    general,
                    "{}",
                    String::from_utf8_lossy(frame)
                );
            }
            assert_eq!(
                ids(classify(frame)),
                general,
                "{}",
                String::from_utf8_lossy(frame)
            );
        }
    }
}
