//! Checks made before a request reaches MCP: `Origin` (403) and `Host` (421), both against
//! DNS rebinding; CORS for allowed origins (see `cors.rs`); `Accept` (406), `Content-Type`
//! (415) and the body size limit (413).
//!
//! **Why 421 for a foreign `Host`.** The specification asks for 403 Forbidden when `Origin`
//! is invalid and says nothing of `Host`. A `Host` this server does not answer for means the
//! request was routed to the wrong server (the DNS rebinding case: a name the attacker
//! controls now resolves to 127.0.0.1); RFC 9110 §15.5.20 names exactly that 421
//! Misdirected Request, and the Python SDK answers it too. A foreign `Origin` remains 403.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::uri::Authority;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::Response;
use ferry_protocol::jsonrpc::{ErrorObject, read_head};
use futures_util::FutureExt as _;
use futures_util::future::{Either, Map};

use super::stateless::error_response;
use super::{HttpConfig, Shared, cors};
use crate::engine::OVERSIZED_HEAD;

/// The guard on every route, for every method: refuse a foreign `Origin` (403) or `Host`
/// (421); answer CORS preflights and add CORS headers for allowed origins.
///
/// A tower layer written out rather than `axum::middleware::from_fn`, which boxes every
/// request's future and runs the route behind a `Next`: a measurable share of every
/// session-era POST (bench/results/profile.md). Here a request
/// without `Origin` (not from a browser) costs the header checks and nothing else.
#[derive(Clone)]
pub(crate) struct GuardLayer(pub(crate) Arc<Shared>);

impl<S> tower_layer::Layer<S> for GuardLayer {
    type Service = Guard<S>;

    fn layer(&self, inner: S) -> Guard<S> {
        Guard {
            inner,
            shared: Arc::clone(&self.0),
        }
    }
}

/// See [`GuardLayer`].
#[derive(Clone)]
pub(crate) struct Guard<S> {
    inner: S,
    shared: Arc<Shared>,
}

type Answered = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

type Answer = Result<Response, Infallible>;

/// The route's answer, which may be marked to close the connection (see [`closing_on_error`]).
type Routed<F> = Map<F, fn(Answer) -> Answer>;

/// An error answered to a request with a body may have been sent before the body was read
/// (406, 415, 413, 503...): the connection then cannot carry another request, so the
/// answer says `Connection: close` rather than leave a client that reuses it to meet a
/// closed socket. Keep-alive is kept for everything answered 2xx.
fn closing_on_error(answer: Answer) -> Answer {
    answer.map(|mut response| {
        if response.status().is_client_error() || response.status().is_server_error() {
            response.headers_mut().insert(
                header::CONNECTION,
                axum::http::HeaderValue::from_static("close"),
            );
        }
        response
    })
}

fn unchanged(answer: Answer) -> Answer {
    answer
}

/// Whether the request says a body follows (`Content-Length` other than 0, or
/// `Transfer-Encoding`).
fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|length| length.as_bytes() != b"0")
}

impl<S> tower_service::Service<Request> for Guard<S>
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Routed<S::Future>, Answered>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let after: fn(Answer) -> Answer = if has_body(request.headers()) {
            closing_on_error
        } else {
            unchanged
        };
        let answered = |response: Response| -> Self::Future {
            Either::Right(Box::pin(std::future::ready(after(Ok(response)))))
        };
        let checked = check_header_counts(&request).and_then(|()| {
            let target = request.uri().authority();
            check_origin_and_host(&self.shared.config, request.headers(), target)
        });
        if let Err(refusal) = checked {
            let (status, message) = match refusal {
                Refusal::Origin(m) => (StatusCode::FORBIDDEN, m),
                Refusal::Host(m) => (StatusCode::MISDIRECTED_REQUEST, m),
                Refusal::Malformed(m) => (StatusCode::BAD_REQUEST, m),
            };
            return answered(error_response(
                status,
                None,
                ErrorObject::invalid_request(message),
            ));
        }
        let Some(origin) = request.headers().get(header::ORIGIN).cloned() else {
            return Either::Left(self.inner.call(request).map(after));
        };
        if request.method() == Method::OPTIONS {
            return answered(cors::preflight(&origin, request.headers()));
        }
        let future = self.inner.call(request);
        Either::Right(Box::pin(async move {
            let mut response = after(future.await)?;
            cors::decorate(&mut response, origin);
            Ok(response)
        }))
    }
}

/// Why a request is refused before MCP.
enum Refusal {
    Origin(String),
    Host(String),
    /// Not a well-formed HTTP/1.1 request (RFC 9112 section 3.2): 400.
    Malformed(String),
}

/// One `Host` exactly (HTTP/1.1 requires it; HTTP/1.0 may leave it out), and at most one
/// `Origin`: with two, the checks below would see only the first while another party
/// might read the other.
fn check_header_counts(request: &Request) -> Result<(), Refusal> {
    let headers = request.headers();
    match headers.get_all(header::HOST).iter().count() {
        0 if request.version() >= axum::http::Version::HTTP_11 => {
            return Err(Refusal::Malformed(
                "Bad Request: the Host header is required".to_owned(),
            ));
        }
        0 | 1 => {}
        _ => {
            return Err(Refusal::Malformed(
                "Bad Request: more than one Host header".to_owned(),
            ));
        }
    }
    if headers.get_all(header::ORIGIN).iter().count() > 1 {
        return Err(Refusal::Origin("more than one Origin header".to_owned()));
    }
    Ok(())
}

/// `target`: the authority of a request in absolute form (`POST http://host/mcp`), which
/// names the host the request is for; `Host` is then ignored (RFC 9112 section 3.2.2).
fn check_origin_and_host(
    config: &HttpConfig,
    headers: &HeaderMap,
    target: Option<&Authority>,
) -> Result<(), Refusal> {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let allowed = config.any_origin
            || origin_host(origin).is_some_and(is_loopback)
            || config
                .allowed_origins
                .iter()
                .any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(origin));
        if !allowed {
            return Err(Refusal::Origin(format!("Origin {origin:?} is not allowed")));
        }
    }
    let host = match target {
        // `host[:port]`, without any `user@`.
        Some(authority) => authority.as_str().rsplit('@').next(),
        None => headers
            .get(header::HOST)
            .map(|host| host.to_str().unwrap_or("")),
    };
    if !config.any_host
        && let Some(host) = host
    {
        let name = strip_port(host);
        let allowed = is_loopback(name)
            || config
                .allowed_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(name));
        if !allowed {
            return Err(Refusal::Host(format!(
                "Misdirected Request: Host {host:?} is not served here"
            )));
        }
    }
    Ok(())
}

/// The host of an origin (`scheme://host[:port]`), without the port.
fn origin_host(origin: &str) -> Option<&str> {
    let (_, authority) = origin.split_once("://")?;
    Some(strip_port(authority.trim_end_matches('/')))
}

fn strip_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        // [v6]:port
        return rest.split(']').next().unwrap_or("");
    }
    authority.rsplit_once(':').map_or(authority, |(h, _)| h)
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `Accept` lists both `application/json` and `text/event-stream` (or ranges
/// covering them). A missing `Accept` accepts everything (RFC 9110).
pub(crate) fn accepts_both(headers: &HeaderMap) -> bool {
    let mut json = false;
    let mut sse = false;
    let mut any_header = false;
    for value in headers.get_all(header::ACCEPT) {
        any_header = true;
        for range in value.to_str().unwrap_or("").split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            if refused {
                continue;
            }
            // Media types are case-insensitive (compared without a lowercased copy).
            let is = |name: &str| media.eq_ignore_ascii_case(name);
            if is("*/*") {
                (json, sse) = (true, true);
            } else if is("application/*") || is("application/json") {
                json = true;
            } else if is("text/*") || is("text/event-stream") {
                sse = true;
            }
        }
    }
    !any_header || (json && sse)
}

/// Whether `Accept` allows `text/event-stream` (a missing `Accept` allows everything).
pub(crate) fn accepts_sse(headers: &HeaderMap) -> bool {
    let mut any_header = false;
    let mut sse = false;
    for value in headers.get_all(header::ACCEPT) {
        any_header = true;
        sse |= value.to_str().unwrap_or("").split(',').any(|range| {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .is_some_and(|q| q.trim().parse::<f32>() == Ok(0.0))
            });
            !refused
                && ["text/event-stream", "text/*", "*/*"]
                    .iter()
                    .any(|m| media.eq_ignore_ascii_case(m))
        });
    }
    !any_header || sse
}

/// Whether the body is declared JSON (`application/json`, any parameters).
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

/// Read the body within [`HttpConfig::max_body_bytes`] (413 beyond) and the connection
/// limits' body-read timeout (408 after).
pub(crate) async fn read_body(body: Body, config: &HttpConfig) -> Result<Bytes, Response> {
    let limit = config.max_body_bytes;
    let timeout = config.connections.body_read_timeout;
    match tokio::time::timeout(timeout, read_limited(body, limit)).await {
        Ok(read) => read,
        Err(_) => Err(error_response(
            StatusCode::REQUEST_TIMEOUT,
            None,
            ErrorObject::invalid_request(format!("the body did not arrive within {timeout:?}")),
        )),
    }
}

/// The body, at most `limit` bytes (413 beyond, under the id its head names).
async fn read_limited(mut body: Body, limit: usize) -> Result<Bytes, Response> {
    use http_body_util::BodyExt as _;
    // The usual body is one frame, kept as it is; more are gathered.
    let mut first: Option<Bytes> = None;
    let mut gathered: Vec<u8> = Vec::new();
    let mut length = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            error_response(
                StatusCode::BAD_REQUEST,
                None,
                ErrorObject::invalid_request(format!("the body could not be read: {e}")),
            )
        })?;
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        if length + data.len() > limit {
            // Refused under the id its head names, so the client's call ends at once.
            let mut head = first.as_deref().unwrap_or(&gathered).to_vec();
            head.extend_from_slice(&data[..data.len().min(OVERSIZED_HEAD)]);
            head.truncate(OVERSIZED_HEAD);
            let head = read_head(&head);
            return Err(error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                head.id.filter(|_| head.method),
                ErrorObject::invalid_request(format!(
                    "the body exceeds the limit of {limit} bytes"
                )),
            ));
        }
        length += data.len();
        match first.take() {
            None if gathered.is_empty() => first = Some(data),
            Some(previous) => {
                gathered.extend_from_slice(&previous);
                gathered.extend_from_slice(&data);
            }
            None => gathered.extend_from_slice(&data),
        }
    }
    Ok(first.unwrap_or_else(|| Bytes::from(gathered)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(name: header::HeaderName, value: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_static(value));
        h
    }

    #[test]
    fn origins_and_hosts() {
        let config = HttpConfig::default().allow_origin("https://app.example.com");
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "http://[::1]:8080",
            "https://app.example.com",
        ] {
            assert!(
                check_origin_and_host(&config, &with(header::ORIGIN, ok), None).is_ok(),
                "{ok}"
            );
        }
        for bad in [
            "https://evil.example",
            "null",
            "http://localhost.evil.example",
        ] {
            assert!(
                check_origin_and_host(&config, &with(header::ORIGIN, bad), None).is_err(),
                "{bad}"
            );
        }
        let host = |value| with(header::HOST, value);
        assert!(check_origin_and_host(&config, &host("127.0.0.1:9"), None).is_ok());
        assert!(check_origin_and_host(&config, &host("[::1]:9"), None).is_ok());
        assert!(check_origin_and_host(&config, &host("evil.example"), None).is_err());
        let open = HttpConfig::default().allow_host("mcp.example.com");
        assert!(check_origin_and_host(&open, &host("mcp.example.com:443"), None).is_ok());
        // The absolute form's authority is what is checked, not Host.
        let authority = |a: &'static str| Authority::from_static(a);
        let evil = authority("evil.example");
        assert!(check_origin_and_host(&config, &host("127.0.0.1:9"), Some(&evil)).is_err());
        let ours = authority("[::1]:9");
        assert!(check_origin_and_host(&config, &host("evil.example"), Some(&ours)).is_ok());
        let open_target = authority("mcp.example.com:443");
        assert!(check_origin_and_host(&open, &host("x"), Some(&open_target)).is_ok());
    }

    #[test]
    fn accept() {
        assert!(accepts_both(&HeaderMap::new()));
        assert!(accepts_both(&with(
            header::ACCEPT,
            "application/json, text/event-stream"
        )));
        assert!(accepts_both(&with(header::ACCEPT, "*/*")));
        assert!(!accepts_both(&with(header::ACCEPT, "application/json")));
        assert!(!accepts_both(&with(
            header::ACCEPT,
            "application/json, text/event-stream;q=0"
        )));
    }
}
