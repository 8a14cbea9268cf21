//! OAuth 2.1 for the HTTP client (feature `http-client-oauth`), as the MCP authorization
//! specification describes it.
//!
//! - [`TokenStore`]: where credentials are kept, keyed by issuer and resource
//!   ([`StoreKey`]); [`MemoryTokenStore`] keeps them in memory, [`FileTokenStore`] on
//!   disk (one private JSON file per key).
//! - [`Authorizer`]: how the person approves an authorization request;
//!   [`LoopbackAuthorizer`] prints the URL (opens a browser if it can) and receives the
//!   redirect on 127.0.0.1.

mod authorize;
mod file_store;
mod loopback;
mod store;

pub use authorize::{AuthorizationRequest, AuthorizationResponse, Authorizer};
pub use file_store::FileTokenStore;
pub use loopback::LoopbackAuthorizer;
pub use store::{
    ClientCredentials, MemoryTokenStore, OAuthFuture, StoreKey, StoredCredentials, TokenSet,
    TokenStore,
};
