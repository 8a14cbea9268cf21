//! Reading an SSE response: each `message` event's data is one JSON-RPC message for the
//! engine; event ids and `retry` are remembered for resumption.
//!
//! Parsing is `sse-stream`'s (chosen over `eventsource-stream` because it yields events
//! without data too: the priming event of 2025-11-25 carries only an `id` and a `retry`,
//! both needed to resume). What it does not do is done here: memory is bounded (a server
//! that sends more than the message limit without completing an event is cut off), and
//! the lines the SSE standard says to ignore or to take leniently (unknown fields, lines
//! without a colon, a repeated `id`/`event`/`retry`, a `retry` that is not a number,
//! invalid UTF-8), which sse-stream refuses by breaking the stream, are rewritten first
//! ([`Lines`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferry_protocol::RequestId;
use futures_util::{Stream, StreamExt, TryStreamExt};
use reqwest::Response;
use serde::Deserialize;
use serde::de::IgnoredAny;
use sse_stream::{Sse, SseStream};

use super::connection::{Failure, Shared, describe};

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
        // Rewritten a line at a time into lines sse-stream accepts, each handed over on
        // its own: what the client reads never depends on where the network cut the
        // stream (found by the `sse_reader` fuzz target).
        .map_ok({
            let mut lines = Lines::default();
            move |chunk| futures_util::stream::iter(lines.push(&chunk).map(Ok::<_, std::io::Error>))
        })
        .try_flatten();
    SseStream::from_bytes_stream(bytes).inspect(move |_| pending.store(0, Ordering::Relaxed))
}

/// An SSE byte stream rewritten line by line into the strict form sse-stream reads, with
/// the standard's leniency (the "Interpreting an event stream" rules of the HTML
/// standard): lines end at CR, LF or CRLF; comments, unknown fields, an `id` holding NUL
/// and a `retry` that is not all digits are dropped; a line without a colon is a field
/// with an empty value; a repeated `event`, `id` or `retry` keeps the last; invalid UTF-8
/// is replaced. `event`, `id` and `retry` are held until the blank line that dispatches
/// the event (sse-stream refuses two of a kind), `data` lines pass at once.
#[derive(Default)]
struct Lines {
    /// The start of a line not ended yet.
    partial: Vec<u8>,
    /// The last chunk ended with CR: an LF starting the next one ends nothing.
    after_cr: bool,
    /// No line seen yet (a byte order mark may start the stream).
    started: bool,
    event: Option<String>,
    id: Option<String>,
    retry: Option<u64>,
}

impl Lines {
    /// The rewritten lines that `chunk` completes, one `Bytes` each.
    fn push(&mut self, chunk: &[u8]) -> std::vec::IntoIter<bytes::Bytes> {
        let mut out = Vec::new();
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            rest = rest.strip_prefix(b"\n").unwrap_or(rest);
        }
        while let Some(end) = rest.iter().position(|b| matches!(b, b'\n' | b'\r')) {
            let line = if self.partial.is_empty() {
                self.line(&rest[..end])
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(&rest[..end]);
                self.line(&whole)
            };
            out.extend(line);
            let crlf = rest[end] == b'\r';
            rest = &rest[end + 1..];
            if crlf {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
        }
        self.partial.extend_from_slice(rest);
        out.into_iter()
    }

    /// What one whole line (its end taken off) becomes.
    fn line(&mut self, line: &[u8]) -> Option<bytes::Bytes> {
        let line = if self.started {
            line
        } else {
            self.started = true;
            line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line)
        };
        if line.is_empty() {
            // Dispatch: the held fields, then the blank line.
            let mut out = String::new();
            for (field, value) in [
                // An empty type is the default one, `message`.
                ("event", self.event.take().filter(|e| !e.is_empty())),
                ("id", self.id.take()),
                ("retry", self.retry.take().map(|r| r.to_string())),
            ] {
                if let Some(value) = value {
                    // The space is the one sse-stream takes off.
                    out.push_str(&format!("{field}: {value}\n"));
                }
            }
            out.push('\n');
            return Some(out.into());
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(0) => return None, // a comment
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                let value = String::from_utf8_lossy(value);
                return Some(format!("data: {value}\n").into());
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            b"id" if !value.contains(&0) => {
                self.id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // Digits beyond u64 are as if absent.
                if let Ok(retry) = std::str::from_utf8(value).unwrap_or("").parse() {
                    self.retry = Some(retry);
                }
            }
            _ => {}
        }
        None
    }
}

#[derive(Deserialize)]
struct Probe {
    id: Option<RequestId>,
    /// Whether a `method` member is there, whatever its value (`null` included).
    #[serde(default, deserialize_with = "present")]
    method: bool,
}

fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(value).map(|_| true)
}

/// The id of `data` when it is a response (an id and no method).
pub(crate) fn response_id(data: &[u8]) -> Option<RequestId> {
    // Only an object: serde would also read a struct from an array (`[2]` as id 2).
    if data.trim_ascii_start().first() != Some(&b'{') {
        return None;
    }
    let probe = serde_json::from_slice::<Probe>(data).ok()?;
    if probe.method {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The events sse-stream reads from `body` rewritten by [`Lines`], fed in pieces of
    /// `piece` bytes.
    async fn read(body: &[u8], piece: usize) -> Vec<Result<Sse, String>> {
        let mut lines = Lines::default();
        let rewritten: Vec<Result<bytes::Bytes, std::io::Error>> = body
            .chunks(piece)
            .flat_map(|chunk| lines.push(chunk))
            .map(Ok)
            .collect();
        SseStream::from_bytes_stream(futures_util::stream::iter(rewritten))
            .map(|e| e.map_err(|e| e.to_string()))
            .collect()
            .await
    }

    #[tokio::test]
    async fn lines_the_standard_ignores_do_not_break_the_stream() {
        let body: &[u8] = b"\xef\xbb\xbf: a comment\r\n\
            unknown: field\n\
            lonely\n\
            retry: soon\n\
            retry: 99999999999999999999999\n\
            id: a\0b\n\
            event: first\revent: message\r\n\
            id: 1\nid: 2\n\
            retry: 1500\nretry: 2500\n\
            data:  two spaces\n\
            data\n\
            data: \xff\n\
            \n\
            event:\ndata: {}\n\n\
            id\n\n";
        for piece in [1, 2, 3, 7, body.len()] {
            let events = read(body, piece).await;
            assert_eq!(events.len(), 3, "{piece}: {events:?}");
            let first = events[0].as_ref().unwrap();
            assert_eq!(first.event.as_deref(), Some("message"));
            assert_eq!(first.id.as_deref(), Some("2"));
            assert_eq!(first.retry, Some(2500));
            assert_eq!(first.data.as_deref(), Some(" two spaces\n\n\u{fffd}"));
            let second = events[1].as_ref().unwrap();
            assert_eq!(second.event, None, "an empty type is the default");
            assert_eq!(second.data.as_deref(), Some("{}"));
            // `id` alone resets the last id: an event whose id is empty.
            assert_eq!(events[2].as_ref().unwrap().id.as_deref(), Some(""));
        }
    }

    #[test]
    fn a_message_with_a_method_is_no_response_even_a_null_one() {
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":2,"result":{}}"#),
            Some(RequestId::Number(2))
        );
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":2,"method":null}"#),
            None
        );
        assert_eq!(response_id(b" [2\n]"), None);
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":2,"method":"x"}"#),
            None
        );
    }

    #[tokio::test]
    async fn a_crlf_cut_between_chunks_is_one_line_end() {
        let mut lines = Lines::default();
        let mut out: Vec<bytes::Bytes> = lines.push(b"data: x\r").collect();
        out.extend(lines.push(b"\n\r\n"));
        assert_eq!(
            out,
            [bytes::Bytes::from("data: x\n"), bytes::Bytes::from("\n")]
        );
    }
}
