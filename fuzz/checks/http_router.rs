//! `http_router`: the Streamable HTTP router (`ferry::http::router` with the default
//! `HttpConfig`, the `engine_lines` target's server behind it) called in-process with
//! arbitrary requests: method, path, headers (the MCP ones among them) and body from the
//! input. It never panics and never answers with a 5xx status other than 503.
//!
//! Input: up to four requests separated by a line holding only `~`, all sent to one
//! router, so that a session made by one is used by the next. Each request: a first line
//! `METHOD PATH` (or a digit choosing a method, and the path `/mcp`), header lines
//! `Name: value` up to an empty line (a name of one digit stands for one of the MCP
//! headers; the value `$SID` for the session id the last answer gave), then the body.

use std::sync::OnceLock;
use std::time::Duration;

use ferry::http::{HttpConfig, router};
use tower::ServiceExt;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("a runtime")
    })
}

const METHODS: [&str; 8] = [
    "POST", "GET", "DELETE", "OPTIONS", "PUT", "HEAD", "PATCH", "POST",
];
const HEADERS: [&str; 10] = [
    "mcp-method",
    "mcp-name",
    "mcp-param-uri",
    "mcp-protocol-version",
    "mcp-session-id",
    "last-event-id",
    "origin",
    "host",
    "accept",
    "content-type",
];

/// One request from its text; `None` if the text cannot make one (bad method, path or
/// header: the HTTP layer would have refused it before the router).
fn request(text: &[u8], session: Option<&str>) -> Option<axum::http::Request<axum::body::Body>> {
    let (head, body) = match text.windows(2).position(|w| w == b"\n\n") {
        Some(at) => (&text[..at], &text[at + 2..]),
        None => (text, &b""[..]),
    };
    let head = String::from_utf8_lossy(head);
    let mut lines = head.split('\n');
    let first = lines.next().unwrap_or("");
    let (method, path) = match first.split_once(' ') {
        Some((m, p)) => (m.to_owned(), p.to_owned()),
        None => {
            let pick = first.bytes().next().unwrap_or(b'0') as usize % METHODS.len();
            (METHODS[pick].to_owned(), "/mcp".to_owned())
        }
    };
    let mut builder = axum::http::Request::builder()
        .method(method.as_str())
        .uri(path.as_str());
    for line in lines {
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        let name = match name.as_bytes() {
            [d @ b'0'..=b'9'] => HEADERS[usize::from(d - b'0')].to_owned(),
            _ => name.to_owned(),
        };
        let value = value.trim_start();
        let value = if value == "$SID" {
            session.unwrap_or("none")
        } else {
            value
        };
        builder = builder.header(name.as_str(), value);
    }
    builder.body(axum::body::Body::from(body.to_vec())).ok()
}

/// Check every property on `data`.
pub fn check(data: &[u8]) {
    runtime().block_on(async {
        let app = router(crate::engine_lines::server(), HttpConfig::default());
        let mut session: Option<String> = None;
        for text in data.split_inner(b"\n~\n").into_iter().take(4) {
            let Some(request) = request(text, session.as_deref()) else {
                continue;
            };
            let call = app.clone().oneshot(request);
            let Ok(response) = tokio::time::timeout(Duration::from_secs(3600), call).await else {
                continue;
            };
            let response = response.unwrap_or_else(|e| match e {});
            let status = response.status();
            assert!(
                !status.is_server_error() || status == axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "{status} for {:?}",
                String::from_utf8_lossy(text)
            );
            if let Some(id) = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
            {
                session = Some(id.to_owned());
            }
            // Read what the body has now (an SSE stream may go on: not waited for).
            let body = axum::body::to_bytes(response.into_body(), usize::MAX);
            let _ = tokio::time::timeout(Duration::from_secs(60), body).await;
        }
    });
}

/// Splitting a byte string on a separator.
trait SplitInner {
    fn split_inner<'a>(&'a self, separator: &'a [u8]) -> Vec<&'a [u8]>;
}

impl SplitInner for [u8] {
    fn split_inner<'a>(&'a self, separator: &'a [u8]) -> Vec<&'a [u8]> {
        let mut out = Vec::new();
        let mut rest = self;
        while let Some(at) = rest.windows(separator.len()).position(|w| w == separator) {
            out.push(&rest[..at]);
            rest = &rest[at + separator.len()..];
        }
        out.push(rest);
        out
    }
}
