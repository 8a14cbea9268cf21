//! The HTTP client's authentication hook ([`ferry::http_client::HttpAuth`]) against Ferry's
//! HTTP server behind a layer that answers 401 until the right bearer token comes: the
//! hook sees the challenge, obtains a token, and the request is sent again.

mod http_client_support;

use ferry::client::Client;
use ferry::http::HttpConfig;
use ferry::http_client::HttpClientConfig;
use ferry::protocol::ProtocolVersion;
use http_client_support::text_of;
use serde_json::json;

/// An auth hook that has no token until challenged, then uses the one the test grants.
struct GrantOnChallenge {
    token: std::sync::Mutex<Option<String>>,
    challenges: std::sync::Mutex<Vec<String>>,
}

impl ferry::http_client::HttpAuth for GrantOnChallenge {
    fn headers(
        &self,
    ) -> ferry::http_client::AuthFuture<'_, Result<reqwest::header::HeaderMap, String>> {
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(token) = self.token.lock().unwrap().as_deref() {
            headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
        }
        Box::pin(async move { Ok(headers) })
    }

    fn challenged<'a>(
        &'a self,
        challenge: &'a ferry::http_client::AuthChallenge,
    ) -> ferry::http_client::AuthFuture<'a, bool> {
        self.challenges.lock().unwrap().push(format!(
            "{} {}",
            challenge.status,
            challenge.www_authenticate.join(",")
        ));
        *self.token.lock().unwrap() = Some("granted".into());
        Box::pin(async { true })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_auth_hook_answers_a_challenge_and_retries() {
    let (server, _hang) = http_client_support::server();
    let router =
        ferry::http::router(server, HttpConfig::default()).layer(axum::middleware::from_fn(
            |request: axum::extract::Request, next: axum::middleware::Next| async move {
                let granted = request
                    .headers()
                    .get("authorization")
                    .is_some_and(|v| v == "Bearer granted");
                if granted {
                    next.run(request).await
                } else {
                    axum::response::Response::builder()
                        .status(401)
                        .header("www-authenticate", "Bearer realm=\"test\"")
                        .body(axum::body::Body::empty())
                        .unwrap()
                }
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let auth = std::sync::Arc::new(GrantOnChallenge {
        token: std::sync::Mutex::new(None),
        challenges: std::sync::Mutex::new(Vec::new()),
    });
    for version in [None, Some(ProtocolVersion::V2025_11_25)] {
        *auth.token.lock().unwrap() = None;
        let config = HttpClientConfig::default().auth(auth.clone());
        let mut builder = Client::builder("http-client-auth-test", "1.0.0");
        if let Some(version) = version {
            builder = builder.version(version);
        }
        let (client, connection) = builder.connect_http(&url, config).await.unwrap();
        let echoed = client
            .call_tool("echo", json!({"text": "in"}))
            .await
            .unwrap();
        assert_eq!(text_of(&echoed), "in");
        drop(client);
        connection.close().await;
    }
    let challenges = auth.challenges.lock().unwrap().clone();
    assert_eq!(
        challenges,
        ["401 Bearer realm=\"test\"", "401 Bearer realm=\"test\""],
        "one challenge per connection, then every request carries the token"
    );
}

/// A hook that always sends `Bearer <n>` (n counts the requests) and gives up when refused,
/// recording which token each challenge says was refused.
struct Numbered {
    sent: std::sync::atomic::AtomicUsize,
    refused: std::sync::Mutex<Vec<String>>,
}

impl ferry::http_client::HttpAuth for Numbered {
    fn headers(
        &self,
    ) -> ferry::http_client::AuthFuture<'_, Result<reqwest::header::HeaderMap, String>> {
        let n = self.sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("authorization", format!("Bearer {n}").parse().unwrap());
        Box::pin(async move { Ok(headers) })
    }

    fn challenged<'a>(
        &'a self,
        challenge: &'a ferry::http_client::AuthChallenge,
    ) -> ferry::http_client::AuthFuture<'a, bool> {
        let sent = challenge
            .sent
            .get("authorization")
            .unwrap()
            .to_str()
            .unwrap();
        let leaked = format!("{challenge:?}").contains(sent);
        let mut refused = self.refused.lock().unwrap();
        refused.push(if leaked { "leaked in Debug" } else { sent }.to_owned());
        // Retry twice, then give up: the hook may ask for more than one retry.
        let retry = refused.len() < 3;
        Box::pin(async move { retry })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_challenge_names_the_headers_of_the_refused_request() {
    let (server, _hang) = http_client_support::server();
    let router =
        ferry::http::router(server, HttpConfig::default()).layer(axum::middleware::from_fn(
            |_: axum::extract::Request, _: axum::middleware::Next| async move {
                axum::response::Response::builder()
                    .status(401)
                    .header("www-authenticate", "Bearer")
                    .body(axum::body::Body::empty())
                    .unwrap()
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let auth = std::sync::Arc::new(Numbered {
        sent: Default::default(),
        refused: Default::default(),
    });
    let config = HttpClientConfig::default()
        .auth(auth.clone())
        .header("x-test", "1")
        .unwrap();
    let mut builder = Client::builder("http-client-auth-test", "1.0.0");
    builder = builder.version(ProtocolVersion::V2026_07_28);
    let error = builder.connect_http(&url, config).await.unwrap_err();
    assert!(error.to_string().contains("401"), "{error}");
    assert_eq!(
        *auth.refused.lock().unwrap(),
        ["Bearer 0", "Bearer 1", "Bearer 2"],
        "each challenge names its own request's token (not in its Debug output); the \
         request was sent three times"
    );
}

/// A hook that panics.
struct Panicking;

impl ferry::http_client::HttpAuth for Panicking {
    fn headers(
        &self,
    ) -> ferry::http_client::AuthFuture<'_, Result<reqwest::header::HeaderMap, String>> {
        Box::pin(async { panic!("a bug in the hook") })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_hook_fails_the_request_at_once() {
    let (server, _hang) = http_client_support::server();
    let router = ferry::http::router(server, HttpConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let config = HttpClientConfig::default().auth(std::sync::Arc::new(Panicking));
    let error = Client::builder("http-client-auth-test", "1.0.0")
        .timeout(std::time::Duration::from_secs(600))
        .connect_http(&url, config)
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the authentication hook panicked"),
        "{error}"
    );
}
