//! How the client gets a client id from an authorization server, in the specification's
//! order: pre-registered credentials (the caller's: see `oauth/client/mod.rs`); else a Client ID Metadata Document URL, when the
//! server supports them and one is configured; else dynamic client registration
//! (RFC 7591) with an `application_type` that fits the redirect URI.

use serde_json::{Value, json};

use super::discovery::ServerMetadata;
use super::fetch::post_json;
use super::{ClientCredentials, OAuthError};

/// What the client says about itself when it registers.
#[derive(Clone, Debug)]
pub(crate) struct ClientProfile {
    /// `client_name`.
    pub(crate) name: String,
    /// The redirect URI (none for the client-credentials grant).
    pub(crate) redirect_uri: Option<String>,
    /// The grants it uses.
    pub(crate) grant_types: Vec<String>,
    /// Whether it authenticates with a private key (`private_key_jwt`).
    pub(crate) has_key: bool,
}

/// A client id for the server of `metadata`, for a client without pre-registered
/// credentials: the Client ID Metadata Document URL where the server accepts one, else a
/// dynamic registration.
pub(crate) async fn obtain(
    http: &reqwest::Client,
    metadata: &ServerMetadata,
    metadata_url: Option<&str>,
    profile: &ClientProfile,
) -> Result<ClientCredentials, OAuthError> {
    if let Some(url) = metadata_url
        && metadata.client_id_metadata_document_supported
    {
        let client = ClientCredentials {
            client_id: url.to_owned(),
            client_secret: None,
            token_endpoint_auth_method: Some(
                if profile.has_key {
                    "private_key_jwt"
                } else {
                    "none"
                }
                .into(),
            ),
        };
        return Ok(client);
    }
    let Some(endpoint) = metadata.registration_endpoint.as_deref() else {
        return Err(OAuthError::Registration {
            issuer: metadata.issuer.clone(),
            message: "no client credentials are configured, and the server supports neither \
                      Client ID Metadata Documents (with a configured URL) nor dynamic \
                      registration"
                .into(),
        });
    };
    let body = registration_request(metadata, profile);
    let response = post_json(http, endpoint, &body).await?;
    if !(200..300).contains(&response.status) {
        let error = response.body["error"].as_str().unwrap_or("refused");
        let description = response.body["error_description"].as_str().unwrap_or("");
        return Err(OAuthError::Registration {
            issuer: metadata.issuer.clone(),
            message: format!(
                "{endpoint} answered HTTP {}: {error} {description}",
                response.status
            )
            .trim_end()
            .to_owned(),
        });
    }
    let client_id = response.body["client_id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .ok_or_else(|| OAuthError::InvalidResponse {
            url: endpoint.to_owned(),
            message: "registration response without client_id".into(),
        })?;
    let client = ClientCredentials {
        client_id: client_id.to_owned(),
        client_secret: response.body["client_secret"].as_str().map(str::to_owned),
        token_endpoint_auth_method: response.body["token_endpoint_auth_method"]
            .as_str()
            .map(str::to_owned),
    };
    Ok(client)
}

/// The RFC 7591 registration request.
pub(crate) fn registration_request(metadata: &ServerMetadata, profile: &ClientProfile) -> Value {
    let supported = metadata.token_endpoint_auth_methods_supported.as_deref();
    let offers = |m: &str| supported.is_some_and(|s| s.iter().any(|x| x == m));
    let method = if profile.has_key && offers("private_key_jwt") {
        "private_key_jwt"
    } else if supported.is_none() || offers("none") {
        "none"
    } else if offers("client_secret_basic") {
        "client_secret_basic"
    } else if offers("client_secret_post") {
        "client_secret_post"
    } else {
        "none"
    };
    let mut body = json!({
        "client_name": profile.name,
        "grant_types": profile.grant_types,
        "token_endpoint_auth_method": method,
        "application_type": application_type(profile.redirect_uri.as_deref()),
    });
    if let Some(redirect) = &profile.redirect_uri {
        body["redirect_uris"] = json!([redirect]);
        body["response_types"] = json!(["code"]);
    } else {
        body["response_types"] = json!([]);
    }
    body
}

/// `web` for a redirect URI on a remote https host, `native` otherwise (loopback,
/// `localhost`, a private-use scheme, or no redirect at all).
pub(crate) fn application_type(redirect_uri: Option<&str>) -> &'static str {
    let Some(url) = redirect_uri.and_then(|r| url::Url::parse(r).ok()) else {
        return "native";
    };
    let local = match url.host() {
        Some(url::Host::Domain(d)) => d == "localhost" || d.ends_with(".localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => true,
    };
    if url.scheme() == "https" && !local {
        "web"
    } else {
        "native"
    }
}

/// A Client ID Metadata Document for a client at `url` (serve it there).
pub fn client_metadata_document(
    url: &str,
    client_name: &str,
    redirect_uris: &[&str],
    grant_types: &[&str],
) -> Value {
    json!({
        "client_id": url,
        "client_name": client_name,
        "redirect_uris": redirect_uris,
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": application_type(redirect_uris.first().copied()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_types() {
        assert_eq!(application_type(Some("http://127.0.0.1:3/cb")), "native");
        assert_eq!(application_type(Some("http://localhost/cb")), "native");
        assert_eq!(application_type(Some("http://[::1]:9/cb")), "native");
        assert_eq!(application_type(Some("com.example.app:/cb")), "native");
        assert_eq!(application_type(Some("https://app.example/cb")), "web");
        assert_eq!(application_type(None), "native");
    }

    #[test]
    fn registration_asks_for_a_method_the_server_offers() {
        let profile = ClientProfile {
            name: "n".into(),
            redirect_uri: Some("http://127.0.0.1:1/callback".into()),
            grant_types: vec!["authorization_code".into()],
            has_key: false,
        };
        let mut metadata = ServerMetadata::default();
        assert_eq!(
            registration_request(&metadata, &profile)["token_endpoint_auth_method"],
            "none"
        );
        metadata.token_endpoint_auth_methods_supported = Some(vec!["client_secret_post".into()]);
        let body = registration_request(&metadata, &profile);
        assert_eq!(body["token_endpoint_auth_method"], "client_secret_post");
        assert_eq!(body["application_type"], "native");
        assert_eq!(body["redirect_uris"][0], "http://127.0.0.1:1/callback");
    }
}
