//! Many requests in flight on one client when its token goes stale (401) or lacks a scope
//! (403 `insufficient_scope`): one refresh, or one step-up authorization, at the
//! authorization server, and every request sent again with the new token succeeds.
//!
//! A gate around the OAuth client holds each request's headers until all of them have
//! theirs, so every request certainly carries the old token and is refused: without the
//! client's single-flight (a refused token a concurrent request already replaced is just
//! sent again) each refusal would refresh or step up on its own.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferry::client::Client as McpClient;
use ferry::http::auth::{BoxFuture, Claims, JwtVerifier, TokenVerifier, VerifyError};
use ferry::http_client::oauth::{MemoryTokenStore, OAuthClient};
use ferry::http_client::{AuthChallenge, AuthFuture, HttpAuth, HttpClientConfig, HttpConnection};
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::json;
use tokio::sync::Barrier;

use crate::authorization_server::{AuthorizationServer, Behaviour};
use crate::{builder, call, protected_server_with};

/// Requests in flight at once.
const IN_FLIGHT: usize = 6;

/// A JWT verifier that also refuses the tokens revoked by the test (a token gone stale
/// before its `exp`, as far as the client can tell).
struct Revocable {
    inner: JwtVerifier,
    revoked: Arc<Mutex<HashSet<String>>>,
}

impl TokenVerifier for Revocable {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Claims, VerifyError>> {
        if self.revoked.lock().unwrap().contains(token) {
            return Box::pin(async { Err(VerifyError::Invalid("revoked".into())) });
        }
        self.inner.verify(token)
    }
}

/// The OAuth client as the HTTP client's hook, with a gate: once armed for `n`, the next
/// `n` requests each wait, their headers in hand, until all `n` have them. Records the
/// status and the bearer token of every challenge.
struct Gated {
    oauth: OAuthClient,
    barrier: Mutex<Option<Arc<Barrier>>>,
    armed: AtomicUsize,
    challenges: Mutex<Vec<(u16, String)>>,
}

impl Gated {
    fn new(oauth: OAuthClient) -> Arc<Gated> {
        Arc::new(Gated {
            oauth,
            barrier: Mutex::new(None),
            armed: AtomicUsize::new(0),
            challenges: Mutex::new(Vec::new()),
        })
    }

    fn arm(&self, n: usize) {
        *self.barrier.lock().unwrap() = Some(Arc::new(Barrier::new(n)));
        self.armed.store(n, Ordering::SeqCst);
    }

    /// The challenges with `status` for requests that carried `token`.
    fn refusals(&self, status: u16, token: &str) -> usize {
        let challenges = self.challenges.lock().unwrap();
        challenges
            .iter()
            .filter(|(s, t)| *s == status && t == token)
            .count()
    }
}

impl HttpAuth for Gated {
    fn headers(&self) -> AuthFuture<'_, Result<HeaderMap, String>> {
        Box::pin(async move {
            let headers = self.oauth.headers().await;
            let gated = self
                .armed
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if gated {
                let barrier = self.barrier.lock().unwrap().clone();
                if let Some(barrier) = barrier {
                    // Bounded: a request that never comes fails the counts, not the run.
                    let _ = tokio::time::timeout(Duration::from_secs(10), barrier.wait()).await;
                }
            }
            headers
        })
    }

    fn challenged<'a>(&'a self, challenge: &'a AuthChallenge) -> AuthFuture<'a, bool> {
        let token = challenge
            .sent
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default()
            .to_owned();
        self.challenges
            .lock()
            .unwrap()
            .push((challenge.status, token));
        self.oauth.challenged(challenge)
    }
}

/// A connected client over `gated` (no standalone stream: only the calls ask for headers).
async fn connect(url: &str, gated: &Arc<Gated>) -> (McpClient, HttpConnection) {
    let config = HttpClientConfig::default()
        .auth(Arc::clone(gated) as Arc<dyn HttpAuth>)
        .standalone_stream(false);
    McpClient::builder("oauth-concurrency-test", "1.0.0")
        .timeout(Duration::from_secs(30))
        .connect_http(url, config)
        .await
        .unwrap()
}

/// `tool` called `IN_FLIGHT` times at once through the armed gate; every call's text.
async fn all_at_once(client: &McpClient, gated: &Gated, tool: &str) -> Vec<String> {
    gated.arm(IN_FLIGHT);
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..IN_FLIGHT {
        let (client, tool) = (client.clone(), tool.to_owned());
        calls.spawn(async move { client.call_tool(&tool, json!({})).await });
    }
    let mut texts = Vec::new();
    while let Some(result) = calls.join_next().await {
        let result = result
            .unwrap()
            .unwrap_or_else(|e| panic!("tools/call {tool}: {e}"));
        assert_ne!(result.is_error, Some(true), "{result:?}");
        let text = serde_json::to_value(&result.content[0]).unwrap()["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        texts.push(text);
    }
    texts
}

async fn access_token(oauth: &OAuthClient) -> String {
    oauth.tokens().await.expect("a token").access_token
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_in_flight_when_the_token_goes_stale_share_one_refresh() {
    let as_ = AuthorizationServer::start(Behaviour::default()).await;
    let revoked = Arc::new(Mutex::new(HashSet::new()));
    let url = protected_server_with(&as_, None, |inner| Revocable {
        inner,
        revoked: Arc::clone(&revoked),
    })
    .await;
    // The token comes from the store (an earlier run's), so it is not "just obtained": a
    // token refused within seconds of its grant is not refreshed (FRESH in the client).
    let store = Arc::new(MemoryTokenStore::new());
    call(
        &url,
        &builder(&url).store(store.clone()).build().unwrap(),
        "whoami",
    )
    .await
    .unwrap();
    let oauth = builder(&url).store(store).build().unwrap();
    let gated = Gated::new(oauth.clone());
    let (client, connection) = connect(&url, &gated).await;
    let first = client.call_tool("whoami", json!({})).await.unwrap();
    assert_ne!(first.is_error, Some(true));
    assert_eq!(as_.events_starting("authorize").len(), 1);
    assert_eq!(as_.events_starting("token").len(), 1);

    // The token goes stale at the resource server; the client still thinks it good.
    let stale = access_token(&oauth).await;
    revoked.lock().unwrap().insert(stale.clone());
    let texts = all_at_once(&client, &gated, "whoami").await;

    assert_eq!(
        gated.refusals(401, &stale),
        IN_FLIGHT,
        "every request was in flight with the stale token"
    );
    assert_eq!(
        as_.events_starting("token grant=refresh_token").len(),
        1,
        "one refresh for all: {:?}",
        as_.events()
    );
    assert_eq!(as_.events_starting("token").len(), 2, "{:?}", as_.events());
    assert_eq!(
        as_.events_starting("authorize").len(),
        1,
        "no new authorization"
    );
    let fresh = access_token(&oauth).await;
    assert_ne!(fresh, stale);
    assert_eq!(texts.len(), IN_FLIGHT);
    for text in &texts {
        assert!(text.ends_with(" mcp:tools"), "{texts:?}");
    }
    // Every request went through on the new token: none was refused with it.
    assert_eq!(gated.refusals(401, &fresh), 0);
    drop(client);
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_in_flight_that_need_a_step_up_share_one_authorization() {
    let as_ = AuthorizationServer::start(Behaviour::default()).await;
    let url = protected_server_with(&as_, None, |verifier| verifier).await;
    let oauth = builder(&url).build().unwrap();
    let gated = Gated::new(oauth.clone());
    let (client, connection) = connect(&url, &gated).await;
    let first = client.call_tool("whoami", json!({})).await.unwrap();
    assert_ne!(first.is_error, Some(true));
    assert_eq!(as_.events_starting("authorize").len(), 1);
    let narrow = access_token(&oauth).await;

    // Every call needs mcp:admin, which the token lacks.
    let texts = all_at_once(&client, &gated, "admin").await;

    assert_eq!(
        gated.refusals(403, &narrow),
        IN_FLIGHT,
        "every request was in flight with the narrow token"
    );
    let authorize = as_.events_starting("authorize");
    assert_eq!(authorize.len(), 2, "one step-up for all: {authorize:?}");
    assert!(
        authorize[1].contains("scope=\"mcp:admin mcp:tools\""),
        "{authorize:?}"
    );
    assert_eq!(
        as_.events_starting("token grant=authorization_code").len(),
        2,
        "{:?}",
        as_.events()
    );
    assert_eq!(texts, vec!["done"; IN_FLIGHT]);
    let wide = access_token(&oauth).await;
    assert_ne!(wide, narrow);
    assert_eq!(gated.refusals(403, &wide), 0);
    drop(client);
    connection.close().await;
}
