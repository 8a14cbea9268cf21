//! A small authorization server inside the test suite: EC P-256 signing keys published as
//! a JWKS, JWT access tokens minted on demand, and an RFC 7662 introspection endpoint,
//! served with axum on 127.0.0.1.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::pkcs8::EncodePrivateKey;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The client the resource server authenticates as at the introspection endpoint.
pub(crate) const INTROSPECTION_CLIENT: (&str, &str) = ("resource-server", "rs-secret");

/// A signing key and its public JWK.
pub(crate) struct SigningKey {
    pub(crate) kid: String,
    pub(crate) key: EncodingKey,
    pub(crate) jwk: Jwk,
}

impl SigningKey {
    /// A P-256 key derived from `kid` (deterministic: tests need no randomness).
    pub(crate) fn new(kid: &str) -> SigningKey {
        let seed = Sha256::digest(format!("ferry test key {kid}").as_bytes());
        let secret = p256::SecretKey::from_slice(&seed).expect("a valid scalar");
        let der = secret.to_pkcs8_der().expect("PKCS#8");
        let key = EncodingKey::from_ec_der(der.as_bytes());
        let point = secret.public_key().to_encoded_point(false);
        let jwk: Jwk = serde_json::from_value(json!({
            "kty": "EC",
            "crv": "P-256",
            "alg": "ES256",
            "use": "sig",
            "kid": kid,
            "x": URL_SAFE_NO_PAD.encode(point.x().expect("x")),
            "y": URL_SAFE_NO_PAD.encode(point.y().expect("y")),
        }))
        .expect("a JWK");
        SigningKey {
            kid: kid.to_owned(),
            key,
            jwk,
        }
    }

    /// An RFC 9068 access token (`typ: at+jwt`) with these claims, signed by this key.
    pub(crate) fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        header.typ = Some("at+jwt".into());
        jsonwebtoken::encode(&header, claims, &self.key).expect("signed")
    }

    /// A token with this header as written (`crit`, another `typ`...) and these claims,
    /// signed by this key with ES256.
    pub(crate) fn sign_with_header(&self, header: &Value, claims: &Value) -> String {
        let message = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = jsonwebtoken::crypto::sign(message.as_bytes(), &self.key, Algorithm::ES256)
            .expect("signed");
        format!("{message}.{signature}")
    }
}

#[derive(Default)]
struct Inner {
    published: Mutex<Vec<Jwk>>,
    jwks_fetches: AtomicUsize,
    /// Introspection: token → its claims (present = active).
    active: Mutex<HashMap<String, Value>>,
}

/// The running test authorization server.
pub(crate) struct TestIssuer {
    pub(crate) url: String,
    pub(crate) key: SigningKey,
    inner: Arc<Inner>,
}

pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

impl TestIssuer {
    /// Serve a JWKS with one key (`kid` "k1") and the introspection endpoint.
    pub(crate) async fn start() -> TestIssuer {
        let key = SigningKey::new("k1");
        let inner = Arc::new(Inner::default());
        inner.published.lock().unwrap().push(key.jwk.clone());
        let app = axum::Router::new()
            .route("/jwks", get(jwks))
            .route("/introspect", post(introspect))
            .with_state(Arc::clone(&inner));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        TestIssuer { url, key, inner }
    }

    pub(crate) fn jwks_url(&self) -> String {
        format!("{}/jwks", self.url)
    }

    pub(crate) fn introspection_url(&self) -> String {
        format!("{}/introspect", self.url)
    }

    /// How many times the JWKS was fetched.
    pub(crate) fn jwks_fetches(&self) -> usize {
        self.inner.jwks_fetches.load(Ordering::SeqCst)
    }

    /// Rotate: publish `key` instead of the current keys.
    pub(crate) fn publish_only(&self, key: &SigningKey) {
        *self.inner.published.lock().unwrap() = vec![key.jwk.clone()];
    }

    /// Standard claims for `audience`, with `scope`.
    pub(crate) fn claims(&self, audience: &str, scope: &str) -> Value {
        json!({
            "iss": self.url,
            "sub": "alice",
            "client_id": "test-client",
            "aud": audience,
            "scope": scope,
            "iat": now(),
            "exp": now() + 300,
        })
    }

    /// A token for `audience` with `scope`, signed by the current key.
    pub(crate) fn token(&self, audience: &str, scope: &str) -> String {
        self.key.sign(&self.claims(audience, scope))
    }

    /// Register an opaque token as active with these claims (introspection).
    pub(crate) fn activate(&self, token: &str, claims: Value) {
        self.inner
            .active
            .lock()
            .unwrap()
            .insert(token.to_owned(), claims);
    }

    /// Revoke an opaque token.
    pub(crate) fn revoke(&self, token: &str) {
        self.inner.active.lock().unwrap().remove(token);
    }
}

async fn jwks(State(inner): State<Arc<Inner>>) -> impl IntoResponse {
    inner.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    let set = JwkSet {
        keys: inner.published.lock().unwrap().clone(),
    };
    axum::Json(set)
}

async fn introspect(
    State(inner): State<Arc<Inner>>,
    headers: HeaderMap,
    body: String,
) -> axum::response::Response {
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            INTROSPECTION_CLIENT.0, INTROSPECTION_CLIENT.1
        ))
    );
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str()) {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": "invalid_client"})),
        )
            .into_response();
    }
    let token = body
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
        .map(percent_decode)
        .unwrap_or_default();
    let answer = match inner.active.lock().unwrap().get(&token) {
        Some(claims) => {
            let mut claims = claims.clone();
            claims["active"] = json!(true);
            claims
        }
        None => json!({"active": false}),
    };
    axum::Json(answer).into_response()
}

fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(&text.replace('+', " "))
        .decode_utf8_lossy()
        .into_owned()
}

/// `base64url(header).base64url(claims).signature` from parts, for hand-made tokens.
pub(crate) fn raw_token(header: &Value, claims: &Value, signature: &[u8]) -> String {
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string()),
        URL_SAFE_NO_PAD.encode(signature)
    )
}
