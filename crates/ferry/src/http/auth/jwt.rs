//! Verifying JWT access tokens (RFC 9068) against the authorization server's JWKS.

use std::collections::HashSet;
use std::sync::Arc;

use jsonwebtoken::{Algorithm, Validation, decode, decode_header};
use serde_json::{Map, Value};

use super::claims::Claims;
use super::jwks::Jwks;
use super::verify::{BoxFuture, TokenVerifier, VerifyError};

/// The asymmetric algorithms accepted by default. `none` is never accepted (it is not
/// even parsed), nor are the `HS*` algorithms: the keys come from a public JWKS.
pub const DEFAULT_ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies JWT access tokens: the signature with a key of the [`Jwks`] (by `kid`), the
/// algorithm against an allow-list, `iss`, `aud`, `exp` and `nbf` (with leeway).
#[derive(Debug)]
pub struct JwtVerifier {
    jwks: Arc<Jwks>,
    issuer: String,
    audience: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: u64,
}

impl JwtVerifier {
    /// Tokens issued by `issuer` for `audience` (this resource's canonical URI), signed
    /// with a key of `jwks`.
    pub fn new(jwks: Jwks, issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        JwtVerifier {
            jwks: Arc::new(jwks),
            issuer: issuer.into(),
            audience: vec![audience.into()],
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: 30,
        }
    }

    /// Accept these algorithms only. Symmetric ones (`HS*`) are dropped: a public key set
    /// cannot verify them safely.
    pub fn algorithms(mut self, algorithms: &[Algorithm]) -> Self {
        self.algorithms = algorithms
            .iter()
            .copied()
            .filter(|a| !matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512))
            .collect();
        self
    }

    /// Accept one more audience value (say, the resource URI with a trailing slash).
    pub fn also_audience(mut self, audience: impl Into<String>) -> Self {
        self.audience.push(audience.into());
        self
    }

    /// Clock skew tolerated on `exp` and `nbf`, in seconds. Default: 30.
    pub fn leeway(mut self, seconds: u64) -> Self {
        self.leeway = seconds;
        self
    }

    async fn check(&self, token: &str) -> Result<Claims, VerifyError> {
        let invalid = |e: jsonwebtoken::errors::Error| VerifyError::Invalid(e.to_string());
        let header = decode_header(token).map_err(invalid)?;
        if !self.algorithms.contains(&header.alg) {
            return Err(VerifyError::Invalid(format!(
                "algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let key = self.jwks.key(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&self.audience);
        validation.required_spec_claims = HashSet::from(["exp", "iss", "aud"].map(str::to_owned));
        let data = decode::<Map<String, Value>>(token, &key, &validation).map_err(invalid)?;
        Ok(Claims::from_map(data.claims))
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Claims, VerifyError>> {
        Box::pin(self.check(token))
    }
}
