//! Reading an SSE response: each `message` event's data is one JSON-RPC message for the
//! engine; event ids and `retry` are remembered for resumption.
//!
//! Parsing is `sse-stream`'s (chosen over `eventsource-stream` because it yields events
//! without data too: the priming event of 2025-11-25 carries only an `id` and a `retry`,
//! both needed to resume). What it does not do, bound memory, is done here: a server that
//! sends more than the message limit without completing an event is cut off.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferry_protocol::RequestId;
use futures_util::{Stream, StreamExt, TryStreamExt};
use reqwest::Response;
use serde::Deserialize;
use serde::de::IgnoredAny;
use sse_stream::{Sse, SseStream};

use super::shared::{Failure, Shared, describe};

/// Where a stream stands, for resuming it.
#[derive(Debug)]
pub(crate) struct Cursor {
    /// The last event id seen.
    pub(crate) last_id: Option<String>,
    /// The reconnection delay (the server's `retry`, or the configured default).
    pub(crate) retry: Duration,
}

impl Cursor {
    pub(crate) fn new(retry: Duration) -> Cursor {
        Cursor {
            last_id: None,
            retry,
        }
    }
}

/// How a stream ended.
pub(crate) enum End {
    /// The response to the awaited request (not delivered: the caller does).
    Response(Vec<u8>),
    /// The server ended the stream.
    Closed,
    /// The stream broke (connection lost, malformed or oversized event).
    Broken(String),
}

/// The events of `response`, each at most `max` bytes.
pub(crate) fn events(
    response: Response,
    max: usize,
) -> impl Stream<Item = Result<Sse, sse_stream::Error>> + Send + Unpin + 'static {
    let pending = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&pending);
    let bytes = response
        .bytes_stream()
        .map_err(|e| std::io::Error::other(describe(&e)))
        .and_then(move |chunk| {
            let total = counter.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len();
            let result = if total > max {
                Err(std::io::Error::other(format!(
                    "an event exceeds the limit of {max} bytes"
                )))
            } else {
                Ok(chunk)
            };
            std::future::ready(result)
        })
        // Handed over a line at a time: sse-stream parses a whole chunk before it yields
        // the events completed in it, so a line it refuses lost the events before it in
        // the same chunk, and what the client read depended on where the network cut the
        // stream (found by the `sse_reader` fuzz target).
        .map_ok(|chunk| futures_util::stream::iter(lines(chunk).map(Ok::<_, std::io::Error>)))
        .try_flatten();
    SseStream::from_bytes_stream(bytes).inspect(move |_| pending.store(0, Ordering::Relaxed))
}

/// `chunk` in pieces, each ending after a line break (`\n` or `\r`) but the last.
fn lines(chunk: bytes::Bytes) -> impl Iterator<Item = bytes::Bytes> + Send {
    let mut rest = chunk;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .iter()
            .position(|b| matches!(b, b'\n' | b'\r'))
            .map_or(rest.len(), |at| at + 1);
        Some(rest.split_to(end))
    })
}

#[derive(Deserialize)]
struct Probe {
    id: Option<RequestId>,
    method: Option<IgnoredAny>,
}

/// The id of `data` when it is a response (an id and no method).
pub(crate) fn response_id(data: &[u8]) -> Option<RequestId> {
    let probe = serde_json::from_slice::<Probe>(data).ok()?;
    if probe.method.is_some() {
        return None;
    }
    probe.id
}

/// Whether `data` is the response to `id`.
pub(crate) fn answers(data: &[u8], id: &RequestId) -> bool {
    response_id(data).as_ref() == Some(id)
}

/// The next event of `events`, or how the stream ended (also when the connection closes).
pub(crate) async fn next_event(
    shared: &Shared,
    events: &mut (impl Stream<Item = Result<Sse, sse_stream::Error>> + Unpin),
) -> Result<Sse, End> {
    tokio::select! {
        event = events.next() => match event {
            None => Err(End::Closed),
            Some(Err(e)) => Err(End::Broken(e.to_string())),
            Some(Ok(event)) => Ok(event),
        },
        () = shared.closed.cancelled() => Err(End::Broken("the connection is closing".into())),
    }
}

/// The JSON-RPC message an event carries: the data of a `message` event (the default
/// type), unless empty.
pub(crate) fn message_data(event: Sse) -> Option<Vec<u8>> {
    if event.event.as_deref().is_some_and(|e| e != "message") {
        return None;
    }
    event
        .data
        .filter(|d| !d.trim().is_empty())
        .map(String::into_bytes)
}

/// Read `response`'s events: deliver each message to the engine, except the response to
/// `awaited`, which ends the reading and is returned.
pub(crate) async fn read(
    shared: &Shared,
    response: Response,
    awaited: Option<&RequestId>,
    cursor: &mut Cursor,
) -> End {
    let events = events(response, shared.config.max_message_bytes);
    read_events(shared, events, awaited, cursor).await
}

/// [`read`] on a stream of events already opened.
pub(crate) async fn read_events(
    shared: &Shared,
    mut events: impl Stream<Item = Result<Sse, sse_stream::Error>> + Unpin,
    awaited: Option<&RequestId>,
    cursor: &mut Cursor,
) -> End {
    loop {
        let mut event = match next_event(shared, &mut events).await {
            Ok(event) => event,
            Err(end) => return end,
        };
        if let Some(id) = event.id.take().filter(|id| !id.is_empty()) {
            cursor.last_id = Some(id);
        }
        if let Some(retry) = event.retry {
            cursor.retry = Duration::from_millis(retry);
        }
        let Some(data) = message_data(event) else {
            continue;
        };
        if awaited.is_some_and(|id| answers(&data, id)) {
            return End::Response(data);
        }
        shared.deliver(data).await;
    }
}

/// Follow a request's SSE response until its response arrives. A stream cut before it
/// (session era, events with ids) is resumed with a GET carrying `Last-Event-ID`, after
/// the server's `retry` delay, at most `max_reconnects` times in a row.
pub(crate) async fn follow(
    shared: &Shared,
    response: Response,
    id: &RequestId,
    resumable: bool,
) -> Result<Vec<u8>, Failure> {
    let mut cursor = Cursor::new(shared.config.default_retry);
    let mut response = response;
    let mut attempts = 0;
    loop {
        let before = cursor.last_id.clone();
        let why = match read(shared, response, Some(id), &mut cursor).await {
            End::Response(frame) => return Ok(frame),
            End::Closed => "the server ended the response stream before the response".to_owned(),
            End::Broken(why) => format!("the response stream broke before the response: {why}"),
        };
        let Some(last) = cursor.last_id.clone().filter(|_| resumable) else {
            return Err(Failure::new(why));
        };
        if cursor.last_id != before {
            attempts = 0;
        }
        response = loop {
            attempts += 1;
            if attempts > shared.config.max_reconnects {
                return Err(Failure::new(format!(
                    "{why}; resuming failed {} times",
                    shared.config.max_reconnects
                )));
            }
            tracing::debug!("resuming request {id} after event {last:?}: {why}");
            tokio::select! {
                () = tokio::time::sleep(cursor.retry) => {}
                () = shared.closed.cancelled() => return Err(Failure::new("the connection closed")),
            }
            match super::session::resume(shared, &last).await {
                Ok(response) => break response,
                Err((failure, false)) => return Err(failure),
                Err((failure, true)) => tracing::debug!("resuming failed: {}", failure.message),
            }
        };
    }
}
