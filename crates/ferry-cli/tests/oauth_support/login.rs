//! A headless person at oidc-provider's development pages: follows the authorization URL
//! with a cookie-keeping HTTP client, signs in with any name, approves the consent page,
//! and stops at the redirect back to the client (which it can then deliver, as a browser
//! would, to the client's loopback listener).

use std::collections::BTreeMap;

use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};

/// The most requests one approval may take (the provider needs about eight).
const MAX_STEPS: usize = 20;

/// A browser without a screen: cookies kept by name (the provider's few cookies have
/// distinct names, so their paths need not be told apart), redirects followed by hand.
pub struct Person {
    http: reqwest::Client,
    cookies: BTreeMap<String, String>,
    /// The login name typed on the sign-in page.
    pub login: String,
    /// What each page was: `login` or `consent`, in order.
    pub pages: Vec<String>,
    /// Refuse instead: follow the sign-in page's abort link ("Cancel").
    pub refuse: bool,
}

impl Person {
    /// A person who signs in as `login`.
    pub fn new(login: &str) -> Person {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("an HTTP client");
        Person {
            http,
            cookies: BTreeMap::new(),
            login: login.to_owned(),
            pages: Vec::new(),
            refuse: false,
        }
    }

    /// Follow `authorization_url` on the provider, sign in and consent; returns the URL
    /// the provider redirects to outside itself (the client's redirect URI with `code`,
    /// `state` and `iss`, or with `error`).
    pub async fn approve(&mut self, authorization_url: &str) -> Result<reqwest::Url, String> {
        let start = reqwest::Url::parse(authorization_url).map_err(|e| e.to_string())?;
        let origin = start.origin();
        let mut url = start;
        let mut form: Option<Vec<(&str, String)>> = None;
        for _ in 0..MAX_STEPS {
            let request = match form.take() {
                Some(fields) => self.http.post(url.clone()).form(&fields),
                None => self.http.get(url.clone()),
            };
            let response = self
                .cookies_for(request)
                .send()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            self.keep_cookies(&response);
            let status = response.status();
            if status.is_redirection() {
                let location = response
                    .headers()
                    .get(LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| format!("{url}: a redirect without a location"))?;
                let next = url.join(location).map_err(|e| e.to_string())?;
                if next.origin() != origin {
                    return Ok(next);
                }
                url = next;
                continue;
            }
            let body = response.text().await.unwrap_or_default();
            if status != StatusCode::OK {
                return Err(format!("{url}: {status}: {}", snippet(&body)));
            }
            let action = form_action(&body)
                .ok_or_else(|| format!("{url}: a page without a form: {}", snippet(&body)))?;
            let prompt = if body.contains(r#"name="prompt" value="login""#) {
                "login"
            } else if body.contains(r#"name="prompt" value="consent""#) {
                "consent"
            } else {
                return Err(format!(
                    "{url}: neither sign-in nor consent: {}",
                    snippet(&body)
                ));
            };
            self.pages.push(prompt.to_owned());
            if self.refuse {
                // The pages' "[ Cancel ]" link: the provider redirects with access_denied.
                url = url
                    .join(&format!("{}/abort", action.trim_end_matches('/')))
                    .map_err(|e| e.to_string())?;
                continue;
            }
            let mut fields = vec![("prompt", prompt.to_owned())];
            if prompt == "login" {
                fields.push(("login", self.login.clone()));
                fields.push(("password", "any".to_owned()));
            }
            form = Some(fields);
            url = url.join(&action).map_err(|e| e.to_string())?;
        }
        Err(format!(
            "no redirect back to the client after {MAX_STEPS} requests"
        ))
    }

    fn cookies_for(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if self.cookies.is_empty() {
            return request;
        }
        let header = self
            .cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ");
        request.header(COOKIE, header)
    }

    fn keep_cookies(&mut self, response: &reqwest::Response) {
        for value in response.headers().get_all(SET_COOKIE) {
            let Ok(header) = value.to_str() else { continue };
            let pair = header.split(';').next().unwrap_or_default();
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            // Cleared cookies come back empty, or expired at the epoch.
            let expired = value.is_empty() || header.contains("01 Jan 1970");
            if expired {
                self.cookies.remove(name.trim());
            } else {
                self.cookies
                    .insert(name.trim().to_owned(), value.trim().to_owned());
            }
        }
    }
}

/// Deliver the redirect to the client's loopback listener, as the browser would; returns
/// the listener's status.
pub async fn deliver(redirect: &reqwest::Url) -> Result<StatusCode, String> {
    reqwest::get(redirect.clone())
        .await
        .map(|r| r.status())
        .map_err(|e| format!("{redirect}: {e}"))
}

/// The `action` of the page's first form, HTML entities in it decoded.
fn form_action(html: &str) -> Option<String> {
    let form = &html[html.find("<form")?..];
    let start = form.find("action=\"")? + "action=\"".len();
    let end = start + form[start..].find('"')?;
    Some(
        form[start..end]
            .replace("&amp;", "&")
            .replace("&#x2F;", "/")
            .replace("&#47;", "/"),
    )
}

fn snippet(body: &str) -> String {
    body.chars().take(300).collect()
}
