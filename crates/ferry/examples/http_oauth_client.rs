//! An MCP client that authorizes itself with OAuth 2.1 before it calls a protected
//! server over Streamable HTTP, the way the MCP authorization specification says: the
//! server's 401 names its Protected Resource Metadata, which names the authorization
//! server, whose metadata names the token endpoint; the token asked for names the server
//! as its `resource` (its audience).
//!
//!     cargo run -p ferry-mcp --features http-server,http-auth,http-client-oauth --example http_oauth_client
//!
//! The client here is a machine client: it uses the client-credentials grant with a
//! pre-registered client id and secret, so nobody has to approve anything. (For a person,
//! give `OAuthClient::builder` a `LoopbackAuthorizer` instead: dynamic registration, PKCE
//! and a browser.)
//!
//! To run unattended, the example starts on 127.0.0.1 what a real deployment already
//! has: a protected Ferry server and a minimal authorization server (the scaffolding at
//! the end of this file). Point it at a real server instead with
//!
//!     ... --example http_oauth_client -- --url https://mcp.example.com/mcp --client-id ID --client-secret SECRET
//!
//! (`https://` needs the feature `http-client-rustls` too.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ferry::client::Client;
use ferry::http_client::HttpClientConfig;
use ferry::http_client::oauth::{ClientCredentials, OAuthClient};
use serde_json::json;

// ============================================================================
// Your app: the MCP client.
// ============================================================================

/// Connect to the protected server at `url` as the client `id`, list its tools and call
/// `whoami` if it has one.
async fn run_client(url: &str, id: &str, secret: &str) -> Result<(), Box<dyn std::error::Error>> {
    // The OAuth client is an authentication hook of the HTTP transport: it adds the
    // bearer token to every request and, on a 401 (or a 403 asking for more scope),
    // discovers, obtains a token and lets the transport retry.
    let oauth = OAuthClient::builder(url)
        .client_credentials(ClientCredentials {
            client_id: id.into(),
            client_secret: Some(secret.into()),
            token_endpoint_auth_method: None, // chosen from the server's metadata
        })
        .client_credentials_grant()
        .build()?;
    let config = HttpClientConfig::default().auth(Arc::new(oauth.clone()));
    let (client, connection) = match Client::builder("oauth-example", "1.0.0")
        .connect_http(url, config)
        .await
    {
        Ok(connected) => connected,
        // A failed authorization surfaces as the server's 401; the OAuth client keeps
        // the reason.
        Err(error) => return Err(format!("{error} ({:?})", oauth.last_error()).into()),
    };
    println!("connected with OAuth ({})", client.version().as_str());

    let tools = client.list_all_tools().await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    println!("tools: {}", names.join(", "));
    if names.contains(&"whoami") {
        let result = client.call_tool("whoami", json!({})).await?;
        let text = result.content.first().and_then(|b| b.as_text());
        println!("whoami: {}", text.unwrap_or(""));
    }
    drop(client);
    connection.close().await; // DELETE the session
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let option = |name: &str| {
        let at = args.iter().position(|a| a == name)?;
        args.get(at + 1).cloned()
    };
    if let Some(url) = option("--url") {
        let id = option("--client-id").ok_or("--url needs --client-id")?;
        let secret = option("--client-secret").ok_or("--url needs --client-secret")?;
        return run_client(&url, &id, &secret).await;
    }

    // Unattended: the scaffolding first, then the same client.
    let issuer = scaffolding::start_authorization_server().await?;
    let url = scaffolding::start_protected_server(&issuer).await?;
    println!("authorization server {issuer}, protected MCP server {url}");
    run_client(&url, scaffolding::CLIENT_ID, scaffolding::CLIENT_SECRET).await
}

// ============================================================================
// Scaffolding: what a real deployment already has.
// ============================================================================

mod scaffolding {
    use super::*;

    use axum::Router;
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::{IntoResponse, Response};
    use axum::routing::{get, post};
    use base64::Engine as _;
    use ferry::http::HttpConfig;
    use ferry::http::auth::{Auth, IntrospectionVerifier, ResourceServer};
    use ferry::server::Server;
    use serde_json::Value;

    /// The client the authorization server knows (registered beforehand).
    pub(super) const CLIENT_ID: &str = "example-app";
    pub(super) const CLIENT_SECRET: &str = "example-app-secret";
    /// The protected server's own credentials, for asking the authorization server
    /// whether a token is valid (RFC 7662 introspection).
    const SERVER_ID: &str = "mcp-server";
    const SERVER_SECRET: &str = "mcp-server-secret";
    const SCOPE: &str = "mcp:tools";

    /// The protected MCP server: Ferry's HTTP server behind its OAuth resource-server
    /// layer, which verifies each token by introspection at `issuer`. Returns its URL.
    pub(super) async fn start_protected_server(
        issuer: &str,
    ) -> Result<String, Box<dyn std::error::Error>> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        // The server's URL is its resource identifier: tokens must name it as audience.
        let url = format!("http://{}/mcp", listener.local_addr()?);
        let verifier =
            IntrospectionVerifier::new(format!("{issuer}/introspect"), SERVER_ID, SERVER_SECRET);
        let auth = ResourceServer::new(&url, verifier)?
            .authorization_server(issuer)
            .scopes_supported([SCOPE])
            .require_scope(SCOPE);
        let server = Server::builder("protected", "1.0.0")
            // The verified claims reach handlers through the `Auth` extractor.
            .tool(
                "whoami",
                "Who the token says you are",
                |_: (), auth: Auth| async move {
                    let who = auth.0.client_id.clone().unwrap_or_default();
                    format!("{who} with scope {}", auth.0.scopes.join(" "))
                },
            )
            .build();
        let config = HttpConfig::default().auth(auth);
        tokio::spawn(ferry::http::serve(server, listener, config));
        Ok(url)
    }

    /// The tokens issued, by value: what introspection answers for each.
    type Tokens = Arc<Mutex<HashMap<String, Value>>>;

    /// A minimal authorization server: RFC 8414 metadata, a token endpoint for the
    /// client-credentials grant, and RFC 7662 introspection. Returns its issuer URL.
    pub(super) async fn start_authorization_server() -> Result<String, Box<dyn std::error::Error>> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let issuer = format!("http://{}", listener.local_addr()?);
        let tokens = Tokens::default();
        let metadata = json!({
            "issuer": issuer,
            "token_endpoint": format!("{issuer}/token"),
            "introspection_endpoint": format!("{issuer}/introspect"),
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "scopes_supported": [SCOPE],
        });
        let token_issuer = issuer.clone();
        let introspect_tokens = tokens.clone();
        let app = Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                get(move || async move { axum::Json(metadata) }),
            )
            .route(
                "/token",
                post(move |headers: HeaderMap, body: String| {
                    token(token_issuer, tokens, headers, body)
                }),
            )
            .route(
                "/introspect",
                post(move |headers: HeaderMap, body: String| {
                    introspect(introspect_tokens, headers, body)
                }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(issuer)
    }

    async fn token(issuer: String, tokens: Tokens, headers: HeaderMap, body: String) -> Response {
        let form = form(&body);
        if !authenticated(&headers, CLIENT_ID, CLIENT_SECRET) {
            return refuse(StatusCode::UNAUTHORIZED, "invalid_client");
        }
        if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
            return refuse(StatusCode::BAD_REQUEST, "unsupported_grant_type");
        }
        // RFC 8707: the client names the server it wants the token for.
        let Some(resource) = form.get("resource") else {
            return refuse(StatusCode::BAD_REQUEST, "invalid_target");
        };
        let mut bytes = [0u8; 24];
        if getrandom::getrandom(&mut bytes).is_err() {
            return refuse(StatusCode::INTERNAL_SERVER_ERROR, "server_error");
        }
        let access_token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let expires_in = 3600;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let claims = json!({
            "active": true, "iss": issuer, "sub": CLIENT_ID, "client_id": CLIENT_ID,
            "aud": resource, "scope": SCOPE, "exp": now + expires_in,
        });
        tokens.lock().unwrap().insert(access_token.clone(), claims);
        axum::Json(json!({
            "access_token": access_token, "token_type": "Bearer",
            "expires_in": expires_in, "scope": SCOPE,
        }))
        .into_response()
    }

    async fn introspect(tokens: Tokens, headers: HeaderMap, body: String) -> Response {
        if !authenticated(&headers, SERVER_ID, SERVER_SECRET) {
            return refuse(StatusCode::UNAUTHORIZED, "invalid_client");
        }
        let form = form(&body);
        let claims = form
            .get("token")
            .and_then(|token| tokens.lock().unwrap().get(token).cloned());
        axum::Json(claims.unwrap_or_else(|| json!({"active": false}))).into_response()
    }

    /// A form-encoded body's fields.
    fn form(body: &str) -> HashMap<String, String> {
        url::form_urlencoded::parse(body.as_bytes())
            .into_owned()
            .collect()
    }

    /// Whether the request carries HTTP Basic credentials `id:secret`.
    fn authenticated(headers: &HeaderMap, id: &str, secret: &str) -> bool {
        let expected = base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"));
        headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Basic "))
            == Some(expected.as_str())
    }

    fn refuse(status: StatusCode, error: &str) -> Response {
        (status, axum::Json(json!({"error": error}))).into_response()
    }
}
