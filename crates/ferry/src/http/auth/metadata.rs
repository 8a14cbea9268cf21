//! RFC 9728 Protected Resource Metadata: the document and where it is served.
//!
//! For a resource `https://host/public/mcp` the document is served at the path-aware
//! location `/.well-known/oauth-protected-resource/public/mcp` and at the root form
//! `/.well-known/oauth-protected-resource` (clients try both, in that order). The
//! `resource_metadata` URL in challenges is the path-aware one.

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use super::ResourceServer;

/// The well-known path prefix of RFC 9728.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Whether `token_audience` names the resource `canonical` (trailing slashes aside, with
/// scheme and host compared case-insensitively, as URL parsing normalizes them).
pub(crate) fn same_resource(canonical: &str, token_audience: &str) -> bool {
    match url::Url::parse(token_audience) {
        Ok(url) => canonical_uri(&url) == canonical,
        Err(_) => false,
    }
}

/// The canonical form of a resource URI (RFC 8707 as MCP applies it): lower-case scheme
/// and host, no fragment, no trailing slash (all of them, so that the canonical form of a
/// canonical form is itself).
pub(crate) fn canonical_uri(url: &url::Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    let text = url.to_string();
    let kept = text.trim_end_matches('/');
    // Never down to the scheme alone (`file:///`): keep what a URL needs.
    if kept.ends_with(':') {
        text
    } else {
        kept.to_owned()
    }
}

/// The path of the path-aware metadata document of `resource`.
pub(crate) fn path_aware(resource: &url::Url) -> String {
    let path = resource.path().trim_end_matches('/');
    format!("{WELL_KNOWN}{path}")
}

/// The routes serving the document (no authentication; any origin may read it).
pub(crate) fn routes(server: &Arc<ResourceServer>) -> Router {
    let document = json!({
        "resource": server.resource,
        "authorization_servers": server.authorization_servers,
        "scopes_supported": server.scopes_supported,
        "bearer_methods_supported": ["header"],
        "resource_name": server.resource_name,
        "resource_documentation": server.resource_documentation,
    });
    let mut document = document;
    if let Some(object) = document.as_object_mut() {
        object.retain(|_, v| !v.is_null());
    }
    let body = serde_json::to_vec(&document).unwrap_or_default();
    let serve = move || {
        let body = body.clone();
        async move {
            let mut response: Response = body.into_response();
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            );
            headers.insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("max-age=3600"),
            );
            response
        }
    };
    let path_aware = path_aware(&server.resource_url);
    let mut router = Router::new().route(WELL_KNOWN, get(serve.clone()));
    if path_aware != WELL_KNOWN {
        router = router.route(&path_aware, get(serve));
    }
    router
}
