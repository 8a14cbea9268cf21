//! [`OAuthClient`]: the OAuth flow as the HTTP client's [`HttpAuth`] hook.
//!
//! - Before each request: the access token (refreshed first when it is about to expire;
//!   when refreshing fails, none — the 401 that follows starts a full flow).
//! - On 401: discovery (the first time, or when the challenge names other metadata),
//!   then the stored token if it is not the one refused, else a refresh, else a full
//!   flow: registration, then the authorization-code grant (PKCE S256, `state`, RFC 9207
//!   `iss` check) or the client-credentials grant.
//! - On 403 `insufficient_scope`: step-up, a new authorization for the union of the
//!   granted and the challenged scopes, at most `max_step_up` times per scope set.
//!
//! Challenges from another origin than the server's are ignored, so the token of this
//! server is never sent elsewhere.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use url::Url;

use super::builder::OAuthClientBuilder;
use super::challenge::BearerChallenge;
use super::discovery::{Discovered, check_endpoints, discover};
use super::jwt_auth::JwtSigner;
use super::scope::{select_scope, with_offline_access};
use super::token::{Grant, request_token};
use super::{
    Authorizer, ClientCredentials, IdentityAssertion, OAuthError, StoreKey, StoredCredentials,
    TokenSet, TokenStore,
};
use crate::http_client::{AuthChallenge, AuthFuture, HttpAuth};

mod flow;

/// Seconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A token refused within this long of being obtained is not worth another flow.
const FRESH: Duration = Duration::from_secs(5);

/// The configuration an [`OAuthClientBuilder`] produces.
pub(crate) struct Config {
    pub(crate) server: Url,
    pub(crate) http: reqwest::Client,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
    pub(crate) preregistered: Option<ClientCredentials>,
    pub(crate) metadata_url: Option<String>,
    pub(crate) client_name: String,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) client_credentials_grant: bool,
    pub(crate) identity_assertion: Option<IdentityAssertion>,
    pub(crate) signer: Option<JwtSigner>,
    pub(crate) max_step_up: u32,
    pub(crate) offline_access: bool,
    pub(crate) refresh_margin: u64,
    pub(crate) allow_http: bool,
}

/// What the flow knows so far.
#[derive(Default)]
struct State {
    discovered: Option<Discovered>,
    key: Option<StoreKey>,
    stored: StoredCredentials,
    /// Step-up authorizations made, by the (sorted) scope set asked for.
    step_ups: HashMap<String, u32>,
    /// When the last full flow or refresh produced the current token.
    obtained_at: Option<Instant>,
}

struct Inner {
    config: Config,
    state: tokio::sync::Mutex<State>,
    last_error: Mutex<Option<String>>,
}

/// An OAuth 2.1 client for one MCP server, used as the HTTP client's authentication:
/// `HttpClientConfig::default().auth(Arc::new(oauth_client))`. Cloning shares the state.
#[derive(Clone)]
pub struct OAuthClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("server", &self.inner.config.server.as_str())
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A builder for a client of the MCP server at `server_url`.
    pub fn builder(server_url: &str) -> OAuthClientBuilder {
        OAuthClientBuilder::new(server_url)
    }

    pub(crate) fn from_config(config: Config) -> OAuthClient {
        OAuthClient {
            inner: Arc::new(Inner {
                config,
                state: tokio::sync::Mutex::new(State::default()),
                last_error: Mutex::new(None),
            }),
        }
    }

    /// Why the last challenge could not be answered (the HTTP request then failed with
    /// the server's 401 or 403), if it could not.
    pub fn last_error(&self) -> Option<String> {
        self.inner
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The tokens in use, if any (after a flow or loaded from the store).
    pub async fn tokens(&self) -> Option<TokenSet> {
        self.inner.state.lock().await.stored.tokens.clone()
    }

    /// Run discovery and have a token now (useful before connecting): the stored one if it
    /// is still valid, else a refreshed one, else one from a full flow.
    pub async fn authorize(&self) -> Result<TokenSet, OAuthError> {
        let mut state = self.inner.state.lock().await;
        self.ensure_discovered(&mut state, None).await?;
        if let Some(tokens) = state.stored.tokens.clone() {
            let margin = self.inner.config.refresh_margin;
            if !tokens.refresh_due(margin, now()) {
                return Ok(tokens);
            }
            if let Some(refresh) = tokens.refresh_token.as_deref()
                && self.refresh(&mut state, refresh).await.is_ok()
                && let Some(tokens) = state.stored.tokens.clone()
            {
                return Ok(tokens);
            }
        }
        let scope = select_scope(&self.inner.config, state.discovered.as_ref(), None);
        self.full_flow(&mut state, scope).await?;
        state
            .stored
            .tokens
            .clone()
            .ok_or_else(|| OAuthError::Authorization("the flow ended without a token".into()))
    }

    /// The header for the current token, refreshing it first if it is about to expire.
    async fn current_headers(&self) -> Result<HeaderMap, OAuthError> {
        let mut state = self.inner.state.lock().await;
        let mut headers = HeaderMap::new();
        let Some(tokens) = state.stored.tokens.clone() else {
            return Ok(headers);
        };
        let margin = self.inner.config.refresh_margin;
        let expiring = tokens.refresh_due(margin, now());
        if expiring {
            let refreshed = match tokens.refresh_token.as_deref() {
                Some(refresh) => self.refresh(&mut state, refresh).await.is_ok(),
                None => false,
            };
            if !refreshed && tokens.expires_at.is_some_and(|at| at <= now()) {
                // Expired and not refreshable: send none; the 401 starts a new flow.
                state.stored.tokens = None;
                self.save(&state).await?;
                return Ok(headers);
            }
        }
        if let Some(tokens) = &state.stored.tokens {
            let value =
                HeaderValue::try_from(format!("Bearer {}", tokens.access_token)).map_err(|_| {
                    OAuthError::InvalidResponse {
                        url: self.inner.config.server.to_string(),
                        message: "the access token is not a valid header value".into(),
                    }
                })?;
            headers.insert(AUTHORIZATION, value);
        }
        Ok(headers)
    }

    /// React to a 401 or 403; `Ok(true)`: send the request again.
    async fn handle(&self, challenge: &AuthChallenge) -> Result<bool, OAuthError> {
        if challenge.url.origin() != self.inner.config.server.origin() {
            return Ok(false);
        }
        let bearer = BearerChallenge::find(&challenge.www_authenticate).unwrap_or_default();
        let mut state = self.inner.state.lock().await;
        let refused = challenge
            .sent
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned);
        match challenge.status {
            401 => self.unauthorized(&mut state, &bearer, refused).await,
            403 if bearer.error.as_deref() == Some("insufficient_scope") => {
                let current = state.stored.tokens.as_ref().map(|t| &t.access_token);
                if refused.is_some() && current.is_some() && current != refused.as_ref() {
                    // Refused an older token: a concurrent step-up already replaced it.
                    return Ok(true);
                }
                self.step_up(&mut state, &bearer).await
            }
            _ => Ok(false),
        }
    }

    /// A 401 for the request that carried `refused` (no token: `None`).
    async fn unauthorized(
        &self,
        state: &mut State,
        bearer: &BearerChallenge,
        refused: Option<String>,
    ) -> Result<bool, OAuthError> {
        self.ensure_discovered(state, Some(bearer)).await?;
        let current = state.stored.tokens.as_ref().map(|t| t.access_token.clone());
        if current.is_some() && current != refused {
            // The store had another token (or a concurrent request just got one).
            return Ok(true);
        }
        if current.is_some() && state.obtained_at.is_some_and(|at| at.elapsed() < FRESH) {
            return Err(OAuthError::Authorization(
                "the server refuses the token just obtained".into(),
            ));
        }
        let refresh = state
            .stored
            .tokens
            .as_ref()
            .and_then(|t| t.refresh_token.clone());
        if let Some(refresh) = refresh {
            match self.refresh(state, &refresh).await {
                Ok(()) => return Ok(true),
                // The server forgot a dynamically registered client: register again.
                Err(OAuthError::TokenRefused { error, .. })
                    if error == "invalid_client"
                        && state
                            .stored
                            .client
                            .as_ref()
                            .is_some_and(|c| self.registered_dynamically(c)) =>
                {
                    state.stored.client = None;
                }
                Err(_) => {}
            }
        }
        state.stored.tokens = None;
        let scope = select_scope(
            &self.inner.config,
            state.discovered.as_ref(),
            bearer.scope.as_deref(),
        );
        self.full_flow(state, scope).await?;
        Ok(true)
    }

    async fn step_up(
        &self,
        state: &mut State,
        bearer: &BearerChallenge,
    ) -> Result<bool, OAuthError> {
        self.ensure_discovered(state, Some(bearer)).await?;
        let mut scopes: BTreeSet<String> = BTreeSet::new();
        let granted = state.stored.tokens.as_ref().and_then(|t| t.scope.clone());
        for scope in [granted.as_deref(), bearer.scope.as_deref()]
            .into_iter()
            .flatten()
        {
            scopes.extend(scope.split_whitespace().map(str::to_owned));
        }
        let wanted = scopes.into_iter().collect::<Vec<_>>().join(" ");
        let attempts = state.step_ups.entry(wanted.clone()).or_default();
        if *attempts >= self.inner.config.max_step_up {
            return Err(OAuthError::StepUpLimit {
                scope: wanted,
                attempts: *attempts,
            });
        }
        *attempts += 1;
        // The current token stays in use (for what it was granted) until a new one comes.
        let scope = with_offline_access(
            &self.inner.config,
            state.discovered.as_ref(),
            Some(wanted).filter(|s| !s.is_empty()),
        );
        self.full_flow(state, scope).await?;
        Ok(true)
    }

    /// Discover (again when the challenge names other metadata), then load what the
    /// store has for the issuer and resource found.
    async fn ensure_discovered(
        &self,
        state: &mut State,
        bearer: Option<&BearerChallenge>,
    ) -> Result<(), OAuthError> {
        let named = bearer.and_then(|b| b.resource_metadata.as_deref());
        let stale = match &state.discovered {
            None => true,
            Some(d) => named.is_some_and(|url| d.resource_metadata_url.as_deref() != Some(url)),
        };
        if !stale {
            return Ok(());
        }
        let config = &self.inner.config;
        let discovered = discover(&config.http, &config.server, bearer).await?;
        let key = StoreKey {
            issuer: discovered.metadata.issuer.clone(),
            resource: discovered.resource.clone(),
        };
        if state.key.as_ref() != Some(&key) {
            state.stored = config.store.load(&key).await?.unwrap_or_default();
            state.key = Some(key);
            state.obtained_at = None;
        }
        state.discovered = Some(discovered);
        Ok(())
    }

    /// Refresh the tokens; on failure the caller decides (the old tokens stay).
    async fn refresh(&self, state: &mut State, refresh_token: &str) -> Result<(), OAuthError> {
        let config = &self.inner.config;
        let (Some(discovered), Some(client)) = (&state.discovered, &state.stored.client) else {
            return Err(OAuthError::Discovery("nothing to refresh with yet".into()));
        };
        check_endpoints(&discovered.metadata, config.allow_http)?;
        let mut tokens = request_token(
            &config.http,
            &discovered.metadata,
            client,
            config.signer.as_ref(),
            Grant::Refresh(refresh_token),
            &discovered.resource,
            None,
        )
        .await?;
        let old = state.stored.tokens.take();
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = Some(refresh_token.to_owned());
        }
        if tokens.scope.is_none() {
            tokens.scope = old.and_then(|t| t.scope);
        }
        state.stored.tokens = Some(tokens);
        state.obtained_at = Some(Instant::now());
        self.save(state).await
    }

    async fn save(&self, state: &State) -> Result<(), OAuthError> {
        if let Some(key) = &state.key {
            self.inner.config.store.save(key, &state.stored).await?;
        }
        Ok(())
    }

    fn remember(&self, error: Option<String>) {
        *self
            .inner
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = error;
    }
}

impl HttpAuth for OAuthClient {
    fn headers(&self) -> AuthFuture<'_, Result<HeaderMap, String>> {
        Box::pin(async move { self.current_headers().await.map_err(|e| e.to_string()) })
    }

    fn challenged<'a>(&'a self, challenge: &'a AuthChallenge) -> AuthFuture<'a, bool> {
        Box::pin(async move {
            match self.handle(challenge).await {
                Ok(retry) => {
                    self.remember(None);
                    retry
                }
                Err(e) => {
                    tracing::warn!("{e}");
                    self.remember(Some(e.to_string()));
                    false
                }
            }
        })
    }
}
