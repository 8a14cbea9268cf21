//! Enterprise-managed authorization (the MCP `ext-auth` extension, SEP-990): the client
//! holds an identity token from the enterprise's identity provider; it exchanges it there
//! (RFC 8693 token exchange) for an Identity Assertion JWT Authorization Grant (ID-JAG)
//! for the MCP server's authorization server, and presents that grant to the authorization
//! server's token endpoint (RFC 7523 JWT bearer grant). No person, no browser.

use reqwest::header::HeaderMap;

use super::OAuthError;
use super::fetch::post_form;

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// What the client needs from its identity provider for enterprise-managed authorization.
#[derive(Clone)]
pub struct IdentityAssertion {
    /// The identity provider's token endpoint (where the token exchange happens).
    pub idp_token_endpoint: String,
    /// The client's id at the identity provider.
    pub idp_client_id: String,
    /// The client's secret at the identity provider, if it has one (sent with
    /// `client_secret_post`).
    pub idp_client_secret: Option<String>,
    /// The person's identity token (an OpenID Connect ID token) from the identity provider.
    pub id_token: String,
}

impl std::fmt::Debug for IdentityAssertion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityAssertion")
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client_id", &self.idp_client_id)
            .finish_non_exhaustive()
    }
}

impl IdentityAssertion {
    /// Exchange the identity token for an ID-JAG addressed to the authorization server
    /// `audience` (its issuer), for `resource`, with `scope`.
    pub(crate) async fn grant(
        &self,
        http: &reqwest::Client,
        audience: &str,
        resource: &str,
        scope: Option<&str>,
    ) -> Result<String, OAuthError> {
        let url = &self.idp_token_endpoint;
        let mut form = vec![
            ("grant_type".to_owned(), TOKEN_EXCHANGE.to_owned()),
            ("requested_token_type".to_owned(), ID_JAG.to_owned()),
            ("subject_token".to_owned(), self.id_token.clone()),
            ("subject_token_type".to_owned(), ID_TOKEN.to_owned()),
            ("audience".to_owned(), audience.to_owned()),
            ("resource".to_owned(), resource.to_owned()),
            ("client_id".to_owned(), self.idp_client_id.clone()),
        ];
        if let Some(secret) = &self.idp_client_secret {
            form.push(("client_secret".to_owned(), secret.clone()));
        }
        if let Some(scope) = scope.filter(|s| !s.is_empty()) {
            form.push(("scope".to_owned(), scope.to_owned()));
        }
        let response = post_form(http, url, HeaderMap::new(), &form).await?;
        let body = &response.body;
        if !(200..300).contains(&response.status) {
            return Err(OAuthError::TokenRefused {
                url: url.clone(),
                error: body["error"]
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("HTTP {}", response.status)),
                description: body["error_description"].as_str().map(str::to_owned),
            });
        }
        if body["issued_token_type"].as_str() != Some(ID_JAG) {
            return Err(OAuthError::InvalidResponse {
                url: url.clone(),
                message: format!(
                    "the token exchange issued {:?}, not an ID-JAG",
                    body["issued_token_type"]
                ),
            });
        }
        body["access_token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| OAuthError::InvalidResponse {
                url: url.clone(),
                message: "the token exchange response has no access_token".into(),
            })
    }
}
