//! `GET`: the standalone stream, or the resumption of any stream with `Last-Event-ID`.

use std::collections::VecDeque;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use ferry_protocol::ProtocolVersion;
use ferry_protocol::jsonrpc::ErrorObject;

use super::answer::{Ends, sse_response};
use super::checks::{
    bad_request, check_version, method_not_allowed, standalone_conflict, too_many_streams,
};
use super::router::live;
use super::state::Busy;
use super::{LAST_EVENT_ID, SESSION_ID};
use crate::http::Shared;
use crate::http::events::{self, ReplayError};
use crate::http::owner::SessionOwner;
use crate::http::stateless::error_response;

/// `GET` on the endpoint: the standalone stream, or the resumption of any stream.
pub(crate) async fn get(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let headers = request.headers();
    if !headers.contains_key(SESSION_ID) {
        return method_not_allowed();
    }
    let accepts_sse = headers.get_all(header::ACCEPT).iter().any(|v| {
        v.to_str().unwrap_or("").split(',').any(|r| {
            matches!(
                r.split(';').next().unwrap_or("").trim(),
                "text/event-stream" | "text/*" | "*/*"
            )
        })
    });
    if !accepts_sse {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorObject::invalid_request("the Accept header must list text/event-stream"),
        );
    }
    let owner = request.extensions().get::<SessionOwner>();
    let session = match super::shared::session_of(&shared, headers, owner).await {
        Ok(session) => session,
        Err(response) => return response,
    };
    if let Err(response) = check_version(&shared, headers, &session) {
        return response;
    }
    let busy = Busy::new(&session);
    let limit = shared.config.max_streams_per_session;
    let (tx, rx) = super::stream::many(shared.config.stream_max_unread_bytes);
    let mut pending = VecDeque::new();
    let resume = headers
        .get(LAST_EVENT_ID)
        .map(|v| v.to_str().ok().and_then(events::parse_event_id));
    let (stream, done) = match resume {
        Some(None) => return bad_request("Bad Request: malformed Last-Event-ID"),
        Some(Some((stream, after))) => {
            let ours = {
                let routing = session.routing();
                stream >= routing.get_stream && stream <= routing.next_stream
            };
            if !ours {
                // Shared: perhaps a stream another instance sent.
                return super::shared::resume_elsewhere(&shared, session, stream, after, busy)
                    .await;
            }
            let mut routing = session.routing();
            let replay = match session.store.replay(&session.key(stream), after) {
                Ok(replay) => replay,
                Err(ReplayError::UnknownStream) => {
                    drop(routing);
                    return bad_request(
                        "Bad Request: Last-Event-ID names no event of this session",
                    );
                }
                Err(ReplayError::Evicted) => {
                    drop(routing);
                    return error_response(
                        StatusCode::GONE,
                        None,
                        ErrorObject::invalid_request(
                            "events after Last-Event-ID are no longer kept; they cannot be replayed",
                        ),
                    );
                }
            };
            let open = if stream == routing.get_stream {
                Some(&mut routing.standalone)
            } else {
                routing.streams.get_mut(&stream).map(|s| &mut s.live)
            };
            // Reattach the stream (replacing a connection the client has given up on), or
            // end after the replay when the stream is finished.
            let done = match open {
                Some(slot) => {
                    *slot = Some(tx);
                    false
                }
                None => true,
            };
            pending.extend(
                replay
                    .iter()
                    .map(|(seq, frame)| events::event(stream, *seq, frame)),
            );
            (stream, done)
        }
        None => {
            let mut routing = session.routing();
            if live(&routing.standalone) {
                drop(routing);
                return standalone_conflict();
            }
            if routing.open_streams() >= limit {
                drop(routing);
                return too_many_streams(limit);
            }
            routing.standalone = Some(tx);
            let standalone = routing.get_stream;
            if session.version() >= ProtocolVersion::V2025_11_25 {
                let last = session.store.last(&session.key(standalone));
                pending.push_back(events::priming(standalone, last, shared.config.sse_retry));
            }
            (standalone, false)
        }
    };
    let ends = if done {
        Ends::AfterPending
    } else {
        Ends::AtResponse
    };
    sse_response(&shared, session, stream, rx, pending, ends, busy)
}
