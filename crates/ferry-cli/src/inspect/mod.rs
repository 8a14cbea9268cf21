//! `ferry inspect`: the MCP inspector, a local web page served by this process.
//!
//! The server is named as the client commands name it (nothing: the reference server
//! in-process; `-- command args`: a stdio child; `--url URL`: HTTP, with OAuth). The page
//! (plain HTML, CSS and ES modules in `assets/`, embedded in the binary) talks to this
//! process over JSON POSTs to `/api/...` and one SSE stream, `/api/events`, which carries
//! every wire message, progress, and the server's requests for the person to answer.
//!
//! Security: the listener is on 127.0.0.1 only. The printed URL carries a launch code (128
//! random bits) that works once: opening it sets an `HttpOnly`, `SameSite=Strict` cookie
//! holding the session's own secret (128 bits, never printed) and redirects to `/`, so the
//! URL is worth nothing once the page has opened (it may sit in the browser opener's argv,
//! readable in /proc, or in the shell's history). Pressing Enter in the terminal prints a new
//! launch URL. The cookie is required on the page and every API call and stream; `Host`
//! must name this listener (DNS rebinding) and `Origin`, when sent, must be the page's own;
//! no CORS headers are ever sent. Refusals are 403. The page connects to another server (a
//! command or a URL) only when `--allow-spawn` was given, and only with a code printed in
//! the terminal that runs `ferry inspect` for that exact command (see `api::connect`): a
//! holder of the cookie alone cannot start anything.

mod api;
mod assets;
mod conn;
mod hub;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse as _, Response};
use clap::Args;
use serde_json::{Value, json};
use tokio::task::AbortHandle;

use crate::client::Common;
use crate::stderr::note;
use conn::{Conn, Shared};
use hub::{Asks, Hub, lock};

/// The most bytes an API request body may have (tool arguments can carry files).
const BODY_LIMIT: usize = 16 << 20;

/// How long a request to the server may take when `--timeout` is not given: longer than
/// the person has to answer the server's questions, which a call waits for.
const REQUEST_GRACE: Duration = Duration::from_secs(60);

/// `ferry inspect`.
#[derive(Args)]
pub(crate) struct InspectArgs {
    /// Serve the page on this port of 127.0.0.1 (default: a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Let the page connect to other servers (a command it runs, or a URL), each after
    /// the person types in the page a code this terminal shows with the exact command.
    #[arg(long)]
    allow_spawn: bool,
    /// Seconds the person has to answer a server's request (sampling, elicitation).
    #[arg(long, value_name = "SECONDS", default_value = "300", value_parser = positive_seconds)]
    answer_timeout: Duration,
    #[command(flatten)]
    common: Common,
}

fn positive_seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("expected a positive number of seconds, got {text:?}"))
}

/// The state of the inspector's HTTP server.
pub(crate) struct App {
    /// The session's secret, in the page's cookie.
    token: String,
    /// The launch code of the URL last printed, until it is used.
    launch: std::sync::Mutex<Option<String>>,
    /// The connection the page asked to make, its code printed in the terminal and not yet
    /// typed in the page.
    confirming: std::sync::Mutex<Option<api::Confirmation>>,
    port: u16,
    allow_spawn: bool,
    /// The options the target was named with (a server named in the page inherits them).
    base: Common,
    request_timeout: Duration,
    shared: Arc<Shared>,
    conns: tokio::sync::Mutex<BTreeMap<u64, Arc<Conn>>>,
    next_conn: AtomicU64,
    /// Tool calls in flight, by the page's call id, so that Cancel can stop them.
    calls: std::sync::Mutex<std::collections::HashMap<String, AbortHandle>>,
    /// The tasks those calls run as (2025-11-25), by call id: Cancel cancels the task.
    task_calls:
        std::sync::Mutex<std::collections::HashMap<String, (ferry::client::Client, String)>>,
}

/// Run `ferry inspect`.
pub(crate) async fn run(args: InspectArgs) -> ExitCode {
    let unused = args.common.one_shot_options();
    if !unused.is_empty() {
        note!(
            "ferry inspect: {} {} no meaning here: the page shows results and answers the \
             server\n\nFor more information, try '--help'.",
            unused.join(", "),
            if unused.len() == 1 { "has" } else { "have" }
        );
        return ExitCode::from(2);
    }
    let token = match random_token() {
        Ok(token) => token,
        Err(e) => {
            note!("ferry inspect: no random token: {e}");
            return ExitCode::FAILURE;
        }
    };
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await {
        Ok(listener) => listener,
        Err(e) => {
            note!(
                "ferry inspect: cannot listen on 127.0.0.1:{}: {e}",
                args.port
            );
            return ExitCode::FAILURE;
        }
    };
    let port = match listener.local_addr() {
        Ok(address) => address.port(),
        Err(e) => {
            note!("ferry inspect: {e}");
            return ExitCode::FAILURE;
        }
    };
    let shared = Arc::new(Shared {
        hub: Hub::new(),
        asks: Asks::new(args.answer_timeout),
    });
    let request_timeout = args
        .common
        .timeout()
        .unwrap_or(args.answer_timeout + REQUEST_GRACE);
    let app = Arc::new(App {
        token,
        launch: std::sync::Mutex::new(None),
        confirming: std::sync::Mutex::new(None),
        port,
        allow_spawn: args.allow_spawn,
        base: args.common.clone(),
        request_timeout,
        shared,
        conns: tokio::sync::Mutex::new(BTreeMap::new()),
        next_conn: AtomicU64::new(1),
        calls: std::sync::Mutex::new(std::collections::HashMap::new()),
        task_calls: std::sync::Mutex::new(std::collections::HashMap::new()),
    });
    if let Err(e) = app.open(args.common.clone()).await {
        note!("ferry inspect: {e}");
        return ExitCode::FAILURE;
    }
    let Some(url) = app.print_launch_url() else {
        return ExitCode::FAILURE;
    };
    if !args.common.target.no_browser() {
        open_browser(&url);
    }
    // Enter in the terminal: a new launch URL (each works once).
    let relaunch = Arc::clone(&app);
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            if line.is_err() || relaunch.print_launch_url().is_none() {
                break;
            }
        }
    });
    let router = Router::new().fallback(serve).with_state(app.clone());
    // The library's accept loop: its connections bounded like `ferry serve --http`'s (header
    // and write timeouts, fair slots). Ctrl-C stops accepting.
    let stop = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let served = tokio::select! {
        served = ferry::http::serve_router(router, listener) => served,
        () = stop => Ok(()),
    };
    // Event streams never end on their own: closing the connections is what is left.
    let conns: Vec<_> = std::mem::take(&mut *app.conns.lock().await)
        .into_values()
        .collect();
    for conn in conns {
        conn.close().await;
    }
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            note!("ferry inspect: {e}");
            ExitCode::FAILURE
        }
    }
}

/// 128 random bits from the OS, in hex.
fn random_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Try to show `url` in the desktop's browser; where there is none, the printed URL is it.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = spawned {
        // Reaped by a thread of its own: the opener may outlive a slow browser start.
        std::thread::spawn(move || child.wait());
    }
}

impl App {
    /// Make a new launch code and print its URL: on stdout alone on its line, for a program
    /// that starts the inspector, and on stderr for the person. `None` (said) when no
    /// random code could be had.
    fn print_launch_url(&self) -> Option<String> {
        let code = match random_token() {
            Ok(code) => code,
            Err(e) => {
                note!("ferry inspect: no random launch code: {e}");
                return None;
            }
        };
        let url = format!("http://127.0.0.1:{}/?launch={code}", self.port);
        *lock(&self.launch) = Some(code);
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{url}").and_then(|()| stdout.flush());
        drop(stdout);
        note!(
            "ferry inspect: open {url} (it works once; Enter here prints a new one; Ctrl-C \
             stops)"
        );
        Some(url)
    }

    /// Open the page with a launch code: the first time, the session's cookie and a
    /// redirect to the plain page; afterwards, 403.
    fn launch(&self, given: &str) -> Result<Response, Failure> {
        let mut launch = lock(&self.launch);
        if !launch
            .as_deref()
            .is_some_and(|code| same(given.as_bytes(), code.as_bytes()))
        {
            return Err(Failure::forbidden(
                "this launch URL was used already (each works once): press Enter in the \
                 terminal that runs ferry inspect for a new one",
            ));
        }
        *launch = None;
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::SEE_OTHER;
        let headers = response.headers_mut();
        headers.insert(header::LOCATION, HeaderValue::from_static("/"));
        let cookie = format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", self.token);
        if let Ok(cookie) = HeaderValue::from_str(&cookie) {
            headers.insert(header::SET_COOKIE, cookie);
        }
        Ok(response)
    }

    /// Connect to the server named by `common`, as a new connection of the page.
    async fn open(&self, common: Common) -> Result<Arc<Conn>, String> {
        let id = self.next_conn.fetch_add(1, Ordering::Relaxed);
        let roots = common
            .roots()
            .iter()
            .map(|r| crate::client::answers::root(r))
            .collect();
        let conn = Conn::open(&self.shared, id, common, roots, self.request_timeout).await?;
        let conn = Arc::new(conn);
        self.conns.lock().await.insert(id, conn.clone());
        self.shared
            .hub
            .emit(json!({"type": "connection", "conn": id, "info": conn.info()}));
        Ok(conn)
    }

    /// The connection `id`.
    async fn conn(&self, id: u64) -> Option<Arc<Conn>> {
        self.conns.lock().await.get(&id).cloned()
    }
}

/// An API failure: its status and message, answered as `{"error": {"message": ...}}`.
pub(crate) struct Failure {
    status: StatusCode,
    body: Value,
}

impl Failure {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Failure {
        Failure {
            status,
            body: json!({"error": {"message": message.into()}}),
        }
    }

    fn forbidden(message: &str) -> Failure {
        Failure::new(StatusCode::FORBIDDEN, message)
    }

    fn into_response(self) -> Response {
        json_response(self.status, &self.body)
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Headers on every answer: nothing cached, nothing sniffed, no framing, and a content
/// security policy allowing only this origin's scripts (data: for images and audio that
/// results carry inline).
fn harden(response: &mut Response) {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
             img-src 'self' data: blob:; media-src 'self' data: blob:; \
             frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        ),
    );
}

/// Every request: the Host and Origin checks, the token (except for the static assets,
/// which hold no secret), then the route.
async fn serve(State(app): State<Arc<App>>, request: Request) -> Response {
    let mut response = match route(&app, request).await {
        Ok(response) => response,
        Err(failure) => failure.into_response(),
    };
    harden(&mut response);
    response
}

async fn route(app: &Arc<App>, request: Request) -> Result<Response, Failure> {
    let (parts, body) = request.into_parts();
    let host = check_host(&parts.uri, &parts.headers, app.port)?;
    if let Some(origin) = parts.headers.get(header::ORIGIN)
        && origin.as_bytes() != format!("http://{host}").as_bytes()
    {
        return Err(Failure::forbidden(
            "requests from other origins are refused",
        ));
    }
    let path = parts.uri.path();
    if let Some(name) = path.strip_prefix("/assets/") {
        if parts.method != Method::GET {
            return Err(Failure::new(StatusCode::METHOD_NOT_ALLOWED, "GET only"));
        }
        return assets::serve(name)
            .ok_or_else(|| Failure::new(StatusCode::NOT_FOUND, format!("no asset {name}")));
    }
    if parts.method == Method::GET
        && matches!(path, "/" | "/index.html")
        && let Some(code) = query_value(parts.uri.query(), "launch")
    {
        return app.launch(code);
    }
    if !session_cookie(&parts.headers).is_some_and(|given| same(given, app.token.as_bytes())) {
        return Err(Failure::forbidden(
            "this page's session cookie is required: open the URL ferry inspect printed (or \
             press Enter in its terminal for a new one)",
        ));
    }
    match (&parts.method, path) {
        (&Method::GET, "/" | "/index.html") => Ok(assets::page()),
        (&Method::GET, "/api/events") => {
            // The browser's reconnection names the last event it saw; the page itself
            // names it in the query when it reopens the stream after falling behind.
            let after = parts
                .headers
                .get("last-event-id")
                .and_then(|v| v.to_str().ok()?.parse().ok())
                .or_else(|| query_value(parts.uri.query(), "after")?.parse().ok())
                .unwrap_or(0);
            Ok(api::events(app, after))
        }
        (&Method::GET, "/api/state") => Ok(json_response(StatusCode::OK, &api::state(app).await)),
        (&Method::POST, _) if path.starts_with("/api/") => {
            let body = axum::body::to_bytes(body, BODY_LIMIT).await.map_err(|_| {
                Failure::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the request body is over {BODY_LIMIT} bytes"),
                )
            })?;
            let answer = api::post(app, &path["/api/".len()..], &body).await?;
            Ok(json_response(StatusCode::OK, &answer))
        }
        (_, "/" | "/index.html" | "/api/events" | "/api/state") => {
            Err(Failure::new(StatusCode::METHOD_NOT_ALLOWED, "GET only"))
        }
        (_, _) if path.starts_with("/api/") => {
            Err(Failure::new(StatusCode::METHOD_NOT_ALLOWED, "POST only"))
        }
        _ => Err(Failure::new(
            StatusCode::NOT_FOUND,
            format!("no page {path}"),
        )),
    }
}

/// The request's Host, if it names this listener (`127.0.0.1:PORT` or `localhost:PORT`).
/// A request in absolute form (`GET http://host/`, which a browser sends only to a proxy)
/// is refused: its URL, not Host, would name the host it is for.
fn check_host<'a>(uri: &Uri, headers: &'a HeaderMap, port: u16) -> Result<&'a str, Failure> {
    if uri.authority().is_some() {
        return Err(Failure::forbidden(
            "a request must name a path, not a whole URL (absolute form)",
        ));
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let ok = host
        .strip_suffix(&format!(":{port}"))
        .is_some_and(|name| name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost"));
    if ok {
        Ok(host)
    } else {
        Err(Failure::forbidden(
            "the Host header must name this inspector (127.0.0.1 or localhost and its port)",
        ))
    }
}

/// The name of the session's cookie.
const COOKIE: &str = "ferry-inspect";

/// The value of the session's cookie among the request's cookies.
fn session_cookie(headers: &HeaderMap) -> Option<&[u8]> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .flat_map(|value| value.as_bytes().split(|&b| b == b';'))
        .find_map(|pair| {
            let pair = pair.trim_ascii();
            pair.strip_prefix(COOKIE.as_bytes())?.strip_prefix(b"=")
        })
}

/// The value of `name` in a query string, as it is written (tokens and numbers need no
/// decoding).
fn query_value<'a>(query: Option<&'a str>, name: &str) -> Option<&'a str> {
    query?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then_some(value)
    })
}

/// Compare in time independent of where the bytes differ.
fn same(given: &[u8], token: &[u8]) -> bool {
    given.len() == token.len() && given.iter().zip(token).fold(0, |d, (a, b)| d | (a ^ b)) == 0
}

/// An SSE response from a stream of text chunks.
fn event_stream(body: Body) -> Response {
    let mut response = Response::new(body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        let mut headers = HeaderMap::new();
        for (host, ok) in [
            ("127.0.0.1:4000", true),
            ("localhost:4000", true),
            ("LOCALHOST:4000", true),
            ("127.0.0.1:4001", false),
            ("evil.example:4000", false),
            ("127.0.0.1", false),
            ("", false),
        ] {
            headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
            let path = Uri::from_static("/");
            assert_eq!(check_host(&path, &headers, 4000).is_ok(), ok, "{host}");
        }
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:4000"));
        for target in ["http://evil.example/", "http://127.0.0.1:4000/"] {
            let uri = Uri::from_static(target);
            assert!(check_host(&uri, &headers, 4000).is_err(), "{target}");
        }
    }

    #[test]
    fn cookies_and_query_values() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; ferry-inspect=abc"),
        );
        assert_eq!(session_cookie(&headers), Some(&b"abc"[..]));
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("ferry-inspectx=abc"),
        );
        assert_eq!(session_cookie(&headers), None);
        assert_eq!(query_value(Some("a=1&launch=abc"), "launch"), Some("abc"));
        assert_eq!(query_value(Some("launchx=abc"), "launch"), None);
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abd", b"abc"));
        assert!(!same(b"ab", b"abc"));
        let token = random_token().unwrap();
        assert_eq!(token.len(), 32);
        assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(token, random_token().unwrap());
    }
}
