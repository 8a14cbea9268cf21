//! Authorization of the client commands' HTTP requests (`--url`), and `ferry check`'s: the
//! server's last refusal (401/403) and the last failure to produce credentials are
//! remembered, so that a command failing for want of authorization says so — with the
//! server's challenge — and exits with [`EXIT_UNAUTHORIZED`].

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use ferry::client::ClientError;
use ferry::http_client::oauth::OAuthClient;
use ferry::http_client::{AuthChallenge, AuthFuture, HttpAuth};
use reqwest::header::HeaderMap;

use super::oauth::Authorization;

/// The exit code of a command the server refused for want of authorization, or whose
/// authorization failed.
pub(crate) const EXIT_UNAUTHORIZED: u8 = 3;

/// The longest challenge quoted in an error message.
const MAX_CHALLENGE: usize = 300;

/// The HTTP client's auth hook: delegates to OAuth (when on) and remembers the last
/// refusal and the last failure to produce credentials.
pub(crate) struct Gate {
    inner: Option<OAuthClient>,
    /// Why authorization is off (`--no-auth`, an `Authorization` header given), for the
    /// error message.
    off: Option<&'static str>,
    refused: Mutex<Option<AuthChallenge>>,
    /// Why `inner` could not give the headers of a request (a failed refresh, say).
    broken: Mutex<Option<String>>,
    /// A challenge could not be answered: the command does not ask again (a person who
    /// refused is not asked once more for each request the client tries).
    gave_up: AtomicBool,
}

impl Gate {
    /// A gate around `authorization`.
    pub(crate) fn new(authorization: Authorization) -> Gate {
        let (inner, off) = match authorization {
            Authorization::OAuth(client) => (Some(client), None),
            Authorization::Off(why) => (None, Some(why)),
        };
        Gate {
            inner,
            off,
            refused: Mutex::new(None),
            broken: Mutex::new(None),
            gave_up: AtomicBool::new(false),
        }
    }

    /// Whether `error` (what a command failed with) is a failure of authorization, and
    /// then a message saying so: the server's refusal with its challenge and what could
    /// help, or why no credentials could be had.
    pub(crate) fn failure(&self, error: &ClientError) -> Option<String> {
        let status = error.transport().and_then(|failure| failure.status);
        if !matches!(status, Some(401 | 403)) {
            let broken = self.broken.lock().unwrap_or_else(|e| e.into_inner());
            return broken.clone();
        }
        self.refused_text()
            .or_else(|| Some(format!("the server answered HTTP {}", status.unwrap_or(0))))
    }

    /// The server's refusal that authorization could not overcome, if there was one:
    /// what to say about it (for `ferry check`, whose requests are not a client's calls).
    pub(crate) fn refusal(&self) -> Option<String> {
        if !self.gave_up.load(Ordering::Relaxed) {
            return None;
        }
        self.refused_text()
    }

    /// The last refusal, its challenge and what could help.
    fn refused_text(&self) -> Option<String> {
        let refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        let challenge = refused.as_ref()?;
        let status = match challenge.status {
            401 => "401 Unauthorized",
            403 => "403 Forbidden",
            _ => "a refusal",
        };
        let mut text = format!("the server at {} answered {status}", challenge.url);
        if let Some(header) = challenge.www_authenticate.first() {
            let mut quoted: String = header.chars().take(MAX_CHALLENGE).collect();
            if quoted.len() < header.len() {
                quoted.push('…');
            }
            text.push_str(&format!(" (WWW-Authenticate: {quoted})"));
        }
        let why = self.inner.as_ref().and_then(OAuthClient::last_error);
        match (self.off, why) {
            (Some(off), _) => text.push_str(&format!("; authorization is off ({off})")),
            (None, Some(why)) => text.push_str(&format!(": {why}")),
            (None, None) if challenge.status == 403 => {
                text.push_str("; the token lacks a scope this needs (see --scope)");
            }
            (None, None) => text.push_str("; the new token was refused too"),
        }
        Some(text)
    }
}

impl HttpAuth for Gate {
    fn headers(&self) -> AuthFuture<'_, Result<HeaderMap, String>> {
        Box::pin(async move {
            let Some(inner) = &self.inner else {
                return Ok(HeaderMap::new());
            };
            let headers = inner.headers().await;
            if let Err(e) = &headers {
                *self.broken.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.clone());
            }
            headers
        })
    }

    fn challenged<'a>(&'a self, challenge: &'a AuthChallenge) -> AuthFuture<'a, bool> {
        Box::pin(async move {
            let overcome = match &self.inner {
                Some(inner) if !self.gave_up.load(Ordering::Relaxed) => {
                    inner.challenged(challenge).await
                }
                _ => false,
            };
            if !overcome {
                self.gave_up.store(true, Ordering::Relaxed);
            }
            // Kept even when overcome: the request sent again may be refused once more.
            *self.refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(challenge.clone());
            overcome
        })
    }
}
