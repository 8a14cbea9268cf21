//! The verifier seam: how a bearer token becomes [`Claims`].

use std::future::Future;
use std::pin::Pin;

use crate::server::Claims;

/// A boxed future, for object-safe async trait methods.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a token was not accepted. The reason goes to `tracing` at debug level only: the
/// client always hears a generic `invalid_token`.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The token is malformed, forged, expired, revoked or meant for someone else.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The token could not be checked now (the JWKS or introspection endpoint failed).
    #[error("token verification unavailable: {0}")]
    Unavailable(String),
}

/// Turns a bearer token into verified [`Claims`]: signature (or the authorization
/// server's word), issuer, expiry. The layer checks the audience, the time window and the
/// scopes again on whatever a verifier returns.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verify `token`.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Claims, VerifyError>>;
}

/// The current time in seconds since the epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
