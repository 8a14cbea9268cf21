//! A 2025-03-26 server: no Protected Resource Metadata, its origin is its authorization
//! server; the client finds RFC 8414 metadata at the origin, or, without any, uses the
//! default endpoints `/authorize`, `/token` and `/register` there.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use ferry::http::HttpConfig;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use crate::authorization_server::{AuthorizationServer, Behaviour, MetadataAt};
use crate::{builder, call, mcp_server};

/// Ferry's MCP router at `/mcp` behind a 2025-03-26-style check: a JWT of `key` for
/// `origin/mcp`, else 401 with a bare `Bearer` challenge (no resource metadata).
fn legacy_mcp(origin: &str, key: &crate::issuer::SigningKey) -> axum::Router {
    let resource = format!("{origin}/mcp");
    let decoding = DecodingKey::from_jwk(&key.jwk).unwrap();
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_audience(&[resource]);
    validation.set_issuer(&[origin]);
    ferry::http::router(mcp_server(), HttpConfig::default()).layer(axum::middleware::from_fn(
        move |request: Request, next: Next| {
            let (decoding, validation) = (decoding.clone(), validation.clone());
            async move {
                let valid = request
                    .headers()
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .is_some_and(|t| {
                        jsonwebtoken::decode::<Value>(t, &decoding, &validation).is_ok()
                    });
                if valid {
                    next.run(request).await
                } else {
                    unauthorized()
                }
            }
        },
    ))
}

fn unauthorized() -> Response {
    (
        axum::http::StatusCode::UNAUTHORIZED,
        [("www-authenticate", "Bearer")],
        axum::Json(serde_json::json!({"error": "invalid_token"})),
    )
        .into_response()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_03_26_server_metadata_at_the_origin_or_the_default_endpoints() {
    let prm = [
        "GET /.well-known/oauth-protected-resource/mcp 404",
        "GET /.well-known/oauth-protected-resource 404",
    ];
    for (metadata_at, after) in [
        (
            MetadataAt::Rfc8414Root,
            &["GET /.well-known/oauth-authorization-server 200"][..],
        ),
        (
            MetadataAt::Nowhere,
            &[
                "GET /.well-known/oauth-authorization-server 404",
                "GET /.well-known/openid-configuration 404",
            ][..],
        ),
    ] {
        let behaviour = Behaviour {
            metadata_at,
            ..Behaviour::default()
        };
        let as_ = AuthorizationServer::start_with(behaviour, legacy_mcp).await;
        let url = format!("{}/mcp", as_.origin);
        let oauth = builder(&url).build().unwrap();
        let text = call(&url, &oauth, "admin")
            .await
            .unwrap_or_else(|e| panic!("{metadata_at:?}: {e}"));
        assert_eq!(text, "done");
        let tried: Vec<String> = prm.iter().chain(after).map(|s| s.to_string()).collect();
        assert_eq!(as_.events_starting("GET"), tried, "{metadata_at:?}");
        assert_eq!(as_.events_starting("register").len(), 1);
        let authorize = as_.events_starting("authorize");
        assert_eq!(authorize.len(), 1, "{metadata_at:?}");
        // No scope to ask for; the resource is the server's URL.
        assert!(
            authorize[0].ends_with(&format!("scope=\"\" resource={url} method=S256")),
            "{authorize:?}"
        );
    }
}
