//! The authorization-code grant: the authorization request (PKCE S256, `state`, the RFC 8707
//! `resource`, the scope), the person's approval through the [`Authorizer`], the checks on
//! the response (RFC 9207 `iss` as the 2026-07-28 specification tabulates it, then `state`
//! — on error responses too: an error is reported only once both hold), and the code
//! exchanged at the token endpoint.

use url::Url;

use super::client::Config;
use super::discovery::Discovered;
use super::pkce::{Pkce, random_token};
use super::token::{Grant, request_token};
use super::{
    AuthorizationOutcome, AuthorizationRequest, Authorizer, ClientCredentials, OAuthError, TokenSet,
};

/// The authorization-code grant with PKCE S256, `state` and the RFC 9207 check.
pub(crate) async fn authorization_code(
    config: &Config,
    authorizer: &dyn Authorizer,
    discovered: &Discovered,
    client: &ClientCredentials,
    redirect_uri: &str,
    scope: Option<&str>,
) -> Result<TokenSet, OAuthError> {
    let metadata = &discovered.metadata;
    let endpoint = metadata.authorization_endpoint.as_deref().ok_or_else(|| {
        OAuthError::Discovery(format!(
            "the authorization server {} has no authorization endpoint",
            metadata.issuer
        ))
    })?;
    let mut url = Url::parse(endpoint).map_err(|e| OAuthError::InvalidResponse {
        url: metadata.issuer.clone(),
        message: format!("authorization_endpoint {endpoint:?}: {e}"),
    })?;
    let pkce = Pkce::new()?;
    let state_value = random_token(24)?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &client.client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state_value)
            .append_pair("resource", &discovered.resource);
        if let Some(scope) = scope.filter(|s| !s.is_empty()) {
            query.append_pair("scope", scope);
        }
    }
    let request = AuthorizationRequest {
        url,
        state: state_value.clone(),
    };
    let response = authorizer
        .authorize(&request)
        .await
        .map_err(OAuthError::Authorization)?;
    // RFC 9207 section 2.4, as the 2026-07-28 specification tabulates it, for error
    // responses as for codes: a mismatch is reported instead of the error (which may be a
    // mix-up attacker's), and nothing of it is acted on.
    match &response.iss {
        Some(iss) if *iss != metadata.issuer => {
            return Err(OAuthError::IssuerMismatch {
                expected: metadata.issuer.clone(),
                got: Some(iss.clone()),
            });
        }
        None if metadata.authorization_response_iss_parameter_supported => {
            return Err(OAuthError::IssuerMismatch {
                expected: metadata.issuer.clone(),
                got: None,
            });
        }
        _ => {}
    }
    if response.state.as_deref() != Some(state_value.as_str()) {
        return Err(OAuthError::StateMismatch);
    }
    let code = match response.outcome {
        AuthorizationOutcome::Code(code) => code,
        AuthorizationOutcome::Error(error) => return Err(OAuthError::AuthorizationRefused(error)),
    };
    request_token(
        &config.http,
        metadata,
        client,
        config.signer.as_ref(),
        Grant::AuthorizationCode {
            code: &code,
            verifier: &pkce.verifier,
            redirect_uri,
        },
        &discovered.resource,
        scope,
    )
    .await
}
