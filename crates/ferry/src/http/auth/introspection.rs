//! Verifying opaque (or any) access tokens by asking the authorization server (RFC 7662).
//!
//! The resource server authenticates to the introspection endpoint with HTTP Basic client
//! credentials (`client_secret_basic`). Active tokens are cached, keyed by the SHA-256 of
//! the token, until the earlier of their `exp` and [`IntrospectionVerifier::cache_for`];
//! inactive ones are not (a token becomes active only by being issued anew).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::verify::{BoxFuture, TokenVerifier, VerifyError, now};
use crate::server::Claims;

/// The largest introspection response read.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// Verifies tokens with an RFC 7662 introspection endpoint.
pub struct IntrospectionVerifier {
    endpoint: String,
    client_id: String,
    client_secret: String,
    client: reqwest::Client,
    cache: Mutex<HashMap<[u8; 32], (Claims, Instant)>>,
    cache_for: Duration,
    max_cached: usize,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Ask `endpoint`, authenticating as `client_id` with `client_secret`.
    pub fn new(
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        IntrospectionVerifier {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
            cache: Mutex::default(),
            cache_for: Duration::from_secs(60),
            max_cached: 10_000,
        }
    }

    /// The longest an active result is reused. Default: 60 s; zero disables the cache.
    pub fn cache_for(mut self, duration: Duration) -> Self {
        self.cache_for = duration;
        self
    }

    fn cached(&self, key: &[u8; 32]) -> Option<Claims> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        match cache.get(key) {
            Some((claims, until)) if Instant::now() < *until => Some(claims.clone()),
            Some(_) => {
                cache.remove(key);
                None
            }
            None => None,
        }
    }

    fn remember(&self, key: [u8; 32], claims: &Claims) {
        let mut ttl = self.cache_for;
        if let Some(exp) = claims.expires_at {
            ttl = ttl.min(Duration::from_secs(exp.saturating_sub(now())));
        }
        if ttl.is_zero() {
            return;
        }
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= self.max_cached {
            let now = Instant::now();
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= self.max_cached {
                cache.clear();
            }
        }
        cache.insert(key, (claims.clone(), Instant::now() + ttl));
    }

    async fn check(&self, token: &str) -> Result<Claims, VerifyError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(claims) = self.cached(&key) {
            return Ok(claims);
        }
        let unavailable = |e: &dyn std::fmt::Display| {
            VerifyError::Unavailable(format!("introspection at {}: {e}", self.endpoint))
        };
        let mut response = self
            .client
            .post(&self.endpoint)
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .header("accept", "application/json")
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        if !response.status().is_success() {
            return Err(unavailable(&response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| unavailable(&e))? {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(unavailable(&"response too large"));
            }
            body.extend_from_slice(&chunk);
        }
        let map: Map<String, Value> = serde_json::from_slice(&body).map_err(|e| unavailable(&e))?;
        if map.get("active") != Some(&Value::Bool(true)) {
            return Err(VerifyError::Invalid("the token is not active".into()));
        }
        let claims = Claims::from_map(map);
        self.remember(key, &claims);
        Ok(claims)
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Claims, VerifyError>> {
        Box::pin(self.check(token))
    }
}
