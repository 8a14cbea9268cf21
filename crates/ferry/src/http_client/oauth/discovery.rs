//! Discovery: from the MCP server's URL (and its 401 challenge) to the authorization
//! server's metadata.
//!
//! 1. Protected Resource Metadata (RFC 9728): the `resource_metadata` URL of the
//!    challenge, else `/.well-known/oauth-protected-resource/<path>`, then the root one.
//!    Its `resource` must be the server (the same origin, a path the server's is under).
//! 2. Authorization Server Metadata of its first authorization server, at the locations
//!    the 2025-11-25 specification lists in order: RFC 8414 path-inserted, OpenID Connect
//!    path-inserted, OpenID Connect path-appended (for an issuer without a path: RFC 8414,
//!    then OpenID Connect). The document's `issuer` must be the one asked for.
//! 3. No Protected Resource Metadata (a 2025-03-26 server): the server's origin is the
//!    authorization server; its metadata is looked up there, and without any, the default
//!    endpoints `/authorize`, `/token` and `/register` are used.

use serde::Deserialize;
use url::Url;

use super::OAuthError;
use super::challenge::BearerChallenge;
use super::fetch::{Fetched, get_json};

/// RFC 9728 Protected Resource Metadata (the fields the client uses).
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct ResourceMetadata {
    /// The protected resource's identifier.
    pub(crate) resource: Option<String>,
    /// Its authorization servers' issuer identifiers.
    #[serde(default)]
    pub(crate) authorization_servers: Vec<String>,
    /// The scopes it uses.
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// RFC 8414 / OpenID Connect Discovery metadata (the fields the client uses).
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct ServerMetadata {
    /// The issuer identifier.
    pub(crate) issuer: String,
    /// Where the person approves.
    pub(crate) authorization_endpoint: Option<String>,
    /// Where tokens come from.
    pub(crate) token_endpoint: Option<String>,
    /// RFC 7591 dynamic registration.
    pub(crate) registration_endpoint: Option<String>,
    /// Scopes the server knows.
    pub(crate) scopes_supported: Option<Vec<String>>,
    /// PKCE methods.
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint.
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Client ID Metadata Documents accepted as client ids.
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: bool,
    /// RFC 9207: the authorization response carries `iss`.
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: bool,
}

/// Where authorization happens for one MCP server, as discovered.
#[derive(Clone, Debug)]
pub(crate) struct Discovered {
    /// The RFC 8707 resource: the metadata's `resource`, else the server's canonical URI.
    pub(crate) resource: String,
    /// The Protected Resource Metadata's `scopes_supported`.
    pub(crate) resource_scopes: Option<Vec<String>>,
    /// The authorization server's metadata (made up of the default endpoints when the
    /// server has none: then `metadata_found` is false).
    pub(crate) metadata: ServerMetadata,
    /// Whether the authorization server published metadata.
    pub(crate) metadata_found: bool,
    /// The Protected Resource Metadata's URL, when there was one.
    pub(crate) resource_metadata_url: Option<String>,
}

/// Discover for `server` (the MCP endpoint), with the challenge of its 401 if any.
pub(crate) async fn discover(
    http: &reqwest::Client,
    server: &Url,
    challenge: Option<&BearerChallenge>,
) -> Result<Discovered, OAuthError> {
    let origin = origin(server);
    let mut candidates = Vec::new();
    if let Some(url) = challenge.and_then(|c| c.resource_metadata.as_deref()) {
        candidates.push(url.to_owned());
    }
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        candidates.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    candidates.dedup();

    for url in &candidates {
        let Fetched::Found(json) = get_json(http, url).await? else {
            continue;
        };
        let prm: ResourceMetadata =
            serde_json::from_value(json).map_err(|e| OAuthError::InvalidResponse {
                url: url.clone(),
                message: format!("protected resource metadata: {e}"),
            })?;
        let Some(resource) = prm.resource.clone() else {
            return Err(OAuthError::InvalidResponse {
                url: url.clone(),
                message: "protected resource metadata without `resource`".into(),
            });
        };
        if !resource_matches(&resource, server) {
            return Err(OAuthError::ResourceMismatch {
                advertised: resource,
                server: canonical(server),
            });
        }
        let Some(issuer) = prm.authorization_servers.first() else {
            return Err(OAuthError::InvalidResponse {
                url: url.clone(),
                message: "protected resource metadata names no authorization server".into(),
            });
        };
        let issuer_url = Url::parse(issuer).map_err(|e| OAuthError::InvalidResponse {
            url: url.clone(),
            message: format!("authorization server {issuer:?}: {e}"),
        })?;
        let Some(metadata) = server_metadata(http, &issuer_url).await? else {
            return Err(OAuthError::Discovery(format!(
                "no authorization server metadata for {issuer} at any well-known location"
            )));
        };
        if !same_issuer(&metadata.issuer, issuer) {
            return Err(OAuthError::InvalidResponse {
                url: issuer.clone(),
                message: format!(
                    "the metadata's issuer {:?} is not the authorization server {issuer:?}",
                    metadata.issuer
                ),
            });
        }
        return Ok(Discovered {
            resource,
            resource_scopes: prm.scopes_supported,
            metadata,
            metadata_found: true,
            resource_metadata_url: Some(url.clone()),
        });
    }

    // 2025-03-26: no Protected Resource Metadata; the server's origin is the AS.
    let origin_url = Url::parse(&origin).map_err(|e| OAuthError::Discovery(e.to_string()))?;
    let (metadata, found) = match server_metadata(http, &origin_url).await? {
        Some(metadata) => (metadata, true),
        None => (
            ServerMetadata {
                issuer: origin.clone(),
                authorization_endpoint: Some(format!("{origin}/authorize")),
                token_endpoint: Some(format!("{origin}/token")),
                registration_endpoint: Some(format!("{origin}/register")),
                ..ServerMetadata::default()
            },
            false,
        ),
    };
    Ok(Discovered {
        resource: canonical(server),
        resource_scopes: None,
        metadata,
        metadata_found: found,
        resource_metadata_url: None,
    })
}

/// The authorization server metadata of `issuer`, from the first well-known location
/// that has it.
pub(crate) async fn server_metadata(
    http: &reqwest::Client,
    issuer: &Url,
) -> Result<Option<ServerMetadata>, OAuthError> {
    for url in metadata_locations(issuer) {
        if let Fetched::Found(json) = get_json(http, &url).await? {
            let metadata: ServerMetadata =
                serde_json::from_value(json).map_err(|e| OAuthError::InvalidResponse {
                    url: url.clone(),
                    message: format!("authorization server metadata: {e}"),
                })?;
            return Ok(Some(metadata));
        }
    }
    Ok(None)
}

/// The metadata URLs of `issuer`, in the order the 2025-11-25 specification gives.
pub(crate) fn metadata_locations(issuer: &Url) -> Vec<String> {
    let origin = origin(issuer);
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// `scheme://host[:port]`.
pub(crate) fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The canonical URI of an MCP server (RFC 8707): no fragment, no trailing slash on an
/// empty path.
pub(crate) fn canonical(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    let text = url.to_string();
    if url.path() == "/" && url.query().is_none() {
        text.trim_end_matches('/').to_owned()
    } else {
        text
    }
}

/// Whether the metadata's `resource` is the server: the same origin, and the server's
/// path equal to or under the resource's.
pub(crate) fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server.origin() || resource.fragment().is_some() {
        return false;
    }
    let prefix = resource.path().trim_end_matches('/');
    let path = server.path().trim_end_matches('/');
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Whether `url` may carry codes, secrets and tokens: `https`, or plain `http` to a
/// loopback host (the specification requires HTTPS for authorization server endpoints).
pub(crate) fn secure_enough(url: &str) -> bool {
    let Ok(url) = Url::parse(url) else {
        return false;
    };
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(d)) => d == "localhost" || d.ends_with(".localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

/// Refuse endpoints that are neither HTTPS nor on loopback (unless `allow_http`).
pub(crate) fn check_endpoints(
    metadata: &ServerMetadata,
    allow_http: bool,
) -> Result<(), OAuthError> {
    let endpoints = [
        &metadata.authorization_endpoint,
        &metadata.token_endpoint,
        &metadata.registration_endpoint,
    ];
    for endpoint in endpoints.into_iter().flatten() {
        if !allow_http && !secure_enough(endpoint) {
            return Err(OAuthError::Discovery(format!(
                "the authorization server endpoint {endpoint} is not HTTPS (refusing to send \
                 credentials over it)"
            )));
        }
    }
    Ok(())
}

/// Issuer identifiers compared exactly but for one trailing slash.
fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_locations_in_the_specified_order() {
        let with_path = Url::parse("https://as.example/tenant1/").unwrap();
        assert_eq!(
            metadata_locations(&with_path),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
        let root = Url::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            metadata_locations(&root),
            [
                "http://127.0.0.1:8080/.well-known/oauth-authorization-server",
                "http://127.0.0.1:8080/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn resource_matching() {
        let server = Url::parse("https://mcp.example/api/mcp").unwrap();
        assert!(resource_matches("https://mcp.example/api/mcp", &server));
        assert!(resource_matches("https://mcp.example/api/", &server));
        assert!(resource_matches("https://mcp.example", &server));
        assert!(!resource_matches("https://mcp.example/ap", &server));
        assert!(!resource_matches("https://mcp.example/api/mcp/x", &server));
        assert!(!resource_matches("https://evil.example/api/mcp", &server));
        assert!(!resource_matches("http://mcp.example/api/mcp", &server));
        assert!(!resource_matches(
            "https://mcp.example:444/api/mcp",
            &server
        ));
        assert!(!resource_matches("not a url", &server));
        assert_eq!(
            canonical(&Url::parse("HTTPS://MCP.example/#x").unwrap()),
            "https://mcp.example"
        );
        assert_eq!(canonical(&server), "https://mcp.example/api/mcp");
    }

    #[test]
    fn endpoints_need_https_off_loopback() {
        for ok in [
            "https://as.example/token",
            "http://127.0.0.1:9/token",
            "http://localhost:9/token",
            "http://[::1]:9/token",
        ] {
            assert!(secure_enough(ok), "{ok}");
        }
        for bad in ["http://as.example/token", "ftp://as.example", "junk"] {
            assert!(!secure_enough(bad), "{bad}");
        }
        let metadata = ServerMetadata {
            token_endpoint: Some("http://as.example/token".into()),
            ..ServerMetadata::default()
        };
        assert!(check_endpoints(&metadata, false).is_err());
        assert!(check_endpoints(&metadata, true).is_ok());
    }
}
