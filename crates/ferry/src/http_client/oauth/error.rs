//! [`OAuthError`]: what went wrong in the OAuth flow, and where. Messages name the URL
//! or the step that failed and never carry a secret (no token, client secret, code or
//! verifier).

/// An OAuth client failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The client was configured inconsistently (builder misuse).
    #[error("OAuth configuration: {0}")]
    Config(String),
    /// A request to `url` failed on the network (or its body could not be read).
    #[error("OAuth request to {url} failed: {message}")]
    Http {
        /// The URL requested.
        url: String,
        /// What failed.
        message: String,
    },
    /// Discovery found no usable metadata (Protected Resource or Authorization Server).
    #[error("OAuth discovery: {0}")]
    Discovery(String),
    /// A metadata document, a registration or a token response was not acceptable.
    #[error("OAuth: invalid response from {url}: {message}")]
    InvalidResponse {
        /// Where the response came from.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// The Protected Resource Metadata names another resource than the server.
    #[error(
        "OAuth: the protected resource metadata is for {advertised}, not for {server} \
         (refusing to authorize)"
    )]
    ResourceMismatch {
        /// The `resource` the metadata names.
        advertised: String,
        /// The MCP server's URL.
        server: String,
    },
    /// The authorization server does not offer PKCE with S256.
    #[error(
        "OAuth: the authorization server {issuer} does not advertise PKCE S256 (refusing to authorize)"
    )]
    PkceUnsupported {
        /// The authorization server.
        issuer: String,
    },
    /// No way to obtain a client id from this authorization server.
    #[error("OAuth registration with {issuer}: {message}")]
    Registration {
        /// The authorization server.
        issuer: String,
        /// Why it failed.
        message: String,
    },
    /// The person (or the authorizer) did not complete the authorization.
    #[error("OAuth authorization failed: {0}")]
    Authorization(String),
    /// The authorization server answered the authorization request with an error (its
    /// `iss` and `state` checked first), such as `access_denied`.
    #[error("OAuth authorization failed: the authorization server refused: {0}")]
    AuthorizationRefused(super::AuthorizationError),
    /// The redirect's `state` is not the one sent.
    #[error("OAuth: the authorization response's state does not match the request's")]
    StateMismatch,
    /// RFC 9207: the redirect's `iss` is not the issuer the request went to (or is
    /// missing where the server promised it).
    #[error("OAuth: the authorization response's issuer {got:?} is not {expected} (RFC 9207)")]
    IssuerMismatch {
        /// The issuer the request went to.
        expected: String,
        /// The `iss` received, if any.
        got: Option<String>,
    },
    /// The token endpoint refused (an OAuth error response).
    #[error("OAuth token endpoint {url} refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    TokenRefused {
        /// The token endpoint.
        url: String,
        /// The OAuth `error` code (or the HTTP status).
        error: String,
        /// The `error_description`, if any.
        description: Option<String>,
    },
    /// More step-up authorizations in a row than allowed.
    #[error(
        "OAuth: the server still refuses scope {scope:?} after {attempts} step-up authorizations"
    )]
    StepUpLimit {
        /// The scope asked for.
        scope: String,
        /// How many were made.
        attempts: u32,
    },
    /// The token store failed.
    #[error("OAuth token store: {0}")]
    Store(#[from] std::io::Error),
    /// A client assertion (private_key_jwt) could not be signed.
    #[error("OAuth client assertion: {0}")]
    Assertion(String),
}
