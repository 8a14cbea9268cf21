//! The session era of Streamable HTTP (2025-03-26, 2025-06-18, 2025-11-25) on the same
//! endpoint as the stateless era.
//!
//! **Sessions.** A POSTed `initialize` starts a session: one long-lived engine
//! (`Server::serve` on a channel transport) and a router task that takes every frame the
//! engine sends and delivers it to exactly one HTTP stream. The `initialize` response
//! carries `MCP-Session-Id` (128 bits from the OS CSPRNG, as 32 hex digits). Every later
//! request must carry it: without it 400, with an unknown or expired one 404. `DELETE` with
//! the header ends the session (its engine's input is closed; in-flight handlers get the
//! engine's shutdown grace). `GET`/`DELETE` without the header are 405 (there is no
//! standalone stream without a session).
//!
//! **POST.** Notifications and responses (to the server's requests) are written into the
//! engine and answered 202. A body with requests opens a POST stream: if the first thing
//! the engine sends for it is the response (the usual case), the answer is one JSON object;
//! otherwise the answer is SSE (a priming event for 2025-11-25 sessions, then the related
//! messages, then the response, then the end). Batches are accepted on 2025-03-26 sessions
//! only (their responses come back as one JSON array). A client closing a POST does not
//! cancel its request (session era); `notifications/cancelled` does, and ends its stream.
//!
//! **Which stream a message takes** (each message goes to exactly one):
//!
//! 1. a response: the POST stream that carried its request;
//! 2. `notifications/progress`: the POST stream whose request carried that
//!    `progressToken`;
//! 3. anything a request handler sends while it runs (a server request — sampling,
//!    elicitation, roots —, a log message, any notification): the POST stream of the
//!    request it serves, however many are in flight. The engine runs each handler in a
//!    scope naming its request and shows every frame the handler queues to the session
//!    (`engine::RelatedSink`), which notes the frame's stream under a hash of its bytes.
//!    Frames sent from tasks a handler spawns itself are outside that scope: a server
//!    request or log message among those goes to the one POST stream with requests in
//!    flight if there is exactly one, otherwise as 4;
//! 4. anything else (list changes, resource updates, …): the standalone GET stream if one
//!    is connected; else the most recently opened POST stream still connected; else the
//!    GET stream's event log, for a client resuming it with `Last-Event-ID`.
//!
//! **GET.** Opens the standalone stream (one per session at a time; a second is 409). It
//! never carries responses, except when a GET resumes a POST stream.
//!
//! **Resumability.** Every SSE event has the id `{stream}-{seq}` (see [`super::events`])
//! and is kept in the [`EventStore`] before it is sent. A GET with `Last-Event-ID` replays
//! exactly the events of that stream after the cursor, then continues it live (the GET
//! stream, or a POST stream still waiting for its response) or ends (a finished POST
//! stream). Events the store has evicted make the replay inexact: 410 instead.
//!
//! **Polling** (SEP-1699, off by default: [`super::HttpConfig::sse_poll_after`]). On a
//! 2025-11-25 session a POST stream quiet for that long before its response is closed (a
//! request with nothing to send yet gets an SSE answer with only its priming event); the
//! client resumes it with `GET` and `Last-Event-ID` as above, and the resumed stream stays
//! open until the response.
//!
//! **`MCP-Protocol-Version`.** Missing: assumed to be 2025-03-26. Not a session-era
//! revision this server supports: 400. Newer than the session's: 400. The negotiated
//! revision or an older supported one: accepted (real clients send older ones).
//!
//! **Limits** (see [`super::HttpConfig`]): sessions (default 10,000; 503 beyond), sessions
//! per client (default 1,000, counted with the HTTP+SSE ones; 429 beyond), open
//! streams per session (default 32: POSTs awaiting their answer and GET streams; 429
//! beyond), idle time (default 30 minutes without any open request or stream; the session
//! then ends and its id gets 404). Every SSE stream gets a keep-alive comment after
//! [`super::HttpConfig::sse_keep_alive`] of silence. When `serve_with_shutdown`'s signal
//! fires, every session is drained: its engine's input closes, requests in flight still get
//! their responses (within the engine's shutdown grace), then its streams end.

//! **Files.** `registry` (every session, expiry, shutdown), `state` (one session),
//! `router` (which stream a message takes), `stream` (the channel to one HTTP stream),
//! `shared` (sessions shared with other instances: adoption, records), `task_store` (their
//! tasks in the session store), `post` (`initialize`
//! and later POSTs),
//! `answer` (JSON or SSE answers, keep-alives, polling), `get_stream` (GET and
//! resumption), `delete`, `checks` (session lookup, version rules, refusals).

// Refusals are whole HTTP responses, returned once per request: their size does not matter.
#![allow(clippy::result_large_err)]

mod answer;
mod checks;
mod data_store;
mod delete;
mod get_stream;
mod post;
mod posted;
mod registry;
mod router;
mod shared;

pub(crate) use shared::listen;
mod state;
mod stream;
mod task_store;

use axum::http::{HeaderMap, HeaderName};
use ferry_protocol::types::keys;
use serde_json::Value;

pub(crate) use delete::delete;
pub(crate) use get_stream::get;
pub(crate) use post::post;
pub(crate) use posted::{Posted, landmarks_of};
pub(crate) use registry::{Sessions, make_room, make_room_for, new_session_id};

/// `MCP-Session-Id` (a `HeaderName` constant: a `&str` name is parsed at every lookup).
pub(crate) const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
/// Events queued for one HTTP stream; a client this far behind is disconnected (it may
/// resume from the event store), as one with more than
/// [`super::HttpConfig::stream_max_unread_bytes`] unread is.
const STREAM_QUEUE: usize = 1024;

/// Whether a POST belongs to the session era: batches, responses, `initialize`, requests
/// without a stateless revision (in `_meta` or the header), and notifications carrying a
/// session id.
pub(crate) fn claims(headers: &HeaderMap, message: &Value) -> bool {
    let Value::Object(object) = message else {
        return true;
    };
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return true;
    };
    let stateless_meta = object
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(keys::PROTOCOL_VERSION))
        .is_some();
    if stateless_request(headers, method, stateless_meta) {
        return false;
    }
    object.contains_key("id") || headers.contains_key(SESSION_ID)
}

/// Whether a request with `method` is a stateless-era one: `server/discover`, a protocol
/// version in its `_meta` (`meta_version`), or a stateless revision in the header.
pub(crate) fn stateless_request(headers: &HeaderMap, method: &str, meta_version: bool) -> bool {
    method == "server/discover" || meta_version || posted::stateless_header(headers)
}
