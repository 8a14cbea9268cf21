//! [`LoopbackAuthorizer`]: the authorization code comes back to a listener on 127.0.0.1
//! (RFC 8252, section 7.3), the way a command-line client gets it from a person's browser.
//!
//! The listener is bound the first time the redirect URI is asked for (port 0: a free
//! one), so a client that never needs to authorize binds nothing. [`Authorizer::authorize`]
//! prints the authorization URL on stderr, tries to open a browser (best effort: only
//! where a desktop is there to show it, and never required), then answers requests to
//! `/callback` until one carries the request's `state` — with `code` (success) or
//! `error` (the person or the server refused) — or the time runs out. The page shown
//! for an error does not repeat the server's text: the flow judges the response's `iss`
//! first (RFC 9207: a mix-up's error is neither acted on nor shown). A redirect with
//! another `state` is refused with 400 and the wait goes on: a stray or forged request
//! cannot end the authorization.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::{AuthorizationRequest, AuthorizationResponse, Authorizer, OAuthFuture};

/// The path of the redirect URI.
const CALLBACK: &str = "/callback";

/// The largest request head read from a browser.
const MAX_HEAD: usize = 16 * 1024;

/// How long one connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// An [`Authorizer`] for a person at a browser: prints (and opens) the authorization URL
/// and receives the redirect on `http://127.0.0.1:PORT/callback`.
///
/// ```no_run
/// use std::time::Duration;
/// use ferry::http_client::oauth::{Authorizer, LoopbackAuthorizer};
///
/// let authorizer = LoopbackAuthorizer::new()
///     .port(8765)
///     .timeout(Duration::from_secs(120))
///     .open_browser(false);
/// assert_eq!(authorizer.redirect_uri(), "http://127.0.0.1:8765/callback");
/// ```
#[derive(Debug)]
pub struct LoopbackAuthorizer {
    port: u16,
    timeout: Duration,
    open_browser: bool,
    /// The bound listener (or why binding failed), once the redirect URI was asked for.
    listener: Mutex<Option<Result<std::net::TcpListener, String>>>,
}

impl Default for LoopbackAuthorizer {
    fn default() -> Self {
        LoopbackAuthorizer::new()
    }
}

impl LoopbackAuthorizer {
    /// Any free port, a five-minute wait, a browser opened when possible.
    pub fn new() -> Self {
        LoopbackAuthorizer {
            port: 0,
            timeout: Duration::from_secs(300),
            open_browser: true,
            listener: Mutex::new(None),
        }
    }

    /// Listen on this port (for an authorization server that only accepts a registered
    /// one); 0, the default, takes any free port.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// How long [`Authorizer::authorize`] waits for the redirect. Default: 5 minutes.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Whether to try to open the authorization URL in a browser (`xdg-open` on Linux
    /// and the BSDs when a display is set, `open` on macOS). Default: yes. The URL is
    /// printed either way.
    pub fn open_browser(mut self, open: bool) -> Self {
        self.open_browser = open;
        self
    }

    /// The bound address, binding now if not yet done.
    fn address(&self) -> Result<SocketAddr, String> {
        let mut listener = self.listener.lock().unwrap_or_else(|e| e.into_inner());
        let bound = listener.get_or_insert_with(|| {
            let bound = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, self.port))
                .and_then(|l| l.set_nonblocking(true).map(|()| l));
            bound.map_err(|e| {
                format!(
                    "cannot listen for the authorization redirect on 127.0.0.1:{}: {e}",
                    self.port
                )
            })
        });
        match bound {
            Ok(l) => l.local_addr().map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        }
    }

    /// A tokio listener on the bound socket.
    fn tokio_listener(&self) -> Result<TcpListener, String> {
        self.address()?;
        let listener = self.listener.lock().unwrap_or_else(|e| e.into_inner());
        let std = match listener.as_ref() {
            Some(Ok(l)) => l.try_clone().map_err(|e| e.to_string())?,
            _ => return Err("the redirect listener is not bound".into()),
        };
        TcpListener::from_std(std).map_err(|e| e.to_string())
    }

    async fn run(&self, request: &AuthorizationRequest) -> Result<AuthorizationResponse, String> {
        let listener = self.tokio_listener()?;
        let redirect = self.redirect_uri();
        eprintln!(
            "Authorization needed: open this URL in a browser and approve the request:\n\n  {}\n\nWaiting up to {} s for the redirect to {redirect} ...",
            request.url,
            self.timeout.as_secs(),
        );
        if self.open_browser {
            open_in_browser(request.url.as_str());
        }
        match tokio::time::timeout(self.timeout, receive(listener, request.state.clone())).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!(
                "no authorization arrived at {redirect} within {} s",
                self.timeout.as_secs()
            )),
        }
    }
}

impl Authorizer for LoopbackAuthorizer {
    /// `http://127.0.0.1:PORT/callback`; binds the listener the first time. When binding
    /// fails this still names the configured port, and [`Authorizer::authorize`] reports
    /// the failure.
    fn redirect_uri(&self) -> String {
        let port = self.address().map(|a| a.port()).unwrap_or(self.port);
        format!("http://127.0.0.1:{port}{CALLBACK}")
    }

    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
    ) -> OAuthFuture<'a, Result<AuthorizationResponse, String>> {
        Box::pin(self.run(request))
    }
}

/// Accept connections until one brings the redirect for `state`; each is served by a task
/// of its own (a browser's idle pre-connection does not hold up the real request).
async fn receive(listener: TcpListener, state: String) -> Result<AuthorizationResponse, String> {
    let (done, mut outcome) = mpsc::channel(1);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    connections.spawn(serve(stream, state.clone(), done.clone()));
                }
            }
            Some(result) = outcome.recv() => return result,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// What one request to the listener means.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// The redirect (with a code or an error): done.
    Received(AuthorizationResponse),
    /// Not the redirect (another path, the wrong state, nothing useful): answered, ignored.
    Ignored(u16, &'static str),
}

/// Read one request, answer it, and report a final verdict on `done`.
async fn serve(
    mut stream: TcpStream,
    state: String,
    done: mpsc::Sender<Result<AuthorizationResponse, String>>,
) {
    let head = match tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream)).await {
        Ok(Some(head)) => head,
        _ => return,
    };
    let verdict = judge(&head, &state);
    let (status, body) = match &verdict {
        Verdict::Received(response) if response.code().is_some() => (
            200,
            page(
                "Authorization complete",
                "You can close this tab and return to the terminal.",
            ),
        ),
        Verdict::Received(_) => (
            200,
            page(
                "Authorization not granted",
                "The authorization did not complete. Return to the terminal for the reason.",
            ),
        ),
        Verdict::Ignored(status, why) => (*status, page("Not an authorization", why)),
    };
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Method Not Allowed",
    };
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nreferrer-policy: no-referrer\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    if let Verdict::Received(response) = verdict {
        let _ = done.send(Ok(response)).await;
    }
}

/// The request line and headers, up to the blank line; `None` when the peer sent none.
async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return None;
        }
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..read]);
    }
    String::from_utf8(head).ok()
}

/// What the request `head` is, for a redirect expected to carry `state`.
fn judge(head: &str, state: &str) -> Verdict {
    let mut line = head.lines().next().unwrap_or_default().split(' ');
    let (method, target) = (
        line.next().unwrap_or_default(),
        line.next().unwrap_or_default(),
    );
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path != CALLBACK {
        return Verdict::Ignored(404, "Nothing here.");
    }
    if method != "GET" {
        return Verdict::Ignored(405, "Only GET is answered here.");
    }
    let Ok(response) = AuthorizationResponse::from_query(query) else {
        return Verdict::Ignored(400, "The redirect carries neither a code nor an error.");
    };
    if response.state.as_deref() != Some(state) {
        return Verdict::Ignored(
            400,
            "This redirect does not belong to the authorization in progress (wrong state).",
        );
    }
    Verdict::Received(response)
}

/// `judge` for the fuzz targets: the redirect taken, or the status answered.
#[cfg(feature = "fuzzing")]
pub(super) fn fuzzing_judge(head: &str, state: &str) -> Result<AuthorizationResponse, u16> {
    match judge(head, state) {
        Verdict::Received(response) => Ok(response),
        Verdict::Ignored(status, _) => Err(status),
    }
}

/// A small HTML page; `text` is escaped.
fn page(title: &str, text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '&' => escaped.push_str("&amp;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body style=\"font-family:sans-serif;margin:3em\"><h1>{title}</h1><p>{escaped}</p></body></html>\n"
    )
}

/// Try to show `url` in a browser; silently nothing where that cannot work.
fn open_in_browser(url: &str) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(unix) {
        // Without a display xdg-open may start a text browser in this very terminal.
        let desktop = ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()));
        if !desktop {
            return;
        }
        "xdg-open"
    } else {
        return;
    };
    let spawned = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = spawned {
        // Reap it whenever it ends; never wait for it here.
        std::thread::spawn(move || child.wait());
    }
}

#[cfg(test)]
mod tests {
    use super::super::{AuthorizationError, AuthorizationOutcome};
    use super::*;

    fn head(target: &str) -> String {
        format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    }

    #[test]
    fn judge_reads_the_redirect() {
        let ok = judge(
            &head("/callback?code=a%2Bb&state=s&iss=http%3A%2F%2Fas"),
            "s",
        );
        assert_eq!(
            ok,
            Verdict::Received(AuthorizationResponse {
                outcome: AuthorizationOutcome::Code("a+b".into()),
                state: Some("s".into()),
                iss: Some("http://as".into()),
            })
        );
        assert_eq!(
            judge(
                &head("/callback?error=access_denied&error_description=no&state=s&iss=x"),
                "s"
            ),
            Verdict::Received(AuthorizationResponse {
                outcome: AuthorizationOutcome::Error(AuthorizationError {
                    error: "access_denied".into(),
                    description: Some("no".into()),
                    uri: None,
                }),
                state: Some("s".into()),
                iss: Some("x".into()),
            })
        );
        assert!(matches!(
            judge(&head("/callback?code=c&state=t"), "s"),
            Verdict::Ignored(400, _)
        ));
        assert!(matches!(
            judge(&head("/callback?code=c"), "s"),
            Verdict::Ignored(400, _)
        ));
        assert!(
            matches!(
                judge(&head("/callback?error=x"), "s"),
                Verdict::Ignored(400, _)
            ),
            "an error without the state cannot end the wait"
        );
        assert!(matches!(
            judge(&head("/callback?state=s"), "s"),
            Verdict::Ignored(400, _)
        ));
        assert!(matches!(
            judge(&head("/favicon.ico"), "s"),
            Verdict::Ignored(404, _)
        ));
        assert!(matches!(
            judge("POST /callback?code=c&state=s HTTP/1.1\r\n\r\n", "s"),
            Verdict::Ignored(405, _)
        ));
        assert!(matches!(judge("", "s"), Verdict::Ignored(404, _)));
    }

    #[test]
    fn pages_escape_what_the_server_said() {
        let html = page("t", "<script>&'\"");
        assert!(html.contains("&lt;script&gt;&amp;&#39;&quot;"), "{html}");
    }
}
