//! The token endpoint: grants (authorization code, refresh token, client credentials,
//! JWT bearer) and client authentication (`client_secret_basic`, `client_secret_post`,
//! `none`, `private_key_jwt`), with the RFC 8707 `resource` on every request.

use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::Value;

use super::discovery::ServerMetadata;
use super::fetch::post_form;
use super::jwt_auth::{ASSERTION_TYPE, JwtSigner};
use super::{ClientCredentials, OAuthError, TokenSet};

/// What is exchanged for a token.
pub(crate) enum Grant<'a> {
    /// An authorization code, with its PKCE verifier and the redirect URI it came to.
    AuthorizationCode {
        /// The code.
        code: &'a str,
        /// The PKCE verifier.
        verifier: &'a str,
        /// The redirect URI of the authorization request.
        redirect_uri: &'a str,
    },
    /// A refresh token.
    Refresh(&'a str),
    /// The client's own credentials.
    ClientCredentials,
    /// An assertion grant (RFC 7523), e.g. an identity assertion authorization grant.
    JwtBearer(&'a str),
}

/// The client authentication method used with `client` at this server: the registered
/// one, else (with a secret) basic or post as the server supports, else `private_key_jwt`
/// with a key, else `none`.
pub(crate) fn auth_method(
    client: &ClientCredentials,
    metadata: &ServerMetadata,
    signer: Option<&JwtSigner>,
) -> String {
    if let Some(method) = &client.token_endpoint_auth_method {
        return method.clone();
    }
    let supported = metadata.token_endpoint_auth_methods_supported.as_deref();
    let offers = |m: &str| supported.is_none_or(|s| s.iter().any(|x| x == m));
    if client.client_secret.is_some() {
        if offers("client_secret_basic") {
            return "client_secret_basic".into();
        }
        if supported.is_some_and(|s| s.iter().any(|x| x == "client_secret_post")) {
            return "client_secret_post".into();
        }
        return "client_secret_basic".into();
    }
    if signer.is_some() {
        return "private_key_jwt".into();
    }
    "none".into()
}

/// Request a token: `grant`, for `resource`, with `scope` (if any), authenticated as
/// `client`.
pub(crate) async fn request_token(
    http: &reqwest::Client,
    metadata: &ServerMetadata,
    client: &ClientCredentials,
    signer: Option<&JwtSigner>,
    grant: Grant<'_>,
    resource: &str,
    scope: Option<&str>,
) -> Result<TokenSet, OAuthError> {
    let url = metadata.token_endpoint.as_deref().ok_or_else(|| {
        OAuthError::Discovery(format!(
            "the authorization server {} has no token endpoint",
            metadata.issuer
        ))
    })?;
    let mut form: Vec<(String, String)> = Vec::new();
    let mut add = |k: &str, v: &str| form.push((k.to_owned(), v.to_owned()));
    match grant {
        Grant::AuthorizationCode {
            code,
            verifier,
            redirect_uri,
        } => {
            add("grant_type", "authorization_code");
            add("code", code);
            add("code_verifier", verifier);
            add("redirect_uri", redirect_uri);
        }
        Grant::Refresh(token) => {
            add("grant_type", "refresh_token");
            add("refresh_token", token);
        }
        Grant::ClientCredentials => add("grant_type", "client_credentials"),
        Grant::JwtBearer(assertion) => {
            add("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer");
            add("assertion", assertion);
        }
    }
    add("resource", resource);
    if let Some(scope) = scope.filter(|s| !s.is_empty()) {
        add("scope", scope);
    }
    let mut headers = HeaderMap::new();
    match auth_method(client, metadata, signer).as_str() {
        "client_secret_basic" => {
            let secret = client.client_secret.as_deref().unwrap_or_default();
            // RFC 6749 section 2.3.1: both form-urlencoded before base64.
            let pair = format!("{}:{}", form_encode(&client.client_id), form_encode(secret));
            let value = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            );
            let value = HeaderValue::try_from(value)
                .map_err(|_| OAuthError::Config("client credentials not sendable".into()))?;
            headers.insert(AUTHORIZATION, value);
        }
        "client_secret_post" => {
            form.push(("client_id".into(), client.client_id.clone()));
            let secret = client.client_secret.clone().unwrap_or_default();
            form.push(("client_secret".into(), secret));
        }
        "private_key_jwt" => {
            let signer = signer.ok_or_else(|| {
                OAuthError::Config(
                    "the client authenticates with private_key_jwt but has no key".into(),
                )
            })?;
            let assertion = signer.assertion(&client.client_id, &metadata.issuer)?;
            form.push(("client_id".into(), client.client_id.clone()));
            form.push(("client_assertion_type".into(), ASSERTION_TYPE.into()));
            form.push(("client_assertion".into(), assertion));
        }
        _ => form.push(("client_id".into(), client.client_id.clone())),
    }
    let response = post_form(http, url, headers, &form).await?;
    token_set(url, response.status, &response.body, scope)
}

/// The [`TokenSet`] of a token endpoint response (or its error).
pub(crate) fn token_set(
    url: &str,
    status: u16,
    body: &Value,
    requested_scope: Option<&str>,
) -> Result<TokenSet, OAuthError> {
    if !(200..300).contains(&status) {
        return Err(OAuthError::TokenRefused {
            url: url.to_owned(),
            error: body["error"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("HTTP {status}")),
            description: body["error_description"].as_str().map(str::to_owned),
        });
    }
    let invalid = |m: &str| OAuthError::InvalidResponse {
        url: url.to_owned(),
        message: m.to_owned(),
    };
    let access_token = body["access_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| invalid("no access_token"))?;
    let token_type = body["token_type"].as_str().unwrap_or("Bearer");
    if !token_type.eq_ignore_ascii_case("bearer") {
        return Err(invalid(&format!("token_type {token_type:?} is not Bearer")));
    }
    let issued_at = super::client::now();
    let expires_at = body["expires_in"]
        .as_u64()
        .or_else(|| body["expires_in"].as_str().and_then(|s| s.parse().ok()))
        .map(|secs| issued_at.saturating_add(secs));
    Ok(TokenSet {
        access_token: access_token.to_owned(),
        token_type: "Bearer".into(),
        refresh_token: body["refresh_token"].as_str().map(str::to_owned),
        expires_at,
        scope: body["scope"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| requested_scope.map(str::to_owned)),
        issued_at: Some(issued_at),
    })
}

fn form_encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn token_responses() {
        let ok = token_set(
            "t",
            200,
            &json!({"access_token": "a", "token_type": "bearer", "expires_in": 60}),
            Some("s"),
        )
        .unwrap();
        assert_eq!(ok.scope.as_deref(), Some("s"));
        assert!(ok.expires_at.is_some());
        let refused = token_set("t", 400, &json!({"error": "invalid_grant"}), None);
        assert!(
            matches!(refused, Err(OAuthError::TokenRefused { ref error, .. }) if error == "invalid_grant")
        );
        assert!(token_set("t", 200, &json!({"token_type": "Bearer"}), None).is_err());
        assert!(
            token_set(
                "t",
                200,
                &json!({"access_token": "a", "token_type": "mac"}),
                None
            )
            .is_err()
        );
        assert!(token_set("t", 500, &Value::Null, None).is_err());
    }

    #[test]
    fn method_selection() {
        let mut metadata = ServerMetadata::default();
        let mut client = ClientCredentials {
            client_id: "c".into(),
            client_secret: Some("s".into()),
            token_endpoint_auth_method: None,
        };
        assert_eq!(auth_method(&client, &metadata, None), "client_secret_basic");
        metadata.token_endpoint_auth_methods_supported = Some(vec!["client_secret_post".into()]);
        assert_eq!(auth_method(&client, &metadata, None), "client_secret_post");
        client.client_secret = None;
        assert_eq!(auth_method(&client, &metadata, None), "none");
        client.token_endpoint_auth_method = Some("private_key_jwt".into());
        assert_eq!(auth_method(&client, &metadata, None), "private_key_jwt");
    }
}
