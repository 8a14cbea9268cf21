//! PKCE (RFC 7636, S256) and the random values of a flow (`state`, `jti`), from the
//! operating system's random source.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::OAuthError;

/// `n` random bytes, base64url without padding.
pub(crate) fn random_token(n: usize) -> Result<String, OAuthError> {
    let mut bytes = vec![0u8; n];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| OAuthError::Config(format!("no random source: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// A PKCE pair: the verifier (kept) and its S256 challenge (sent).
pub(crate) struct Pkce {
    /// 43 characters of base64url (32 random bytes).
    pub(crate) verifier: String,
    /// base64url(SHA-256(verifier)).
    pub(crate) challenge: String,
}

impl Pkce {
    /// A fresh pair.
    pub(crate) fn new() -> Result<Pkce, OAuthError> {
        let verifier = random_token(32)?;
        let challenge = s256(&verifier);
        Ok(Pkce {
            verifier,
            challenge,
        })
    }
}

/// The S256 code challenge of `verifier`.
pub(crate) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let pkce = Pkce::new().unwrap();
        assert_eq!(pkce.verifier.len(), 43);
        assert_ne!(pkce.verifier, Pkce::new().unwrap().verifier);
    }
}
