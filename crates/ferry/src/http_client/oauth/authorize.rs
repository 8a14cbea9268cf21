//! How the person (or a headless agent) approves an authorization request: the
//! [`Authorizer`] trait, given the authorization URL, returns what came back on the
//! redirect URI.

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

/// What came back on the redirect URI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorizationResponse {
    /// The authorization code.
    pub code: String,
    /// The `state` parameter of the redirect (checked against the request's).
    pub state: Option<String>,
    /// The RFC 9207 `iss` parameter of the redirect, if any (checked against the issuer).
    pub iss: Option<String>,
}

/// Gets the authorization code: sends the person to the authorization URL and waits for
/// the redirect back. Implementations: `LoopbackAuthorizer` (a browser and a listener on
/// 127.0.0.1) and, for tests and automation against servers that approve without a
/// person, a headless one that follows the redirects itself.
pub trait Authorizer: Send + Sync + 'static {
    /// The redirect URI registered with / sent to the authorization server.
    fn redirect_uri(&self) -> String;
    /// Send the person to `request.url` and wait for the redirect back. An error (the
    /// person refused, a timeout, the server answered `error=...`) is a message.
    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
    ) -> OAuthFuture<'a, Result<AuthorizationResponse, String>>;
}
