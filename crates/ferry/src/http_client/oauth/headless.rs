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

    async fn follow(
        &self,
        request: &AuthorizationRequest,
    ) -> Result<AuthorizationResponse, String> {
        let mut url = request.url.clone();
        for _ in 0..MAX_HOPS {
            if url.as_str().starts_with(&self.redirect_uri) {
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
