//! End to end: `ferry serve --http` with `--auth-*` flags against a real OpenID Provider —
//! npm `oidc-provider` (pinned in `auth-server/package.json`, started from
//! `auth-server/server.mjs` on 127.0.0.1). A token obtained with client credentials and a
//! resource indicator for the server is accepted; no token gets 401 pointing at the
//! Protected Resource Metadata, which names the provider; a token for another resource
//! gets 401; a tool needing more scope gets 403 until the token has it.
//!
//! The test installs the provider itself (see `oauth_support`), so it needs only Node.js
//! and npm.

#![cfg(unix)]

mod oauth_support;

use oauth_support::{Provider, start_ferry};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn call(
    endpoint: &str,
    http: &reqwest::Client,
    tool: &str,
    arguments: Value,
) -> reqwest::RequestBuilder {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    http.post(endpoint)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(body.to_string())
}

async fn json_of(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

#[tokio::test]
async fn ferry_serve_accepts_tokens_of_a_real_openid_provider() {
    let provider = Provider::start(None);
    let issuer = provider.issuer.clone();
    let http = reqwest::Client::new();
    let jwks = provider.jwks_uri(&http).await;
    let (_ferry, endpoint) = start_ferry(&[
        "--auth-issuer",
        &issuer,
        "--auth-jwks",
        &jwks,
        "--auth-scope",
        "mcp:tools",
        "--auth-tool-scope",
        "add=mcp:admin",
    ]);

    // No token: 401 pointing at the metadata, which names the provider.
    let response = call(&endpoint, &http, "echo", json!({"text": "hi"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    let metadata_url = challenge
        .strip_prefix("Bearer resource_metadata=\"")
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("challenge {challenge:?}"))
        .to_owned();
    assert!(challenge.contains("scope=\"mcp:tools\""), "{challenge}");
    let metadata = json_of(http.get(&metadata_url).send().await.unwrap()).await;
    assert_eq!(metadata["resource"], endpoint.as_str());
    assert_eq!(metadata["authorization_servers"], json!([issuer]));
    assert_eq!(
        metadata["scopes_supported"],
        json!(["mcp:tools", "mcp:admin"])
    );

    // A token for this resource: accepted.
    let tools = provider.service_token(&http, &endpoint, "mcp:tools").await;
    let response = call(&endpoint, &http, "echo", json!({"text": "through oauth"}))
        .bearer_auth(&tools)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = json_of(response).await;
    assert_eq!(
        body["result"]["content"][0]["text"], "through oauth",
        "{body}"
    );

    // A token the same provider issued for another resource: refused.
    let other = provider
        .service_token(&http, "http://127.0.0.1:1/mcp", "mcp:tools")
        .await;
    let response = call(&endpoint, &http, "echo", json!({"text": "x"}))
        .bearer_auth(&other)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.ends_with("error=\"invalid_token\""),
        "{challenge}"
    );
    assert_eq!(
        response.text().await.unwrap(),
        r#"{"error":"invalid_token"}"#
    );

    // Step-up: `add` needs mcp:admin.
    let response = call(&endpoint, &http, "add", json!({"a": 1, "b": 2}))
        .bearer_auth(&tools)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains("scope=\"mcp:tools mcp:admin\", error=\"insufficient_scope\""),
        "{challenge}"
    );
    let admin = provider
        .service_token(&http, &endpoint, "mcp:tools mcp:admin")
        .await;
    let response = call(&endpoint, &http, "add", json!({"a": 1, "b": 2}))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = json_of(response).await;
    assert_eq!(body["result"]["structuredContent"]["sum"], 3.0, "{body}");
}
