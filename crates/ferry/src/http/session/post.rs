//! Session-era POSTs: `initialize` (a new session) and every later message (202 for
//! notifications and responses, a POST stream for requests).

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use ferry_protocol::jsonrpc::{ErrorObject, Message};
use ferry_protocol::{Feature, ProtocolVersion, RequestId};
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::SESSION_ID;
use super::answer::{self, answer};
use super::checks::{bad_request, check_version, session_of, unknown_session};
use super::posted::{Posted, Shape};
use super::registry::{new_session_id, sweep};
use super::router::{Delivery, run_router};
use super::state::{Busy, Session};
use crate::engine::{RelatedSink, Transport};
use crate::http::Shared;
use crate::http::owner::RequestData;
use crate::http::stateless::error_response;

/// A session-era POST (`claims` or [`Posted::classified`] said so).
pub(crate) async fn post(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    data: RequestData,
    bytes: Bytes,
    posted: Posted,
) -> Response {
    let Posted {
        shape,
        ids,
        tokens,
        cancelled,
        refused,
        message,
    } = posted;
    let (rejected, batch) = match shape {
        Shape::Initialize(Some(id)) => return initialize(shared, bytes, message, id, data).await,
        Shape::Initialize(None) => return bad_request("initialize must be a request with an id"),
        Shape::Single(rejected) => (rejected, None),
        Shape::Batch(entries) => (None, Some(entries)),
    };
    let session = match session_of(shared, headers, data.owner.as_ref()) {
        Ok(session) => session,
        Err(response) => return response,
    };
    if let Err(response) = check_version(shared, headers, &session) {
        return response;
    }
    // A single message the server cannot accept (not a valid request, notification or
    // response) gets an HTTP error status with its JSON-RPC error, never a silent 202.
    if let Some(rejected) = rejected {
        let response = rejected.response;
        return error_response(StatusCode::BAD_REQUEST, response.id, response.error);
    }
    let busy = Busy::new(&session);
    if let Some(entries) = batch {
        if !session.version().has(Feature::Batches) {
            return bad_request(format!(
                "JSON-RPC batches are accepted in 2025-03-26 sessions only (this one is {})",
                session.version()
            ));
        }
        if entries == 0 {
            return bad_request("an empty batch");
        }
    }
    if let Some(refused) = refused {
        return bad_request(refused);
    }
    if ids.is_empty() {
        if session
            .write(bytes.to_vec(), message, data.attachment)
            .await
            .is_err()
        {
            return unknown_session();
        }
        for id in &cancelled {
            session.cancelled(id);
        }
        return StatusCode::ACCEPTED.into_response();
    }
    let (stream, rx) =
        match session.open_post_stream(&ids, tokens, shared.config.max_streams_per_session) {
            Ok(opened) => opened,
            Err(response) => return response,
        };
    if session
        .write(bytes.to_vec(), message, data.attachment)
        .await
        .is_err()
    {
        session.abandon(stream);
        return unknown_session();
    }
    for id in &cancelled {
        session.cancelled(id);
    }
    answer(shared, session, stream, rx, busy).await
}

/// `initialize`: a new session, answered with its id.
pub(super) async fn initialize(
    shared: &Arc<Shared>,
    bytes: Bytes,
    message: Option<Message>,
    id: RequestId,
    data: RequestData,
) -> Response {
    super::make_room(shared);
    let session = {
        let mut map = shared.sessions.map();
        if shared.sessions.shutdown.is_cancelled() {
            return error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                ErrorObject::internal_error("the server is shutting down"),
            );
        }
        if map.len() + shared.legacy.len() >= shared.config.max_sessions {
            return error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                ErrorObject::internal_error(format!(
                    "too many sessions (limit {}); try again later",
                    shared.config.max_sessions
                )),
            );
        }
        let (to_engine, incoming) = mpsc::channel(32);
        let (outgoing, from_engine) = mpsc::channel(shared.server.inner.engine.write_queue.max(1));
        let session = Arc::new(Session {
            id: new_session_id(),
            to_engine: Mutex::new(Some(to_engine)),
            version: OnceLock::new(),
            routing: Mutex::default(),
            store: Arc::clone(&shared.sessions.store),
            closed: CancellationToken::new(),
            busy: AtomicUsize::new(0),
            last_active: Mutex::new(Instant::now()),
            owner: data.owner,
        });
        let weak = Arc::downgrade(&session);
        let related = RelatedSink::new(move |request, frame| {
            if let Some(session) = weak.upgrade() {
                session.note_related(request, frame);
            }
        });
        // The engine ends once its input closes (`Session::close`); the router after it.
        shared.backend.connect(
            crate::http::Connection::Session,
            Transport::new(incoming, outgoing).with_related(related),
        );
        tokio::spawn(run_router(Arc::clone(&session), from_engine));
        map.insert(session.id.clone(), Arc::clone(&session));
        session
    };
    let idle = shared.config.session_idle_timeout;
    let weak = Arc::downgrade(shared);
    shared.sessions.sweeper.call_once(|| {
        let every = (idle / 2).clamp(Duration::from_millis(10), Duration::from_secs(30));
        tokio::spawn(sweep(weak, every));
    });
    let busy = Busy::new(&session);
    let end = |response: Response| {
        if let Some(session) = shared.sessions.remove(&session.id) {
            session.close();
        }
        response
    };
    let (_stream, mut rx) = match session.open_post_stream(std::slice::from_ref(&id), Vec::new(), 1)
    {
        Ok(opened) => opened,
        Err(response) => return end(response),
    };
    if session
        .write(bytes.to_vec(), message, data.attachment)
        .await
        .is_err()
    {
        return end(unknown_session());
    }
    let frame = loop {
        match rx.recv().await {
            Some(Delivery::Event {
                frame, last: true, ..
            }) => break frame,
            Some(Delivery::Event { .. }) => {}
            Some(Delivery::End) | None => {
                return end(error_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Some(id),
                    ErrorObject::internal_error("initialize ended without a response"),
                ));
            }
        }
    };
    drop(busy);
    #[derive(Deserialize)]
    struct Answer {
        result: Option<Negotiated>,
    }
    #[derive(Deserialize)]
    struct Negotiated {
        #[serde(rename = "protocolVersion")]
        protocol_version: String,
    }
    let version = serde_json::from_slice::<Answer>(&frame)
        .ok()
        .and_then(|a| a.result)
        .and_then(|r| r.protocol_version.parse::<ProtocolVersion>().ok());
    let Some(version) = version else {
        // A refused initialize starts no session.
        return end(answer::only(shared, frame));
    };
    let _ = session.version.set(version);
    // An idle session should hold no table sized for initialize's stream (~360 bytes).
    session.routing().release_idle();
    let mut response = answer::only(shared, frame);
    if let Ok(value) = HeaderValue::from_str(&session.id) {
        response.headers_mut().insert(SESSION_ID, value);
    }
    response
}
