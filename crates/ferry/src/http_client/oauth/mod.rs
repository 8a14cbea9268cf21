//! OAuth 2.1 for the HTTP client (feature `http-client-oauth`), as the MCP authorization
//! specification describes it.
//!
//! - [`TokenStore`]: where credentials are kept, keyed by issuer and resource
//!   ([`StoreKey`]); [`MemoryTokenStore`] keeps them in memory, [`FileTokenStore`] on
//!   disk (one private JSON file per key).
//! - [`Authorizer`]: how the person approves an authorization request;
//!   [`LoopbackAuthorizer`] prints the URL (opens a browser if it can) and receives the
//!   redirect on 127.0.0.1; [`HeadlessAuthorizer`] follows the redirects itself (for
//!   servers that approve without a person).
//! - [`OAuthClient`]: the flow itself, as the HTTP client's
//!   [`HttpAuth`](crate::http_client::HttpAuth) hook — discovery (RFC 9728, RFC 8414,
//!   OpenID Connect, the 2025-03-26 fallbacks), registration (pre-registered, Client ID
//!   Metadata Document, RFC 7591), PKCE S256, RFC 8707 `resource`, RFC 9207 `iss`,
//!   token-endpoint authentication (`client_secret_basic`, `client_secret_post`, `none`,
//!   `private_key_jwt`), refresh, the client-credentials grant, enterprise-managed
//!   authorization ([`IdentityAssertion`]) and step-up.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use ferry::client::Client;
//! use ferry::http_client::HttpClientConfig;
//! use ferry::http_client::oauth::{LoopbackAuthorizer, OAuthClient};
//!
//! let url = "http://127.0.0.1:8080/mcp";
//! let oauth = OAuthClient::builder(url)
//!     .authorizer(Arc::new(LoopbackAuthorizer::new()))
//!     .build()?;
//! let config = HttpClientConfig::default().auth(Arc::new(oauth));
//! let (client, connection) = Client::builder("demo", "1.0.0").connect_http(url, config).await?;
//! println!("{:?}", client.list_all_tools().await?);
//! # drop(client); connection.close().await;
//! # Ok(())
//! # }
//! ```

mod assertion;
mod authorize;
mod builder;
mod challenge;
mod client;
mod code_grant;
mod discovery;
mod error;
mod fetch;
mod file_store;
mod headless;
mod jwt_auth;
mod loopback;
mod pkce;
mod registration;
mod scope;
mod store;
mod token;

/// Parsing of what authorization servers and protected resources publish (`discovery`),
/// for the fuzz targets (`fuzz/checks/oauth_parse.rs`). Feature `fuzzing` only; not an API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    use url::Url;

    /// RFC 9728 metadata as `discovery` reads it: `(resource, authorization_servers,
    /// scopes_supported)`.
    pub type ResourceFields = (Option<String>, Vec<String>, Option<Vec<String>>);

    /// Protected Resource Metadata read from JSON as discovery reads it.
    pub fn resource_metadata(json: &[u8]) -> Result<ResourceFields, String> {
        let metadata: super::discovery::ResourceMetadata =
            serde_json::from_slice(json).map_err(|e| e.to_string())?;
        Ok((
            metadata.resource,
            metadata.authorization_servers,
            metadata.scopes_supported,
        ))
    }

    /// `(issuer, [authorization, token, registration endpoints], strictly accepted,
    /// accepted with plain HTTP allowed)`.
    pub type ServerFields = (String, [Option<String>; 3], bool, bool);

    /// Authorization server metadata read from JSON as discovery reads it (its issuer and
    /// endpoints), and whether `check_endpoints` accepts it without and with `allow_http`.
    pub fn server_metadata(json: &[u8]) -> Result<ServerFields, String> {
        let value: serde_json::Value = serde_json::from_slice(json).map_err(|e| e.to_string())?;
        let metadata: super::discovery::ServerMetadata =
            serde_json::from_value(value).map_err(|e| e.to_string())?;
        let strict = super::discovery::check_endpoints(&metadata, false).is_ok();
        let lax = super::discovery::check_endpoints(&metadata, true).is_ok();
        Ok((
            metadata.issuer,
            [
                metadata.authorization_endpoint,
                metadata.token_endpoint,
                metadata.registration_endpoint,
            ],
            strict,
            lax,
        ))
    }

    /// `discovery::secure_enough`.
    pub fn secure_enough(url: &str) -> bool {
        super::discovery::secure_enough(url)
    }

    /// `discovery::resource_matches`, the server's URL parsed first.
    pub fn resource_matches(resource: &str, server: &str) -> Option<bool> {
        let server = Url::parse(server).ok()?;
        Some(super::discovery::resource_matches(resource, &server))
    }

    /// What the loopback authorizer's listener makes of a request `head` while it waits for
    /// the redirect carrying `state`: `Ok(response)` when it takes it as the redirect,
    /// `Err(status)` when it answers and goes on waiting.
    pub fn loopback_judge(head: &str, state: &str) -> Result<super::AuthorizationResponse, u16> {
        super::loopback::fuzzing_judge(head, state)
    }

    /// `discovery::metadata_locations`, `origin` and `canonical` of an issuer URL.
    pub fn locations(issuer: &str) -> Option<(Vec<String>, String, String)> {
        let issuer = Url::parse(issuer).ok()?;
        Some((
            super::discovery::metadata_locations(&issuer),
            super::discovery::origin(&issuer),
            super::discovery::canonical(&issuer),
        ))
    }
}

pub use assertion::IdentityAssertion;
pub use authorize::{
    AuthorizationError, AuthorizationOutcome, AuthorizationRequest, AuthorizationResponse,
    Authorizer,
};
pub use builder::OAuthClientBuilder;
pub use challenge::BearerChallenge;
pub use client::OAuthClient;
pub use error::OAuthError;
pub use file_store::FileTokenStore;
pub use headless::HeadlessAuthorizer;
pub use loopback::LoopbackAuthorizer;
pub use registration::client_metadata_document;
pub use store::{
    ClientCredentials, MemoryTokenStore, OAuthFuture, StoreKey, StoredCredentials, TokenSet,
    TokenStore,
};
