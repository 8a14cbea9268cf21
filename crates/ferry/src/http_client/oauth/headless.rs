//! [`HeadlessAuthorizer`]: for authorization servers that approve without a person (test
//! servers, automation): it follows the authorization endpoint's redirects itself until
//! one goes to the redirect URI, and reads the code from there. The redirect URI is never
//! contacted.

use std::time::Duration;

use reqwest::header::LOCATION;

use super::{AuthorizationRequest, AuthorizationResponse, Authorizer, OAuthFuture};

/// How many redirects are followed before giving up.
const MAX_HOPS: usize = 10;

/// An [`Authorizer`] that follows the authorization server's redirects over HTTP (no
/// browser, no person) and takes the code from the redirect to its redirect URI.
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

/// `code`, `state` and `iss` of the redirect (or its `error`).
fn response_of(url: &url::Url) -> Result<AuthorizationResponse, String> {
    let get = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if let Some(error) = get("error") {
        let description = get("error_description").unwrap_or_default();
        return Err(
            format!("the authorization server refused: {error} {description}")
                .trim_end()
                .to_owned(),
        );
    }
    let code = get("code").ok_or("the redirect carries no code")?;
    Ok(AuthorizationResponse {
        code,
        state: get("state"),
        iss: get("iss"),
    })
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
            (ok.code.as_str(), ok.state.as_deref(), ok.iss.as_deref()),
            ("c", Some("s"), Some("https://as"))
        );
        let refused = read("http://x/cb?error=access_denied&error_description=no").unwrap_err();
        assert_eq!(
            refused,
            "the authorization server refused: access_denied no"
        );
        assert!(read("http://x/cb?state=s").is_err());
    }
}
