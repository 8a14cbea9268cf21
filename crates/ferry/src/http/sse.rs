//! Server-Sent Events framing: one JSON-RPC message per `message` event, and comment lines
//! as keep-alives. (Event ids arrive with the session era's resumable streams.)

use axum::body::Bytes;
use axum::http::{HeaderName, HeaderValue, header};
use axum::response::Response;

/// The bytes of one event carrying `data` (a JSON text: one `data:` line per line of it).
pub(crate) fn event(data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 24);
    write_event(&mut out, data);
    Bytes::from(out)
}

/// Append the lines of one event carrying `data` to `out` (see [`event`]).
pub(crate) fn write_event(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(b"event: message\n");
    let mut rest = data;
    // Compact JSON has no line breaks: usually one `data:` line, found with one SIMD search.
    loop {
        let (line, next) = match ferry_protocol::read::scan::find(b'\n', rest) {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line.strip_suffix(b"\r").unwrap_or(line));
        out.push(b'\n');
        match next {
            Some(next) => rest = next,
            None => break,
        }
    }
    out.push(b'\n');
}

/// A keep-alive: a comment line, ignored by clients.
pub(crate) fn keep_alive() -> Bytes {
    Bytes::from_static(b":\n\n")
}

/// Set the headers of an SSE response whose events come over time.
pub(crate) fn headers(response: &mut Response) {
    complete_headers(response);
    // Ask reverse proxies (nginx) not to buffer the stream.
    response.headers_mut().insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
}

/// Set the headers of an SSE response whose body is complete (every event known, sent
/// with a length): nothing for a proxy to hold back, so no `X-Accel-Buffering`.
pub(crate) fn complete_headers(response: &mut Response) {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
}

#[cfg(test)]
mod tests {
    #[test]
    fn frames_events() {
        assert_eq!(
            &super::event(b"{\"a\":1}")[..],
            b"event: message\ndata: {\"a\":1}\n\n"
        );
        assert_eq!(
            &super::event(b"1\n2")[..],
            b"event: message\ndata: 1\ndata: 2\n\n"
        );
        assert_eq!(
            &super::event(b"1\r\n\n2\n")[..],
            b"event: message\ndata: 1\ndata: \ndata: 2\ndata: \n\n"
        );
    }
}
