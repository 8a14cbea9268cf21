//! Session-era sessions under authentication: bound to the principal that started them.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{Fixture, jwt, start, start_with};

impl Fixture {
    fn session_post(
        &self,
        session: Option<&str>,
        token: &str,
        body: &Value,
    ) -> reqwest::RequestBuilder {
        let request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .bearer_auth(token)
            .body(body.to_string());
        match session {
            Some(id) => request.header("mcp-session-id", id),
            None => request,
        }
    }
}

fn whoami() -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
           "params": {"name": "whoami", "arguments": {}}})
}

#[tokio::test]
async fn a_session_serves_its_own_principal_only() {
    let f = start(jwt()).await;
    let alice = f.issuer.token(&f.url, "mcp:tools");
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let response = f
        .session_post(None, &alice, &initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = f
        .session_post(Some(&id), &alice, &initialized)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);

    // A fresh token of the same principal (say, refreshed, with more scope) is fine, and
    // the handler sees this request's claims.
    let refreshed = f.issuer.token(&f.url, "mcp:tools mcp:admin");
    let response = f
        .session_post(Some(&id), &refreshed, &whoami())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    let claims: Value = serde_json::from_str(text).unwrap();
    assert_eq!(claims["scopes"], json!(["mcp:tools", "mcp:admin"]));

    // Another principal with a valid token of its own cannot use the session.
    let mut claims = f.issuer.claims(&f.url, "mcp:tools");
    claims["sub"] = json!("mallory");
    let mallory = f.issuer.key.sign(&claims);
    let response = f
        .session_post(Some(&id), &mallory, &whoami())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = f
        .http
        .delete(&f.url)
        .header("mcp-session-id", &id)
        .bearer_auth(&mallory)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    // Nor can anyone without a token.
    let response = f
        .http
        .post(&f.url)
        .header("mcp-session-id", &id)
        .body(whoami().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    // The owner still can, and may end it.
    let response = f
        .session_post(Some(&id), &alice, &whoami())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let response = f
        .http
        .delete(&f.url)
        .header("mcp-session-id", &id)
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

/// Reads SSE events from a response: `(event, data)`.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    async fn next(&mut self) -> (String, String) {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = String::from("message");
                let mut data = Vec::new();
                for line in block.lines() {
                    if let Some(name) = line.strip_prefix("event: ") {
                        event = name.to_owned();
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data.push(d);
                    }
                }
                if !data.is_empty() {
                    return (event, data.join("\n"));
                }
                continue;
            }
            let chunk = self.response.chunk().await.unwrap().expect("more events");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// The next message with this id.
    async fn response(&mut self, id: u64) -> Value {
        loop {
            let (_, data) = self.next().await;
            let message: Value = serde_json::from_str(&data).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }
}

#[tokio::test]
async fn an_http_sse_session_serves_its_own_principal_only() {
    let f = start(jwt()).await;
    let sse = format!("{}/sse", f.base);
    let response = f
        .http
        .get(&sse)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);

    let alice = f.issuer.token(&f.url, "mcp:tools");
    let response = f
        .http
        .get(&sse)
        .header("accept", "text/event-stream")
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut events = Events {
        response,
        buffer: String::new(),
    };
    let (event, endpoint) = events.next().await;
    assert_eq!(event, "endpoint");
    let messages = format!("{}{endpoint}", f.base);
    let post = |token: &str, body: Value| {
        f.http
            .post(&messages)
            .header("content-type", "application/json")
            .bearer_auth(token)
            .body(body.to_string())
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});

    let mut claims = f.issuer.claims(&f.url, "mcp:tools");
    claims["sub"] = json!("mallory");
    let mallory = f.issuer.key.sign(&claims);
    let response = post(&mallory, initialize.clone()).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    let response = post(&alice, initialize).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert_eq!(
        events.response(0).await["result"]["protocolVersion"],
        "2024-11-05"
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(&alice, initialized).send().await.unwrap().status(),
        StatusCode::ACCEPTED
    );
    let response = post(&alice, whoami()).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let answer = events.response(2).await;
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    let claims: Value = serde_json::from_str(text).unwrap();
    assert_eq!(claims["sub"], "alice");
}

#[tokio::test]
async fn challenges_reach_browsers_and_foreign_origins_are_refused_first() {
    let f = start(jwt()).await;
    let response = f
        .http
        .post(&f.url)
        .header("origin", "http://localhost:3000")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let headers = response.headers();
    assert_eq!(
        headers["access-control-allow-origin"],
        "http://localhost:3000"
    );
    let exposed = headers["access-control-expose-headers"].to_str().unwrap();
    assert!(exposed.contains("WWW-Authenticate"), "{exposed}");
    assert!(headers.contains_key("www-authenticate"));
    // A preflight carries no credentials and is answered.
    let response = f
        .http
        .request(reqwest::Method::OPTIONS, &f.url)
        .header("origin", "http://localhost:3000")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    // A foreign origin is refused before authentication says anything.
    let response = f
        .http
        .post(&f.url)
        .header("origin", "https://evil.example")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(!response.headers().contains_key("www-authenticate"));
}

/// With authentication, the per-client session limit counts principals, not addresses:
/// two principals on one address are counted apart.
#[tokio::test]
async fn the_session_limit_counts_each_principal_apart() {
    let config = ferry::http::HttpConfig::default().max_sessions_per_client(1);
    let f = start_with(jwt(), config).await;
    let alice = f.issuer.token(&f.url, "mcp:tools");
    let mut claims = f.issuer.claims(&f.url, "mcp:tools");
    claims["sub"] = json!("bob");
    let bob = f.issuer.key.sign(&claims);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let status = |token: String| {
        let request = f.session_post(None, &token, &initialize);
        async move { request.send().await.unwrap() }
    };
    assert_eq!(status(alice.clone()).await.status(), StatusCode::OK);
    let refused = status(alice).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let body: Value = serde_json::from_slice(&refused.bytes().await.unwrap()).unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("limit 1 per client"), "{message}");
    // Same address, another principal: a place of its own.
    assert_eq!(status(bob).await.status(), StatusCode::OK);
}
