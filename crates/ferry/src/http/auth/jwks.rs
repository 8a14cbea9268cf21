//! A cached JSON Web Key Set, fetched from the authorization server's `jwks_uri`.
//!
//! Keys are fetched on first use and again once the set is older than
//! [`Jwks::max_age`]. A token signed with a key id the set does not know triggers an
//! early refetch (key rotation), at most once per [`Jwks::min_refetch`] so that tokens
//! with made-up key ids cannot make the server hammer the authorization server.
//! Symmetric (`oct`) keys are ignored: a JWKS publishes public keys, and a verifier that
//! accepted `HS256` with a public key as the secret would accept forged tokens.

use std::sync::RwLock;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};

use super::verify::VerifyError;

/// The largest JWKS document read.
const MAX_JWKS_BYTES: usize = 256 * 1024;

struct Key {
    id: Option<String>,
    algorithm: Option<Algorithm>,
    family: Family,
    key: DecodingKey,
}

/// The kinds of public key, and the algorithms each verifies.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Rsa,
    Ec,
    Ed,
}

impl Family {
    fn of_key(parameters: &AlgorithmParameters) -> Option<Family> {
        match parameters {
            AlgorithmParameters::RSA(_) => Some(Family::Rsa),
            AlgorithmParameters::EllipticCurve(_) => Some(Family::Ec),
            AlgorithmParameters::OctetKeyPair(_) => Some(Family::Ed),
            // Symmetric keys never verify tokens here (see the module docs).
            AlgorithmParameters::OctetKey(_) => None,
        }
    }

    fn of_algorithm(algorithm: Algorithm) -> Option<Family> {
        match algorithm {
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => Some(Family::Rsa),
            Algorithm::ES256 | Algorithm::ES384 => Some(Family::Ec),
            Algorithm::EdDSA => Some(Family::Ed),
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => None,
        }
    }
}

#[derive(Default)]
struct Cached {
    keys: Vec<Key>,
    fetched: Option<Instant>,
}

/// A JWKS endpoint and its cached keys.
pub struct Jwks {
    url: String,
    client: reqwest::Client,
    cached: RwLock<Cached>,
    fetching: tokio::sync::Mutex<()>,
    max_age: Duration,
    min_refetch: Duration,
}

impl std::fmt::Debug for Jwks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jwks")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Jwks {
    /// The key set at `url` (refreshed every 10 minutes; unknown key ids refetch it at
    /// most every 30 seconds).
    pub fn new(url: impl Into<String>) -> Jwks {
        Jwks {
            url: url.into(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
            cached: RwLock::default(),
            fetching: tokio::sync::Mutex::new(()),
            max_age: Duration::from_secs(600),
            min_refetch: Duration::from_secs(30),
        }
    }

    /// Refetch the set once it is this old.
    pub fn max_age(mut self, age: Duration) -> Jwks {
        self.max_age = age;
        self
    }

    /// The shortest time between two fetches caused by unknown key ids.
    pub fn min_refetch(mut self, interval: Duration) -> Jwks {
        self.min_refetch = interval;
        self
    }

    /// The key for a token whose header names `kid` and `alg`.
    pub(crate) async fn key(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<DecodingKey, VerifyError> {
        let (found, fetched) = self.lookup(kid, alg);
        let fresh = fetched.is_some_and(|at| at.elapsed() < self.max_age);
        if let (Some(key), true) = (found, fresh) {
            return Ok(key);
        }
        let may_refetch = fetched.is_none_or(|at| at.elapsed() >= self.min_refetch) || !fresh;
        if may_refetch && let Err(e) = self.refresh(fetched).await {
            // Keep verifying with the keys we have while the endpoint is down.
            return self.lookup(kid, alg).0.ok_or(e);
        }
        self.lookup(kid, alg)
            .0
            .ok_or_else(|| VerifyError::Invalid(format!("no key {kid:?} for {alg:?} in the JWKS")))
    }

    fn lookup(&self, kid: Option<&str>, alg: Algorithm) -> (Option<DecodingKey>, Option<Instant>) {
        let cached = self.cached.read().unwrap_or_else(|e| e.into_inner());
        let mut usable = cached.keys.iter().filter(|k| {
            Family::of_algorithm(alg) == Some(k.family) && k.algorithm.is_none_or(|a| a == alg)
        });
        let key = match kid {
            Some(kid) => usable.find(|k| k.id.as_deref() == Some(kid)),
            // Without a key id, only an unambiguous key will do.
            None => match (usable.next(), usable.next()) {
                (Some(key), None) => Some(key),
                _ => None,
            },
        };
        (key.map(|k| k.key.clone()), cached.fetched)
    }

    /// Fetch the set, unless another task did since `seen`.
    async fn refresh(&self, seen: Option<Instant>) -> Result<(), VerifyError> {
        let _fetching = self.fetching.lock().await;
        let current = self
            .cached
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .fetched;
        if current != seen {
            return Ok(());
        }
        let keys = self.fetch().await;
        let mut cached = self.cached.write().unwrap_or_else(|e| e.into_inner());
        // A failed fetch still counts against the refetch interval, and keeps the keys.
        cached.fetched = Some(Instant::now());
        cached.keys = keys?;
        Ok(())
    }

    async fn fetch(&self) -> Result<Vec<Key>, VerifyError> {
        let unavailable =
            |e: &dyn std::fmt::Display| VerifyError::Unavailable(format!("JWKS {}: {e}", self.url));
        let mut response = self
            .client
            .get(&self.url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        if !response.status().is_success() {
            return Err(unavailable(&response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| unavailable(&e))? {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(unavailable(&"document too large"));
            }
            body.extend_from_slice(&chunk);
        }
        let keys = keys_of(&body).map_err(|e| unavailable(&e))?;
        tracing::debug!(url = %self.url, keys = keys.len(), "fetched the JWKS");
        Ok(keys)
    }
}

/// The usable public keys of a JWKS document (encryption keys, unknown algorithms and
/// key types, and keys that do not load are left out).
fn keys_of(body: &[u8]) -> Result<Vec<Key>, serde_json::Error> {
    let set: JwkSet = serde_json::from_slice(body)?;
    let keys = set
        .keys
        .iter()
        .filter(|jwk| {
            !matches!(
                jwk.common.public_key_use,
                Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
            )
        })
        .filter_map(|jwk| {
            let algorithm = match jwk.common.key_algorithm {
                Some(a) => Some(a.to_string().parse::<Algorithm>().ok()?),
                None => None,
            };
            let family = Family::of_key(&jwk.algorithm)?;
            let key = DecodingKey::from_jwk(jwk).ok()?;
            Some(Key {
                id: jwk.common.key_id.clone(),
                algorithm,
                family,
                key,
            })
        })
        .collect::<Vec<_>>();
    Ok(keys)
}

/// The usable keys of a JWKS document as (`kid`, algorithm), for the fuzz targets.
#[cfg(feature = "fuzzing")]
pub(super) fn key_summaries(body: &[u8]) -> Result<Vec<super::fuzzing::KeySummary>, String> {
    keys_of(body)
        .map(|keys| {
            keys.into_iter()
                .map(|k| (k.id, k.algorithm.map(|a| format!("{a:?}"))))
                .collect()
        })
        .map_err(|e| e.to_string())
}
