//! The `auth/*` scenarios: Ferry's [`OAuthClient`] configured from the scenario's context
//! (`MCP_CONFORMANCE_CONTEXT`: pre-registered credentials, a private key, ...), with a
//! [`HeadlessAuthorizer`] (the suite's authorization servers approve at once and redirect
//! to the redirect URI, which is never contacted), and a Client ID Metadata Document
//! served on 127.0.0.1 for the authorization servers that accept one.

use std::sync::Arc;

use ferry::http_client::oauth::{
    ClientCredentials, HeadlessAuthorizer, IdentityAssertion, OAuthClient, client_metadata_document,
};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The redirect URI the client registers: the headless authorizer stops there.
const REDIRECT_URI: &str = "http://127.0.0.1/callback";

/// The client id `auth/basic-cimd` expects: the suite's authorization server checks the
/// URL only (it fetches nothing).
const SUITE_CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The scenario's context (`{}` when there is none).
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Object(Default::default()))
}

/// The OAuth client for `scenario` against the server at `url`.
pub(crate) async fn oauth_client(scenario: &str, url: &str) -> Result<OAuthClient, String> {
    let context = context();
    let text = |key: &str| context[key].as_str().map(str::to_owned);
    let mut builder = OAuthClient::builder(url)
        .client_name("ferry-conformance-client")
        .authorizer(Arc::new(HeadlessAuthorizer::new(REDIRECT_URI)));
    if scenario == "auth/basic-cimd" {
        builder = builder.client_metadata_url(SUITE_CIMD_URL);
    } else {
        builder = builder.client_metadata_url(&serve_metadata_document().await?);
    }
    if let Some(client_id) = text("client_id") {
        let pem = text("private_key_pem");
        builder = builder.client_credentials(ClientCredentials {
            client_id,
            client_secret: text("client_secret"),
            token_endpoint_auth_method: pem.as_ref().map(|_| "private_key_jwt".to_owned()),
        });
        if let Some(pem) = pem {
            let alg = text("signing_algorithm").unwrap_or_else(|| "ES256".into());
            builder = builder.private_key_jwt(&pem, &alg, None);
        }
    }
    if scenario.starts_with("auth/client-credentials") {
        builder = builder.client_credentials_grant();
    }
    if let (Some(idp_token_endpoint), Some(idp_client_id), Some(id_token)) = (
        text("idp_token_endpoint"),
        text("idp_client_id"),
        text("idp_id_token"),
    ) {
        builder = builder.identity_assertion(IdentityAssertion {
            idp_token_endpoint,
            idp_client_id,
            idp_client_secret: None,
            id_token,
        });
    }
    builder.build().map_err(|e| e.to_string())
}

/// Serve this client's metadata document at `http://127.0.0.1:PORT/client-metadata.json`
/// for as long as the process runs; returns the URL (the client id).
async fn serve_metadata_document() -> Result<String, String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("bind the metadata document listener: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let url = format!("http://127.0.0.1:{port}/client-metadata.json");
    let document = client_metadata_document(
        &url,
        "ferry-conformance-client",
        &[REDIRECT_URI],
        &["authorization_code", "refresh_token"],
    )
    .to_string();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let document = document.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let found = head.starts_with(b"GET /client-metadata.json ");
                let (status, body) = if found {
                    ("200 OK", document)
                } else {
                    ("404 Not Found", String::new())
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    Ok(url)
}
