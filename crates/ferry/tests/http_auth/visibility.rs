//! Per-caller visibility over HTTP: the `secret` tool is visible to tokens with
//! `mcp:admin` only (`has_scope`): absent from the others' `tools/list`, unknown when they
//! call it, and a visibility change reaches an open session as `list_changed`.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{Fixture, jwt, start};

impl Fixture {
    /// A stateless-era request of `method` with `params`, as a conforming client sends it.
    async fn stateless(
        &self,
        token: &str,
        method: &str,
        name: Option<&str>,
        params: Value,
    ) -> Value {
        let mut params = params;
        params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientCapabilities": {}});
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .bearer_auth(token)
            .body(body.to_string());
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        let response = request.send().await.unwrap();
        // (A stateless-era error such as -32602 comes with a 400.)
        let status = response.status();
        let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        let expected = if body.get("error").is_some() {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::OK
        };
        assert_eq!(status, expected, "{method}: {body}");
        body
    }
}

fn names(list: &Value) -> Vec<&str> {
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tool list: {list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn two_principals_see_different_tools_and_the_hidden_one_is_unknown() {
    let f = start(jwt()).await;
    let user = f.issuer.token(&f.url, "mcp:tools");
    let admin = f.issuer.token(&f.url, "mcp:tools mcp:admin");

    let seen_by_user = f.stateless(&user, "tools/list", None, json!({})).await;
    assert_eq!(names(&seen_by_user), ["whoami", "admin"]);
    let seen_by_admin = f.stateless(&admin, "tools/list", None, json!({})).await;
    assert_eq!(names(&seen_by_admin), ["whoami", "admin", "secret"]);

    let call = json!({"name": "secret", "arguments": {}});
    let refused = f
        .stateless(&user, "tools/call", Some("secret"), call.clone())
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains(r#"unknown tool "secret""#),
        "{refused}"
    );
    let answered = f
        .stateless(&admin, "tools/call", Some("secret"), call)
        .await;
    assert_eq!(answered["result"]["content"][0]["text"], "classified");
}

#[tokio::test]
async fn a_visibility_change_reaches_an_open_session_as_list_changed() {
    let f = start(jwt()).await;
    let token = f.issuer.token(&f.url, "mcp:tools");
    let post = |session: Option<&str>, body: Value| {
        let request = f
            .http
            .post(&f.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .bearer_auth(&token)
            .body(body.to_string());
        match session {
            Some(id) => request.header("mcp-session-id", id),
            None => request,
        }
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let response = post(None, initialize).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = post(Some(&id), initialized).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);

    // The session's list, then its GET stream, then the grant change.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let response = post(Some(&id), list).send().await.unwrap();
    let listed: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(names(&listed), ["whoami", "admin"]);
    let stream = f
        .http
        .get(&f.url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", &id)
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    f.server.visibility_changed();
    let mut body = stream.bytes_stream();
    let mut seen = String::new();
    let heard = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(chunk) = body.next().await {
            seen.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
            if seen.contains("notifications/tools/list_changed") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(heard, Ok(true), "the stream said: {seen}");
}
