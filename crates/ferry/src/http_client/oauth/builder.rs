//! [`OAuthClientBuilder`]: how an [`OAuthClient`] gets its configuration.

use std::sync::Arc;
use std::time::Duration;

use url::Url;

use super::client::{Config, OAuthClient};
use super::jwt_auth::JwtSigner;
use super::{
    Authorizer, ClientCredentials, IdentityAssertion, MemoryTokenStore, OAuthError, TokenStore,
};

/// Configures an [`OAuthClient`]; see [`OAuthClient::builder`].
pub struct OAuthClientBuilder {
    server_url: String,
    http: Option<reqwest::Client>,
    store: Option<Arc<dyn TokenStore>>,
    authorizer: Option<Arc<dyn Authorizer>>,
    preregistered: Option<ClientCredentials>,
    metadata_url: Option<String>,
    client_name: String,
    scopes: Option<Vec<String>>,
    client_credentials_grant: bool,
    identity_assertion: Option<IdentityAssertion>,
    key: Option<(String, String, Option<String>)>,
    max_step_up: u32,
    offline_access: bool,
    refresh_margin: Duration,
    allow_http: bool,
}

impl std::fmt::Debug for OAuthClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClientBuilder")
            .field("server_url", &self.server_url)
            .field("client_name", &self.client_name)
            .field("client_credentials_grant", &self.client_credentials_grant)
            .finish_non_exhaustive()
    }
}

impl OAuthClientBuilder {
    pub(crate) fn new(server_url: &str) -> OAuthClientBuilder {
        OAuthClientBuilder {
            server_url: server_url.to_owned(),
            http: None,
            store: None,
            authorizer: None,
            preregistered: None,
            metadata_url: None,
            client_name: "ferry".into(),
            scopes: None,
            client_credentials_grant: false,
            identity_assertion: None,
            key: None,
            max_step_up: 2,
            offline_access: true,
            refresh_margin: Duration::from_secs(30),
            allow_http: false,
        }
    }

    /// The `reqwest::Client` for discovery, registration and the token endpoint.
    /// Default: a new one.
    pub fn http(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Where credentials are kept. Default: a [`MemoryTokenStore`].
    pub fn store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Who approves authorization-code requests (needed for that grant).
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// Use this pre-registered client (no registration).
    pub fn client_credentials(mut self, credentials: ClientCredentials) -> Self {
        self.preregistered = Some(credentials);
        self
    }

    /// The URL of this client's Client ID Metadata Document: used as the client id with
    /// authorization servers that advertise `client_id_metadata_document_supported`.
    pub fn client_metadata_url(mut self, url: &str) -> Self {
        self.metadata_url = Some(url.to_owned());
        self
    }

    /// The `client_name` sent in dynamic registration. Default: `ferry`.
    pub fn client_name(mut self, name: &str) -> Self {
        self.client_name = name.to_owned();
        self
    }

    /// Ask for exactly these scopes (instead of the challenge's or the metadata's).
    pub fn scopes(mut self, scopes: &[&str]) -> Self {
        self.scopes = Some(scopes.iter().map(|s| (*s).to_owned()).collect());
        self
    }

    /// Use the client-credentials grant (a machine client acting on its own behalf; needs
    /// pre-registered credentials or a private key) instead of the authorization code.
    pub fn client_credentials_grant(mut self) -> Self {
        self.client_credentials_grant = true;
        self
    }

    /// Enterprise-managed authorization: exchange the identity provider's token for an
    /// ID-JAG and present it to the authorization server (JWT bearer grant), instead of
    /// the authorization code. Needs pre-registered client credentials.
    pub fn identity_assertion(mut self, assertion: IdentityAssertion) -> Self {
        self.identity_assertion = Some(assertion);
        self
    }

    /// Authenticate at the token endpoint with `private_key_jwt` (RFC 7523): `pem` is the
    /// private key (PKCS#8; PKCS#1 for RSA), `alg` its JWS algorithm (`ES256`, `RS256`,
    /// ...), `kid` the key id to put in the header.
    pub fn private_key_jwt(mut self, pem: &str, alg: &str, kid: Option<&str>) -> Self {
        self.key = Some((pem.to_owned(), alg.to_owned(), kid.map(str::to_owned)));
        self
    }

    /// How many step-up authorizations (403 `insufficient_scope`) are made for the same
    /// scope before giving up. Default: 2.
    pub fn max_step_up(mut self, n: u32) -> Self {
        self.max_step_up = n;
        self
    }

    /// Add `offline_access` to the scope when the authorization server lists it (to get
    /// a refresh token; authorization-code grant only). Default: yes.
    pub fn offline_access(mut self, ask: bool) -> Self {
        self.offline_access = ask;
        self
    }

    /// Refresh an access token this long before it expires (at most a quarter of the
    /// token's lifetime, see
    /// [`TokenSet::refresh_due`](super::TokenSet::refresh_due)). Default: 30 s.
    pub fn refresh_margin(mut self, margin: Duration) -> Self {
        self.refresh_margin = margin;
        self
    }

    /// Accept authorization server endpoints over plain `http` on any host. Default: no —
    /// only `https`, or `http` on loopback (`127.0.0.1`, `::1`, `localhost`).
    pub fn allow_http(mut self, allow: bool) -> Self {
        self.allow_http = allow;
        self
    }

    /// The client. Errors when the server URL is not an absolute http(s) URL, when the
    /// private key cannot be read, or when the chosen grant lacks what it needs.
    pub fn build(self) -> Result<OAuthClient, OAuthError> {
        let server = Url::parse(&self.server_url)
            .map_err(|e| OAuthError::Config(format!("server URL {:?}: {e}", self.server_url)))?;
        if !matches!(server.scheme(), "http" | "https") {
            return Err(OAuthError::Config(format!(
                "server URL {:?} is not http(s)",
                self.server_url
            )));
        }
        let signer = match &self.key {
            Some((pem, alg, kid)) => Some(JwtSigner::new(pem, alg, kid.as_deref())?),
            None => None,
        };
        if self.client_credentials_grant && self.preregistered.is_none() {
            return Err(OAuthError::Config(
                "the client-credentials grant needs pre-registered client credentials".into(),
            ));
        }
        if self.identity_assertion.is_some() && self.preregistered.is_none() {
            return Err(OAuthError::Config(
                "enterprise-managed authorization needs pre-registered client credentials".into(),
            ));
        }
        if self.identity_assertion.is_some() && self.client_credentials_grant {
            return Err(OAuthError::Config(
                "choose the client-credentials grant or an identity assertion, not both".into(),
            ));
        }
        if let Some(url) = &self.metadata_url {
            Url::parse(url)
                .map_err(|e| OAuthError::Config(format!("client metadata URL {url:?}: {e}")))?;
        }
        Ok(OAuthClient::from_config(Config {
            server,
            http: self.http.unwrap_or_default(),
            store: self
                .store
                .unwrap_or_else(|| Arc::new(MemoryTokenStore::new())),
            authorizer: self.authorizer,
            preregistered: self.preregistered,
            metadata_url: self.metadata_url,
            client_name: self.client_name,
            scopes: self.scopes,
            client_credentials_grant: self.client_credentials_grant,
            identity_assertion: self.identity_assertion,
            signer,
            max_step_up: self.max_step_up,
            offline_access: self.offline_access,
            refresh_margin: self.refresh_margin.as_secs(),
            allow_http: self.allow_http,
        }))
    }
}
