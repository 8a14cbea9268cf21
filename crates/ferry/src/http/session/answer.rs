//! A POST stream's answer (one JSON object, or SSE) and the SSE responses of every
//! session-era stream, with keep-alives and polling.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ferry_protocol::ProtocolVersion;
use ferry_protocol::jsonrpc::ErrorObject;
use tokio_util::sync::CancellationToken;

use super::router::Delivery;
use super::state::{Busy, Session};
use super::stream::StreamRx;
use crate::http::events;
use crate::http::stateless::error_response;
use crate::http::{Shared, sse};

/// Answer a POST stream: one JSON object if the response comes first (unless
/// [`crate::http::HttpConfig::sse_responses`]), else SSE.
pub(super) async fn answer(
    shared: &Shared,
    session: Arc<Session>,
    stream: u64,
    mut rx: StreamRx,
    busy: Busy,
) -> Response {
    let poll = poll_after(shared, &session);
    let first = tokio::select! {
        first = rx.recv() => first,
        () = session.closed.cancelled() => None,
        () = quiet_for(poll) => {
            // Nothing to send yet: the priming event, then the client polls.
            session.share_primed(stream);
            let priming = events::priming(stream, 0, shared.config.sse_retry);
            let pending = VecDeque::from([priming]);
            return sse_response(shared, session, stream, rx, pending, Ends::AfterPending, busy);
        }
    };
    let (seq, frame, last) = match first {
        Some(Delivery::Event {
            frame, last: true, ..
        }) if !shared.config.sse_responses => return json(frame),
        Some(Delivery::Event { seq, frame, last }) => (seq, frame, last),
        Some(Delivery::End) => return StatusCode::ACCEPTED.into_response(),
        None => {
            return error_response(
                StatusCode::NOT_FOUND,
                None,
                ErrorObject::new(-32001, "the session ended before the response"),
            );
        }
    };
    let primed = session.version() >= ProtocolVersion::V2025_11_25;
    if last {
        // Every event is known (`sse_responses`): one body with a length, written at once,
        // instead of a chunked stream polled event by event.
        let mut body = Vec::with_capacity(frame.len() + 128);
        if primed {
            events::write_priming(&mut body, stream, 0, shared.config.sse_retry);
        }
        events::write_event(&mut body, stream, seq, &frame);
        let mut response = Response::new(Body::from(body));
        sse::complete_headers(&mut response);
        return response;
    }
    let mut pending = VecDeque::new();
    if primed {
        pending.push_back(events::priming(stream, 0, shared.config.sse_retry));
    }
    pending.push_back(events::event(stream, seq, &frame));
    let ends = poll.map_or(Ends::AtResponse, Ends::AtResponseOrQuiet);
    sse_response(shared, session, stream, rx, pending, ends, busy)
}

/// How long a POST stream of `session` may stay quiet before it is closed for the client
/// to poll: [`crate::http::HttpConfig::sse_poll_after`], for 2025-11-25 sessions (their clients
/// reconnect to a stream closed after its priming event).
pub(super) fn poll_after(shared: &Shared, session: &Session) -> Option<Duration> {
    shared
        .config
        .sse_poll_after
        .filter(|_| session.version() >= ProtocolVersion::V2025_11_25)
}

/// Completes after `quiet` (never without one).
pub(super) async fn quiet_for(quiet: Option<Duration>) {
    match quiet {
        Some(quiet) => tokio::time::sleep(quiet).await,
        None => std::future::pending().await,
    }
}

/// A stream's one message: one JSON object, or (with
/// [`crate::http::HttpConfig::sse_responses`]) an SSE stream of one event. For answers no
/// stream of the session can resume (`initialize`'s).
pub(super) fn only(shared: &Shared, frame: Bytes) -> Response {
    if !shared.config.sse_responses {
        return json(frame);
    }
    let mut response = Response::new(Body::from(sse::event(&frame)));
    sse::complete_headers(&mut response);
    response
}

pub(super) fn json(frame: Bytes) -> Response {
    let mut response = (StatusCode::OK, frame).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// When an SSE response ends (besides at the session's end).
pub(super) enum Ends {
    /// Right after its pending events.
    AfterPending,
    /// After the stream's last event (its final response).
    AtResponse,
    /// After the last event, or after this long without an event (a POST's own stream,
    /// polling: see [`poll_after`]).
    AtResponseOrQuiet(Duration),
}

/// An SSE response: `pending` first, then what the router delivers, with keep-alives,
/// until it [`Ends`].
pub(super) fn sse_response(
    shared: &Shared,
    session: Arc<Session>,
    stream: u64,
    rx: StreamRx,
    pending: VecDeque<Bytes>,
    ends: Ends,
    busy: Busy,
) -> Response {
    struct Sse {
        rx: StreamRx,
        stream: u64,
        pending: VecDeque<Bytes>,
        ticks: tokio::time::Interval,
        closed: CancellationToken,
        done: bool,
        poll: Option<Duration>,
        quiet: std::pin::Pin<Box<tokio::time::Sleep>>,
        _busy: Busy,
    }
    let keep_alive = shared.config.sse_keep_alive;
    let (done, poll) = match ends {
        Ends::AfterPending => (true, None),
        Ends::AtResponse => (false, None),
        Ends::AtResponseOrQuiet(quiet) => (false, Some(quiet)),
    };
    let quiet_until = tokio::time::Instant::now() + poll.unwrap_or(Duration::ZERO);
    let state = Sse {
        rx,
        stream,
        pending,
        ticks: tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive),
        closed: session.closed.clone(),
        done,
        poll,
        quiet: Box::pin(tokio::time::sleep_until(quiet_until)),
        _busy: busy,
    };
    let body = futures_util::stream::unfold(state, |mut s| async move {
        if let Some(bytes) = s.pending.pop_front() {
            return Some((Ok::<_, Infallible>(bytes), s));
        }
        if s.done {
            return None;
        }
        let bytes = tokio::select! {
            delivery = s.rx.recv() => match delivery {
                Some(Delivery::Event { seq, frame, last }) => {
                    s.done = last;
                    if let Some(poll) = s.poll {
                        s.quiet.as_mut().reset(tokio::time::Instant::now() + poll);
                    }
                    events::event(s.stream, seq, &frame)
                }
                Some(Delivery::End) | None => return None,
            },
            _ = s.ticks.tick() => sse::keep_alive(),
            () = s.closed.cancelled() => return None,
            () = s.quiet.as_mut(), if s.poll.is_some() => return None,
        };
        Some((Ok(bytes), s))
    });
    let mut response = Response::new(Body::from_stream(body));
    sse::headers(&mut response);
    response
}
