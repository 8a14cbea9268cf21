//! OAuth 2.1 resource server for the Streamable HTTP server (feature `http-auth`), as the
//! MCP authorization specification asks of a protected MCP server.
//!
//! - **Bearer tokens** come from the `Authorization` header only; a token in the query
//!   string is ignored (the request is unauthenticated).
//! - **401** `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` when there is no
//!   token, plus `error="invalid_token"` when the token is malformed, forged, expired, for
//!   another audience or issuer. The body says no more than the error code: why a token
//!   was refused goes to `tracing` at debug level.
//! - **403** `error="insufficient_scope", scope="…"` when the token lacks a scope the
//!   request needs ([`ResourceServer::require_scope`] for every request,
//!   [`ResourceServer::require_scope_for_method`], [`ResourceServer::require_scope_for_tool`]):
//!   the client can step up.
//! - **Protected Resource Metadata** (RFC 9728) at the path-aware and root well-known
//!   locations (see [`metadata`]).
//! - **Audience** (RFC 8707): the token's `aud` must name this resource's canonical URI;
//!   tokens are verified, never passed on.
//! - **Verification** is a [`TokenVerifier`]: [`JwtVerifier`] (signature against a cached,
//!   rotating [`Jwks`]) or [`IntrospectionVerifier`] (RFC 7662).
//! - **Handlers** get the verified [`Claims`] with the [`Auth`] extractor.
//! - **Sessions** (session era) are bound to the token's issuer, subject and client (see
//!   [`super::SessionOwner`]): every request is verified again, and another principal
//!   naming the session gets 404.
//! - A verification backend that cannot be reached answers 503.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use ferry::http::HttpConfig;
//! use ferry::http::auth::{Jwks, JwtVerifier, ResourceServer};
//!
//! let resource = "https://mcp.example.com/mcp";
//! let issuer = "https://auth.example.com";
//! let verifier = JwtVerifier::new(Jwks::new("https://auth.example.com/jwks"), issuer, resource);
//! let auth = ResourceServer::new(resource, verifier)
//!     .expect("a URL")
//!     .authorization_server(issuer)
//!     .scopes_supported(["mcp:tools"])
//!     .require_scope_for_tool("delete", "mcp:admin");
//! let config = HttpConfig::default().auth(auth);
//! let server = ferry::server::Server::builder("demo", "1.0.0").build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! ferry::http::serve(server, listener, config).await
//! # }
//! ```

mod introspection;
mod jwks;
mod jwt;
mod layer;
pub mod metadata;
mod verify;

pub use crate::server::{Auth, Claims, has_scope};
pub use introspection::IntrospectionVerifier;
pub use jsonwebtoken::Algorithm;
pub use jwks::Jwks;
pub use jwt::{DEFAULT_ALGORITHMS, JwtVerifier};
pub use verify::{BoxFuture, TokenVerifier, VerifyError};

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;

/// A resource URI that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("invalid resource URI {uri:?}: {reason}")]
pub struct InvalidResource {
    uri: String,
    reason: String,
}

/// This server as an OAuth protected resource: its identity, its authorization servers,
/// the scopes it wants and how tokens are verified.
pub struct ResourceServer {
    resource_url: url::Url,
    /// The canonical resource URI (the expected audience).
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    resource_name: Option<String>,
    resource_documentation: Option<String>,
    required: Vec<String>,
    per_method: HashMap<String, Vec<String>>,
    per_tool: HashMap<String, Vec<String>>,
    verifier: Arc<dyn TokenVerifier>,
    leeway: u64,
    max_body_bytes: usize,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

impl ResourceServer {
    /// The resource `uri` (the MCP endpoint's public URL, e.g.
    /// `https://mcp.example.com/mcp`: tokens must name it in `aud`), verifying tokens with
    /// `verifier`.
    pub fn new(uri: &str, verifier: impl TokenVerifier) -> Result<Self, InvalidResource> {
        let invalid = |reason: &str| InvalidResource {
            uri: uri.to_owned(),
            reason: reason.to_owned(),
        };
        let url = url::Url::parse(uri).map_err(|e| invalid(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(invalid("not an http(s) URL"));
        }
        if url.fragment().is_some() {
            return Err(invalid("a resource URI has no fragment"));
        }
        Ok(ResourceServer {
            resource: metadata::canonical_uri(&url),
            resource_url: url,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            resource_name: None,
            resource_documentation: None,
            required: Vec::new(),
            per_method: HashMap::new(),
            per_tool: HashMap::new(),
            verifier: Arc::new(verifier),
            leeway: 30,
            max_body_bytes: super::DEFAULT_MAX_BODY_BYTES,
        })
    }

    /// Advertise an authorization server (its issuer URL); tokens whose `iss` is not one
    /// of them are refused.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// Advertise the scopes this resource understands (`scopes_supported`; also the
    /// `scope` of a 401 challenge when no scope is required of every request).
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// A human-readable name for the metadata document.
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// A documentation URL for the metadata document.
    pub fn resource_documentation(mut self, url: impl Into<String>) -> Self {
        self.resource_documentation = Some(url.into());
        self
    }

    /// Require `scope` of every request.
    pub fn require_scope(mut self, scope: impl Into<String>) -> Self {
        self.required.push(scope.into());
        self
    }

    /// Require `scope` of requests with this JSON-RPC `method` (e.g. `tools/list`).
    pub fn require_scope_for_method(mut self, method: &str, scope: impl Into<String>) -> Self {
        self.per_method
            .entry(method.to_owned())
            .or_default()
            .push(scope.into());
        self
    }

    /// Require `scope` of `tools/call` requests for the tool `name`.
    pub fn require_scope_for_tool(mut self, name: &str, scope: impl Into<String>) -> Self {
        self.per_tool
            .entry(name.to_owned())
            .or_default()
            .push(scope.into());
        self
    }

    /// Clock skew tolerated on `exp` and `nbf`, in seconds. Default: 30.
    pub fn leeway(mut self, seconds: u64) -> Self {
        self.leeway = seconds;
        self
    }

    /// The largest body read to find the method and tool of a request when per-method
    /// or per-tool scopes are configured (413 beyond). Default: 4 MiB.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// The canonical resource URI: the audience tokens must carry.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The URL of the (path-aware) Protected Resource Metadata document.
    pub fn metadata_url(&self) -> String {
        let mut url = self.resource_url.clone();
        url.set_path(&metadata::path_aware(&self.resource_url));
        url.set_query(None);
        url.set_fragment(None);
        url.to_string()
    }

    /// `router` with every route requiring a token.
    pub(crate) fn layer<S: Clone + Send + Sync + 'static>(
        self: &Arc<Self>,
        router: Router<S>,
    ) -> Router<S> {
        router.route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(self),
            layer::check,
        ))
    }
}

/// The JWKS reading and the resource-URI comparison, for the fuzz targets
/// (`fuzz/checks/oauth_parse.rs`). Feature `fuzzing` only; not an API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    /// A usable key of a JWKS document: its `kid` and its algorithm.
    pub type KeySummary = (Option<String>, Option<String>);

    /// The usable keys of a JWKS document.
    pub fn jwks_keys(body: &[u8]) -> Result<Vec<KeySummary>, String> {
        super::jwks::key_summaries(body)
    }

    /// `metadata::same_resource`: whether a token's audience names the resource `canonical`.
    pub fn same_resource(canonical: &str, token_audience: &str) -> bool {
        super::metadata::same_resource(canonical, token_audience)
    }

    /// `metadata::canonical_uri` and `metadata::path_aware` of a URL, if it parses.
    pub fn canonical_and_path(url: &str) -> Option<(String, String)> {
        let url = url::Url::parse(url).ok()?;
        Some((
            super::metadata::canonical_uri(&url),
            super::metadata::path_aware(&url),
        ))
    }
}
