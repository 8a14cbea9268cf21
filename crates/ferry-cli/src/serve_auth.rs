//! `ferry serve --http` behind OAuth: the `--auth-*` flags and the resource server they
//! describe (see `ferry::http::auth`).

use clap::Args;
use ferry::http::auth::{IntrospectionVerifier, Jwks, JwtVerifier, ResourceServer};

/// Options of `ferry serve --http` requiring OAuth bearer tokens.
#[derive(Args, Debug, Default)]
pub(crate) struct AuthArgs {
    /// Require OAuth access tokens issued by this authorization server (its issuer URL,
    /// advertised in the Protected Resource Metadata); with `--auth-jwks` or
    /// `--auth-introspection`.
    #[arg(long, value_name = "URL", requires = "http")]
    auth_issuer: Option<String>,
    /// This resource's URI, the audience tokens must name (RFC 8707). Default: the
    /// endpoint's URL, `http://ADDR/mcp`.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    auth_audience: Option<String>,
    /// Verify JWT access tokens with the keys at this JWKS URL.
    #[arg(
        long,
        value_name = "URL",
        requires = "auth_issuer",
        conflicts_with = "auth_introspection"
    )]
    auth_jwks: Option<String>,
    /// Also accept JWT access tokens typed `JWT` or not typed, for authorization servers
    /// that do not type them `at+jwt` (RFC 9068).
    #[arg(long, requires = "auth_jwks")]
    auth_plain_jwt: bool,
    /// Verify tokens with this RFC 7662 introspection endpoint (with `--auth-client-id`
    /// and `--auth-client-secret`, or the `FERRY_AUTH_CLIENT_SECRET` environment variable).
    #[arg(long, value_name = "URL", requires_all = ["auth_issuer", "auth_client_id"])]
    auth_introspection: Option<String>,
    /// The client id this server authenticates with at the introspection endpoint.
    #[arg(long, value_name = "ID", requires = "auth_introspection")]
    auth_client_id: Option<String>,
    /// Its client secret (prefer `FERRY_AUTH_CLIENT_SECRET`: arguments are visible to
    /// other local users).
    #[arg(long, value_name = "SECRET", requires = "auth_introspection")]
    auth_client_secret: Option<String>,
    /// A scope every request needs (repeatable; also advertised).
    #[arg(long = "auth-scope", value_name = "SCOPE", requires = "auth_issuer")]
    auth_scopes: Vec<String>,
    /// A scope one tool needs, as `TOOL=SCOPE` (repeatable; the scope is advertised).
    /// A token without it gets 403 `insufficient_scope` for that tool.
    #[arg(
        long = "auth-tool-scope",
        value_name = "TOOL=SCOPE",
        requires = "auth_issuer"
    )]
    auth_tool_scopes: Vec<String>,
}

impl AuthArgs {
    /// The resource server the flags describe (`None` without `--auth-issuer`).
    /// `endpoint` is the served endpoint's URL, the default audience.
    pub(crate) fn resource_server(&self, endpoint: &str) -> Result<Option<ResourceServer>, String> {
        let Some(issuer) = &self.auth_issuer else {
            return Ok(None);
        };
        let resource = self.auth_audience.as_deref().unwrap_or(endpoint);
        let mut tool_scopes = Vec::new();
        for spec in &self.auth_tool_scopes {
            let Some((tool, scope)) = spec.split_once('=') else {
                return Err(format!("--auth-tool-scope {spec:?}: expected TOOL=SCOPE"));
            };
            tool_scopes.push((tool.to_owned(), scope.to_owned()));
        }
        let server = match (&self.auth_jwks, &self.auth_introspection) {
            (Some(jwks), None) => {
                let verifier = JwtVerifier::new(Jwks::new(jwks), issuer, resource);
                let verifier = if self.auth_plain_jwt {
                    verifier.plain_jwt()
                } else {
                    verifier
                };
                ResourceServer::new(resource, verifier)
            }
            (None, Some(endpoint)) => {
                let secret = match &self.auth_client_secret {
                    Some(secret) => secret.clone(),
                    None => std::env::var("FERRY_AUTH_CLIENT_SECRET").map_err(|_| {
                        "--auth-introspection needs --auth-client-secret or FERRY_AUTH_CLIENT_SECRET"
                            .to_owned()
                    })?,
                };
                let id = self.auth_client_id.clone().unwrap_or_default();
                ResourceServer::new(resource, IntrospectionVerifier::new(endpoint, id, secret))
            }
            _ => return Err("--auth-issuer needs --auth-jwks or --auth-introspection".into()),
        };
        let mut server = server
            .map_err(|e| format!("--auth-audience: {e}"))?
            .authorization_server(issuer);
        let mut advertised: Vec<&str> = Vec::new();
        for scope in &self.auth_scopes {
            server = server.require_scope(scope);
            advertised.push(scope);
        }
        for (tool, scope) in &tool_scopes {
            server = server.require_scope_for_tool(tool, scope);
            if !advertised.contains(&scope.as_str()) {
                advertised.push(scope);
            }
        }
        Ok(Some(server.scopes_supported(advertised)))
    }
}
