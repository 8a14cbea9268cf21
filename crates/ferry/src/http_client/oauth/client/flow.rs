//! The full flow of [`OAuthClient`]: endpoint and PKCE checks, the client registration
//! (configured, stored, or obtained), then the grant (authorization code, identity
//! assertion, client credentials); a dynamically registered client the server forgot
//! registers again, once.

use std::time::Instant;

use super::{OAuthClient, State};
use crate::http_client::oauth::code_grant::authorization_code;
use crate::http_client::oauth::discovery::{Discovered, check_endpoints};
use crate::http_client::oauth::registration::{ClientProfile, obtain};
use crate::http_client::oauth::token::{Grant, request_token};
use crate::http_client::oauth::{ClientCredentials, OAuthError, TokenSet};

impl OAuthClient {
    /// Registration if needed, then a grant; the tokens are stored.
    pub(super) async fn full_flow(
        &self,
        state: &mut State,
        scope: Option<String>,
    ) -> Result<(), OAuthError> {
        let config = &self.inner.config;
        let discovered = state
            .discovered
            .clone()
            .ok_or_else(|| OAuthError::Discovery("discovery has not run".into()))?;
        let metadata = &discovered.metadata;
        let machine = config.client_credentials_grant || config.identity_assertion.is_some();
        let redirect_uri = match (&config.authorizer, machine) {
            (_, true) => None,
            (Some(authorizer), false) => Some(authorizer.redirect_uri()),
            (None, false) => {
                return Err(OAuthError::Config(
                    "authorization is required but no authorizer is configured".into(),
                ));
            }
        };
        check_endpoints(metadata, config.allow_http)?;
        // PKCE first: never register with a server the flow cannot use.
        if !machine && discovered.metadata_found {
            let s256 = metadata
                .code_challenge_methods_supported
                .as_ref()
                .is_some_and(|m| m.iter().any(|x| x == "S256"));
            if !s256 {
                return Err(OAuthError::PkceUnsupported {
                    issuer: metadata.issuer.clone(),
                });
            }
        }
        // A dynamically registered client the server no longer knows registers again, once.
        let mut registered_again = false;
        loop {
            let client = self.client(state, &redirect_uri).await?;
            let dynamic = self.registered_dynamically(&client);
            let tokens = match self
                .grant(
                    &discovered,
                    &client,
                    redirect_uri.as_deref(),
                    scope.as_deref(),
                )
                .await
            {
                Err(OAuthError::TokenRefused { error, .. })
                    if error == "invalid_client" && dynamic && !registered_again =>
                {
                    registered_again = true;
                    state.stored.client = None;
                    self.save(state).await?;
                    continue;
                }
                tokens => tokens?,
            };
            state.stored.tokens = Some(tokens);
            state.obtained_at = Some(Instant::now());
            return self.save(state).await;
        }
    }

    /// Whether `client` came from dynamic registration (not configured, not a metadata
    /// document URL): one the server may forget, and that can be registered again.
    pub(super) fn registered_dynamically(&self, client: &ClientCredentials) -> bool {
        let config = &self.inner.config;
        config.preregistered.is_none()
            && config.metadata_url.as_deref() != Some(client.client_id.as_str())
    }

    /// The client registration to use: the configured one, else the stored one, else a
    /// new one (Client ID Metadata Document or dynamic registration), stored.
    async fn client(
        &self,
        state: &mut State,
        redirect_uri: &Option<String>,
    ) -> Result<ClientCredentials, OAuthError> {
        let config = &self.inner.config;
        if let Some(client) = &config.preregistered {
            if state.stored.client.as_ref() != Some(client) {
                state.stored.client = Some(client.clone());
                self.save(state).await?;
            }
            return Ok(client.clone());
        }
        if let Some(client) = &state.stored.client {
            return Ok(client.clone());
        }
        let metadata = &state
            .discovered
            .as_ref()
            .ok_or_else(|| OAuthError::Discovery("discovery has not run".into()))?
            .metadata;
        let grant_types = if config.client_credentials_grant {
            vec!["client_credentials".to_owned()]
        } else if config.identity_assertion.is_some() {
            vec!["urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned()]
        } else {
            vec!["authorization_code".to_owned(), "refresh_token".to_owned()]
        };
        let profile = ClientProfile {
            name: config.client_name.clone(),
            redirect_uri: redirect_uri.clone(),
            grant_types,
            has_key: config.signer.is_some(),
        };
        let client = obtain(
            &config.http,
            metadata,
            config.metadata_url.as_deref(),
            &profile,
        )
        .await?;
        state.stored.client = Some(client.clone());
        self.save(state).await?;
        Ok(client)
    }

    /// The grant: the authorization code with a redirect URI, else an identity assertion
    /// or the client's own credentials.
    async fn grant(
        &self,
        discovered: &Discovered,
        client: &ClientCredentials,
        redirect_uri: Option<&str>,
        scope: Option<&str>,
    ) -> Result<TokenSet, OAuthError> {
        let config = &self.inner.config;
        if let (Some(authorizer), Some(redirect_uri)) = (&config.authorizer, redirect_uri) {
            return authorization_code(
                config,
                authorizer.as_ref(),
                discovered,
                client,
                redirect_uri,
                scope,
            )
            .await;
        }
        let metadata = &discovered.metadata;
        let assertion = match &config.identity_assertion {
            Some(idp) => Some(
                idp.grant(&config.http, &metadata.issuer, &discovered.resource, scope)
                    .await?,
            ),
            None => None,
        };
        let grant = match &assertion {
            Some(assertion) => Grant::JwtBearer(assertion),
            None => Grant::ClientCredentials,
        };
        request_token(
            &config.http,
            metadata,
            client,
            config.signer.as_ref(),
            grant,
            &discovered.resource,
            scope,
        )
        .await
    }
}
