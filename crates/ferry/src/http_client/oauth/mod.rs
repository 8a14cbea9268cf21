//! OAuth 2.1 for the HTTP client (feature `http-client-oauth`), as the MCP authorization
//! specification describes it.
//!
//! - [`TokenStore`]: where credentials are kept, keyed by issuer and resource
//!   ([`StoreKey`]); [`MemoryTokenStore`] keeps them in memory.
//! - [`Authorizer`]: how the person approves an authorization request.

mod authorize;
mod store;

pub use authorize::{AuthorizationRequest, AuthorizationResponse, Authorizer};
pub use store::{
    ClientCredentials, MemoryTokenStore, OAuthFuture, StoreKey, StoredCredentials, TokenSet,
    TokenStore,
};
