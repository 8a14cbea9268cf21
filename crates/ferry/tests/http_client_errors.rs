//! What the HTTP client says when it cannot get the server's answer, over real sockets on
//! 127.0.0.1: a header mismatch (`-32020`, 2026-07-28) caused by a proxy rewriting
//! `Mcp-Name` names the header and what was sent, and is not retried; a URL with no MCP
//! endpoint, an unreachable server and a proxy's error page each say the status (or the
//! cause), where, what the server said and what to check — as transport errors, told
//! apart from the server's own answers; a 401 is not taken for a 2024-11-05 server.

mod http_client_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::HeaderValue;
use ferry::client::{Client, ClientError, ErrorKind};
use ferry::http::HttpConfig;
use ferry::http_client::HttpClientConfig;
use ferry::protocol::ProtocolVersion;
use serde_json::json;

async fn connect(url: &str) -> Result<(Client, ferry::http_client::HttpConnection), ClientError> {
    Client::builder("errors-test", "1.0.0")
        .connect_http(url, HttpClientConfig::default())
        .await
}

/// Serve `router` on 127.0.0.1: its base URL.
async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    base
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_mismatch_names_the_header_and_is_not_retried() {
    let (server, _hang) = http_client_support::server();
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    // A proxy that rewrites `Mcp-Name` (and counts the tools/call POSTs it passes on).
    let router =
        ferry::http::router(server, HttpConfig::default()).layer(axum::middleware::from_fn(
            move |mut request: axum::extract::Request, next: axum::middleware::Next| {
                let counted = Arc::clone(&counted);
                async move {
                    let headers = request.headers_mut();
                    if headers.get("mcp-method").is_some_and(|m| m == "tools/call") {
                        counted.fetch_add(1, Ordering::SeqCst);
                    }
                    if headers.contains_key("mcp-name") {
                        headers.insert("mcp-name", HeaderValue::from_static("rewritten"));
                    }
                    next.run(request).await
                }
            },
        ));
    let base = serve(router).await;
    let (client, connection) = connect(&format!("{base}/mcp")).await.unwrap();
    assert_eq!(client.version(), ProtocolVersion::V2026_07_28);
    let error = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), Some(ErrorKind::HeaderMismatch), "{error}");
    assert!(!error.is_transport(), "the server's own answer: {error}");
    let text = error.to_string();
    // The server's words (which header), what was sent, what to do, and no second try.
    assert!(text.contains("Mcp-Name"), "{text}");
    assert!(text.contains("mcp-name: echo"), "{text}");
    assert!(text.contains("list them again"), "{text}");
    assert!(text.contains("Not retried"), "{text}");
    let data = error.rpc().unwrap().data.as_ref().unwrap();
    assert_eq!(data["sentHeaders"]["mcp-method"], "tools/call", "{data}");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "sent once");
    drop(client);
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_without_an_mcp_endpoint_says_so() {
    let (server, _hang) = http_client_support::server();
    let base = serve(ferry::http::router(server, HttpConfig::default())).await;
    let url = format!("{base}/nope");
    let error = connect(&url).await.unwrap_err();
    assert!(error.is_transport(), "{error:?}");
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("HTTP 404 Not Found from {url}")),
        "{text}"
    );
    assert!(text.contains("no MCP endpoint at this URL"), "{text}");
    assert!(text.contains("/mcp"), "{text}");
    assert_eq!(error.transport().unwrap().status, Some(404), "{error:?}");
    assert!(
        error.rpc().is_none(),
        "no JSON-RPC answer was made up: {error:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_names_the_url_and_the_cause() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let error = connect(&url).await.unwrap_err();
    assert!(error.is_transport(), "{error:?}");
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("cannot connect to {url}: ")),
        "{text}"
    );
    assert!(text.contains("refused"), "{text}");
    assert!(text.contains("is the server running there?"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_error_page_is_quoted_with_the_status() {
    let router = axum::Router::new().fallback(|| async {
        (
            axum::http::StatusCode::BAD_GATEWAY,
            [("content-type", "text/html")],
            "<html><body>upstream gone</body></html>",
        )
    });
    let base = serve(router).await;
    let url = format!("{base}/mcp");
    let error = connect(&url).await.unwrap_err();
    assert!(error.is_transport(), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!(
            "HTTP 502 Bad Gateway from {url}: <html><body>upstream gone</body></html> (the \
             server, or a proxy in front of it, is unavailable: try again later)"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_for_want_of_authorization_is_no_2024_11_05_server() {
    // Every request refused with 401: the 2024-11-05 fallback (a GET for an SSE stream) is
    // for 400, 404 and 405 only.
    let gets = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&gets);
    let router = axum::Router::new().fallback(move |method: axum::http::Method| {
        let counted = Arc::clone(&counted);
        async move {
            if method == axum::http::Method::GET {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            (
                axum::http::StatusCode::UNAUTHORIZED,
                [("www-authenticate", "Bearer")],
                "",
            )
        }
    });
    let base = serve(router).await;
    let url = format!("{base}/mcp");
    let error = connect(&url).await.unwrap_err();
    assert!(error.is_transport(), "{error:?}");
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("HTTP 401 Unauthorized from {url}")),
        "{text}"
    );
    assert!(text.contains("wants authorization"), "{text}");
    assert_eq!(gets.load(Ordering::SeqCst), 0, "no fallback GET");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2024_11_05_endpoint_that_is_gone_says_the_session_is_over() {
    // A 2024-11-05 server whose stream names an endpoint that answers 404.
    let router = axum::Router::new()
        .route(
            "/sse",
            axum::routing::get(|| async {
                let first = futures_util::stream::once(async {
                    Ok::<_, std::convert::Infallible>(
                        "event: endpoint\ndata: /messages?sessionId=x\n\n",
                    )
                });
                let body = axum::body::Body::from_stream(futures_util::StreamExt::chain(
                    first,
                    futures_util::stream::pending(),
                ));
                ([("content-type", "text/event-stream")], body)
            }),
        )
        .route(
            "/messages",
            axum::routing::post(|| async { (axum::http::StatusCode::NOT_FOUND, "gone") }),
        );
    let base = serve(router).await;
    let error = connect(&format!("{base}/sse")).await.unwrap_err();
    assert!(error.is_transport(), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!(
            "HTTP 404 Not Found from {base}/messages?sessionId=x: gone (the 2024-11-05 session \
             is over: its event stream closed, or it expired; connect again)"
        )
    );
}
