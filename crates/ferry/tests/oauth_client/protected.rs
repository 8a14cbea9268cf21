//! Ferry's HTTP server on 127.0.0.1 protected by its resource-server layer, trusting the
//! test authorization server: the MCP server the OAuth client tests call.

use ferry::http::HttpConfig;
use ferry::http::auth::{Auth, Jwks, JwtVerifier, ResourceServer, TokenVerifier};
use ferry::server::Server;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::authorization_server::AuthorizationServer;

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// The MCP server: `whoami` (the caller's client id and scopes) and `admin`.
pub(crate) fn mcp_server() -> Server {
    Server::builder("oauth-client-test", "1.0.0")
        .tool(
            "whoami",
            "The caller",
            |_: Nothing, auth: Auth| async move {
                format!(
                    "{} {}",
                    auth.0.client_id.clone().unwrap_or_default(),
                    auth.0.scopes.join(" ")
                )
            },
        )
        .tool("admin", "Needs mcp:admin", |_: Nothing| async { "done" })
        .build()
}

/// Ferry's HTTP server on 127.0.0.1 protected by `as_`: every request needs `mcp:tools`,
/// the `admin` tool `mcp:admin`. Its Protected Resource Metadata names the resource at
/// `resource_path` on the server (`/mcp`, the MCP endpoint, unless given). Returns the MCP
/// endpoint's URL.
pub(crate) async fn protected_server(
    as_: &AuthorizationServer,
    resource_path: Option<&str>,
) -> String {
    protected_server_with(as_, resource_path, |verifier| verifier).await
}

/// [`protected_server`] with the JWT verifier wrapped by `wrap` (to revoke tokens, say).
pub(crate) async fn protected_server_with<V: TokenVerifier>(
    as_: &AuthorizationServer,
    resource_path: Option<&str>,
    wrap: impl FnOnce(JwtVerifier) -> V,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let url = format!("{origin}/mcp");
    let resource = &format!("{origin}{}", resource_path.unwrap_or("/mcp"));
    let verifier = wrap(JwtVerifier::new(
        Jwks::new(as_.jwks_url()),
        &as_.issuer,
        resource,
    ));
    let auth = ResourceServer::new(resource, verifier)
        .unwrap()
        .authorization_server(&as_.issuer)
        .scopes_supported(["mcp:tools", "mcp:admin"])
        .require_scope("mcp:tools")
        .require_scope_for_tool("admin", "mcp:admin");
    tokio::spawn(ferry::http::serve(
        mcp_server(),
        listener,
        HttpConfig::default().auth(auth),
    ));
    url
}
