//! Where OAuth credentials live between requests and between runs: the [`TokenStore`]
//! trait, keyed by authorization server and protected resource ([`StoreKey`]), and the
//! in-memory [`MemoryTokenStore`].

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

/// A boxed future, as the OAuth traits ([`TokenStore`], [`super::Authorizer`]) return.
pub type OAuthFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Which credentials: the authorization server (issuer URL) and the protected resource
/// (canonical MCP server URI). Credentials obtained from one authorization server for one
/// resource are never used for another.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StoreKey {
    /// The authorization server's issuer identifier (a URL).
    pub issuer: String,
    /// The canonical URI of the MCP server (the RFC 8707 `resource`).
    pub resource: String,
}

/// What is stored per [`StoreKey`]: the client registration and the tokens.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredCredentials {
    /// The client's registration with the authorization server (dynamic or pre-registered).
    pub client: Option<ClientCredentials>,
    /// The tokens last obtained.
    pub tokens: Option<TokenSet>,
}

/// A client registration: its id and, for confidential clients, its secret.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClientCredentials {
    /// The `client_id` (for a Client ID Metadata Document, its URL).
    pub client_id: String,
    /// The `client_secret`, if the client has one.
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint (`client_secret_basic`,
    /// `client_secret_post`, `none`, `private_key_jwt`); `None`: chosen from the server's
    /// metadata.
    pub token_endpoint_auth_method: Option<String>,
}

/// Tokens from a token endpoint.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TokenSet {
    /// The access token sent as `Authorization: Bearer ...`.
    pub access_token: String,
    /// The token type (`Bearer`).
    pub token_type: String,
    /// The refresh token, if one was issued.
    pub refresh_token: Option<String>,
    /// When the access token expires, in Unix seconds.
    pub expires_at: Option<u64>,
    /// The scope granted (space-separated), if the server said.
    pub scope: Option<String>,
    /// When the token endpoint issued the access token, in Unix seconds (absent in
    /// credentials stored before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<u64>,
}

impl TokenSet {
    /// Whether the access token should be refreshed at `now` (Unix seconds): it expires
    /// within `margin` seconds — where the margin is at most a quarter of the token's
    /// lifetime, so a short-lived token (say 10 s against a 30 s margin) is not refreshed
    /// before every request. A token without an expiry never is.
    pub fn refresh_due(&self, margin: u64, now: u64) -> bool {
        let Some(expires_at) = self.expires_at else {
            return false;
        };
        let margin = match self.issued_at {
            Some(issued_at) => margin.min(expires_at.saturating_sub(issued_at) / 4),
            None => margin,
        };
        expires_at <= now.saturating_add(margin)
    }
}

/// Storage for OAuth credentials. Implementations: [`MemoryTokenStore`] (the default)
/// and, on disk, `FileTokenStore`.
pub trait TokenStore: Send + Sync + 'static {
    /// The credentials stored under `key`, if any.
    fn load<'a>(
        &'a self,
        key: &'a StoreKey,
    ) -> OAuthFuture<'a, std::io::Result<Option<StoredCredentials>>>;
    /// Store `value` under `key`, replacing what was there.
    fn save<'a>(
        &'a self,
        key: &'a StoreKey,
        value: &'a StoredCredentials,
    ) -> OAuthFuture<'a, std::io::Result<()>>;
    /// Forget the credentials under `key` (no error when there are none).
    fn remove<'a>(&'a self, key: &'a StoreKey) -> OAuthFuture<'a, std::io::Result<()>>;
}

/// A [`TokenStore`] in memory: credentials last as long as the process.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    entries: Mutex<HashMap<StoreKey, StoredCredentials>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<StoreKey, StoredCredentials>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl TokenStore for MemoryTokenStore {
    fn load<'a>(
        &'a self,
        key: &'a StoreKey,
    ) -> OAuthFuture<'a, std::io::Result<Option<StoredCredentials>>> {
        let value = self.entries().get(key).cloned();
        Box::pin(async move { Ok(value) })
    }

    fn save<'a>(
        &'a self,
        key: &'a StoreKey,
        value: &'a StoredCredentials,
    ) -> OAuthFuture<'a, std::io::Result<()>> {
        self.entries().insert(key.clone(), value.clone());
        Box::pin(async { Ok(()) })
    }

    fn remove<'a>(&'a self, key: &'a StoreKey) -> OAuthFuture<'a, std::io::Result<()>> {
        self.entries().remove(key);
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(issued_at: Option<u64>, expires_at: Option<u64>) -> TokenSet {
        TokenSet {
            access_token: "a".into(),
            token_type: "Bearer".into(),
            refresh_token: Some("r".into()),
            expires_at,
            scope: None,
            issued_at,
        }
    }

    #[test]
    fn refresh_is_due_within_the_margin_capped_at_a_quarter_of_the_lifetime() {
        // One hour: the whole 30 s margin applies.
        let hour = token(Some(1000), Some(4600));
        assert!(!hour.refresh_due(30, 4569));
        assert!(hour.refresh_due(30, 4570));
        // Ten seconds: a 2 s margin, not 30 s (which would refresh before every request).
        let short = token(Some(1000), Some(1010));
        assert!(!short.refresh_due(30, 1000));
        assert!(!short.refresh_due(30, 1007));
        assert!(short.refresh_due(30, 1008));
        // Unknown issue time: the margin as given; no expiry: never.
        assert!(token(None, Some(1010)).refresh_due(30, 1000));
        assert!(!token(Some(1000), None).refresh_due(30, u64::MAX));
    }

    #[tokio::test]
    async fn memory_store_keeps_credentials_per_key() {
        let store = MemoryTokenStore::new();
        let a = StoreKey {
            issuer: "https://as.example".into(),
            resource: "https://mcp.example/mcp".into(),
        };
        let b = StoreKey {
            resource: "https://other.example/mcp".into(),
            ..a.clone()
        };
        let creds = StoredCredentials {
            client: Some(ClientCredentials {
                client_id: "c".into(),
                client_secret: None,
                token_endpoint_auth_method: Some("none".into()),
            }),
            tokens: None,
        };
        store.save(&a, &creds).await.unwrap();
        assert_eq!(store.load(&a).await.unwrap(), Some(creds));
        assert_eq!(store.load(&b).await.unwrap(), None);
        store.remove(&a).await.unwrap();
        assert_eq!(store.load(&a).await.unwrap(), None);
        store.remove(&a).await.unwrap();
    }
}
