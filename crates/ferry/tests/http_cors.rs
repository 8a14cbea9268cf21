//! CORS over a real socket on 127.0.0.1: preflights answered for allowed origins (with the
//! MCP headers, `Mcp-Param-*` included), refused for foreign ones; responses to allowed
//! origins carry `Access-Control-Allow-Origin` and expose `MCP-Session-Id`.

use ferry::http::HttpConfig;
use ferry::server::Server;
use reqwest::{Method, StatusCode};
use serde_json::json;

async fn start() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let config = HttpConfig::default().allow_origin("https://app.example.com");
    tokio::spawn(ferry::http::serve(
        Server::builder("cors-test", "1.0.0").build(),
        listener,
        config,
    ));
    format!("http://{address}")
}

#[tokio::test]
async fn preflights_and_headers() {
    let base = start().await;
    let http = reqwest::Client::new();
    let preflight = |origin: &'static str, path: &'static str| {
        http.request(Method::OPTIONS, format!("{base}{path}"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "content-type, mcp-session-id, mcp-protocol-version, mcp-param-region, x-other",
            )
            .send()
    };
    for (origin, path) in [
        ("https://app.example.com", "/mcp"),
        ("http://localhost:5173", "/mcp"),
        ("https://app.example.com", "/sse"),
        ("https://app.example.com", "/messages"),
    ] {
        let response = preflight(origin, path).await.unwrap();
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "{origin} {path}");
        let headers = response.headers();
        assert_eq!(headers["access-control-allow-origin"], origin);
        let methods = headers["access-control-allow-methods"].to_str().unwrap();
        for method in ["GET", "POST", "DELETE"] {
            assert!(methods.contains(method), "{methods}");
        }
        let allowed = headers["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .to_ascii_lowercase();
        for name in [
            "content-type",
            "mcp-session-id",
            "mcp-protocol-version",
            "mcp-param-region",
        ] {
            assert!(allowed.contains(name), "{allowed}");
        }
        assert!(!allowed.contains("x-other"), "{allowed}");
    }
    let response = preflight("https://evil.example", "/mcp").await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        !response
            .headers()
            .contains_key("access-control-allow-origin")
    );

    // An actual cross-origin request: a session starts, and scripts may read its id.
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "browser", "version": "1"}}});
    let response = http
        .post(format!("{base}/mcp"))
        .header("origin", "https://app.example.com")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers();
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://app.example.com"
    );
    let exposed = headers["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(exposed.contains("mcp-session-id"), "{exposed}");
    assert!(exposed.contains("www-authenticate"), "{exposed}");
    assert!(headers.contains_key("mcp-session-id"));

    // Without Origin (not a browser): no CORS headers.
    let response = http
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize.to_string())
        .send()
        .await
        .unwrap();
    assert!(
        !response
            .headers()
            .contains_key("access-control-allow-origin")
    );
}
