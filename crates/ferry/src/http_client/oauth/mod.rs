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
