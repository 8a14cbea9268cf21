//! Session-era POSTs: `initialize` (a new session) and every later message (202 for
//! notifications and responses, a POST stream for requests).

use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use ferry_protocol::jsonrpc::{ErrorObject, Message, Rejected};
use ferry_protocol::read::Landmarks;
use ferry_protocol::{Feature, ProtocolVersion, RequestId};
use serde::Deserialize;

use super::SESSION_ID;
use super::answer::{self, answer};
use super::checks::{bad_request, check_version, unknown_session};
use super::posted::{Posted, Shape};
use super::registry::{new_session_id, start_sweeper};
use super::router::Delivery;
use super::shared;
use super::state::Busy;
use crate::http::Shared;
use crate::http::clients::{self, ClientKey};
use crate::http::owner::RequestData;
use crate::http::stateless::error_response;
use crate::http::store::MAX_RECORDED_INITIALIZE_BYTES;

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
        landmarks,
    } = posted;
    let (rejected, batch) = match shape {
        Shape::Initialize(Some(id)) => {
            return initialize(shared, headers, bytes, message, id, data, landmarks).await;
        }
        Shape::Initialize(None) => return bad_request("initialize must be a request with an id"),
        Shape::Single(rejected) => (rejected, None),
        Shape::Batch(entries) => (None, Some(entries)),
    };
    // Without a session, what is wrong with the message itself is said first: a batch
    // (no stateless revision has batches), or a message that is no valid request; only a
    // valid request hears that it needs a session (or the 2026-07-28 `_meta`).
    if !headers.contains_key(SESSION_ID) {
        if batch.is_some() {
            return bad_request(
                "JSON-RPC batches are accepted in 2025-03-26 sessions only, and this request \
                 names no session",
            );
        }
        if let Some(rejected) = rejected {
            return invalid_message(rejected);
        }
    }
    let session = match shared::session_of(shared, headers, data.owner.as_ref()).await {
        Ok(session) => session,
        Err(response) => return response,
    };
    if let Err(response) = check_version(shared, headers, &session) {
        return response;
    }
    // A single message the server cannot accept (not a valid request, notification or
    // response) gets an HTTP error status with its JSON-RPC error, never a silent 202.
    if let Some(rejected) = rejected {
        return invalid_message(rejected);
    }
    let busy = Busy::new(&session);
    if !ids.is_empty() {
        session
            .used
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
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
    if let Some(store) = &shared.config.session_store
        && let Some(change) = shared::change_of(&bytes)
    {
        match store.update(&session.id, &change).await {
            Ok(Some(version)) => {
                shared::changed(&session, &change, version).await;
                shared::tell_record_changed(shared, store.as_ref(), &session.id).await;
            }
            Ok(None) => return unknown_session(),
            Err(e) => return shared::unavailable(&e),
        }
    }
    if ids.is_empty() {
        // A shared session: answers find the instance that asked, cancellations every one.
        let (frame, message, landmarks) = match &shared.config.session_store {
            Some(store) if batch.is_none() => {
                match shared::route_posted(shared, store.as_ref(), &session, &bytes).await {
                    Ok(Some(frame)) if *frame == *bytes => (frame, message, landmarks),
                    Ok(Some(frame)) => (frame, None, None),
                    Ok(None) => return StatusCode::ACCEPTED.into_response(),
                    Err(e) => return shared::unavailable(&e),
                }
            }
            _ => (bytes.to_vec(), message, landmarks),
        };
        if session
            .write(frame, message, data.attachment, landmarks)
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
        .write(bytes.to_vec(), message, data.attachment, landmarks)
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

/// 400 with the JSON-RPC error of a message that is no valid request, notification or
/// response.
fn invalid_message(rejected: Rejected) -> Response {
    let response = rejected.response;
    error_response(StatusCode::BAD_REQUEST, response.id, response.error)
}

/// `initialize`: a new session, answered with its id.
pub(super) async fn initialize(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    bytes: Bytes,
    message: Option<Message>,
    id: RequestId,
    data: RequestData,
    landmarks: Option<Landmarks>,
) -> Response {
    let store = shared.config.session_store.as_deref();
    if store.is_some() && bytes.len() > MAX_RECORDED_INITIALIZE_BYTES {
        return bad_request(format!(
            "initialize is over {MAX_RECORDED_INITIALIZE_BYTES} bytes: too large to be shared \
             between this server's instances"
        ));
    }
    let client = ClientKey::of(&shared.config, &data, headers);
    let slot = match clients::admit(shared, client) {
        Ok(slot) => slot,
        Err(response) => return response,
    };
    shared::listen(shared).await;
    let session = match shared::start(shared, new_session_id(), data.owner) {
        Ok(session) => session,
        Err(response) => return response,
    };
    *session.client.lock().unwrap_or_else(|e| e.into_inner()) = slot;
    shared
        .sessions
        .map()
        .insert(session.id.clone(), Arc::clone(&session));
    start_sweeper(shared);
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
        .write(bytes.to_vec(), message, data.attachment, landmarks)
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
    // An idle session should hold no table sized for initialize's stream.
    session.routing().release_idle();
    if let Some(store) = store
        && let Err(e) = shared::record(shared, store, &session, version, &bytes).await
    {
        return end(shared::unavailable(&e));
    }
    let mut response = answer::only(shared, frame);
    if let Ok(value) = HeaderValue::from_str(&session.id) {
        response.headers_mut().insert(SESSION_ID, value);
    }
    response
}
