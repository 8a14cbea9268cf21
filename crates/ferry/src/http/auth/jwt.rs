//! Verifying JWT access tokens (RFC 9068) against the authorization server's JWKS.

use std::collections::HashSet;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, Header, Validation, decode};
use serde_json::{Map, Value};

use super::jwks::Jwks;
use super::verify::{BoxFuture, TokenVerifier, VerifyError};
use crate::server::Claims;

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

/// Verifies JWT access tokens as RFC 9068 profiles them: the signature with a key of the
/// [`Jwks`] (by `kid`), the algorithm against an allow-list, the header's `typ` (`at+jwt`,
/// unless [`plain_jwt`](Self::plain_jwt)), no `crit` extension (none is understood, so any
/// is refused: RFC 7515 section 4.1.11), `iss`, `aud`, `sub` present, `exp` and `nbf` (with
/// leeway), and an `iat` that is not in the future beyond the leeway.
///
/// ```
/// use ferry::http::auth::{Jwks, JwtVerifier};
///
/// let verifier = JwtVerifier::new(
///     Jwks::new("https://auth.example.com/jwks"),
///     "https://auth.example.com",
///     "https://mcp.example.com/mcp",
/// )
/// .leeway(10);
/// # let _ = verifier;
/// ```
#[derive(Debug)]
pub struct JwtVerifier {
    jwks: Arc<Jwks>,
    issuer: String,
    audience: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: u64,
    plain_jwt: bool,
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
            plain_jwt: false,
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

    /// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds. Default: 30.
    pub fn leeway(mut self, seconds: u64) -> Self {
        self.leeway = seconds;
        self
    }

    /// Also accept tokens typed `JWT` (or not typed at all), for authorization servers
    /// that do not follow RFC 9068's `typ: at+jwt`. Off by default: the type is what tells
    /// an access token from an ID token signed with the same keys.
    pub fn plain_jwt(mut self) -> Self {
        self.plain_jwt = true;
        self
    }

    /// The token's header, read once: `crit` and `typ`, which `jsonwebtoken` does not
    /// judge, checked here; then the algorithm against the allow-list.
    fn header(&self, token: &str) -> Result<Header, VerifyError> {
        let invalid = |why: &str| VerifyError::Invalid(why.to_owned());
        let encoded = token.split('.').next().unwrap_or_default();
        let bytes = URL_SAFE_NO_PAD
            .decode(encoded)
            .map_err(|_| invalid("the header is not base64url"))?;
        let header: Map<String, Value> = serde_json::from_slice(&bytes)
            .map_err(|_| invalid("the header is not a JSON object"))?;
        if let Some(crit) = header.get("crit") {
            return Err(VerifyError::Invalid(format!(
                "the header's crit {crit} names extensions this server does not understand"
            )));
        }
        let typ = header.get("typ").map(|t| t.as_str().unwrap_or_default());
        match typ.map(str::to_ascii_lowercase).as_deref() {
            Some("at+jwt" | "application/at+jwt") => {}
            Some("jwt" | "application/jwt") | None if self.plain_jwt => {}
            Some(other) => {
                return Err(VerifyError::Invalid(format!(
                    "the token's typ is {other:?}, not \"at+jwt\" (RFC 9068)"
                )));
            }
            None => {
                return Err(invalid(
                    "the token has no typ; an access token is \"at+jwt\" (RFC 9068)",
                ));
            }
        }
        let header: Header = serde_json::from_value(Value::Object(header))
            .map_err(|e| VerifyError::Invalid(format!("the header does not read: {e}")))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(VerifyError::Invalid(format!(
                "algorithm {:?} is not accepted",
                header.alg
            )));
        }
        Ok(header)
    }

    async fn check(&self, token: &str) -> Result<Claims, VerifyError> {
        let invalid = |e: jsonwebtoken::errors::Error| VerifyError::Invalid(e.to_string());
        let header = self.header(token)?;
        let key = self.jwks.key(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&self.audience);
        validation.required_spec_claims =
            HashSet::from(["exp", "iss", "aud", "sub"].map(str::to_owned));
        let data = decode::<Map<String, Value>>(token, &key, &validation).map_err(invalid)?;
        if let Some(iat) = data.claims.get("iat") {
            let Some(iat) = iat.as_f64() else {
                return Err(VerifyError::Invalid(
                    "iat is not a number of seconds".into(),
                ));
            };
            let now = jsonwebtoken::get_current_timestamp() as f64;
            if iat > now + self.leeway as f64 {
                return Err(VerifyError::Invalid(format!(
                    "the token was issued {:.0} s in the future",
                    iat - now
                )));
            }
        }
        Ok(Claims::from_map(data.claims))
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Claims, VerifyError>> {
        Box::pin(self.check(token))
    }
}
