//! The `requestState` of a multi round-trip request (2026-07-28): everything the server
//! needs to resume a request, carried by the client, sealed so it cannot be read, forged,
//! replayed on another request or by another principal, or used after it expires.
//!
//! Sealing is XChaCha20-Poly1305 (AEAD) with a random 192-bit nonce per state, so a key can
//! seal any number of states without nonce bookkeeping. The plaintext binds:
//! - the method and a SHA-256 digest of the request's salient params (tool name and
//!   arguments, resource URI, prompt name and arguments), with object keys sorted so a
//!   client that reorders keys on the retry is not refused;
//! - the authenticated principal, when the transport has one;
//! - an expiry (default [`DEFAULT_REQUEST_STATE_TTL`]);
//! - the answers collected in earlier rounds, and the keys asked in the last round.
//!
//! Several server instances that share a key ([`crate::server::ServerBuilder::request_state_key`])
//! resume each other's requests; with the default (a random key per process) a retry must
//! reach the process that issued the state.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// How long an issued `requestState` stays valid unless the builder sets otherwise: 10
/// minutes, time enough for a person to answer an elicitation.
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(600);

/// Associated data of every sealed state: a version tag, so a format change is a clean
/// refusal rather than a misread.
const AAD: &[u8] = b"ferry/request-state/v1";
const NONCE_BYTES: usize = 24;

/// Seals and opens request states with one key.
pub(crate) struct Sealer {
    /// The configured key, or (when none is) a random one made on first use: most servers
    /// never seal a state, and the OS's random source is a system call at every start.
    cipher: std::sync::OnceLock<XChaCha20Poly1305>,
    key: Option<[u8; 32]>,
    pub(crate) ttl: Duration,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// What a sealed state carries.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct RequestState {
    /// The method of the request the state belongs to.
    pub(crate) method: String,
    /// Digest of the request's salient params.
    pub(crate) digest: String,
    /// The principal that may present the state (`None`: unauthenticated transport).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) principal: Option<String>,
    /// Expiry, in milliseconds since the Unix epoch.
    pub(crate) expires_ms: u64,
    /// Answers of earlier rounds, by input key.
    #[serde(default)]
    pub(crate) answers: IndexMap<String, Value>,
    /// The keys asked in the last round: the only ones a retry may answer.
    #[serde(default)]
    pub(crate) asked: Vec<String>,
    /// Rounds so far.
    pub(crate) rounds: u32,
}

/// Why a presented state was refused (the client is told, with `-32602`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StateError {
    #[error("requestState is not one this server issued (or it was altered)")]
    Forged,
    #[error("requestState has expired; send the request again without it")]
    Expired,
    #[error("requestState belongs to another request ({0})")]
    OtherRequest(String),
    #[error("requestState belongs to another principal")]
    OtherPrincipal,
}

impl Sealer {
    /// A sealer with `key`, or a fresh random key.
    pub(crate) fn new(key: Option<[u8; 32]>, ttl: Duration) -> Self {
        Sealer {
            cipher: std::sync::OnceLock::new(),
            key,
            ttl,
        }
    }

    fn cipher(&self) -> &XChaCha20Poly1305 {
        self.cipher.get_or_init(|| match self.key {
            Some(key) => XChaCha20Poly1305::new(&key.into()),
            None => XChaCha20Poly1305::new(&XChaCha20Poly1305::generate_key(&mut OsRng)),
        })
    }

    /// Seal `state` into an opaque string.
    pub(crate) fn seal(&self, state: &RequestState) -> Result<String, String> {
        let plaintext = serde_json::to_vec(state).map_err(|e| e.to_string())?;
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let sealed = self
            .cipher()
            .encrypt(
                &nonce,
                Payload {
                    msg: &plaintext,
                    aad: AAD,
                },
            )
            .map_err(|_| "sealing the request state failed".to_owned())?;
        let mut bytes = Vec::with_capacity(NONCE_BYTES + sealed.len());
        bytes.extend_from_slice(&nonce);
        bytes.extend_from_slice(&sealed);
        Ok(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// Open a presented state and check it belongs to this request and principal and has
    /// not expired.
    pub(crate) fn open(
        &self,
        sealed: &str,
        method: &str,
        digest: &str,
        principal: Option<&str>,
    ) -> Result<RequestState, StateError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(sealed)
            .map_err(|_| StateError::Forged)?;
        if bytes.len() < NONCE_BYTES {
            return Err(StateError::Forged);
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
        let plaintext = self
            .cipher()
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: AAD,
                },
            )
            .map_err(|_| StateError::Forged)?;
        let state: RequestState =
            serde_json::from_slice(&plaintext).map_err(|_| StateError::Forged)?;
        if state.expires_ms < now_ms() {
            return Err(StateError::Expired);
        }
        if state.method != method || state.digest != digest {
            return Err(StateError::OtherRequest(state.method));
        }
        if state.principal.as_deref() != principal {
            return Err(StateError::OtherPrincipal);
        }
        Ok(state)
    }

    /// The expiry of a state issued now.
    pub(crate) fn expiry(&self) -> u64 {
        now_ms().saturating_add(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX))
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A digest of a request's salient params: `parts` hashed in order, JSON values with
/// object keys sorted.
pub(crate) fn digest<V: std::borrow::Borrow<Value>>(parts: impl IntoIterator<Item = V>) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hash_canonical(&mut hasher, part.borrow());
        hasher.update([0xff]);
    }
    URL_SAFE_NO_PAD.encode(&hasher.finalize()[..16])
}

fn hash_canonical(hasher: &mut Sha256, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<_> = map.keys().collect();
            keys.sort();
            hasher.update(b"{");
            for key in keys {
                hash_canonical(hasher, &Value::String(key.clone()));
                hasher.update(b":");
                hash_canonical(hasher, &map[key]);
                hasher.update(b",");
            }
            hasher.update(b"}");
        }
        Value::Array(items) => {
            hasher.update(b"[");
            for item in items {
                hash_canonical(hasher, item);
                hasher.update(b",");
            }
            hasher.update(b"]");
        }
        scalar => hasher.update(scalar.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state(sealer: &Sealer) -> RequestState {
        RequestState {
            method: "tools/call".into(),
            digest: digest([&json!("t"), &json!({"a": 1, "b": [1, 2]})]),
            principal: None,
            expires_ms: sealer.expiry(),
            answers: IndexMap::from([("input-0".into(), json!({"action": "decline"}))]),
            asked: vec!["input-1".into()],
            rounds: 1,
        }
    }

    #[test]
    fn seals_and_opens() {
        let sealer = Sealer::new(None, DEFAULT_REQUEST_STATE_TTL);
        let state = state(&sealer);
        let sealed = sealer.seal(&state).unwrap();
        assert!(!sealed.contains("input-0"), "the state is encrypted");
        let opened = sealer
            .open(&sealed, "tools/call", &state.digest, None)
            .unwrap();
        assert_eq!(opened, state);
    }

    #[test]
    fn digest_ignores_key_order_only() {
        let a = digest([&json!({"a": 1, "b": 2})]);
        assert_eq!(a, digest([&json!({"b": 2, "a": 1})]));
        assert_ne!(a, digest([&json!({"a": 1, "b": 3})]));
        assert_ne!(digest([&json!("x"), &json!("y")]), digest([&json!("xy")]));
    }

    #[test]
    fn refuses_tampering_other_keys_requests_principals_and_expiry() {
        let sealer = Sealer::new(None, DEFAULT_REQUEST_STATE_TTL);
        let state = state(&sealer);
        let sealed = sealer.seal(&state).unwrap();
        let mut bytes = URL_SAFE_NO_PAD.decode(&sealed).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let tampered = URL_SAFE_NO_PAD.encode(bytes);
        let open = |s: &str| sealer.open(s, "tools/call", &state.digest, None);
        assert_eq!(open(&tampered), Err(StateError::Forged));
        assert_eq!(open("not base64!"), Err(StateError::Forged));
        assert_eq!(open(""), Err(StateError::Forged));
        let other = Sealer::new(None, DEFAULT_REQUEST_STATE_TTL);
        assert_eq!(
            other.open(&sealed, "tools/call", &state.digest, None),
            Err(StateError::Forged)
        );
        assert!(matches!(
            sealer.open(&sealed, "prompts/get", &state.digest, None),
            Err(StateError::OtherRequest(_))
        ));
        assert!(matches!(
            sealer.open(&sealed, "tools/call", "other", None),
            Err(StateError::OtherRequest(_))
        ));
        assert_eq!(
            sealer.open(&sealed, "tools/call", &state.digest, Some("mallory")),
            Err(StateError::OtherPrincipal)
        );
        let expired = RequestState {
            expires_ms: 1,
            ..state.clone()
        };
        let sealed = sealer.seal(&expired).unwrap();
        assert_eq!(open(&sealed), Err(StateError::Expired));
    }

    #[test]
    fn a_shared_key_opens_across_instances() {
        let a = Sealer::new(Some([7; 32]), DEFAULT_REQUEST_STATE_TTL);
        let b = Sealer::new(Some([7; 32]), DEFAULT_REQUEST_STATE_TTL);
        let state = state(&a);
        let sealed = a.seal(&state).unwrap();
        assert_eq!(
            b.open(&sealed, "tools/call", &state.digest, None).unwrap(),
            state
        );
    }
}
