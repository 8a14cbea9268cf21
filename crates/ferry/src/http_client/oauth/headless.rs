//! [`HeadlessAuthorizer`]: for authorization servers that approve without a person (test
//! servers, automation): it follows the authorization endpoint's redirects itself until
//! one goes to the redirect URI, and reads the response (code or error) from there. The
//! redirect URI is never contacted.

use std::time::Duration;

use reqwest::header::LOCATION;

use super::{AuthorizationRequest, AuthorizationResponse, Authorizer, OAuthFuture};

/// How many redirects are followed before giving up.
const MAX_HOPS: usize = 10;

/// An [`Authorizer`] that follows the authorization server's redirects over HTTP (no
/// browser, no person) and takes the response (code or error) from the redirect to its redirect URI.
#[derive(Debug, Clone)]
pub struct HeadlessAuthorizer {
    redirect_uri: String,
    http: reqwest::Client,
}

impl HeadlessAuthorizer {
    /// Redirects to `redirect_uri` (say `http://127.0.0.1/callback`; nothing listens
    /// there) end the authorization.
    pub fn new(redirect_uri: &str) -> HeadlessAuthorizer {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap_or_default();
        HeadlessAuthorizer {
            redirect_uri: redirect_uri.to_owned(),
            http,
        }
    }

    /// Whether `url` is the redirect URI (its query aside).
    fn is_redirect_uri(&self, url: &url::Url) -> bool {
        let Ok(redirect) = url::Url::parse(&self.redirect_uri) else {
            return false;
        };
        url.origin() == redirect.origin() && url.path() == redirect.path()
    }

    async fn follow(
        &self,
        request: &AuthorizationRequest,
    ) -> Result<AuthorizationResponse, String> {
        let mut url = request.url.clone();
        for _ in 0..MAX_HOPS {
            if self.is_redirect_uri(&url) {
                return response_of(&url);
            }
            let response = self
                .http
                .get(url.clone())
                .send()
                .await
                .map_err(|e| format!("GET {}: {e}", strip_query(&url)))?;
            let status = response.status();
            if !status.is_redirection() {
                return Err(format!(
                    "{} answered HTTP {status} instead of redirecting",
                    strip_query(&url)
                ));
            }
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| format!("{} redirected without a Location", strip_query(&url)))?;
            url = url
                .join(location)
                .map_err(|e| format!("bad redirect Location: {e}"))?;
        }
        Err(format!("more than {MAX_HOPS} redirects"))
    }
}

/// The response on the redirect: `code` or `error`, with `state` and `iss`.
fn response_of(url: &url::Url) -> Result<AuthorizationResponse, String> {
    AuthorizationResponse::from_query(url.query().unwrap_or_default())
}

fn strip_query(url: &url::Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.to_string()
}

impl Authorizer for HeadlessAuthorizer {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
    ) -> OAuthFuture<'a, Result<AuthorizationResponse, String>> {
        Box::pin(self.follow(request))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{AuthorizationError, AuthorizationOutcome};
    use super::*;

    #[test]
    fn the_redirect_uri_is_matched_exactly_and_read() {
        let authorizer = HeadlessAuthorizer::new("http://127.0.0.1:9/callback");
        let at = |u: &str| authorizer.is_redirect_uri(&url::Url::parse(u).unwrap());
        assert!(at("http://127.0.0.1:9/callback?code=c&state=s"));
        assert!(!at("http://127.0.0.1:9/callbackx?code=c"));
        assert!(!at("http://127.0.0.1:8/callback?code=c"));
        let read = |u: &str| response_of(&url::Url::parse(u).unwrap());
        let ok = read("http://x/cb?code=c&state=s&iss=https%3A%2F%2Fas").unwrap();
        assert_eq!(
            ok,
            AuthorizationResponse {
                outcome: AuthorizationOutcome::Code("c".into()),
                state: Some("s".into()),
                iss: Some("https://as".into()),
            }
        );
        // An error redirect is a response too: its iss and state go to the flow.
        let refused =
            read("http://x/cb?error=access_denied&error_description=no&state=s&iss=i").unwrap();
        assert_eq!(
            refused,
            AuthorizationResponse {
                outcome: AuthorizationOutcome::Error(AuthorizationError {
                    error: "access_denied".into(),
                    description: Some("no".into()),
                    uri: None,
                }),
                state: Some("s".into()),
                iss: Some("i".into()),
            }
        );
        assert!(read("http://x/cb?state=s").is_err());
    }
}
