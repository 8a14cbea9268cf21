//! How the person (or a headless agent) approves an authorization request: the
//! [`Authorizer`] trait, given the authorization URL, returns what came back on the
//! redirect URI — a code or the authorization server's error, with `state` and `iss` —
//! unjudged: the flow checks `iss` (RFC 9207) and `state` on every response, error
//! responses included, before it acts on the code or reports the error.

use std::fmt;

use super::store::OAuthFuture;

/// An authorization request to approve: open `url` in a browser (or follow it).
#[derive(Clone, Debug)]
pub struct AuthorizationRequest {
    /// The authorization endpoint with every query parameter (PKCE challenge, state,
    /// resource, scope, redirect URI, ...).
    pub url: url::Url,
    /// The `state` sent; the redirect must carry it back.
    pub state: String,
}

/// What came back on the redirect URI (RFC 6749 section 4.1.2): a code or an error,
/// and the `state` and RFC 9207 `iss` parameters that came with either.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorizationResponse {
    /// The code, or the authorization server's error.
    pub outcome: AuthorizationOutcome,
    /// The `state` parameter of the redirect (checked against the request's).
    pub state: Option<String>,
    /// The RFC 9207 `iss` parameter of the redirect, if any (checked against the issuer).
    pub iss: Option<String>,
}

/// The code or the error of an [`AuthorizationResponse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthorizationOutcome {
    /// `code=...`: the authorization code.
    Code(String),
    /// `error=...`: the authorization server (or the person) refused. Not to be acted on
    /// or shown before the response's `iss` and `state` are checked.
    Error(AuthorizationError),
}

/// An error response's parameters (RFC 6749 section 4.1.2.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorizationError {
    /// The `error` code (`access_denied`, `invalid_scope`, ...).
    pub error: String,
    /// The `error_description`, if any.
    pub description: Option<String>,
    /// The `error_uri`, if any.
    pub uri: Option<String>,
}

impl fmt::Display for AuthorizationError {
    /// `error (description)`; the server's text with control characters replaced and at
    /// most 300 characters of the description.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let clean = |s: &str, max: usize| -> String {
            s.chars()
                .take(max)
                .map(|c| if c.is_control() { '?' } else { c })
                .collect()
        };
        write!(f, "{}", clean(&self.error, 100))?;
        if let Some(description) = &self.description {
            write!(f, " ({})", clean(description, 300))?;
        }
        Ok(())
    }
}

impl AuthorizationResponse {
    /// The response in a redirect's query string (`code` or `error`, `error_description`,
    /// `error_uri`, `state`, `iss`; the first of each counts, `error` wins over `code`).
    /// An error when it carries neither a code nor an error.
    ///
    /// ```
    /// use ferry::http_client::oauth::{AuthorizationOutcome, AuthorizationResponse};
    ///
    /// let r = AuthorizationResponse::from_query("error=access_denied&state=s&iss=https%3A%2F%2Fas").unwrap();
    /// assert!(matches!(&r.outcome, AuthorizationOutcome::Error(e) if e.error == "access_denied"));
    /// assert_eq!((r.state.as_deref(), r.iss.as_deref()), (Some("s"), Some("https://as")));
    /// assert_eq!(AuthorizationResponse::from_query("code=c").unwrap().code(), Some("c"));
    /// assert!(AuthorizationResponse::from_query("state=s").is_err());
    /// ```
    pub fn from_query(query: &str) -> Result<AuthorizationResponse, String> {
        let (mut code, mut state, mut iss) = (None, None, None);
        let (mut error, mut description, mut uri) = (None, None, None);
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let slot = match name.as_ref() {
                "code" => &mut code,
                "state" => &mut state,
                "iss" => &mut iss,
                "error" => &mut error,
                "error_description" => &mut description,
                "error_uri" => &mut uri,
                _ => continue,
            };
            slot.get_or_insert(value.into_owned());
        }
        let outcome = match (code, error) {
            (_, Some(error)) => AuthorizationOutcome::Error(AuthorizationError {
                error,
                description,
                uri,
            }),
            (Some(code), None) => AuthorizationOutcome::Code(code),
            (None, None) => return Err("the redirect carries neither a code nor an error".into()),
        };
        Ok(AuthorizationResponse {
            outcome,
            state,
            iss,
        })
    }

    /// The authorization code, if the response carries one.
    pub fn code(&self) -> Option<&str> {
        match &self.outcome {
            AuthorizationOutcome::Code(code) => Some(code),
            AuthorizationOutcome::Error(_) => None,
        }
    }
}

/// Gets the authorization response: sends the person to the authorization URL and waits
/// for the redirect back. Implementations: `LoopbackAuthorizer` (a browser and a listener
/// on 127.0.0.1) and, for tests and automation against servers that approve without a
/// person, a headless one that follows the redirects itself.
pub trait Authorizer: Send + Sync + 'static {
    /// The redirect URI registered with / sent to the authorization server.
    fn redirect_uri(&self) -> String;
    /// Send the person to `request.url` and wait for the redirect back. A redirect with
    /// `error=...` is an `Ok` [`AuthorizationResponse`] with an
    /// [`AuthorizationOutcome::Error`] (its `iss` and `state` are judged by the flow
    /// before the error is reported); `Err` is for what kept any response from arriving
    /// (a timeout, a listener that cannot bind, a network failure), as a message.
    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
    ) -> OAuthFuture<'a, Result<AuthorizationResponse, String>>;
}
