//! `private_key_jwt` client authentication (RFC 7523 section 2.2): a short-lived JWT
//! signed with the client's private key (a PEM: PKCS#8 for every algorithm, PKCS#1
//! `RSA PRIVATE KEY` for RSA), with `jsonwebtoken`.

use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};

use super::OAuthError;
use super::pkce::random_token;

/// The `client_assertion_type` of a JWT client assertion.
pub(crate) const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A client's signing key.
#[derive(Clone)]
pub(crate) struct JwtSigner {
    key: EncodingKey,
    alg: Algorithm,
    kid: Option<String>,
}

impl std::fmt::Debug for JwtSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtSigner")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl JwtSigner {
    /// The key of `pem` for `alg` (`ES256`, `RS256`, `EdDSA`, ...).
    pub(crate) fn new(pem: &str, alg: &str, kid: Option<&str>) -> Result<JwtSigner, OAuthError> {
        let bad = |m: &str| OAuthError::Config(format!("private_key_jwt: {m}"));
        let alg: Algorithm = alg
            .parse()
            .map_err(|_| bad(&format!("unknown algorithm {alg:?}")))?;
        let (label, der) = decode_pem(pem).ok_or_else(|| bad("not a PEM private key"))?;
        let key = match (alg, label.as_str()) {
            (Algorithm::ES256 | Algorithm::ES384, "PRIVATE KEY") => EncodingKey::from_ec_der(&der),
            (Algorithm::EdDSA, "PRIVATE KEY") => EncodingKey::from_ed_der(&der),
            (
                Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512,
                "RSA PRIVATE KEY",
            ) => EncodingKey::from_rsa_der(&der),
            (
                Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512,
                "PRIVATE KEY",
            ) => {
                let inner =
                    pkcs8_inner(&der).ok_or_else(|| bad("malformed PKCS#8 RSA private key"))?;
                EncodingKey::from_rsa_der(inner)
            }
            (Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512, _) => {
                return Err(bad("HMAC is not a private key algorithm"));
            }
            (_, label) => {
                return Err(bad(&format!(
                    "a {label:?} PEM cannot sign {alg:?} (use PKCS#8)"
                )));
            }
        };
        let signer = JwtSigner {
            key,
            alg,
            kid: kid.map(str::to_owned),
        };
        // Sign once now: a key that does not fit the algorithm fails at build time.
        signer.assertion("probe", "probe")?;
        Ok(signer)
    }

    /// A client assertion: `iss` = `sub` = the client id, `aud` = the authorization
    /// server's issuer, a five-minute lifetime and a fresh `jti`.
    pub(crate) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, OAuthError> {
        let now = super::client::now();
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": random_token(16)?,
        });
        let mut header = Header::new(self.alg);
        header.kid = self.kid.clone();
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| OAuthError::Assertion(format!("cannot sign with the configured key: {e}")))
    }
}

/// The label and the DER of the first PEM block.
fn decode_pem(pem: &str) -> Option<(String, Vec<u8>)> {
    let start = pem.find("-----BEGIN ")?;
    let rest = &pem[start + 11..];
    let label_end = rest.find("-----")?;
    let label = rest[..label_end].to_owned();
    let body = &rest[label_end + 5..];
    let end = body.find("-----END ")?;
    let text: String = body[..end].chars().filter(|c| !c.is_whitespace()).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    Some((label, der))
}

/// One DER element: its tag, its contents and what follows it.
fn der_element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// The private key inside a PKCS#8 `PrivateKeyInfo` (for RSA: the PKCS#1 key).
fn pkcs8_inner(der: &[u8]) -> Option<&[u8]> {
    let (0x30, info, _) = der_element(der)? else {
        return None;
    };
    let (0x02, _, rest) = der_element(info)? else {
        return None;
    };
    let (0x30, _, rest) = der_element(rest)? else {
        return None;
    };
    let (0x04, key, _) = der_element(rest)? else {
        return None;
    };
    Some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_keys_are_errors() {
        for pem in [
            "",
            "-----BEGIN PRIVATE KEY-----\n!!\n-----END PRIVATE KEY-----",
            "junk",
        ] {
            assert!(JwtSigner::new(pem, "ES256", None).is_err());
        }
        let pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----";
        assert!(JwtSigner::new(pem, "ES256", None).is_err());
        assert!(JwtSigner::new(pem, "RS256", None).is_err());
        assert!(JwtSigner::new(pem, "HS256", None).is_err());
        assert!(JwtSigner::new(pem, "nope", None).is_err());
        assert_eq!(pkcs8_inner(&[0x30, 0x85, 0, 0, 0, 0, 0]), None);
    }
}
