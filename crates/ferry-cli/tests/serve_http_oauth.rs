//! End to end: `ferry serve --http` with `--auth-*` flags against a real OpenID Provider —
//! npm `oidc-provider` (pinned in `auth-server/package.json`, started from
//! `auth-server/server.mjs` on 127.0.0.1). A token obtained with client credentials and a
//! resource indicator for the server is accepted; no token gets 401 pointing at the
//! Protected Resource Metadata, which names the provider; a token for another resource
//! gets 401; a tool needing more scope gets 403 until the token has it.
//!
//! The test installs the provider itself (`npm ci` in `auth-server/`, under a file lock
//! so concurrent test processes install once), so it needs only Node.js and npm.

#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

/// `auth-server/` at the workspace root.
fn auth_server_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../auth-server")
}

/// A directory created atomically as a lock between processes; removed when dropped. A
/// lock older than ten minutes is taken to be left over from a killed run.
struct DirLock(PathBuf);

impl DirLock {
    fn acquire(path: PathBuf) -> DirLock {
        loop {
            match std::fs::create_dir(&path) {
                Ok(()) => return DirLock(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok())
                        .is_some_and(|age| age > Duration::from_secs(600));
                    if stale {
                        let _ = std::fs::remove_dir(&path).or_else(|_| std::fs::remove_file(&path));
                    } else {
                        std::thread::sleep(Duration::from_millis(200));
                    }
                }
                Err(e) => panic!("cannot create the lock {path:?}: {e}"),
            }
        }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// `npm ci` unless the packages are there; one process at a time.
fn install() {
    let dir = auth_server_dir();
    let marker = dir.join("node_modules/oidc-provider/package.json");
    let _lock = DirLock::acquire(dir.join(".install-lock"));
    if !marker.exists() {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()
            .expect("npm runs (Node.js is needed for the authorization tests)");
        assert!(status.success(), "npm ci in {dir:?} failed");
    }
    assert!(marker.exists(), "{marker:?} missing after npm ci");
}

/// A child process killed when the test ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start the OpenID Provider; returns it and its issuer URL.
fn start_provider() -> (Running, String) {
    install();
    let mut child = Command::new("node")
        .arg("server.mjs")
        .current_dir(auth_server_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("node starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the provider's ready line");
    let ready: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    let issuer = ready["issuer"].as_str().expect("issuer").to_owned();
    (Running(child), issuer)
}

/// Start `ferry serve --http` with `args`; returns it and its endpoint URL.
fn start_ferry(args: &[&str]) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("banner");
    // Keep reading, so that the server's later lines never meet a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let endpoint = line
        .trim()
        .strip_prefix("ferry serve: MCP on ")
        .unwrap_or_else(|| panic!("banner {line:?}"))
        .to_owned();
    (Running(child), endpoint)
}

/// An access token from the provider's token endpoint (client credentials).
async fn token(http: &reqwest::Client, issuer: &str, resource: &str, scope: &str) -> String {
    let response = http
        .post(format!("{issuer}/token"))
        .basic_auth("ferry-service", Some("ferry-service-secret"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("resource", resource),
            ("scope", scope),
        ])
        .send()
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    body["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("a token: {body}"))
        .to_owned()
}

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
    let (_provider, issuer) = start_provider();
    let http = reqwest::Client::new();
    let discovery = json_of(
        http.get(format!("{issuer}/.well-known/openid-configuration"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let jwks = discovery["jwks_uri"].as_str().expect("jwks_uri").to_owned();
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
    let tools = token(&http, &issuer, &endpoint, "mcp:tools").await;
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
    let other = token(&http, &issuer, "http://127.0.0.1:1/mcp", "mcp:tools").await;
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
    let admin = token(&http, &issuer, &endpoint, "mcp:tools mcp:admin").await;
    let response = call(&endpoint, &http, "add", json!({"a": 1, "b": 2}))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = json_of(response).await;
    assert_eq!(body["result"]["structuredContent"]["sum"], 3.0, "{body}");
}
