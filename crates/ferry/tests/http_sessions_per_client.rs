//! The per-client session limit over real sockets, with clients on different loopback
//! addresses (Linux routes all of 127/8 to loopback): a client at its limit gets 429 for
//! `initialize` and for `GET /sse` while another client still opens sessions; sessions of
//! both eras and of the HTTP+SSE transport count together; a deleted, closed or expired
//! session frees its place; `X-Forwarded-For` counts only from a trusted proxy.

use std::net::IpAddr;
use std::time::Duration;

use ferry::http::HttpConfig;
use ferry::server::Server;
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn start(config: HttpConfig) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = Server::builder("per-client-test", "1.0.0").build();
    tokio::spawn(ferry::http::serve(server, listener, config));
    format!("http://{address}")
}

/// A client whose connections come from `address`.
fn client_from(address: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(address.parse::<IpAddr>().unwrap())
        .build()
        .unwrap()
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "per-client-test", "version": "1"}}})
    .to_string()
}

/// `initialize` with `headers`: the session id, or the refusal's status and message.
async fn open(
    http: &reqwest::Client,
    base: &str,
    headers: &[(&str, &str)],
) -> Result<String, (StatusCode, String)> {
    let mut request = http
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    if status == StatusCode::OK {
        return Ok(response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned());
    }
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    Err((
        status,
        body["error"]["message"].as_str().unwrap().to_owned(),
    ))
}

/// A request in session `id`: its status.
async fn ping(http: &reqwest::Client, base: &str, id: &str) -> StatusCode {
    http.post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", "2025-06-18")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string())
        .send()
        .await
        .unwrap()
        .status()
}

fn assert_refused(refused: Result<String, (StatusCode, String)>, limit: usize) {
    let (status, message) = refused.expect_err("past the limit");
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{message}");
    assert!(
        message.contains(&format!("limit {limit} per client")),
        "{message}"
    );
}

#[tokio::test]
async fn a_client_at_its_limit_is_refused_while_another_opens_sessions() {
    let base = start(HttpConfig::default().max_sessions_per_client(2)).await;
    let a = client_from("127.0.0.2");
    let b = client_from("127.0.0.1");

    let first = open(&a, &base, &[]).await.unwrap();
    open(&a, &base, &[]).await.unwrap();
    assert_refused(open(&a, &base, &[]).await, 2);
    // The HTTP+SSE transport counts too.
    let sse = a
        .get(format!("{base}/sse"))
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(sse.status(), StatusCode::TOO_MANY_REQUESTS);

    // Another client is not affected; its HTTP+SSE session counts against it.
    open(&b, &base, &[]).await.unwrap();
    let stream = b
        .get(format!("{base}/sse"))
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    assert_refused(open(&b, &base, &[]).await, 2);

    // A deleted session frees its place.
    let deleted = a
        .delete(format!("{base}/mcp"))
        .header("mcp-session-id", &first)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::OK);
    open(&a, &base, &[]).await.unwrap();
    assert_refused(open(&a, &base, &[]).await, 2);

    // So does a closed SSE stream (once the server sees the connection go).
    drop(stream);
    let mut reopened = false;
    for _ in 0..100 {
        if open(&b, &base, &[]).await.is_ok() {
            reopened = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(reopened, "the closed HTTP+SSE session still counts");
}

#[tokio::test]
async fn expired_and_unused_sessions_make_room_for_their_own_client_only() {
    let config = HttpConfig::default()
        .max_sessions_per_client(1)
        .unused_session_grace(Duration::from_millis(100))
        .session_idle_timeout(Duration::from_secs(60));
    let base = start(config).await;
    let a = client_from("127.0.0.2");
    let b = client_from("127.0.0.1");
    let unused = open(&a, &base, &[]).await.unwrap();
    let used = open(&b, &base, &[]).await.unwrap();
    assert_eq!(ping(&b, &base, &used).await, StatusCode::OK);
    // Within the grace, the unused session holds its place.
    assert_refused(open(&a, &base, &[]).await, 1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Past it, the client's own session that never made a request makes room...
    let again = open(&a, &base, &[]).await.unwrap();
    assert_eq!(ping(&a, &base, &unused).await, StatusCode::NOT_FOUND);
    assert_eq!(ping(&a, &base, &again).await, StatusCode::OK);
    // ...but a used one does not, nor does another client's.
    assert_refused(open(&a, &base, &[]).await, 1);
    assert_refused(open(&b, &base, &[]).await, 1);
    assert_eq!(ping(&b, &base, &used).await, StatusCode::OK);

    // An expired session frees its place.
    let config = HttpConfig::default()
        .max_sessions_per_client(1)
        .session_idle_timeout(Duration::from_millis(200));
    let base = start(config).await;
    open(&a, &base, &[]).await.unwrap();
    assert_refused(open(&a, &base, &[]).await, 1);
    tokio::time::sleep(Duration::from_millis(500)).await;
    open(&a, &base, &[]).await.unwrap();
}

#[tokio::test]
async fn forwarded_for_counts_only_from_a_trusted_proxy() {
    let config = HttpConfig::default()
        .max_sessions_per_client(1)
        .trust_proxy("127.0.0.1".parse().unwrap());
    let base = start(config).await;
    let proxy = client_from("127.0.0.1");
    let xff = |value| [("x-forwarded-for", value)];
    open(&proxy, &base, &xff("10.0.0.1")).await.unwrap();
    open(&proxy, &base, &xff("10.0.0.2")).await.unwrap();
    // The entry the proxy appended counts, not what the client wrote before it.
    assert_refused(open(&proxy, &base, &xff("10.9.9.9, 10.0.0.1")).await, 1);
    // Without the header, the proxy's own address.
    open(&proxy, &base, &[]).await.unwrap();
    assert_refused(open(&proxy, &base, &[]).await, 1);

    // From an address that is no trusted proxy, the header is ignored.
    let direct = client_from("127.0.0.2");
    open(&direct, &base, &xff("10.0.0.3")).await.unwrap();
    assert_refused(open(&direct, &base, &xff("10.0.0.4")).await, 1);
}
