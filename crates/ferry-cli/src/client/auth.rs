//! Authorization of the client commands' HTTP requests (`--url`): the server's last
//! refusal (401/403) and the last failure to produce credentials are remembered, so that
//! a command failing for want of authorization says so — with the server's challenge —
//! and exits with [`EXIT_UNAUTHORIZED`].

use std::sync::{Arc, Mutex};

use ferry::client::ClientError;
use ferry::http_client::{AuthChallenge, AuthFuture, HttpAuth};
use reqwest::header::HeaderMap;

/// The exit code of a command the server refused for want of authorization, or whose
/// authorization failed.
pub(crate) const EXIT_UNAUTHORIZED: u8 = 3;

/// The longest challenge quoted in an error message.
const MAX_CHALLENGE: usize = 300;

/// The HTTP client's auth hook: delegates to `inner` (OAuth, when on) and remembers the
/// last refusal and the last failure to produce credentials.
pub(crate) struct Gate {
    inner: Option<Arc<dyn HttpAuth>>,
    /// Why authorization is off (`--no-auth`, an `Authorization` header given), for the
    /// error message.
    off: Option<&'static str>,
    refused: Mutex<Option<AuthChallenge>>,
    /// Why `inner` could not give the headers of a request (a failed refresh, say).
    broken: Mutex<Option<String>>,
}

impl Gate {
    /// A gate around `inner`; `off`: why there is none.
    pub(crate) fn new(inner: Option<Arc<dyn HttpAuth>>, off: Option<&'static str>) -> Gate {
        Gate {
            inner,
            off,
            refused: Mutex::new(None),
            broken: Mutex::new(None),
        }
    }

    /// Whether `error` (what a command failed with) is a failure of authorization, and
    /// then a message saying so: the server's refusal with its challenge and what could
    /// help, or why no credentials could be had.
    pub(crate) fn failure(&self, error: &ClientError) -> Option<String> {
        let status = error
            .rpc()
            .and_then(|rpc| rpc.data.as_ref())
            .and_then(|data| data.get("httpStatus"))
            .and_then(serde_json::Value::as_u64);
        if !matches!(status, Some(401 | 403)) {
            let broken = self.broken.lock().unwrap_or_else(|e| e.into_inner());
            return broken.clone();
        }
        let refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        let Some(challenge) = refused.as_ref() else {
            return Some(format!("the server answered HTTP {}", status.unwrap_or(0)));
        };
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
        match self.off {
            Some(why) => text.push_str(&format!("; authorization is off ({why})")),
            None if challenge.status == 403 => {
                text.push_str("; the token lacks a scope this needs (see --scope)");
            }
            None => text.push_str("; the authorization did not succeed"),
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
                Some(inner) => inner.challenged(challenge).await,
                None => false,
            };
            // Kept even when overcome: the request sent again may be refused once more.
            *self.refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(challenge.clone());
            overcome
        })
    }
}
